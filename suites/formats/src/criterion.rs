//! The criterion.rs reader, for both ways criterion's results reach pitwall: the
//! `target/criterion` tree that `cargo bench` leaves behind (`format = "criterion"`, [`tree`])
//! and the JSON messages `cargo criterion --message-format=json` prints
//! (`format = "cargo-criterion"`, [`messages`]). Both give, per benchmark, criterion's samples
//! (a total over an iteration count each) and maybe a throughput; this module turns those into
//! pitwall's benchmarks the same way for both.

use std::collections::BTreeMap;

use crate::parsed::ParsedBenchmark;
use pitwall_schema::schema::{Direction, Unit};

pub mod messages;
pub mod tree;

/// A criterion benchmark's `time` benchmark: lower is better, one per-iteration value per
/// criterion sample, in `unit`.
fn time_benchmark(
    name: String,
    params: BTreeMap<String, String>,
    unit: Unit,
    samples: Vec<f64>,
) -> ParsedBenchmark {
    ParsedBenchmark {
        name,
        params,
        measure: "time".into(),
        unit,
        direction: Direction::LowerIsBetter,
        samples,
        sample_meta: Vec::new(),
        error: None,
        skipped: None,
    }
}

/// Adds `time` (samples in nanoseconds) and, when criterion recorded a throughput (`per_iter`
/// bytes or elements per iteration, as the rate unit `B/s` or `elements/s`), a higher-is-better
/// `throughput` benchmark with one rate per sample (0 for a sample that took no time).
fn push_with_throughput(
    time: ParsedBenchmark,
    throughput: Option<(f64, &'static str)>,
    out: &mut Vec<ParsedBenchmark>,
) {
    let Some((per_iter, unit)) = throughput else {
        out.push(time);
        return;
    };
    let samples = time
        .samples
        .iter()
        .map(|ns| {
            if *ns > 0.0 {
                per_iter / (ns * 1e-9)
            } else {
                0.0
            }
        })
        .collect();
    out.push(time.clone());
    out.push(ParsedBenchmark {
        measure: "throughput".into(),
        unit: Unit::new(unit),
        direction: Direction::HigherIsBetter,
        samples,
        ..time
    });
}
