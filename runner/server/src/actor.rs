//! The store behind the server: one thread owns it and runs the jobs request handlers send
//! it, one at a time. A `Store` is used from one thread (a SQLite connection, the PostgreSQL
//! client), and one writer at a time is what both databases want; an upload is one job, so it
//! is stored whole or not at all.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;
use std::thread::JoinHandle;

use pitwall_store::{Store, StoreError};

type Job = Box<dyn FnOnce(&mut dyn Store) + Send>;

/// Opens the store, on the thread that will use it: once for the writer, once per reader.
pub type Opener = std::sync::Arc<dyn Fn() -> Result<Box<dyn Store>, StoreError> + Send + Sync>;

/// The store thread has stopped (shutting down); the request gets 503.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gone;

/// A handle to the store thread; cheap to clone.
#[derive(Clone)]
pub struct StoreActor {
    tx: mpsc::Sender<Job>,
}

impl StoreActor {
    /// Starts a store thread named `name` and opens the store there; the error when it
    /// cannot be opened.
    pub fn start(open: Opener, name: &str) -> Result<(StoreActor, JoinHandle<()>), StoreError> {
        let (tx, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), StoreError>>();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let mut store = match open() {
                    Ok(s) => {
                        let _ = ready_tx.send(Ok(()));
                        s
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                // Every job until the last handle is dropped; a job that panics fails its
                // request (its reply is dropped: 500), not the server.
                while let Ok(job) = rx.recv() {
                    let _ = catch_unwind(AssertUnwindSafe(|| job(store.as_mut())));
                }
            })
            .expect("a thread can be spawned");
        match ready_rx.recv() {
            Ok(Ok(())) => Ok((StoreActor { tx }, handle)),
            Ok(Err(e)) => {
                let _ = handle.join();
                Err(e)
            }
            Err(_) => {
                let _ = handle.join();
                Err(StoreError::Corrupt {
                    store: "store".into(),
                    what: "the store thread stopped while opening it".into(),
                })
            }
        }
    }

    /// Runs `f` on the store and waits for its answer.
    pub async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut dyn Store) -> T + Send + 'static,
    ) -> Result<T, Gone> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.tx
            .send(Box::new(move |s| {
                let _ = tx.send(f(s));
            }))
            .map_err(|_| Gone)?;
        rx.await.map_err(|_| Gone)
    }

    /// Queues `f` on the store without waiting (background work: alert detection).
    pub fn submit(&self, f: impl FnOnce(&mut dyn Store) + Send + 'static) -> Result<(), Gone> {
        self.tx.send(Box::new(f)).map_err(|_| Gone)
    }
}

/// The store threads of a server: one writer (uploads, triage, alert detection: one at a
/// time, as SQLite wants), one that reads the tokens, and readers with their own
/// connections, taken in turn, so that reads neither wait for a long write nor for each other.
pub struct StorePool {
    pub writer: StoreActor,
    /// Reads the tokens only, so a request's check never waits behind other reads.
    pub auth: StoreActor,
    readers: Vec<StoreActor>,
    next: std::sync::atomic::AtomicUsize,
}

impl StorePool {
    /// Opens the writer first (it migrates the store), then `readers` readers; with the
    /// threads, which end once every handle to them is dropped and their queues are done.
    pub fn start(
        open: Opener,
        readers: usize,
    ) -> Result<(StorePool, Vec<JoinHandle<()>>), StoreError> {
        let (writer, w) = StoreActor::start(open.clone(), "pitwall-store-w")?;
        let (auth, a) = StoreActor::start(open.clone(), "pitwall-store-auth")?;
        let mut threads = vec![w, a];
        let mut pool = Vec::new();
        for i in 0..readers.max(1) {
            let (r, t) = StoreActor::start(open.clone(), &format!("pitwall-store-r{i}"))?;
            pool.push(r);
            threads.push(t);
        }
        let pool = StorePool {
            writer,
            auth,
            readers: pool,
            next: std::sync::atomic::AtomicUsize::new(0),
        };
        Ok((pool, threads))
    }

    /// The next reader.
    pub fn reader(&self) -> &StoreActor {
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        &self.readers[i % self.readers.len()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlite(dir: &std::path::Path) -> Opener {
        let path = dir.join("s.db");
        std::sync::Arc::new(move || {
            pitwall_store::SqliteStore::open(&path).map(|s| Box::new(s) as Box<dyn Store>)
        })
    }

    #[test]
    fn jobs_run_in_order_and_a_panicking_job_leaves_the_thread_running() {
        let dir = tempfile::tempdir().unwrap();
        let (actor, handle) = StoreActor::start(sqlite(dir.path()), "t").unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let panicked = actor.call(|_| -> usize { panic!("a bad job") }).await;
            assert_eq!(panicked, Err(Gone));
            let runs = actor.call(|s| s.list_runs(None).unwrap().len()).await;
            assert_eq!(runs, Ok(0));
        });
        drop(actor);
        handle.join().unwrap();
    }

    #[test]
    fn a_store_that_cannot_open_is_the_error() {
        let opener: Opener = std::sync::Arc::new(|| {
            Err(StoreError::Missing {
                store: "sqlite:/nowhere".into(),
                what: "no such store".into(),
            })
        });
        assert!(StoreActor::start(opener, "t").is_err());
    }
}
