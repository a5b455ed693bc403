//! A comparison as a commit status and a check run show it ([`ForgeSummary`]): its outcome
//! (failure on a regression that counts, neutral when incomparable, empty or inconclusive,
//! success otherwise), its summary line, and the status description that says why a neutral
//! outcome is not a failure. The forge client sends it; it does not read the comparison.

use pitwall_schema::forge::{ForgeSummary, Outcome};
use pitwall_stats::ab::Verdict;

use crate::compare::ComparisonReport;

/// Failure on a regression that counts; neutral when the environments are incomparable,
/// nothing was compared, or some benchmark is inconclusive; success otherwise.
pub fn outcome(report: &ComparisonReport) -> Outcome {
    if report.has_regression() {
        Outcome::Failure
    } else if report.incomparable
        || report.benchmarks.is_empty()
        || report
            .benchmarks
            .iter()
            .any(|b| b.comparison.verdict == Verdict::Inconclusive)
    {
        Outcome::Neutral
    } else {
        Outcome::Success
    }
}

/// The outcome, the summary line, and the status description: the summary line, marked
/// `inconclusive:` when neutral (an incomparable one says so already).
pub fn forge_summary(report: &ComparisonReport) -> ForgeSummary {
    let title = report.summary_line();
    let outcome = outcome(report);
    let description = match outcome {
        Outcome::Neutral if !title.starts_with("incomparable") => {
            format!("inconclusive: {title}")
        }
        _ => title.clone(),
    };
    ForgeSummary {
        outcome,
        title,
        description,
    }
}
