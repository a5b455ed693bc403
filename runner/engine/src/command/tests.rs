//! External commands: their exit kinds, the timeout that kills their whole process group,
//! the capped output and the shown command line.

use super::*;

#[test]
fn the_childs_pid_line_is_plain_decimal() {
    let mut buf = [0u8; 24];
    for v in [0u64, 7, 4_194_304, u64::MAX] {
        let n = decimal_line(v, &mut buf);
        assert_eq!(&buf[..n], format!("{v}\n").as_bytes());
    }
}
use std::collections::BTreeMap;

fn run(cmd: &str, timeout_ms: u64) -> CommandOutcome {
    run_command(
        cmd,
        Path::new("."),
        &ChildEnv::default(),
        Duration::from_millis(timeout_ms),
    )
    .unwrap()
}

#[test]
fn captures_stdout_status_and_stderr_tail() {
    let o = run("echo out; echo err1 >&2; echo err2 >&2; exit 3", 10_000);
    assert_eq!(o.exit, ExitKind::Exited(3));
    assert_eq!(o.stdout, b"out\n");
    assert_eq!(o.stderr_tail, "err1\nerr2\n");
    assert_eq!(
        o.failure_message("x", 1.0),
        "command `x` exited with status 3; stderr tail: err1 | err2"
    );
}

#[test]
fn control_characters_in_the_stderr_tail_are_escaped() {
    let o = run(
        r"printf 'plain\tok\n\033[2J\033]0;title\007\rgone\n' >&2; exit 1",
        10_000,
    );
    let msg = o.failure_message("x", 1.0);
    assert_eq!(
        msg,
        r"command `x` exited with status 1; stderr tail: plain	ok | \x1b[2J\x1b]0;title\x07\x0dgone"
    );
    assert!(!msg.chars().any(|c| c.is_control() && c != '\t'), "{msg:?}");
    assert_eq!(escape_controls("\u{9b}31m é"), r"\x9b31m é");
}

#[test]
fn what_a_command_echoes_of_a_secret_is_redacted() {
    let inherited = [
        (
            "PW_SECRET_TOKEN".to_string(),
            "planted-value-1234".to_string(),
        ),
        (
            "PW_PASSED_TOKEN".to_string(),
            "passed-value-5678".to_string(),
        ),
    ];
    let env = ChildEnv::from_vars(
        inherited,
        &BTreeMap::new(),
        &["PW_PASSED_TOKEN".to_string()],
        &[],
    );
    let mut cmd_env = env.clone();
    // The test process has neither variable: set the passed one as the parent would have.
    cmd_env
        .set
        .insert("PW_PASSED_TOKEN".into(), "passed-value-5678".into());
    let o = run_command(
        "echo \"[$PW_PASSED_TOKEN]\"; echo \"$PW_PASSED_TOKEN\" >&2; exit 1",
        Path::new("."),
        &cmd_env,
        Duration::from_secs(10),
    )
    .unwrap();
    assert_eq!(o.stdout, b"[***]\n");
    assert_eq!(o.stderr_tail, "***\n");
    assert!(!o.failure_message("x", 1.0).contains("passed-value"));
}

#[test]
fn env_and_cwd_are_applied() {
    let dir = tempfile::tempdir().unwrap();
    let set = BTreeMap::from([("PW_TEST".to_string(), "42".to_string())]);
    let env = ChildEnv::from_vars([], &set, &[], &[]);
    let o = run_command(
        "echo $PW_TEST; pwd",
        dir.path(),
        &env,
        Duration::from_secs(10),
    )
    .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.starts_with("42\n"));
    assert!(
        text.trim_end()
            .ends_with(dir.path().file_name().unwrap().to_str().unwrap())
    );
}

#[test]
fn timeout_kills_the_whole_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    let cmd = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
    let start = Instant::now();
    let o = run(&cmd, 300);
    assert_eq!(o.exit, ExitKind::TimedOut);
    assert!(start.elapsed() < Duration::from_secs(10));
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The background sleep must be gone (reaped by init or a zombie at most briefly).
    let mut alive = true;
    for _ in 0..100 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.contains(") Z ") {
            alive = false;
            break;
        }
        thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive, "child {pid} of the timed-out command survived");
    assert!(o.failure_message("c", 0.3).contains("timed out after 0.3s"));
}

#[test]
fn background_child_holding_stdout_does_not_hang_a_finished_command() {
    let start = Instant::now();
    let o = run("(sleep 30) & echo done", 20_000);
    assert_eq!(o.exit, ExitKind::Exited(0));
    assert_eq!(o.stdout, b"done\n");
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn large_stderr_keeps_only_the_tail() {
    let o = run(
        "i=0; while [ $i -lt 3000 ]; do echo line$i >&2; i=$((i+1)); done; echo last >&2",
        20_000,
    );
    assert!(o.stderr_tail.len() <= STDERR_TAIL_BYTES);
    assert!(o.stderr_tail.ends_with("last\n"));
}

#[test]
fn messages_show_seconds_briefly_and_cut_huge_commands() {
    let outcome = CommandOutcome {
        exit: ExitKind::TimedOut,
        stdout: Vec::new(),
        stderr_tail: String::new(),
        elapsed_ns: 0.0,
    };
    let huge = format!("echo {}", "x".repeat(1 << 20));
    let msg = outcome.failure_message(&huge, 1e-300);
    assert!(msg.len() < 400, "{} bytes", msg.len());
    assert!(msg.contains("… (1048581 characters)"), "{msg}");
    assert!(msg.contains("timed out after 1e-300s"), "{msg}");
    assert_eq!(fmt_secs(20.0), "20");
    assert_eq!(fmt_secs(0.5), "0.5");
    assert_eq!(fmt_secs(0.0), "0");
    assert_eq!(shown_command("a\x1bb"), "a\\x1bb");
}

#[test]
fn a_secret_cut_by_the_start_of_the_stderr_tail_leaves_no_piece() {
    let secret = "cut-secret-0123456789abcdef";
    let env = ChildEnv::from_vars(
        [("PW_CUT_TOKEN".to_string(), secret.to_string())],
        &BTreeMap::new(),
        &["PW_CUT_TOKEN".to_string()],
        &[],
    );
    let mut cmd_env = env.clone();
    cmd_env.set.insert("PW_CUT_TOKEN".into(), secret.into());
    // The secret's first 10 bytes fall before the tail's 4096, its last 17 inside.
    let filler = STDERR_TAIL_BYTES - 17;
    let o = run_command(
        &format!("printf '%s' \"$PW_CUT_TOKEN\" >&2; head -c {filler} /dev/zero | tr '\\0' x >&2"),
        Path::new("."),
        &cmd_env,
        Duration::from_secs(10),
    )
    .unwrap();
    assert!(
        o.stderr_tail.starts_with("***x"),
        "{}",
        &o.stderr_tail[..40]
    );
    assert!(!o.stderr_tail.contains("0123456789"));
}
