//! What a run is part of besides its commit: the testbed (the named machine identity it was
//! measured on) and its role (part of the default branch's history, or one side of a
//! pull-request comparison). A series of history is one benchmark measure of one project on one
//! testbed and one branch, so these decide which runs a history may mix; they live in the
//! schema because the stores' migrations derive them for old runs with the same rules as new
//! runs get them.

use crate::run::{Fingerprint, Run, RunRole};

/// The testbed of a run whose machine is not known (another tool's results without
/// `--testbed`, a fingerprint without a host name).
pub const UNKNOWN_TESTBED: &str = "unknown";

/// The longest testbed name kept; longer names are cut (they name series and pages).
pub const MAX_TESTBED_LEN: usize = 64;

/// Words of a GPU model name that say nothing about which GPU it is.
const VENDOR_WORDS: &[&str] = &[
    "nvidia", "geforce", "tesla", "quadro", "amd", "radeon", "intel",
];

/// A testbed name as stored: lowercase ASCII letters, digits, `.`, `_` and `-`, anything else
/// (spaces, slashes, control characters) one `-`, no leading or trailing `-`, at most
/// [`MAX_TESTBED_LEN`] characters; [`UNKNOWN_TESTBED`] when nothing is left.
pub fn sanitize_testbed(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        let keep = c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
        let c = if keep { c } else { '-' };
        if c == '-' && (out.is_empty() || out.ends_with('-')) {
            continue;
        }
        out.push(c);
    }
    out.truncate(MAX_TESTBED_LEN);
    let out = out.trim_end_matches('-');
    if out.is_empty() {
        UNKNOWN_TESTBED.to_string()
    } else {
        out.to_string()
    }
}

/// The testbed of a machine with no `[testbed] name`: the first GPU's model and the short host
/// name (`h200-node07`), `cpu-<host>` without a GPU, [`UNKNOWN_TESTBED`] without a host name.
pub fn default_testbed(fp: &Fingerprint) -> String {
    let host = fp.hostname.split('.').next().unwrap_or_default().trim();
    if host.is_empty() {
        return UNKNOWN_TESTBED.to_string();
    }
    // The model's first word with a digit (`H200`, `4090`), else its first non-vendor word.
    let gpu = fp.gpus.first().and_then(|g| {
        let mut words = g
            .model
            .split_whitespace()
            .filter(|w| !VENDOR_WORDS.contains(&w.to_lowercase().as_str()));
        let first = words.clone().next();
        words
            .find(|w| w.chars().any(|c| c.is_ascii_digit()))
            .or(first)
    });
    sanitize_testbed(&format!("{}-{host}", gpu.unwrap_or("cpu")))
}

impl Run {
    /// The run's role, or the one it implies when none is recorded (runs of older exports).
    pub fn role_or_implied(&self) -> RunRole {
        self.role
            .unwrap_or_else(|| RunRole::implied(self.pair.as_ref().map(|p| p.role)))
    }

    /// The run's testbed, or the one its fingerprint implies when none is recorded.
    pub fn testbed_or_derived(&self) -> String {
        self.testbed
            .clone()
            .unwrap_or_else(|| default_testbed(&self.fingerprint))
    }

    /// Records the implied role and testbed where none is, so a stored run always says both.
    pub fn fill_labels(&mut self) {
        self.role = Some(self.role_or_implied());
        self.testbed = Some(self.testbed_or_derived());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{GpuInfo, PairRole};

    fn fp(host: &str, gpu: Option<&str>) -> Fingerprint {
        Fingerprint {
            hostname: host.into(),
            gpus: gpu
                .map(|m| {
                    vec![GpuInfo {
                        model: m.into(),
                        ..GpuInfo::default()
                    }]
                })
                .unwrap_or_default(),
            ..Fingerprint::default()
        }
    }

    #[test]
    fn default_testbed_names_gpu_and_short_host() {
        assert_eq!(
            default_testbed(&fp("node07.cluster.example", Some("NVIDIA H200"))),
            "h200-node07"
        );
        assert_eq!(
            default_testbed(&fp("gpu-3", Some("NVIDIA GeForce RTX 4090"))),
            "4090-gpu-3"
        );
        assert_eq!(default_testbed(&fp("Build Box", None)), "cpu-build-box");
        assert_eq!(
            default_testbed(&fp("", Some("NVIDIA H100"))),
            UNKNOWN_TESTBED
        );
    }

    #[test]
    fn sanitizing_keeps_safe_characters_only() {
        assert_eq!(sanitize_testbed("H200 / Node 7"), "h200-node-7");
        assert_eq!(sanitize_testbed("a\nb<script>"), "a-b-script");
        assert_eq!(sanitize_testbed("--x--"), "x");
        assert_eq!(sanitize_testbed("ünïcode"), "n-code");
        assert_eq!(sanitize_testbed("  "), UNKNOWN_TESTBED);
        assert_eq!(sanitize_testbed(&"x".repeat(100)).len(), MAX_TESTBED_LEN);
    }

    #[test]
    fn roles_round_trip_and_follow_pairs() {
        for role in [RunRole::History, RunRole::PrBase, RunRole::PrHead] {
            assert_eq!(RunRole::parse(role.as_str()), Some(role));
            let json = serde_json::to_string(&role).unwrap();
            assert_eq!(json, format!("\"{}\"", role.as_str()));
        }
        assert_eq!(RunRole::parse("base"), None);
        assert_eq!(RunRole::implied(None), RunRole::History);
        assert_eq!(RunRole::implied(Some(PairRole::Base)), RunRole::PrBase);
        assert_eq!(RunRole::implied(Some(PairRole::Head)), RunRole::PrHead);
    }

    #[test]
    fn filling_keeps_what_is_recorded() {
        let mut run = crate::run::tests::run(vec![]);
        run.fingerprint = fp("node07", None);
        run.fill_labels();
        assert_eq!(run.role, Some(RunRole::History));
        assert_eq!(run.testbed.as_deref(), Some("cpu-node07"));
        run.role = Some(RunRole::PrHead);
        run.testbed = Some("mine".into());
        run.fill_labels();
        assert_eq!(run.role, Some(RunRole::PrHead));
        assert_eq!(run.testbed.as_deref(), Some("mine"));
    }
}
