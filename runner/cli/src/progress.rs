//! Progress on stderr with indicatif: one bar per suite, drawn only on a terminal and never
//! with `--quiet`, so piped output and CI logs stay clean.

use std::cell::RefCell;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use pitwall_pipeline::engine::RunObserver;
use pitwall_reports::table::escape_controls;

/// Draws suite progress bars.
pub struct Bars {
    bar: RefCell<Option<ProgressBar>>,
    quiet: bool,
}

impl Bars {
    pub fn new(quiet: bool) -> Bars {
        Bars {
            bar: RefCell::new(None),
            quiet,
        }
    }

    fn target(&self) -> ProgressDrawTarget {
        if self.quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        }
    }
}

impl RunObserver for Bars {
    fn suite_started(&self, suite: &str, benchmarks: usize) {
        let bar = if benchmarks > 0 {
            let b = ProgressBar::with_draw_target(Some(benchmarks as u64), self.target());
            b.set_style(
                ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} {msg}")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            b
        } else {
            let b = ProgressBar::with_draw_target(None, self.target());
            b.set_style(
                ProgressStyle::with_template("{prefix:>12} {spinner} {msg}")
                    .expect("valid template"),
            );
            b
        };
        bar.set_prefix(suite.to_string());
        *self.bar.borrow_mut() = Some(bar);
    }

    fn benchmark_started(&self, _suite: &str, benchmark: &str) {
        if let Some(b) = &*self.bar.borrow() {
            b.set_message(benchmark.to_string());
            b.tick();
        }
    }

    fn benchmark_finished(&self, suite: &str, benchmark: &str, error: Option<&str>) {
        if let Some(b) = &*self.bar.borrow() {
            b.inc(1);
            if let Some(e) = error {
                b.suspend(|| {
                    if !self.quiet {
                        eprintln!(
                            "warning: {}",
                            escape_controls(&format!("{suite}/{benchmark} failed: {e}"))
                        );
                    }
                });
            }
        }
    }

    fn suite_skipped(&self, _suite: &str, reason: &str) {
        if !self.quiet {
            eprintln!("{}", escape_controls(reason));
        }
    }

    fn warning(&self, _suite: &str, line: &str) {
        if !self.quiet {
            let print = || eprintln!("warning: {}", escape_controls(line));
            match &*self.bar.borrow() {
                Some(b) => b.suspend(print),
                None => print(),
            }
        }
    }

    fn suite_finished(&self, _suite: &str) {
        if let Some(b) = self.bar.borrow_mut().take() {
            b.finish_and_clear();
        }
    }
}
