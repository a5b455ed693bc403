//! Group commit of uploads: an upload joins the queue of runs waiting for the store's writers,
//! and a writer stores every run queued by then in one transaction (up to
//! `SERVE_GROUP_COMMIT_MAX_RESULTS` results), then answers each. On SQLite most of a run's cost
//! is writing the index pages it touches to the log, and runs uploaded together touch the same
//! pages, so fifty 1,000-result runs take 2.2 s in one transaction and 5.1 s in fifty
//! (docs/PERFORMANCE.md, "`pitwall serve` at scale"). SQLite has one writer; PostgreSQL, whose
//! backend is the bottleneck of an upload, has several (`SERVE_POSTGRES_WRITERS`), each with its
//! own connection, storing batches side by side. An upload is one run or a batch of runs (an
//! import), stored whole or not at all; a transaction that fails (a conflicting or invalid run
//! in it) is done again upload by upload, so one bad upload fails only itself.

use std::sync::{Arc, Mutex};

use pitwall_schema::Run;
use pitwall_store::{InsertOutcome, Store, StoreError};

use crate::actor::{Gone, StoreActor, UploadsFirst};

type Outcomes = Result<Vec<InsertOutcome>, StoreError>;
type Reply = tokio::sync::oneshot::Sender<Outcomes>;
/// One upload's runs and where its answer goes.
type Queued = (Vec<Run>, Reply);

/// The uploads waiting for a writer, and the writers waiting for uploads.
#[derive(Default)]
struct Waiting {
    uploads: Vec<Queued>,
    /// The writers (their index) with no batch to store and no flush asked of them.
    idle: Vec<usize>,
}

/// Uploads (their runs) waiting for the writers.
#[derive(Clone)]
pub struct GroupCommit {
    writers: Arc<Vec<StoreActor>>,
    queue: Arc<Mutex<Waiting>>,
    max_results: usize,
    /// Counts the uploads in flight, for the readers that give way to them.
    pending: Arc<UploadsFirst>,
}

impl GroupCommit {
    /// Group commit over `writers` (at least one), each storing at most `max_results` results
    /// (but at least one upload) a transaction.
    pub fn new(writers: Vec<StoreActor>, max_results: usize) -> GroupCommit {
        assert!(!writers.is_empty(), "group commit needs a writer");
        let idle = (0..writers.len()).collect();
        GroupCommit {
            writers: Arc::new(writers),
            queue: Arc::new(Mutex::new(Waiting {
                uploads: Vec::new(),
                idle,
            })),
            max_results,
            pending: Arc::new(UploadsFirst::default()),
        }
    }

    /// The same, counting its uploads in flight in `pending`.
    pub fn counting(mut self, pending: Arc<UploadsFirst>) -> GroupCommit {
        self.pending = pending;
        self
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stores `runs` (one upload: all or none) with whatever else is queued when a writer
    /// gets to it; their outcomes, in order.
    pub async fn insert(&self, runs: Vec<Run>) -> Result<Outcomes, Gone> {
        let _pending = self.pending.begin();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let woken = {
            let mut waiting = self.waiting();
            waiting.uploads.push((runs, tx));
            waiting.idle.pop()
        };
        // An idle writer is asked for a flush; busy ones take the queue when they are done.
        if let Some(w) = woken {
            self.flush_later(w)?;
        }
        rx.await.map_err(|_| Gone)
    }

    fn flush_later(&self, w: usize) -> Result<(), Gone> {
        let this = self.clone();
        self.writers[w].now(move |store| this.flush(w, store))
    }

    /// On writer `w`: stores the oldest queued uploads, at most `max_results` results (but at
    /// least one upload) in one transaction, then asks itself for another flush; with nothing
    /// queued it becomes idle. Another flush rather than a loop, so that the writer's other
    /// jobs (triage) are not held behind a long queue.
    fn flush(&self, w: usize, store: &mut dyn Store) {
        let batch = {
            let mut waiting = self.waiting();
            let sizes = waiting.uploads.iter().map(|(runs, _)| results_of(runs));
            let take = batch_len(sizes, self.max_results);
            if take == 0 {
                waiting.idle.push(w);
                return;
            }
            waiting.uploads.drain(..take).collect::<Vec<Queued>>()
        };
        self.store_batch(batch, store);
        if self.flush_later(w).is_err() {
            // Shutting down: whoever is left gets 503 (their replies are dropped).
            self.waiting().uploads.clear();
        }
    }

    /// Stores one batch of uploads in one transaction, and answers each.
    fn store_batch(&self, batch: Vec<Queued>, store: &mut dyn Store) {
        let (uploads, replies): (Vec<Vec<Run>>, Vec<Reply>) = batch.into_iter().unzip();
        let runs: Vec<Run> = uploads.iter().flatten().cloned().collect();
        let started = std::time::Instant::now();
        let stored = store.insert_runs(&runs);
        let line = serde_json::json!({
            "event": "stored",
            "uploads": uploads.len(),
            "runs": runs.len(),
            "results": results_of(&runs),
            "duration_ms": started.elapsed().as_secs_f64() * 1e3,
            "ok": stored.is_ok(),
        });
        eprintln!("{line}");
        match stored {
            Ok(mut outcomes) => {
                for (upload, reply) in uploads.iter().zip(replies) {
                    let rest = outcomes.split_off(upload.len());
                    let _ = reply.send(Ok(std::mem::replace(&mut outcomes, rest)));
                }
            }
            Err(e) if uploads.len() == 1 => {
                let _ = replies.into_iter().next().map(|r| r.send(Err(e)));
            }
            // One upload spoiled the transaction: each is stored on its own, so only it fails.
            Err(_) => {
                for (upload, reply) in uploads.iter().zip(replies) {
                    let _ = reply.send(store.insert_runs(upload));
                }
            }
        }
    }
}

fn results_of(runs: &[Run]) -> usize {
    runs.iter().map(|r| r.results.len()).sum()
}

/// How many of the queued uploads (their result counts, oldest first) go in one transaction:
/// as many as fit in `max_results` results, and at least one.
fn batch_len(results: impl Iterator<Item = usize>, max_results: usize) -> usize {
    let mut total = 0usize;
    let mut n = 0;
    for r in results {
        if n > 0 && total + r > max_results {
            break;
        }
        total += r;
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_store::conformance::{ok_result, run};

    #[test]
    fn a_batch_holds_at_most_max_results_but_at_least_one_run() {
        assert_eq!(batch_len([1000, 1000, 1000].into_iter(), 2500), 2);
        assert_eq!(batch_len([5000, 10].into_iter(), 2500), 1);
        assert_eq!(batch_len([10, 10].into_iter(), 2500), 2);
        assert_eq!(batch_len(std::iter::empty(), 2500), 0);
    }

    /// Uploads that arrive while the writer is busy are stored in one transaction; a bad run
    /// among them fails alone.
    #[test]
    fn queued_uploads_are_stored_together_and_a_bad_one_fails_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let opener: crate::actor::Opener = Arc::new(move || {
            pitwall_store::SqliteStore::open(&path).map(|s| Box::new(s) as Box<dyn Store>)
        });
        let (writer, handle) = StoreActor::start(opener, "w").unwrap();
        let commit = GroupCommit::new(vec![writer.clone()], 1000);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_time()
            .build()
            .unwrap();
        // Holds the writer so the uploads below queue up behind it.
        let (hold_tx, hold_rx) = std::sync::mpsc::channel::<()>();
        writer
            .now(move |_| {
                let _ = hold_rx.recv();
            })
            .unwrap();
        let mut bad = run(
            "up-bad",
            "2026-05-01T10:00:00Z",
            vec![ok_result("x", vec![1.0])],
        );
        bad.results[0].replicates = vec![0, 1];
        let runs: Vec<Run> = (0..4)
            .map(|i| {
                let at = format!("2026-05-0{}T10:00:00Z", i + 2);
                run(&format!("up-{i}"), &at, vec![ok_result("x", vec![1.0])])
            })
            .chain([bad])
            .collect();
        let answers = rt.block_on(async {
            let tasks: Vec<_> = runs
                .into_iter()
                .map(|r| {
                    let c = commit.clone();
                    tokio::spawn(async move { c.insert(vec![r]).await })
                })
                .collect();
            // Every upload has queued before the writer is let go.
            while commit.waiting().uploads.len() < 5 {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            hold_tx.send(()).unwrap();
            let mut answers = Vec::new();
            for t in tasks {
                answers.push(t.await.unwrap().unwrap());
            }
            answers
        });
        for a in &answers[..4] {
            assert_eq!(*a.as_ref().unwrap(), [InsertOutcome::Inserted]);
        }
        assert!(matches!(answers[4], Err(StoreError::Invalid { .. })));
        let stored = rt.block_on(writer.call(|s| s.list_runs(None).unwrap().len()));
        assert_eq!(stored, Ok(4));
        drop((writer, commit));
        drop(rt);
        handle.join().unwrap();
    }

    /// With two writers, uploads are stored while one writer is busy: the idle one takes
    /// every upload queued by then, the one that woke the busy writer too.
    #[test]
    fn a_second_writer_stores_an_upload_while_the_first_is_busy() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.db");
        let opener: crate::actor::Opener = Arc::new(move || {
            pitwall_store::SqliteStore::open(&path).map(|s| Box::new(s) as Box<dyn Store>)
        });
        let (w0, h0) = StoreActor::start(opener.clone(), "w0").unwrap();
        let (w1, h1) = StoreActor::start(opener, "w1").unwrap();
        let commit = GroupCommit::new(vec![w0.clone(), w1.clone()], 1000);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_time()
            .build()
            .unwrap();
        // Writer 1 (the first one asked) is held: the first upload's flush waits behind it.
        let (hold_tx, hold_rx) = std::sync::mpsc::channel::<()>();
        w1.now(move |_| {
            let _ = hold_rx.recv();
        })
        .unwrap();
        let upload = |id: &str, day: u32| {
            let at = format!("2026-05-0{day}T10:00:00Z");
            vec![run(id, &at, vec![ok_result("x", vec![1.0])])]
        };
        let (first, second) = rt.block_on(async {
            let c = commit.clone();
            let held = upload("held", 1);
            let first = tokio::spawn(async move { c.insert(held).await });
            while commit.waiting().idle.len() > 1 {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            let second = tokio::time::timeout(
                std::time::Duration::from_secs(20),
                commit.insert(upload("free", 2)),
            )
            .await;
            // The idle writer took every queued upload, the first one too.
            let first = tokio::time::timeout(std::time::Duration::from_secs(20), first)
                .await
                .expect("the first upload waited for the busy writer");
            hold_tx.send(()).unwrap();
            (first.unwrap(), second)
        });
        let second = second.expect("the second upload waited for the busy writer");
        assert_eq!(second.unwrap().unwrap(), [InsertOutcome::Inserted]);
        assert_eq!(first.unwrap().unwrap(), [InsertOutcome::Inserted]);
        drop((w0, w1, commit));
        drop(rt);
        h0.join().unwrap();
        h1.join().unwrap();
    }
}
