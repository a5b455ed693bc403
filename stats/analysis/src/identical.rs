//! What a comparison says about the code a pair found identical on both sides and did not
//! measure (issue 26): one entry per kernel or suite with the verdict `identical`, and the
//! pair's time line (`GPU time: 4 min measured, ~11 min skipped: identical kernels`) that every
//! output showing the comparison prints the same way.

use pitwall_schema::{IdenticalBasis, IdenticalCode, PairInfo};
use serde::Serialize;

/// The verdict of code found identical on both sides (never a regression).
pub const IDENTICAL: &str = "identical";

/// Code identical on both sides, with its verdict, as the comparison lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdenticalEntry {
    #[serde(flatten)]
    pub code: IdenticalCode,
    /// Always `identical`.
    pub verdict: &'static str,
}

impl IdenticalEntry {
    /// `suite/kernel`, or `suite (every benchmark)` for a whole suite.
    pub fn shown(&self) -> String {
        match self.code.kernel {
            Some(_) => self.code.label(),
            None => format!("{} (every benchmark)", self.code.suite),
        }
    }
}

/// How long the pair measured and, estimated, how long the identical code would have taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PairTime {
    pub measured_ms: Option<u64>,
    /// `None`: no earlier pair on this testbed measured the identical code.
    pub saved_ms_estimate: Option<u64>,
    /// Whether the identical code is GPU kernels (`GPU time`) rather than builds (`time`).
    pub gpu: bool,
    /// Whether some code was identical.
    pub identical: bool,
}

/// The identical entries of a pair (as its runs recorded them), sorted.
pub fn entries(info: Option<&PairInfo>) -> Vec<IdenticalEntry> {
    let mut codes: Vec<IdenticalCode> = info.map_or_else(Vec::new, |p| p.identical.clone());
    codes.sort();
    codes.dedup();
    codes
        .into_iter()
        .map(|code| IdenticalEntry {
            code,
            verdict: IDENTICAL,
        })
        .collect()
}

/// The pair's time, shown when it left identical code unmeasured.
pub fn pair_time(info: Option<&PairInfo>) -> Option<PairTime> {
    let p = info?;
    if p.identical.is_empty() {
        return None;
    }
    Some(PairTime {
        measured_ms: p.measured_ms,
        saved_ms_estimate: p.saved_ms_estimate,
        gpu: p.identical.iter().any(|c| c.basis == IdenticalBasis::Cubin),
        identical: !p.identical.is_empty(),
    })
}

/// `40 s`, `4 min`, `1.5 h`.
pub fn duration_text(ms: u64) -> String {
    let s = ms as f64 / 1000.0;
    if s < 90.0 {
        format!("{} s", s.round() as u64)
    } else if s < 90.0 * 60.0 {
        format!("{} min", (s / 60.0).round() as u64)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

impl PairTime {
    /// `GPU time: 4 min measured, ~11 min skipped: identical kernels`; `time: …: identical
    /// builds` for command suites; `unknown` when nothing estimates the saving.
    pub fn line(&self) -> String {
        let what = if self.gpu { "GPU time" } else { "time" };
        let measured = self
            .measured_ms
            .map_or_else(|| "unknown".to_string(), duration_text);
        if !self.identical {
            return format!("{what}: {measured} measured");
        }
        let skipped = self.saved_ms_estimate.map_or_else(
            || "unknown time".to_string(),
            |ms| format!("~{}", duration_text(ms)),
        );
        let why = if self.gpu {
            "identical kernels"
        } else {
            "identical builds"
        };
        format!("{what}: {measured} measured, {skipped} skipped: {why}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_line_says_gpu_time_for_kernels_and_time_for_builds() {
        let t = PairTime {
            measured_ms: Some(240_000),
            saved_ms_estimate: Some(660_000),
            gpu: true,
            identical: true,
        };
        assert_eq!(
            t.line(),
            "GPU time: 4 min measured, ~11 min skipped: identical kernels"
        );
        let builds = PairTime {
            gpu: false,
            saved_ms_estimate: None,
            measured_ms: Some(0),
            ..t
        };
        assert_eq!(
            builds.line(),
            "time: 0 s measured, unknown time skipped: identical builds"
        );
        assert_eq!(duration_text(2 * 3_600_000 + 1_800_000), "2.5 h");
    }
}
