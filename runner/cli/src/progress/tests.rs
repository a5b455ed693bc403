//! Tests of the progress renderer: the plain lines a sequence of events gives (times masked,
//! untrusted text escaped), nothing in quiet or terminal mode, and each step's words.

use std::rc::Rc;

use super::*;

/// A plain-line sink the test reads back.
#[derive(Clone, Default)]
struct Buffer(Rc<RefCell<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buffer {
    /// The lines written, with the elapsed time masked.
    fn lines(&self) -> Vec<String> {
        String::from_utf8(self.0.borrow().clone())
            .unwrap()
            .lines()
            .map(|l| {
                let (time, rest) = l.split_once("] ").expect("a timed line");
                assert!(time.starts_with('[') && time.ends_with('s'), "{l}");
                format!("[T] {rest}")
            })
            .collect()
    }
}

const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

fn events(p: &Progress) {
    p.step(&Step::Checkout {
        label: "commit 1/2",
        sha: SHA,
        subject: "fix\u{1b}[31m the\nloop",
    });
    p.step(&Step::BuildStarted {
        target: "commit 0123456789ab",
        command: "cargo build",
    });
    p.step(&Step::BuildFinished {
        target: "commit 0123456789ab",
        elapsed: Duration::from_millis(83_400),
        ok: true,
    });
    p.step(&Step::Round {
        round: 1,
        rounds: 1,
        side: None,
        target: "commit 0123456789ab",
    });
    p.suite_started("cpu", 2);
    p.benchmark_started("cpu", "gemm[n=64]");
    p.benchmark_finished("cpu", "gemm[n=64]", None);
    p.benchmark_started("cpu", "stream\u{7}");
    p.benchmark_finished("cpu", "stream\u{7}", None);
    p.suite_finished("cpu");
    p.suite_started("toy", 0);
    p.step(&Step::Command {
        suite: "toy",
        command: "sh bench.sh",
        execution: Some((2, 3)),
    });
    p.benchmark_started("toy", "command");
    p.suite_finished("toy");
}

#[test]
fn plain_lines_say_each_step_once_escaped_after_the_time() {
    let out = Buffer::default();
    let p = Progress::with_mode(Mode::Lines, Box::new(out.clone()));
    events(&p);
    assert_eq!(
        out.lines(),
        [
            "[T] commit 1/2: 0123456789ab fix\\x1b[31m the\\x0aloop",
            "[T] commit 0123456789ab: building with `cargo build`",
            "[T] commit 0123456789ab: built in 1m23s",
            "[T] measuring commit 0123456789ab",
            "[T] suite cpu: 2 benchmarks",
            "[T] cpu 1/2: gemm[n=64]",
            "[T] cpu 2/2: stream\\x07",
            "[T] suite toy: `sh bench.sh` (execution 2/3)",
        ]
    );
}

#[test]
fn quiet_and_terminal_modes_write_no_plain_lines() {
    for mode in [Mode::Quiet, Mode::Terminal] {
        let out = Buffer::default();
        let p = Progress::with_mode(mode, Box::new(out.clone()));
        events(&p);
        p.finish();
        assert!(out.0.borrow().is_empty(), "{mode:?}");
    }
}

#[test]
fn each_step_reads_as_one_line() {
    let line = |s: Step<'_>| step_line(&s);
    assert_eq!(
        line(Step::Round {
            round: 2,
            rounds: 15,
            side: Some("head"),
            target: "commit 0123456789ab"
        }),
        "round 2/15: head commit 0123456789ab"
    );
    assert_eq!(
        line(Step::BuildFinished {
            target: "the working tree",
            elapsed: Duration::from_millis(2_345),
            ok: false
        }),
        "the working tree: build failed after 2.3s"
    );
    assert_eq!(
        line(Step::BuildCached {
            target: "commit 0123456789ab"
        }),
        "commit 0123456789ab: build cached (hint: --rebuild forces it)"
    );
    assert_eq!(
        line(Step::Command {
            suite: "wall",
            command: "./serve",
            execution: None
        }),
        "suite wall: `./serve`"
    );
    assert_eq!(
        line(Step::Look(LookProgress {
            round: 5,
            max_rounds: 15,
            decided: 22,
            given_up: 3,
            undecided: 5,
            time_left: Some(Duration::from_secs(750)),
        })),
        "round 5/15: 22 decided, 3 given up, 5 undecided (12m30s left)"
    );
    assert_eq!(
        line(Step::Probe {
            probe: 2,
            bound: 4,
            sha: SHA,
            subject: "speed up"
        }),
        "probe 2 of ~4: 0123456789ab speed up"
    );
    assert_eq!(
        line(Step::ProbeFinished {
            probe: 2,
            class: "bad",
            ratio: Some(1.4012),
            rounds: 3
        }),
        "probe 2: bad (+40.1% vs good, 3 rounds)"
    );
    assert_eq!(
        line(Step::ProbeFinished {
            probe: 3,
            class: "untestable",
            ratio: None,
            rounds: 0
        }),
        "probe 3: untestable"
    );
}

#[test]
fn a_warning_repeated_by_every_round_is_shown_once() {
    let p = Progress::with_mode(Mode::Quiet, Box::new(Buffer::default()));
    p.warning("kernel", "suite `kernel`: 10 fp8 GEMM benchmarks left out");
    p.warning("kernel", "suite `kernel`: 10 fp8 GEMM benchmarks left out");
    p.warning("kernel", "another line");
    assert_eq!(p.warned.borrow().len(), 2);
}

#[test]
fn a_known_secret_never_reaches_the_log() {
    pitwall_schema::secrets::remember("progress-secret-31337");
    let out = Buffer::default();
    let p = Progress::with_mode(Mode::Lines, Box::new(out.clone()));
    p.step(&Step::Command {
        suite: "toy",
        command: "curl -H 'x: progress-secret-31337' http://h",
        execution: None,
    });
    p.warning("toy", "echoed progress-secret-31337");
    let lines = out.lines().join("\n");
    assert!(!lines.contains("31337"), "{lines}");
    assert!(lines.contains("***"), "{lines}");
}

#[test]
fn the_budget_says_what_the_noise_record_predicts() {
    let note = BudgetNote {
        max_rounds: 15,
        record_pairs: 20,
        benchmarks: 30,
        resolvable: 28,
        rounds: Some(6),
        threshold_pct: (2.0, 2.0),
    };
    assert_eq!(
        budget_line(&note),
        "budget: up to 15 rounds; from the testbed's noise record (20 pairs): about 6 rounds for ±2.0% on 28 of 30 benchmarks, 2 cannot within 15 (hint: threshold_pct = \"auto\")"
    );
    let auto = BudgetNote {
        resolvable: 30,
        rounds: Some(9),
        threshold_pct: (2.0, 3.4),
        ..note
    };
    assert_eq!(
        budget_line(&auto),
        "budget: up to 15 rounds; from the testbed's noise record (20 pairs): about 9 rounds for ±2.0–3.4% on 30 of 30 benchmarks"
    );
    let none = BudgetNote {
        record_pairs: 0,
        benchmarks: 0,
        resolvable: 0,
        rounds: None,
        ..note
    };
    assert_eq!(
        budget_line(&none),
        "budget: up to 15 rounds; no noise record of these benchmarks on this testbed yet (hint: `pitwall calibrate` records it)"
    );
}
