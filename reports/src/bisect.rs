//! What `pitwall bisect` found, as a table for the terminal and as JSON: the regression between
//! the endpoints, every probe with its ratio to the good commit, and the first bad commit.

pub use pitwall_analysis::bisect::{BisectReport, BisectStep, CommitRef};

use pitwall_analysis::number::sig;

fn pct(ratio: f64) -> String {
    if !ratio.is_finite() {
        return "-".into();
    }
    let p = (ratio - 1.0) * 100.0;
    let s = sig(p, 2);
    if p > 0.0 {
        format!("+{s}%")
    } else {
        format!("{s}%")
    }
}

/// Untrusted text (commit subjects, tool messages) on one line of the terminal.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The terminal table.
pub fn render_table(r: &BisectReport) -> String {
    let mut out = format!(
        "bisecting {} ({}, {}): {} {} → {} {}: {} [{}, {}] over {} commits\n\n",
        r.key,
        r.unit,
        if r.higher_is_better {
            "higher is better"
        } else {
            "lower is better"
        },
        r.good.short(),
        "good",
        r.bad.short(),
        "bad",
        pct(r.ratio),
        pct(r.ci.0),
        pct(r.ci.1),
        r.commits
    );
    if r.uncertain {
        let which: Vec<String> = r
            .steps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.uncertain)
            .map(|(i, _)| (i + 1).to_string())
            .collect();
        out.push_str(&format!(
            "UNCERTAIN: step {} could not be decided within --max-rounds and was decided by its estimate alone; the first bad commit below is a best guess (hint: bisect again with a larger --max-rounds, or follow a less noisy benchmark with --bench)\n\n",
            which.join(", ")
        ));
    }
    let mut t = crate::table::Table::new(&[
        ">STEP",
        ">POS",
        "COMMIT",
        "VERDICT",
        ">VS GOOD",
        ">INTERVAL",
        ">ROUNDS",
        "SUBJECT",
    ]);
    for (i, s) in r.steps.iter().enumerate() {
        let verdict = if s.uncertain {
            format!("{} (uncertain)", s.class)
        } else {
            s.class.clone()
        };
        t.row(vec![
            (i + 1).to_string(),
            s.position.to_string(),
            s.commit.short().to_string(),
            verdict,
            s.ratio.map_or("-".into(), pct),
            s.ci.map_or("-".into(), |(lo, hi)| format!("[{}, {}]", pct(lo), pct(hi))),
            s.rounds.to_string(),
            one_line(s.note.as_deref().unwrap_or(&s.commit.subject)),
        ]);
    }
    if !t.is_empty() {
        out.push_str(&t.render());
        out.push('\n');
    }
    out.push_str(&format!(
        "first bad commit: {} {} ({}, {})\n",
        r.first_bad.sha,
        one_line(&r.first_bad.subject),
        one_line(&r.first_bad.author),
        r.first_bad.date
    ));
    if !r.also_possible.is_empty() {
        let list: Vec<&str> = r.also_possible.iter().map(CommitRef::short).collect();
        out.push_str(&format!(
            "or one of the untestable commits before it: {}\n",
            list.join(", ")
        ));
    }
    out.push_str(&format!(
        "{} probes for {} commits (a clean binary search needs at most {})\n",
        r.steps.len(),
        r.commits,
        r.max_steps
    ));
    out
}

/// `--format json`.
pub fn render_json(r: &BisectReport) -> String {
    let mut s = serde_json::to_string_pretty(r).expect("bisect report serializes");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(n: u8, subject: &str) -> CommitRef {
        CommitRef {
            sha: format!("{n:02x}").repeat(20),
            subject: subject.into(),
            author: "Ada <ada@example.com>".into(),
            date: "2026-12-01T09:30:00+01:00".into(),
        }
    }

    fn report() -> BisectReport {
        let step = |position, n, class: &str, ratio: Option<f64>| BisectStep {
            position,
            commit: commit(n, "step"),
            class: class.into(),
            ratio,
            ci: ratio.map(|r| (r - 0.02, r + 0.02)),
            uncertain: false,
            rounds: 3,
            note: None,
        };
        let mut untestable = step(5, 5, "untestable", None);
        untestable.note = Some("build command `make` failed: exit status 2".into());
        BisectReport {
            uncertain: false,
            key: "toy/parse[n=64]/time".into(),
            unit: "ns".into(),
            higher_is_better: false,
            good: commit(0, "good"),
            bad: commit(8, "bad"),
            commits: 8,
            ratio: 1.5,
            ci: (1.45, 1.55),
            steps: vec![
                step(4, 4, "good", Some(1.001)),
                step(6, 6, "bad", Some(1.49)),
                untestable,
            ],
            max_steps: 3,
            first_bad: commit(6, "slow \"parser\"\nsecond line"),
            also_possible: vec![commit(5, "broken build")],
        }
    }

    #[test]
    fn table_snapshot() {
        insta::assert_snapshot!(render_table(&report()));
    }

    #[test]
    fn an_uncertain_bisection_says_so_at_the_top() {
        let mut r = report();
        r.steps[1].uncertain = true;
        r.uncertain = true;
        let text = render_table(&r);
        assert!(text.starts_with("bisecting "), "{text}");
        assert!(
            text.lines()
                .nth(2)
                .unwrap()
                .starts_with("UNCERTAIN: step 2 "),
            "{text}"
        );
        let v: serde_json::Value = serde_json::from_str(&render_json(&r)).unwrap();
        assert_eq!(v["uncertain"], true);
    }

    #[test]
    fn json_snapshot() {
        let json = render_json(&report());
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["steps"][2]["class"], "untestable");
        assert_eq!(v["first_bad"]["sha"], "06".repeat(20));
        insta::assert_snapshot!(json);
    }
}
