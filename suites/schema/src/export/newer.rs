//! What only a newer export schema holds, run by run: the newest schema a set of runs needs
//! when exported, and the refusal of a document that declares an older schema than its
//! content (with the one to declare as the hint).

use crate::run::{Run, RunRole};
use crate::schema::{ResultStatus, SCHEMA_V5, SCHEMA_V6, SCHEMA_V7, SCHEMA_V8};

use super::{ExportDoc, SchemaError};

/// Content new in a schema: the schema, the schemas that may hold it, whether a run holds it,
/// and what it is ("… new in SCHEMA").
struct Newer {
    schema: &'static str,
    allowed: &'static [&'static str],
    holds: fn(&Run) -> bool,
    what: &'static str,
}

/// Newest first: the first a run holds is the schema it needs.
const NEWER: &[Newer] = &[
    Newer {
        schema: SCHEMA_V8,
        allowed: &[SCHEMA_V8],
        holds: local,
        what: "the role `local` is",
    },
    Newer {
        schema: SCHEMA_V8,
        allowed: &[SCHEMA_V8],
        holds: excluded,
        what: "a run's `exclusion` is",
    },
    Newer {
        schema: SCHEMA_V8,
        allowed: &[SCHEMA_V8],
        holds: sampled_contention,
        what: "a run's `contention` is",
    },
    Newer {
        schema: SCHEMA_V8,
        allowed: &[SCHEMA_V8],
        holds: positioned,
        what: "a commit's `first_parent_position` is",
    },
    Newer {
        schema: SCHEMA_V7,
        allowed: &[SCHEMA_V7, SCHEMA_V8],
        holds: identical_code,
        what: "a pair's `identical`, `measured_ms` and `saved_ms_estimate` are",
    },
    Newer {
        schema: SCHEMA_V7,
        allowed: &[SCHEMA_V7, SCHEMA_V8],
        holds: calibration,
        what: "the role `calibration` is",
    },
    Newer {
        schema: SCHEMA_V6,
        allowed: &[SCHEMA_V6, SCHEMA_V7, SCHEMA_V8],
        holds: round_orders,
        what: "a pair's `round_orders` is",
    },
    Newer {
        schema: SCHEMA_V5,
        allowed: &[SCHEMA_V5, SCHEMA_V6, SCHEMA_V7, SCHEMA_V8],
        holds: implausible_or_cycles,
        what: "an `implausible` result or a sample's `cycles` is",
    },
];

/// The newest schema (v5 or later) some run needs; `None` when v3/v4 will do.
pub(super) fn needed(runs: &[Run]) -> Option<&'static str> {
    NEWER
        .iter()
        .find(|n| runs.iter().any(n.holds))
        .map(|n| n.schema)
}

/// Refuses a document whose declared schema is older than what one of its runs holds.
pub(super) fn check(doc: &ExportDoc) -> Result<(), SchemaError> {
    for n in NEWER {
        if n.allowed.contains(&doc.schema.as_str()) {
            continue;
        }
        if let Some((i, run)) = doc.runs.iter().enumerate().find(|(_, r)| (n.holds)(r)) {
            return Err(SchemaError::Invalid {
                run: format!("run {i} ({})", run.id),
                what: format!(
                    "{} new in {} (hint: declare \"schema\": \"{}\")",
                    n.what, n.schema, n.schema
                ),
            });
        }
    }
    Ok(())
}

/// The role `local` (`pitwall/v8`).
fn local(run: &Run) -> bool {
    run.role == Some(RunRole::Local)
}

/// A run taken out of history (`pitwall/v8`).
fn excluded(run: &Run) -> bool {
    run.exclusion.is_some()
}

/// The contention sampled while a run measured (`pitwall/v8`).
fn sampled_contention(run: &Run) -> bool {
    run.contention.is_some()
}

/// A commit's first-parent position (`pitwall/v8`).
fn positioned(run: &Run) -> bool {
    run.commit_info
        .as_ref()
        .is_some_and(|c| c.first_parent_position.is_some())
}

/// A pair's identical code or its time (`pitwall/v7`).
fn identical_code(run: &Run) -> bool {
    run.pair.as_ref().is_some_and(|p| {
        !p.identical.is_empty() || p.measured_ms.is_some() || p.saved_ms_estimate.is_some()
    })
}

/// The role `calibration` (`pitwall/v7`).
fn calibration(run: &Run) -> bool {
    run.role == Some(RunRole::Calibration)
}

/// A pair's round orders (`pitwall/v6`).
fn round_orders(run: &Run) -> bool {
    run.pair
        .as_ref()
        .is_some_and(|p| !p.round_orders.is_empty())
}

/// An implausible result or a sample's cycles (`pitwall/v5`).
fn implausible_or_cycles(run: &Run) -> bool {
    run.results.iter().any(|r| {
        r.status == ResultStatus::Implausible || r.sample_meta.iter().any(|m| m.cycles.is_some())
    })
}
