//! The noise record's values, below everything that uses them: what the testbed knows of a
//! benchmark's noise (`NoiseRecord`, kept with each pair compared) and what a comparison did
//! with it (`RecordUse`, kept with each verdict). The method is in `super::noise`.

/// A benchmark's noise record on one testbed (`super::noise` says how it is made).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct NoiseRecord {
    /// Variance of one replicate's log summary between processes, pooled over earlier pairs.
    pub var: f64,
    /// Its weighted degrees of freedom, `Σ wᵢdᵢ`.
    pub dof: f64,
    /// Earlier pairs behind it.
    pub pairs: usize,
}

/// What a comparison did with a benchmark's record.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "use")]
pub enum RecordUse {
    /// Pooled in, with this many degrees of freedom (after the cap).
    Used { dof: f64, pairs: usize },
    /// Set aside: the current variance is `ratio` × the record's, F test p-value `p`.
    Ignored { ratio: f64, p: f64 },
    /// Set aside for every benchmark of the comparison: their variances together are
    /// `ratio` × their records' (geometric mean), p-value `p` of the check across them.
    IgnoredAll { ratio: f64, p: f64 },
}

impl RecordUse {
    /// A clause for a verdict's reason, when the record was set aside.
    pub fn note(&self) -> Option<String> {
        match self {
            RecordUse::Used { .. } => None,
            RecordUse::Ignored { ratio, p } => Some(format!(
                "the testbed's noise record was ignored: this pair's variance is {ratio:.2}× the record's (F test p = {p:.3})"
            )),
            RecordUse::IgnoredAll { ratio, p } => Some(format!(
                "the testbed's noise record was ignored for the whole comparison: its variances are {ratio:.2}× the records' (p = {p:.3})"
            )),
        }
    }
}
