//! What a run's names and figures must satisfy beyond the type system, whichever way the run
//! came (measured here, read from a tool's output, imported from an export): one set of rules,
//! used by `Run::validate` (which the stores apply to every run they keep and `import` to every
//! run it reads) and by the format readers' checks of a fresh output, so an import can hold
//! nothing a fresh run could not.

use crate::labels::{UNKNOWN_TESTBED, sanitize_testbed};
use crate::schema::{BenchmarkResult, SampleSummary};

/// Units whose values are durations and so cannot be negative.
pub const TIME_UNITS: [&str; 5] = ["ns", "us", "µs", "ms", "s"];

/// The most samples one result (or a pruned result's summary) can stand for: more than any
/// measurement takes, far below the counts that overflow arithmetic on them.
pub const MAX_SAMPLES_PER_RESULT: usize = 1 << 40;

/// The fewest samples with which a median gets a 95% interval (`pitwall_stats::median_ci`).
const MIN_SAMPLES_FOR_CI: usize = 6;

/// Why a benchmark's suite or name cannot be stored, if it cannot: empty, `.` or `..` (a
/// `cuda-kernels` configuration refuses such kernel names, and names become page and file
/// names). Control characters are allowed: every output writes them escaped (`\x1b`).
pub fn names_problem(suite: Option<&str>, name: &str) -> Option<String> {
    let fields = suite
        .map(|s| ("suite", s))
        .into_iter()
        .chain([("name", name)]);
    for (what, text) in fields {
        if matches!(text.trim(), "" | "." | "..") {
            return Some(format!("{what} {text:?} is not a name"));
        }
    }
    None
}

/// Why `testbed` cannot be a stored testbed name, if it cannot: stored names are already in
/// the form `--testbed` and `[testbed] name` are written in (`sanitize_testbed`), so two names
/// that would be written alike (`///` and `∅∅∅`) can never be two series of one machine or one
/// series of two.
pub fn testbed_problem(testbed: &str) -> Option<String> {
    let written = sanitize_testbed(testbed);
    (written != testbed).then(|| {
        format!(
            "testbed {testbed:?} is not a testbed name (lowercase letters, digits, `.`, `_` and `-`, at most 64); it would be written `{written}`"
        )
    })
}

/// Why a testbed name a person gave (`--testbed`, `[testbed] name`) cannot name a machine, if
/// it cannot: a name without a letter or digit would be written `unknown`, the testbed of
/// machines pitwall cannot name, so `///` and `∅∅∅` would merge two machines into that series.
pub fn given_testbed_problem(name: &str) -> Option<String> {
    let unnamed = sanitize_testbed(name) == UNKNOWN_TESTBED
        && !name.trim().eq_ignore_ascii_case(UNKNOWN_TESTBED);
    unnamed.then(|| {
        format!(
            "testbed {name:?} has no letter or digit: it would be the series `{UNKNOWN_TESTBED}` of machines pitwall cannot name"
        )
    })
}

/// Why `text` (a branch) cannot be stored, if it cannot: no control characters.
pub fn label_problem(what: &str, text: &str) -> Option<String> {
    text.chars()
        .any(char::is_control)
        .then(|| format!("{what} {text:?} has a control character"))
}

impl BenchmarkResult {
    /// Why this result's samples cannot be summarised, if they cannot: finite samples whose
    /// range is wider than a 64-bit float holds (`-1.7e308` and `1.7e308`) give no finite
    /// median, interval or ratio. A fresh result like that is stored as failed with this
    /// reason (its samples kept); a result with status ok like that is refused.
    pub fn unsummarisable(&self) -> Option<String> {
        let finite = || self.samples.iter().copied().filter(|v| v.is_finite());
        let min = finite().fold(f64::INFINITY, f64::min);
        let max = finite().fold(f64::NEG_INFINITY, f64::max);
        (min.is_finite() && !(max - min).is_finite()).then(|| {
            format!(
                "samples from {min:e} to {max:e} span more than a 64-bit float holds; no median can be computed"
            )
        })
    }
}

/// What is wrong with a pruned result's summary figures, if anything: a count within
/// [`MAX_SAMPLES_PER_RESULT`], finite figures ordered `min ≤ ci low ≤ median ≤ ci high ≤ max`,
/// an interval only where there were enough samples for one, no negative time.
pub fn summary_problem(unit: &str, s: &SampleSummary) -> Option<String> {
    let ci = s.median_ci.unwrap_or([s.median, s.median]);
    let figures = [s.median, s.min, s.max, ci[0], ci[1]];
    if s.n == 0 || figures.iter().any(|v| !v.is_finite()) {
        return Some("summary without samples or with a non-finite figure".into());
    }
    if s.n > MAX_SAMPLES_PER_RESULT {
        return Some(format!(
            "summary of {} samples, more than the {MAX_SAMPLES_PER_RESULT} a result can hold",
            s.n
        ));
    }
    if !(s.min <= s.median && s.median <= s.max && s.throttled <= s.n) {
        return Some(format!(
            "summary out of order (min {} median {} max {}, {} throttled of {})",
            s.min, s.median, s.max, s.throttled, s.n
        ));
    }
    if let Some([lo, hi]) = s.median_ci {
        if !(s.min <= lo && lo <= s.median && s.median <= hi && hi <= s.max) {
            return Some(format!(
                "summary interval [{lo}, {hi}] is reversed or not around the median {} within min {} and max {}",
                s.median, s.min, s.max
            ));
        }
        if s.n < MIN_SAMPLES_FOR_CI {
            return Some(format!(
                "summary has an interval of the median but only {} samples (an interval needs {MIN_SAMPLES_FOR_CI})",
                s.n
            ));
        }
    }
    if TIME_UNITS.contains(&unit) && s.min < 0.0 {
        return Some(format!("summary has a negative time ({} {unit})", s.min));
    }
    None
}
