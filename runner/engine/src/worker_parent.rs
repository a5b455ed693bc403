//! pitwall's side of a built-in suite worker: start `<exe> __worker` in its own process group
//! (killed on timeout and with pitwall on SIGINT/SIGTERM, like a benchmark command), relay its
//! progress to the observer, attach the machine state of each sample's window from pitwall's
//! own monitor, and turn every way a worker can fail into a failed result, never a panic.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

use pitwall_schema::{BenchmarkResult, SampleMeta, schema};

use crate::command::{
    escape_controls, kill_group, spawn_tail_reader, track_group, untrack_group, with_stderr_tail,
};
use crate::config::SuiteConfig;
use crate::meta::SampleMetaSource;
use crate::observer::RunObserver;
use crate::outcome::{Selection, SuiteOutcome};
use crate::protocol::{
    ClockAnchor, NonFinite, PROTOCOL, WORKER_SUBCOMMAND, WorkerEvent, WorkerRequest,
    decode_non_finite,
};
use crate::stop::duration_from_secs;

/// Time a benchmark may take beyond `warmup_s + timeout_s` (the most the stopping rule lets
/// it run, but for its last sample) before its worker is killed as hung.
pub(super) const WORKER_GRACE: Duration = Duration::from_secs(5);
/// Longest line a worker may write (the outcome line holds every sample of the suite).
const MAX_LINE_BYTES: u64 = 256 << 20;
/// How often a quiet worker is checked on.
const POLL: Duration = Duration::from_millis(50);

/// The executable a worker is started from and the backend it is to build (`Backend::name`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Worker<'a> {
    pub exe: &'a Path,
    pub backend: &'a str,
}

/// Runs `suite` (built-in) in a fresh worker started from `worker.exe`. A benchmark (or the start-up
/// before the first) running longer than `warmup_s + timeout_s + grace` gets the worker
/// killed with its process group.
pub(super) fn run_in_worker(
    worker: Worker<'_>,
    suite: &SuiteConfig,
    checkout: &Path,
    selection: Selection<'_>,
    observer: &dyn RunObserver,
    meta: Option<&dyn SampleMetaSource>,
    grace: Duration,
) -> SuiteOutcome {
    let mut session = Session {
        suite: &suite.name,
        observer,
        meta,
        anchor: ClockAnchor::now(),
        pid: None,
        started: false,
        finished: false,
        running: None,
        pending: Vec::new(),
        metas: BTreeMap::new(),
        outcome: None,
    };
    match watch(worker, suite, checkout, selection, &mut session, grace) {
        Ok(outcome) => {
            // The worker cannot show lines itself: its notes (benchmarks its backend left out)
            // are shown here, once, and stay with the run's notes.
            for note in &outcome.notes {
                observer.warning(&suite.name, note);
            }
            outcome
        }
        Err(msg) => session.fail(msg),
    }
}

/// Spawns the worker and follows it to its end: its outcome, or why there is none.
fn watch(
    Worker { exe, backend }: Worker<'_>,
    suite: &SuiteConfig,
    checkout: &Path,
    selection: Selection<'_>,
    session: &mut Session<'_>,
    grace: Duration,
) -> Result<SuiteOutcome, String> {
    let mut request = WorkerRequest::new(
        backend,
        suite,
        checkout,
        selection.filter,
        session.meta.is_some(),
    )
    .ok_or_else(|| format!("suite `{}` is not a built-in suite", suite.name))?;
    request.only = selection.only.cloned();
    let stdin = request_file(&request)
        .map_err(|e| format!("cannot write the request for a suite worker: {e}"))?;
    let mut cmd = Command::new(exe);
    // A worker runs pitwall's own suites: it needs no secret, so it gets none.
    let env = crate::child_env::ChildEnv::scrubbed(&Default::default(), &[], &[]);
    env.apply(&mut cmd);
    let mut child = cmd
        .arg(WORKER_SUBCOMMAND)
        .current_dir(checkout)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| {
            format!(
                "cannot start suite worker `{} {WORKER_SUBCOMMAND}` in {}: {e}",
                exe.display(),
                checkout.display()
            )
        })?;
    let pgid = child.id() as i32;
    track_group(pgid);
    let stdout = child.stdout.take().expect("stdout is piped");
    let err_reader = spawn_tail_reader(child.stderr.take().expect("stderr is piped"));
    let (tx, rx) = mpsc::channel();
    let out_reader = thread::spawn(move || read_lines(stdout, tx));

    let sampling = suite.sampling;
    let limit = duration_from_secs(sampling.warmup_s + sampling.timeout_s).saturating_add(grace);
    let mut deadline = Instant::now().checked_add(limit);
    let mut timed_out = false;
    let mut broken = None;
    let mut truncated = false;
    loop {
        let wait = deadline.map_or(POLL, |d| {
            d.saturating_duration_since(Instant::now()).min(POLL)
        });
        if wait.is_zero() {
            timed_out = true;
            break;
        }
        match rx.recv_timeout(wait) {
            Ok(Line::Full(line)) => match session.handle(&line) {
                Ok(true) => deadline = Instant::now().checked_add(limit),
                Ok(false) => {}
                Err(e) => {
                    broken = Some(e);
                    break;
                }
            },
            Ok(Line::Partial) => truncated = true,
            Ok(Line::Broken(e)) => {
                broken = Some(e);
                break;
            }
            Err(RecvTimeoutError::Timeout) => {
                // A worker that exited while something it started holds the pipe open: that
                // goes too, so the output ends.
                if matches!(child.try_wait(), Ok(Some(_))) {
                    kill_group(pgid);
                }
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    if !timed_out && broken.is_none() {
        // The output ended: let the worker finish exiting (a kill now could overtake its own
        // exit status), within the same limit.
        while matches!(child.try_wait(), Ok(None)) {
            if deadline.is_some_and(|d| Instant::now() >= d) {
                timed_out = true;
                break;
            }
            thread::sleep(Duration::from_millis(2));
        }
    }
    // Whatever it left behind in its process group goes too.
    kill_group(pgid);
    let status = child.wait();
    untrack_group(pgid);
    drop(rx);
    let _ = out_reader.join();
    let stderr_tail = err_reader
        .join()
        .unwrap_or_default()
        .redacted(&env.redactor);

    let who = match session.pid {
        Some(pid) => format!("suite worker (pid {pid})"),
        None => "suite worker".to_string(),
    };
    let during = session
        .running
        .as_ref()
        .map(|b| format!(" while running {b}"))
        .unwrap_or_default();
    let fail = |what: String| Err(with_stderr_tail(what, &stderr_tail));
    if timed_out {
        return fail(format!(
            "{who} timed out{during}: no progress for {}s (warmup_s + timeout_s + {}s) and it was killed with its process group",
            limit.as_secs_f64(),
            grace.as_secs_f64()
        ));
    }
    if let Some(detail) = broken {
        return fail(format!(
            "{who} broke the protocol{during}: {detail}; it was killed"
        ));
    }
    let status = match status {
        Ok(s) => s,
        Err(e) => return fail(format!("cannot wait for {who}: {e}")),
    };
    if !status.success() {
        let how = match (status.code(), status.signal()) {
            (Some(c), _) => format!("exited with status {c}"),
            (None, Some(s)) => format!("was killed by signal {s}"),
            (None, None) => "ended abnormally".to_string(),
        };
        return fail(format!("{who} {how}{during}"));
    }
    match session.outcome.take() {
        Some(outcome) => Ok(outcome),
        None => fail(format!(
            "{who} exited without reporting the suite's outcome{}",
            if truncated {
                " (its output ended in the middle of a line)"
            } else {
                ""
            }
        )),
    }
}

/// The request as a file for the worker's stdin: written before the worker starts, so
/// pitwall never writes to a pipe whose reader may be gone (SIGPIPE would kill pitwall).
/// The file is unlinked at once; the open descriptor keeps it.
fn request_file(request: &WorkerRequest) -> std::io::Result<File> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let json = serde_json::to_vec(request).map_err(std::io::Error::other)?;
    let path = std::env::temp_dir().join(format!(
        "pitwall-worker-{}-{}.json",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    // A leftover of a dead process that had this pid.
    let _ = std::fs::remove_file(&path);
    let mut file = File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    let _ = std::fs::remove_file(&path);
    file.write_all(&json)?;
    file.seek(SeekFrom::Start(0))?;
    Ok(file)
}

/// What the stdout reader saw.
enum Line {
    Full(Vec<u8>),
    /// The output ended without a final newline.
    Partial,
    /// Unreadable or too long: the worker is killed.
    Broken(String),
}

fn read_lines(stdout: ChildStdout, tx: Sender<Line>) {
    let mut reader = BufReader::new(stdout);
    loop {
        let mut line = Vec::new();
        let msg = match (&mut reader)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut line)
        {
            Ok(0) => return,
            Ok(_) if line.last() == Some(&b'\n') => {
                line.pop();
                Line::Full(line)
            }
            Ok(_) if line.len() as u64 > MAX_LINE_BYTES => Line::Broken(format!(
                "it wrote a line longer than {} MiB",
                MAX_LINE_BYTES >> 20
            )),
            Ok(_) => Line::Partial,
            Err(e) => Line::Broken(format!("cannot read its output: {e}")),
        };
        let last = !matches!(msg, Line::Full(_));
        if tx.send(msg).is_err() || last {
            return;
        }
    }
}

/// What pitwall knows of one worker so far.
struct Session<'a> {
    suite: &'a str,
    observer: &'a dyn RunObserver,
    meta: Option<&'a dyn SampleMetaSource>,
    anchor: ClockAnchor,
    pid: Option<u32>,
    /// `suite_started` / `suite_finished` were relayed.
    started: bool,
    finished: bool,
    /// The benchmark started and not finished.
    running: Option<String>,
    /// Machine state of the running benchmark's samples so far.
    pending: Vec<SampleMeta>,
    /// Machine state of each finished benchmark's samples, by display name.
    metas: BTreeMap<String, Vec<SampleMeta>>,
    outcome: Option<SuiteOutcome>,
}

impl Session<'_> {
    /// Acts on one line; `Ok(true)` when it is progress (the hang timer restarts), `Err` when
    /// the line breaks the protocol.
    fn handle(&mut self, line: &[u8]) -> Result<bool, String> {
        let event: WorkerEvent = serde_json::from_slice(line).map_err(|e| {
            let text = String::from_utf8_lossy(&line[..line.len().min(120)]);
            format!(
                "it printed `{}`, which is not a protocol message ({e})",
                escape_controls(&text)
            )
        })?;
        let first = self.pid.is_none();
        if first != matches!(event, WorkerEvent::Hello { .. }) {
            return Err(if first {
                "its first message is not a hello".to_string()
            } else {
                "it said hello twice".to_string()
            });
        }
        if self.outcome.is_some() {
            return Err("it wrote more after its outcome".to_string());
        }
        let (suite, observer) = (self.suite, self.observer);
        match event {
            WorkerEvent::Hello { protocol, pid } => {
                if protocol != PROTOCOL {
                    return Err(format!(
                        "it speaks protocol {protocol}, this pitwall {PROTOCOL} (hint: the pitwall executable was replaced while it ran; run it again)"
                    ));
                }
                self.pid = Some(pid);
                observer.worker_started(suite, pid);
                Ok(true)
            }
            WorkerEvent::SuiteStarted { benchmarks } => {
                self.started = true;
                observer.suite_started(suite, benchmarks);
                Ok(true)
            }
            WorkerEvent::BenchmarkStarted { benchmark } => {
                observer.benchmark_started(suite, &benchmark);
                self.pending.clear();
                self.running = Some(benchmark);
                Ok(true)
            }
            WorkerEvent::Sample {
                start_ns,
                end_ns,
                ns_per_iter,
            } => {
                if let Some(source) = self.meta {
                    let (start, end) = (
                        self.anchor.to_instant(start_ns),
                        self.anchor.to_instant(end_ns),
                    );
                    self.pending.push(match ns_per_iter {
                        Some(ns) => source.sample_meta(start, end, ns),
                        None => source.meta_between(start, end),
                    });
                }
                Ok(false)
            }
            WorkerEvent::BenchmarkFinished { benchmark, error } => {
                observer.benchmark_finished(suite, &benchmark, error.as_deref());
                self.running = None;
                self.metas
                    .insert(benchmark, std::mem::take(&mut self.pending));
                Ok(true)
            }
            WorkerEvent::SuiteSkipped { reason } => {
                observer.suite_skipped(suite, &reason);
                Ok(false)
            }
            WorkerEvent::SuiteFinished => {
                self.finished = true;
                observer.suite_finished(suite);
                Ok(false)
            }
            WorkerEvent::Outcome {
                outcome,
                non_finite,
            } => self.accept_outcome(outcome, &non_finite),
        }
    }

    /// The worker's outcome, its non-finite samples restored and each result given the
    /// machine state pitwall saw for its samples.
    fn accept_outcome(
        &mut self,
        mut outcome: SuiteOutcome,
        non_finite: &[NonFinite],
    ) -> Result<bool, String> {
        decode_non_finite(&mut outcome, non_finite)?;
        for r in &mut outcome.results {
            if r.sample_meta.is_empty() {
                continue;
            }
            let name = schema::display_name(&r.name, &r.params);
            match self.metas.get(&name) {
                Some(m) if m.len() == r.sample_meta.len() => r.sample_meta = m.clone(),
                m => {
                    return Err(format!(
                        "its result {name} has {} samples with machine state, pitwall saw {} sample windows",
                        r.sample_meta.len(),
                        m.map_or(0, Vec::len)
                    ));
                }
            }
        }
        self.outcome = Some(outcome);
        Ok(false)
    }

    /// The worker failed with `msg`: told to the observer (as the running benchmark's failure,
    /// else as the suite's `worker`), and kept as one failed result named `worker` beside any
    /// results it did report.
    fn fail(&mut self, msg: String) -> SuiteOutcome {
        let (suite, observer) = (self.suite, self.observer);
        if !self.started || self.finished {
            observer.suite_started(suite, 0);
        }
        let bench = self.running.take().unwrap_or_else(|| "worker".to_string());
        observer.benchmark_finished(suite, &bench, Some(&msg));
        observer.suite_finished(suite);
        let failed = BenchmarkResult::failed(suite, "worker", BTreeMap::new(), msg);
        let mut outcome = self.outcome.take().unwrap_or(SuiteOutcome {
            results: Vec::new(),
            skipped: None,
            context: BTreeMap::new(),
            notes: Vec::new(),
            unfinished: Vec::new(),
        });
        outcome.results.push(failed);
        outcome
    }
}

#[cfg(test)]
mod tests;
