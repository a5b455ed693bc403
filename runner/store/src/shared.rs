//! What the SQL stores share besides row decoding: how an id prefix is resolved to one run, and
//! the crash-test hook inside the insert transaction.

use super::StoreError;

/// Shortest id prefix `get_run` resolves (shorter strings only match a full id).
pub const MIN_PREFIX: usize = 4;

/// At most this many candidates are named when a prefix is ambiguous.
pub const MAX_CANDIDATES: usize = 5;

/// The one id among the runs whose id starts with `id` (`matches`, sorted, at most
/// `MAX_CANDIDATES + 1`), or why there is not exactly one.
pub fn pick_one(store: &str, id: &str, matches: Vec<String>) -> Result<String, StoreError> {
    match matches.as_slice() {
        [] => Err(StoreError::NotFound {
            store: store.to_string(),
            id: id.to_string(),
        }),
        [one] => Ok(one.clone()),
        many => {
            let mut candidates = many[..many.len().min(MAX_CANDIDATES)].join(", ");
            if many.len() > MAX_CANDIDATES {
                candidates.push_str(", …");
            }
            Err(StoreError::Ambiguous {
                store: store.to_string(),
                id: id.to_string(),
                candidates,
            })
        }
    }
}

/// Test hook for crash tests: when this environment variable holds a number of milliseconds,
/// `insert_run` sleeps that long after writing a run's results and samples and before COMMIT,
/// so a test can kill the process mid-transaction and check nothing partial was stored. It
/// changes nothing else. Only with the `test-hooks` feature: a release build has no hook.
#[cfg(feature = "test-hooks")]
const FAULT_PAUSE_ENV: &str = "PITWALL_FAULT_PAUSE_IN_TXN_MS";

/// Sleeps for the crash-test hook (`PITWALL_FAULT_PAUSE_IN_TXN_MS`) when it is set.
#[cfg(feature = "test-hooks")]
pub(super) fn fault_pause_in_txn() {
    if let Some(ms) = std::env::var(FAULT_PAUSE_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        // Tests wait for this line before killing the process.
        eprintln!("fault hook: pausing {ms} ms inside the transaction");
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// Without the `test-hooks` feature there is no crash-test hook.
#[cfg(not(feature = "test-hooks"))]
pub(super) fn fault_pause_in_txn() {}

/// Why a short id found nothing: prefixes shorter than 4 characters are not looked up.
pub(super) fn prefix_hint(id: &str) -> &'static str {
    if id != "latest" && id.chars().count() < MIN_PREFIX {
        " (hint: a run id prefix needs at least 4 characters)"
    } else {
        ""
    }
}

/// Where a store reports what its reads skipped: a run with a row that cannot be read
/// (`StoreError::Corrupt`) is left out of `all_runs`, `query_runs` and `list_runs` and named
/// once, so one bad row never makes the rest of the store unreadable.
#[derive(Default)]
pub(super) struct Skips {
    sink: Option<super::SkipSink>,
    said: std::sync::Mutex<std::collections::BTreeSet<String>>,
}

impl std::fmt::Debug for Skips {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Skips")
            .field("sink", &self.sink.is_some())
            .finish()
    }
}

impl Skips {
    pub fn set_sink(&mut self, sink: super::SkipSink) {
        self.sink = Some(sink);
    }

    /// `Ok(Some(value))`; for corruption `Ok(None)`, having said so once (one line naming the
    /// run and what is wrong); any other error as it is.
    pub fn skip<T>(&self, read: Result<T, StoreError>) -> Result<Option<T>, StoreError> {
        match read {
            Ok(value) => Ok(Some(value)),
            Err(e @ StoreError::Corrupt { .. }) => {
                // Stored text is shown with its control characters escaped: one line each.
                let line: String = format!("{e}; run skipped")
                    .chars()
                    .flat_map(|c| {
                        if c.is_control() {
                            format!("\\x{:02x}", u32::from(c))
                                .chars()
                                .collect::<Vec<_>>()
                        } else {
                            vec![c]
                        }
                    })
                    .collect();
                let new = self
                    .said
                    .lock()
                    .map(|mut said| said.insert(line.clone()))
                    .unwrap_or(true);
                if new {
                    if let Some(sink) = &self.sink {
                        sink(&line);
                    }
                }
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}
