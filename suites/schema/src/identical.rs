//! Code a pair found identical on both sides and did not measure (issue 26): a `cuda-kernels`
//! kernel whose cubin and manifest entry are the same bytes, or a whole command suite whose
//! `artifacts` hash the same. Kept in both runs' `PairInfo`, so a stored pair shows it with the
//! verdict `identical` wherever a verdict shows.

use serde::{Deserialize, Serialize};

/// How the code was found identical.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdenticalBasis {
    /// The kernel's cubin (compiled by NVRTC from each checkout) and its manifest entry.
    Cubin,
    /// The command suite's `artifacts`, hashed after each side's build.
    Artifacts,
}

impl IdenticalBasis {
    /// What the comparison says was compared: `identical cubin`, `identical artifacts`.
    pub fn describe(self) -> &'static str {
        match self {
            IdenticalBasis::Cubin => "identical cubin and manifest entry",
            IdenticalBasis::Artifacts => "identical artifacts",
        }
    }
}

/// One piece of identical code: a kernel of a `cuda-kernels` suite, or a whole suite.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdenticalCode {
    pub suite: String,
    /// The kernel (its benchmarks are named after it); `None`: every benchmark of the suite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    pub basis: IdenticalBasis,
}

impl IdenticalCode {
    /// `suite/kernel`, or `suite` for a whole suite.
    pub fn label(&self) -> String {
        match &self.kernel {
            Some(k) => format!("{}/{k}", self.suite),
            None => self.suite.clone(),
        }
    }

    /// Whether a result of `suite` named `name` belongs to this code.
    pub fn covers(&self, suite: &str, name: &str) -> bool {
        self.suite == suite && self.kernel.as_deref().is_none_or(|k| k == name)
    }
}
