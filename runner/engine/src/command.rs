//! Running a shell command the way a benchmark needs: in its own process group, with stdout
//! captured, the tail of stderr kept for error messages, and a hard wall-clock timeout that
//! kills the whole group (a shell's children included).

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::child_env::ChildEnv;
use pitwall_schema::Redactor;

/// How much of stderr is kept for messages.
const STDERR_TAIL_BYTES: usize = 4096;
/// Upper bound on captured stdout (benchmark output, not logs).
pub(crate) const STDOUT_MAX_BYTES: usize = 256 << 20;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitKind {
    Exited(i32),
    Signalled(i32),
    /// Still running at the timeout; its process group was killed.
    TimedOut,
}

/// Everything pitwall keeps of one execution.
#[derive(Debug, Clone)]
pub struct CommandOutcome {
    pub exit: ExitKind,
    pub stdout: Vec<u8>,
    /// Last few KiB of stderr, lossily decoded.
    pub stderr_tail: String,
    /// Wall time from spawn to exit, in nanoseconds.
    pub elapsed_ns: f64,
}

impl CommandOutcome {
    pub fn success(&self) -> bool {
        self.exit == ExitKind::Exited(0)
    }

    /// One-line description of a failure, with the stderr tail.
    pub fn failure_message(&self, command: &str, timeout_s: f64) -> String {
        let command = shown_command(command);
        let timeout_s = fmt_secs(timeout_s);
        let what = match self.exit {
            ExitKind::Exited(c) => format!("command `{command}` exited with status {c}"),
            ExitKind::Signalled(s) => format!("command `{command}` was killed by signal {s}"),
            ExitKind::TimedOut => {
                format!(
                    "command `{command}` timed out after {timeout_s}s and was killed with its process group"
                )
            }
        };
        with_stderr_tail(what, &self.stderr_tail)
    }
}

/// Longest command quoted in a message, in characters.
const SHOWN_COMMAND_CHARS: usize = 200;

/// A command as messages quote it: control characters escaped and cut after
/// [`SHOWN_COMMAND_CHARS`] characters (`… (1048576 characters)`), so a huge generated command
/// does not become a megabyte-long error line.
pub fn shown_command(command: &str) -> String {
    let n = command.chars().count();
    if n <= SHOWN_COMMAND_CHARS {
        return escape_controls(command);
    }
    let head: String = command.chars().take(SHOWN_COMMAND_CHARS).collect();
    format!("{}… ({n} characters)", escape_controls(&head))
}

/// Seconds as people write them: `20`, `0.5`, and `1e-300` rather than 300 digits.
pub fn fmt_secs(s: f64) -> String {
    if s != 0.0 && !(1e-3..1e9).contains(&s.abs()) {
        format!("{s:e}")
    } else {
        format!("{s}")
    }
}

/// `what`, followed by the last lines of `stderr_tail` (control characters escaped) when it
/// says anything: the one-line failure message of a process.
pub(super) fn with_stderr_tail(what: String, stderr_tail: &str) -> String {
    let tail = stderr_tail.trim();
    if tail.is_empty() {
        return what;
    }
    let lines: Vec<&str> = tail
        .lines()
        .rev()
        .take(5)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let lines: Vec<String> = lines.into_iter().map(escape_controls).collect();
    format!("{what}; stderr tail: {}", lines.join(" | "))
}

pub use pitwall_analysis::number::escape_controls;

/// Runs `command` with `sh -c` in `cwd` and environment `env` (secrets scrubbed, its output
/// redacted), killing its process group after `timeout`.
pub fn run_command(
    command: &str,
    cwd: &Path,
    env: &ChildEnv,
    timeout: Duration,
) -> std::io::Result<CommandOutcome> {
    let mut cmd = Command::new("sh");
    env.apply(&mut cmd);
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // Started before the clock: it only waits, and kills the group if pitwall dies. The
    // child names its group to the watchdog itself, before exec: were pitwall killed right
    // after the spawn, a group id written by pitwall could come too late.
    let watchdog = Watchdog::spawn()?;
    watchdog.armed_by_child(&mut cmd);
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let pgid = child.id() as i32;
    track_group(pgid);
    let mut out = child.stdout.take().expect("stdout is piped");
    let err = child.stderr.take().expect("stderr is piped");
    let out_reader = thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut out)
            .take(STDOUT_MAX_BYTES as u64)
            .read_to_end(&mut buf);
        // Drain the rest so the writer never blocks on a full pipe.
        let rest = std::io::copy(&mut out, &mut std::io::sink()).unwrap_or(0);
        (buf, rest > 0)
    });
    let err_reader = spawn_tail_reader(err);

    let mut poll = Duration::from_micros(200);
    let (exit, elapsed_ns) = loop {
        if let Some(status) = child.try_wait()? {
            let elapsed_ns = start.elapsed().as_nanos() as f64;
            let exit = match (status.code(), status.signal()) {
                (Some(c), _) => ExitKind::Exited(c),
                (None, Some(s)) => ExitKind::Signalled(s),
                (None, None) => ExitKind::Signalled(0),
            };
            break (exit, elapsed_ns);
        }
        if start.elapsed() >= timeout {
            kill_group(pgid);
            let _ = child.wait();
            break (ExitKind::TimedOut, start.elapsed().as_nanos() as f64);
        }
        thread::sleep(poll);
        poll = (poll * 2).min(Duration::from_millis(10));
    };
    // Whatever the shell left behind (background children holding the pipes) goes too.
    kill_group(pgid);
    untrack_group(pgid);
    watchdog.dismiss();
    // Whatever the command echoes of a secret is gone before anything reads it.
    let (stdout, stdout_cut) = out_reader.join().unwrap_or_default();
    let stdout = env.redactor.redact_cut(stdout, false, stdout_cut);
    let stderr_tail = err_reader
        .join()
        .unwrap_or_default()
        .redacted(&env.redactor);
    Ok(CommandOutcome {
        exit,
        stdout,
        stderr_tail,
        elapsed_ns,
    })
}

/// Kills a benchmark's process group if pitwall itself dies, even by SIGKILL (no handler
/// runs then). A small `sh` waits on a pipe whose only writer is pitwall (close-on-exec, so
/// no benchmark inherits it): the kernel closes it when pitwall exits in any way, the read
/// ends, and the watchdog kills the group it was given. A process that leaves the group
/// (`setsid`) escapes it, as it escapes every group kill (docs/REPRODUCIBILITY.md).
pub(crate) struct Watchdog {
    child: std::process::Child,
    writer: Option<std::fs::File>,
}

/// The watchdog's script: the group id on the first line, then wait for end of input.
const WATCHDOG_SCRIPT: &str =
    "read -r pgid || exit 0; cat >/dev/null; kill -9 \"-$pgid\" 2>/dev/null";

impl Watchdog {
    pub(crate) fn spawn() -> std::io::Result<Watchdog> {
        use std::os::fd::FromRawFd;
        let mut fds = [0i32; 2];
        // SAFETY: `fds` is a valid two-element array for pipe2 to fill.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
        let (reader, writer) = unsafe {
            (
                std::os::fd::OwnedFd::from_raw_fd(fds[0]),
                std::fs::File::from_raw_fd(fds[1]),
            )
        };
        let mut cmd = Command::new("sh");
        // It lives beside the benchmark, readable by it through /proc: it gets no secret.
        ChildEnv::scrubbed(&Default::default(), &[], &[]).apply(&mut cmd);
        let child = cmd
            .arg("-c")
            .arg(WATCHDOG_SCRIPT)
            .stdin(Stdio::from(reader))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()?;
        Ok(Watchdog {
            child,
            writer: Some(writer),
        })
    }

    /// Makes the child started by `cmd` write its own process id (its group id: it runs in a
    /// group of its own) to the watchdog between fork and exec, so the watchdog is armed
    /// before the command runs at all.
    pub(crate) fn armed_by_child(&self, cmd: &mut Command) {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let Some(fd) = self.writer.as_ref().map(|w| w.as_raw_fd()) else {
            return;
        };
        // SAFETY: the hook runs in the forked child and calls only async-signal-safe
        // functions (getpid, write) on a stack buffer; the descriptor is the pipe's write end,
        // open in the parent (close-on-exec, so exec closes the child's copy).
        unsafe {
            cmd.pre_exec(move || {
                let mut buf = [0u8; 24];
                let n = decimal_line(libc::getpid() as u64, &mut buf);
                libc::write(fd, buf.as_ptr().cast(), n);
                Ok(())
            });
        }
    }

    /// The group is gone: stop the watchdog without it killing anything.
    pub(crate) fn dismiss(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.writer.take();
    }
}

/// Writes `v` and a newline into `buf` without allocating (safe between fork and exec);
/// returns the length.
fn decimal_line(mut v: u64, buf: &mut [u8; 24]) -> usize {
    let mut digits = [0u8; 20];
    let mut n = 0;
    loop {
        digits[n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for i in 0..n {
        buf[i] = digits[n - 1 - i];
    }
    buf[n] = b'\n';
    n + 1
}

impl Drop for Watchdog {
    /// Left without `dismiss` (an error return): closing the pipe makes the watchdog kill the
    /// group it guards, which is what an abandoned benchmark deserves; then it is reaped.
    fn drop(&mut self) {
        if self.writer.take().is_some() {
            let _ = self.child.wait();
        }
    }
}

/// The last `STDERR_TAIL_BYTES` of a stream, and whether anything before them was cut.
#[derive(Debug, Default)]
pub(super) struct Tail {
    bytes: Vec<u8>,
    cut: bool,
}

impl Tail {
    /// The tail with every known secret redacted, including the end of one cut by the start
    /// of the tail, lossily decoded.
    pub(super) fn redacted(self, redactor: &Redactor) -> String {
        let bytes = redactor.redact_cut(self.bytes, self.cut, false);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// Reads `stream` to its end on a thread; the thread returns its last `STDERR_TAIL_BYTES`.
pub(super) fn spawn_tail_reader(
    mut stream: impl Read + Send + 'static,
) -> thread::JoinHandle<Tail> {
    thread::spawn(move || {
        let mut tail = Tail::default();
        let mut chunk = [0u8; 8192];
        while let Ok(n) = stream.read(&mut chunk) {
            if n == 0 {
                break;
            }
            tail.bytes.extend_from_slice(&chunk[..n]);
            if tail.bytes.len() > 2 * STDERR_TAIL_BYTES {
                tail.bytes.drain(..tail.bytes.len() - STDERR_TAIL_BYTES);
                tail.cut = true;
            }
        }
        if tail.bytes.len() > STDERR_TAIL_BYTES {
            tail.bytes.drain(..tail.bytes.len() - STDERR_TAIL_BYTES);
            tail.cut = true;
        }
        tail
    })
}

/// Registers the process group of a just-spawned benchmark process (a command, a suite
/// worker), so a terminating pitwall kills it; kills it at once if pitwall is terminating.
pub(super) fn track_group(pgid: i32) {
    if let Ok(mut g) = RUNNING_GROUPS.lock() {
        g.push(pgid);
    }
    // pitwall may have been told to terminate between the spawn and the registration above:
    // the terminate hook reads the list after setting the flag, so one of the two sees the other.
    if pitwall_host::gpu::terminating() {
        kill_group(pgid);
    }
}

/// Forgets a process group registered with [`track_group`] (after it was killed and reaped).
pub(super) fn untrack_group(pgid: i32) {
    if let Ok(mut g) = RUNNING_GROUPS.lock() {
        g.retain(|p| *p != pgid);
    }
}

/// Process groups of commands and workers running now, so a terminating pitwall can take them
/// along.
static RUNNING_GROUPS: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

/// Kills every running command's and worker's process group (on SIGINT/SIGTERM of pitwall
/// itself).
pub fn kill_running_commands() {
    let groups = RUNNING_GROUPS.lock().map(|g| g.clone()).unwrap_or_default();
    for pgid in groups {
        kill_group(pgid);
    }
}

pub(super) fn kill_group(pgid: i32) {
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is touched.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests;
