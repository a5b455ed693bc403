//! `pitwall calibrate`'s output: one line per benchmark (its noise between processes and the
//! smallest change the testbed's record lets it resolve), then the false calls of every
//! calibration pair on the testbed so far. Rendering only; the values come from
//! `pitwall_analysis::calibration`.

use pitwall_analysis::calibration::Calibration;

use crate::table::{Table, escape_controls};

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |v| format!("±{v:.2}%"))
}

/// The terminal table.
pub fn render_table(c: &Calibration) -> String {
    let mut out = format!(
        "calibration of {} against itself on testbed {}: {} rounds, pair {}\n\n",
        escape_controls(&c.commit.chars().take(12).collect::<String>()),
        escape_controls(&c.testbed),
        c.rounds,
        escape_controls(&c.pair_id),
    );
    let first = format!(">RESOLVES AT ROUND {}", c.first_look);
    let last = format!(">AT ROUND {}", c.max_rounds);
    let mut t = Table::new(&[
        "BENCHMARK",
        ">CV BETWEEN PROCESSES",
        &first,
        &last,
        ">RECORD",
    ]);
    for b in &c.benchmarks {
        t.row(vec![
            b.key.clone(),
            b.between_cv_pct
                .map_or_else(|| "-".to_string(), |v| format!("{v:.2}%")),
            pct(b.detectable_first_pct),
            pct(b.detectable_last_pct),
            format!(
                "{} pair{}",
                b.record_pairs,
                if b.record_pairs == 1 { "" } else { "s" }
            ),
        ]);
    }
    out.push_str(&t.render());
    out.push('\n');
    out.push_str(&format!(
        "\"resolves\": the smallest change called with 80% power at that look, from the testbed's noise record\n{}\n",
        false_calls_line(c)
    ));
    out
}

/// What the calibration pairs of the testbed have called so far.
pub fn false_calls_line(c: &Calibration) -> String {
    let f = &c.false_calls;
    match f.rate_pct() {
        Some(rate) => format!(
            "false calls of the {} calibration pair{} on {} so far: {} of {} benchmark comparisons ({rate:.2}%)",
            f.pairs,
            if f.pairs == 1 { "" } else { "s" },
            escape_controls(&c.testbed),
            f.calls,
            f.benchmarks,
        ),
        None => format!(
            "no calibration pair on {} compared anything yet",
            escape_controls(&c.testbed)
        ),
    }
}

/// The JSON document (`--format json`).
pub fn render_json(c: &Calibration) -> String {
    let mut s = serde_json::to_string_pretty(c).expect("plain values serialize");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use pitwall_analysis::calibration::{BenchmarkNoise, FalseCalls};

    use super::*;

    fn calibration() -> Calibration {
        Calibration {
            testbed: "h200-node07".into(),
            commit: "0123456789abcdef0123".into(),
            pair_id: "p-1".into(),
            rounds: 6,
            first_look: 3,
            max_rounds: 15,
            benchmarks: vec![
                BenchmarkNoise {
                    key: "kernel/gemm[n=4096]/time".into(),
                    between_cv_pct: Some(0.42),
                    record_pairs: 21,
                    detectable_first_pct: Some(1.9),
                    detectable_last_pct: Some(0.61),
                },
                BenchmarkNoise {
                    key: "evil\x1b[2J/time".into(),
                    between_cv_pct: None,
                    record_pairs: 0,
                    detectable_first_pct: None,
                    detectable_last_pct: None,
                },
            ],
            false_calls: FalseCalls {
                pairs: 21,
                calls: 1,
                benchmarks: 42,
            },
        }
    }

    #[test]
    fn table_snapshot() {
        insta::assert_snapshot!(render_table(&calibration()));
    }

    #[test]
    fn json_snapshot() {
        insta::assert_snapshot!(render_json(&calibration()));
    }

    #[test]
    fn without_any_comparison_the_rate_is_not_made_up() {
        let mut c = calibration();
        c.false_calls = FalseCalls::default();
        assert_eq!(
            false_calls_line(&c),
            "no calibration pair on h200-node07 compared anything yet"
        );
    }
}
