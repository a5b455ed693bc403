//! `pitwall runs exclude ID --note TEXT` and `runs include ID`: a person takes a bad run (one
//! measured while the machine was busy, a broken build that still ran) out of history, alerts
//! and write-ups without deleting it, or puts it back; either way the run's series are
//! re-detected at once, so an alert that only that run made is dismissed ("no longer
//! detected") and one it hid is raised.

use pitwall_schema::{Alert, Exclusion, Run};
use pitwall_store::{Store, StoreError};

use crate::alerts::{AlertSettings, refresh};

/// Why a run could not be excluded or included.
#[derive(Debug, thiserror::Error)]
pub enum ExclusionError {
    #[error("cannot read run `{id}`")]
    Read {
        id: String,
        #[source]
        source: StoreError,
    },
    #[error(
        "run {id} is not part of any history (role `{role}`): excluding it changes nothing (hint: only runs with role `history` can be excluded)"
    )]
    NotHistory { id: String, role: &'static str },
    #[error("cannot record the exclusion of run {id}")]
    Write {
        id: String,
        #[source]
        source: StoreError,
    },
    #[error("run {id} changed; re-detecting its series failed")]
    Alerts {
        id: String,
        #[source]
        source: StoreError,
    },
}

/// What excluding or including did.
#[derive(Debug, Clone)]
pub struct ExclusionOutcome {
    /// The run, as stored now.
    pub run: Run,
    /// Whether the store changed (false when the run already was as asked).
    pub changed: bool,
    /// Alerts the re-detection raised (a step the run hid).
    pub new_alerts: Vec<Alert>,
}

/// Takes run `id` (id, unique prefix or `latest`) out of history with `note` (`Some`), or
/// puts it back (`None`), then re-detects the series it belongs to.
pub fn set_excluded(
    store: &mut dyn Store,
    id: &str,
    note: Option<&str>,
    settings: &AlertSettings,
    now: &str,
) -> Result<ExclusionOutcome, ExclusionError> {
    let mut run = store.get_run(id).map_err(|source| ExclusionError::Read {
        id: id.to_string(),
        source,
    })?;
    let role = run.role_or_implied();
    if role != pitwall_schema::RunRole::History {
        return Err(ExclusionError::NotHistory {
            id: run.id,
            role: role.as_str(),
        });
    }
    let exclusion = note.map(|n| Exclusion {
        note: n.to_string(),
        at: now.to_string(),
    });
    let moved = run.exclusion.is_some() != exclusion.is_some();
    let changed = run.exclusion.as_ref().map(|e| &e.note) != exclusion.as_ref().map(|e| &e.note);
    if changed {
        store
            .set_exclusion(&run.id, exclusion.as_ref())
            .map_err(|source| ExclusionError::Write {
                id: run.id.clone(),
                source,
            })?;
        run.exclusion = exclusion;
    }
    let new_alerts = if moved {
        refresh(store, std::slice::from_ref(&run), settings, now)
            .map_err(|source| ExclusionError::Alerts {
                id: run.id.clone(),
                source,
            })?
            .new
    } else {
        Vec::new()
    };
    Ok(ExclusionOutcome {
        run,
        changed,
        new_alerts,
    })
}
