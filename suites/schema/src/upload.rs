//! What a runner sends `pitwall serve` to store a run (`POST /api/v1/p/<project>/runs`): the
//! run, and the alert thresholds of the configuration it was measured under, since the server
//! detects alerts for it without that configuration; or many runs at once (`POST …/runs/batch`,
//! an import), stored together. Shared by the server and its client.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Run;

/// The API's version, the path segment after `/api/`.
pub const API_VERSION: &str = "v1";

/// One upload: a run and how its history's alerts are judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Upload {
    pub run: Run,
    #[serde(default)]
    pub alerts: UploadAlertRules,
}

/// Many runs of one project in one upload (`POST /api/v1/p/<project>/runs/batch`): stored in
/// one transaction, all or none, and counted as one upload by the rate limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UploadBatch {
    pub runs: Vec<Run>,
    #[serde(default)]
    pub alerts: UploadAlertRules,
}

/// Most runs in one batch upload.
pub const MAX_BATCH_RUNS: usize = 500;

/// The thresholds alert detection uses for the run's series (the server's defaults where
/// absent): `[thresholds] regression_pct`, each suite's `threshold_pct`, and `[history]
/// branch`, the branch runs without one count for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UploadAlertRules {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub suite_threshold_pct: BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_branch: Option<String>,
}

impl UploadAlertRules {
    /// Why these rules cannot be used: a threshold that is not a positive finite percentage,
    /// or an empty branch.
    pub fn problem(&self) -> Option<String> {
        let bad = |t: f64| !(t.is_finite() && t > 0.0 && t < 1e6);
        if let Some(t) = self.threshold_pct.filter(|t| bad(*t)) {
            return Some(format!(
                "alerts.threshold_pct {t} is not a positive percentage"
            ));
        }
        if let Some((s, t)) = self.suite_threshold_pct.iter().find(|(_, t)| bad(**t)) {
            return Some(format!(
                "alerts.suite_threshold_pct of suite {s:?}: {t} is not a positive percentage"
            ));
        }
        if self
            .history_branch
            .as_deref()
            .is_some_and(|b| b.trim().is_empty())
        {
            return Some("alerts.history_branch is empty".into());
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_default_when_absent_and_are_checked() {
        let r: UploadAlertRules = serde_json::from_str("{}").unwrap();
        assert_eq!(r, UploadAlertRules::default());
        assert!(r.problem().is_none());
        let bad: UploadAlertRules =
            serde_json::from_str(r#"{"threshold_pct": -1, "history_branch": "main"}"#).unwrap();
        assert!(bad.problem().unwrap().contains("threshold_pct -1"));
        let suite: UploadAlertRules =
            serde_json::from_str(r#"{"suite_threshold_pct": {"kernels": 0}}"#).unwrap();
        assert!(suite.problem().unwrap().contains("kernels"));
        assert!(serde_json::from_str::<UploadAlertRules>(r#"{"threshold": 2}"#).is_err());
    }
}
