//! Progress on stderr while a command measures: the commit checked out, the build and how long
//! it took, the round, the suite's command or the benchmark, bisect probes. On a terminal an
//! indicatif spinner (a bar while a built-in suite runs) with finished steps printed above it;
//! otherwise one plain line per event with the time elapsed, for CI logs and pipes; nothing
//! with `--quiet`. Stdout stays the result.

use std::cell::{Cell, RefCell};
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pitwall_engine::{BudgetNote, LookProgress, RunObserver, Step, short_sha};
use pitwall_reports::table::escape_controls;

/// How often the terminal's spinner redraws (and its elapsed time moves) while a step runs.
const TICK: Duration = Duration::from_millis(120);
/// The terminal line while no built-in suite runs.
const SPINNER: &str = "{spinner} [{elapsed_precise}] {wide_msg}";
/// The terminal line while a built-in suite runs its benchmarks.
const BAR: &str = "{spinner} [{elapsed_precise}] [{bar:24}] {pos}/{len} {wide_msg}";

/// Where progress goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `--quiet`: no progress at all.
    Quiet,
    /// Not a terminal: one plain line per event, after the time elapsed.
    Lines,
    /// A terminal: a live status line, finished steps printed above it.
    Terminal,
}

/// Renders the pipeline's progress events on stderr.
pub struct Progress {
    mode: Mode,
    started: Instant,
    /// Where plain lines go: stderr, or a buffer in tests.
    lines: RefCell<Box<dyn Write>>,
    bar: RefCell<Option<ProgressBar>>,
    /// The terminal line: where the command is (a commit, a round, a probe) and what runs.
    place: RefCell<String>,
    activity: RefCell<String>,
    /// The built-in suite running: benchmarks started so far and how many it has (0 for a
    /// command suite, whose command is its progress).
    benchmarks: Cell<(usize, usize)>,
    /// Warnings already shown: a suite's worker says the same each round, shown once.
    warned: RefCell<std::collections::BTreeSet<String>>,
    /// Every secret the process knows: nothing of one reaches the log or the terminal.
    redactor: pitwall_schema::Redactor,
}

impl Progress {
    /// Progress for this process's stderr: a terminal gets the live line (unless its `TERM` is
    /// `dumb`), anything else plain lines.
    pub fn new(quiet: bool) -> Progress {
        let terminal =
            std::io::stderr().is_terminal() && std::env::var_os("TERM").is_none_or(|t| t != "dumb");
        let mode = match (quiet, terminal) {
            (true, _) => Mode::Quiet,
            (false, true) => Mode::Terminal,
            (false, false) => Mode::Lines,
        };
        Progress::with_mode(mode, Box::new(std::io::stderr()))
    }

    fn with_mode(mode: Mode, lines: Box<dyn Write>) -> Progress {
        Progress {
            mode,
            started: Instant::now(),
            lines: RefCell::new(lines),
            bar: RefCell::new(None),
            place: RefCell::new(String::new()),
            activity: RefCell::new(String::new()),
            benchmarks: Cell::new((0, 0)),
            warned: RefCell::default(),
            redactor: pitwall_engine::process_redactor(&[]),
        }
    }

    /// Runs `f` (which prints) with the terminal line out of the way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &*self.bar.borrow() {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    /// Clears the terminal line: measuring is over and the result is printed next.
    pub fn finish(&self) {
        if let Some(b) = self.bar.borrow_mut().take() {
            b.finish_and_clear();
        }
    }

    /// A step that stays on record: a plain line, or a line printed above the terminal's.
    fn record(&self, text: &str) {
        let text = &self.redactor.redact(text);
        match self.mode {
            Mode::Quiet => {}
            Mode::Lines => self.line(text),
            Mode::Terminal => {
                let line = escape_controls(text);
                self.with_bar(|b| b.println(line));
            }
        }
    }

    /// What is running now: a plain line, or the terminal line's message.
    fn status(&self, place: Option<String>, activity: String) {
        match self.mode {
            Mode::Quiet => {}
            Mode::Lines => {
                let text = [place.as_deref().unwrap_or_default(), &activity]
                    .iter()
                    .filter(|t| !t.is_empty())
                    .copied()
                    .collect::<Vec<_>>()
                    .join(": ");
                self.line(&text);
            }
            Mode::Terminal => {
                if let Some(p) = place {
                    *self.place.borrow_mut() = p;
                }
                *self.activity.borrow_mut() = activity;
                let msg = [
                    self.place.borrow().as_str(),
                    self.activity.borrow().as_str(),
                ]
                .iter()
                .filter(|t| !t.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" · ");
                let msg = escape_controls(&self.redactor.redact(&msg));
                self.with_bar(|b| b.set_message(msg));
            }
        }
    }

    /// One plain line; a stderr that cannot be written is not worth failing the measurement.
    fn line(&self, text: &str) {
        let line = plain_line(self.started.elapsed(), &self.redactor.redact(text));
        let _ = writeln!(self.lines.borrow_mut(), "{line}");
    }

    /// The terminal line, started on first use.
    fn with_bar(&self, f: impl FnOnce(&ProgressBar)) {
        let mut bar = self.bar.borrow_mut();
        let b = bar.get_or_insert_with(|| {
            let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            b.set_style(style(SPINNER));
            b.enable_steady_tick(TICK);
            b
        });
        f(b);
    }

    fn warn(&self, line: &str) {
        if !self.warned.borrow_mut().insert(line.to_string()) {
            return;
        }
        if self.mode != Mode::Quiet {
            let line = escape_controls(&self.redactor.redact(line));
            self.suspend(|| eprintln!("warning: {line}"));
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .expect("valid template")
        .progress_chars("=> ")
}

impl RunObserver for Progress {
    fn suite_started(&self, suite: &str, benchmarks: usize) {
        self.benchmarks.set((0, benchmarks));
        if benchmarks == 0 {
            return;
        }
        if self.mode == Mode::Terminal {
            self.with_bar(|b| {
                b.set_style(style(BAR));
                b.set_length(benchmarks as u64);
                b.set_position(0);
            });
        }
        let s = if benchmarks == 1 { "" } else { "s" };
        self.status(None, format!("suite {suite}: {benchmarks} benchmark{s}"));
    }

    fn benchmark_started(&self, suite: &str, benchmark: &str) {
        let (done, of) = self.benchmarks.get();
        if of == 0 {
            return;
        }
        self.benchmarks.set((done + 1, of));
        // On a terminal the bar shows how many are done.
        let text = match self.mode {
            Mode::Terminal => format!("{suite}: {benchmark}"),
            _ => format!("{suite} {}/{of}: {benchmark}", done + 1),
        };
        self.status(None, text);
    }

    fn benchmark_finished(&self, suite: &str, benchmark: &str, error: Option<&str>) {
        if self.benchmarks.get().1 > 0 && self.mode == Mode::Terminal {
            self.with_bar(|b| b.inc(1));
        }
        if let Some(e) = error {
            self.warn(&format!("{suite}/{benchmark} failed: {e}"));
        }
    }

    fn suite_skipped(&self, _suite: &str, reason: &str) {
        if self.mode != Mode::Quiet {
            let reason = escape_controls(&self.redactor.redact(reason));
            self.suspend(|| eprintln!("{reason}"));
        }
    }

    fn warning(&self, _suite: &str, line: &str) {
        self.warn(line);
    }

    fn suite_finished(&self, _suite: &str) {
        if self.benchmarks.replace((0, 0)).1 > 0 && self.mode == Mode::Terminal {
            self.with_bar(|b| b.set_style(style(SPINNER)));
        }
    }

    fn step(&self, step: &Step<'_>) {
        let text = step_line(step);
        match step {
            Step::Checkout { label, sha, .. } => {
                *self.place.borrow_mut() = format!("{label} {}", short_sha(sha));
                self.record(&text);
            }
            Step::Probe {
                probe, bound, sha, ..
            } => {
                *self.place.borrow_mut() = format!("probe {probe} of ~{bound} {}", short_sha(sha));
                self.record(&text);
            }
            Step::BuildStarted { command, .. } if self.mode == Mode::Terminal => {
                self.status(None, format!("building: {command}"));
            }
            Step::Round { .. } if self.mode == Mode::Terminal => {
                self.status(Some(text), String::new());
            }
            Step::Command { .. } | Step::BuildStarted { .. } | Step::Round { .. } => {
                self.status(None, text);
            }
            Step::BuildFinished { .. } | Step::BuildCached { .. } => {
                self.record(&text);
                if self.mode == Mode::Terminal {
                    self.status(None, String::new());
                }
            }
            Step::Look(_) | Step::Budget(_) | Step::ProbeFinished { .. } => self.record(&text),
        }
    }
}

/// One step as words (not yet escaped): `commit 1/3: 0123456789ab fix the loop`, `commit
/// 0123456789ab: built in 12.3s`, `round 2/3: base commit 0123456789ab`, `probe 2 of ~4: …`.
pub(crate) fn step_line(step: &Step<'_>) -> String {
    match step {
        Step::Checkout {
            label,
            sha,
            subject,
        } => format!("{label}: {} {subject}", short_sha(sha)),
        Step::BuildStarted { target, command } => format!("{target}: building with `{command}`"),
        Step::BuildFinished {
            target,
            elapsed,
            ok,
        } => {
            let took = format_secs(*elapsed);
            if *ok {
                format!("{target}: built in {took}")
            } else {
                format!("{target}: build failed after {took}")
            }
        }
        Step::BuildCached { target } => {
            format!("{target}: build cached (hint: --rebuild forces it)")
        }
        Step::Round {
            round,
            rounds,
            side,
            target,
        } => match side {
            Some(side) => format!("round {round}/{rounds}: {side} {target}"),
            None if *rounds == 1 => format!("measuring {target}"),
            None => format!("round {round}/{rounds}: {target}"),
        },
        Step::Command {
            suite,
            command,
            execution,
        } => match execution {
            Some((k, n)) if *n > 1 => format!("suite {suite}: `{command}` (execution {k}/{n})"),
            _ => format!("suite {suite}: `{command}`"),
        },
        Step::Look(p) => look_line(p),
        Step::Budget(b) => budget_line(b),
        Step::Probe {
            probe,
            bound,
            sha,
            subject,
        } => format!("probe {probe} of ~{bound}: {} {subject}", short_sha(sha)),
        Step::ProbeFinished {
            probe,
            class,
            ratio,
            rounds,
        } => {
            let s = if *rounds == 1 { "" } else { "s" };
            match ratio {
                Some(r) => format!(
                    "probe {probe}: {class} ({:+.1}% vs good, {rounds} round{s})",
                    (r - 1.0) * 100.0
                ),
                None => format!("probe {probe}: {class}"),
            }
        }
    }
}

/// `round 5/15: 22 decided, 3 given up, 5 undecided (12m30s left)`.
fn look_line(p: &LookProgress) -> String {
    let left = p.time_left.map_or(String::new(), |t| {
        let s = t.as_secs();
        format!(" ({}m{:02}s left)", s / 60, s % 60)
    });
    format!(
        "round {}/{}: {} decided, {} given up, {} undecided{left}",
        p.round, p.max_rounds, p.decided, p.given_up, p.undecided
    )
}

/// `budget: up to 15 rounds; from the testbed's noise record (20 pairs): about 6 rounds for
/// ±2.0% on 28 of 30 benchmarks, 2 cannot within 15`.
pub(crate) fn budget_line(b: &BudgetNote) -> String {
    let head = format!("budget: up to {} rounds", b.max_rounds);
    if b.record_pairs == 0 || b.benchmarks == 0 {
        return format!(
            "{head}; no noise record of these benchmarks on this testbed yet (hint: `pitwall calibrate` records it)"
        );
    }
    let (lo, hi) = b.threshold_pct;
    let thr = if (hi - lo).abs() < 0.005 {
        format!("±{lo:.1}%")
    } else {
        format!("±{lo:.1}–{hi:.1}%")
    };
    let pairs = format!(
        "{} pair{}",
        b.record_pairs,
        if b.record_pairs == 1 { "" } else { "s" }
    );
    let settled = match b.rounds {
        Some(r) => format!(
            "about {r} rounds for {thr} on {} of {} benchmarks",
            b.resolvable, b.benchmarks
        ),
        None => format!("none of {} benchmarks resolves {thr}", b.benchmarks),
    };
    let rest = b.benchmarks - b.resolvable;
    let cannot = if rest > 0 && b.rounds.is_some() {
        format!(
            ", {rest} cannot within {} (hint: threshold_pct = \"auto\")",
            b.max_rounds
        )
    } else {
        String::new()
    };
    format!("{head}; from the testbed's noise record ({pairs}): {settled}{cannot}")
}

/// `12.3s`, or `5m07s` from a minute on.
fn format_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 {
        format!("{s:.1}s")
    } else {
        let whole = d.as_secs();
        format!("{}m{:02}s", whole / 60, whole % 60)
    }
}

/// A plain progress line: the time since the command started, then the step, escaped.
fn plain_line(elapsed: Duration, text: &str) -> String {
    format!("[{:>7}] {}", format_secs(elapsed), escape_controls(text))
}

#[cfg(test)]
mod tests;
