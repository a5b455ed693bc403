//! The sequential plan of a pair and its record, one concept in two crates that do not know each
//! other. The plan ([`SequentialPlan`], `pitwall-stats`) is the statistical object: the rounds a
//! comparison is looked at and how its error rate is spent over them. Its record
//! ([`SequentialPlanRecord`], `pitwall-schema`) is what the two runs of a pair measured until
//! decided keep of it, so that their verdicts are read again with the same plan. Every plan is
//! made by [`SequentialPlan::until_decided`] (or `fixed`, which has no record), and this is the
//! one place that turns a plan into its record and back.

use pitwall_schema::SequentialPlanRecord;
use pitwall_stats::ab::SequentialPlan;

/// What the runs of a pair keep of its plan: the rounds of the first and the last look.
pub fn record(plan: &SequentialPlan) -> SequentialPlanRecord {
    SequentialPlanRecord {
        first_look: plan.first_look,
        max_rounds: plan.max_looks,
    }
}

/// The plan a record was made from, with the two-sided error rate `alpha` of the comparison.
pub fn from_record(record: SequentialPlanRecord, alpha: f64) -> SequentialPlan {
    SequentialPlan::until_decided(record.first_look, record.max_rounds, alpha)
}

#[cfg(test)]
mod tests;
