//! The store behind the server: one thread owns it and runs the jobs request handlers send
//! it, one at a time. A `Store` is used from one thread (a SQLite connection, the PostgreSQL
//! client), and one writer at a time is what both databases want; an upload is one job, so it
//! is stored whole or not at all. Jobs someone waits for (uploads, triage) go before
//! background jobs (alert detection), so a detection never holds an upload's answer.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;
use std::thread::JoinHandle;

use pitwall_store::{Store, StoreError};

type Job = Box<dyn FnOnce(&mut dyn Store) + Send>;

/// Which queue of the store thread a job joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lane {
    /// A request waits for it.
    Now,
    /// Nobody waits (alert detection): run when no `Now` job is queued.
    Background,
}

/// Opens the store, on the thread that will use it: once for the writer, once per reader.
pub type Opener = std::sync::Arc<dyn Fn() -> Result<Box<dyn Store>, StoreError> + Send + Sync>;

/// The uploads being stored or waiting for a writer, which the readers let go first: a reader
/// waits before its next job while there are any, for at most its limit. Nice values order the
/// server's own threads, but not the database's backends (PostgreSQL's are other processes,
/// in another scheduling group), so a machine busy with readers would otherwise leave an upload
/// half the cpu (docs/PERFORMANCE.md, "`pitwall serve` at scale").
#[derive(Debug, Default)]
pub struct UploadsFirst {
    pending: std::sync::atomic::AtomicUsize,
}

/// One upload counted by [`UploadsFirst`] until it is dropped (answered, or its request gone).
pub struct Pending(std::sync::Arc<UploadsFirst>);

impl Drop for Pending {
    fn drop(&mut self) {
        self.0
            .pending
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl UploadsFirst {
    /// Counts one upload until the guard is dropped.
    pub fn begin(self: &std::sync::Arc<Self>) -> Pending {
        self.pending
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Pending(self.clone())
    }

    /// Blocks the calling (reader) thread while uploads are pending, for at most `max`.
    fn wait(&self, max: std::time::Duration) {
        let started = std::time::Instant::now();
        while self.pending.load(std::sync::atomic::Ordering::SeqCst) > 0 && started.elapsed() < max
        {
            std::thread::sleep(READ_YIELD_POLL);
        }
    }
}

/// How often a reader waiting for uploads looks again.
const READ_YIELD_POLL: std::time::Duration = std::time::Duration::from_millis(2);

/// How a reader thread gives way: its nice value, and the uploads it waits for (with the
/// longest it waits before each job).
#[derive(Clone, Default)]
pub struct Giving {
    pub nice: Option<i32>,
    pub uploads: Option<(std::sync::Arc<UploadsFirst>, std::time::Duration)>,
}

/// The store thread has stopped (shutting down); the request gets 503.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gone;

/// A handle to the store thread; cheap to clone.
#[derive(Clone)]
pub struct StoreActor {
    tx: mpsc::Sender<(Lane, Job)>,
}

impl StoreActor {
    /// Starts a store thread named `name` and opens the store there; the error when it
    /// cannot be opened.
    pub fn start(open: Opener, name: &str) -> Result<(StoreActor, JoinHandle<()>), StoreError> {
        StoreActor::start_giving(open, name, Giving::default())
    }

    /// `start`, for a thread that gives way to uploads as `giving` says (readers: an upload
    /// waits for the writer, a reader's answer can wait for the upload).
    pub fn start_giving(
        open: Opener,
        name: &str,
        giving: Giving,
    ) -> Result<(StoreActor, JoinHandle<()>), StoreError> {
        let Giving { nice, uploads } = giving;
        let (tx, rx) = mpsc::channel::<(Lane, Job)>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), StoreError>>();
        let thread = name.to_string();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                if let Some(nice) = nice
                    && let Err(e) = pitwall_host::machine::lower_thread_priority(nice)
                {
                    let line = serde_json::json!({
                        "event": "priority", "thread": thread, "error": e.to_string(),
                    });
                    eprintln!("{line}");
                }
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
                // Every job until the last handle is dropped and the queues are empty; a job
                // that panics fails its request (its reply is dropped: 500), not the server.
                let mut queues = Queues::default();
                while let Some(job) = queues.next(&rx) {
                    if let Some((uploads, max)) = &uploads {
                        uploads.wait(*max);
                    }
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
        self.now(move |s| {
            let _ = tx.send(f(s));
        })?;
        rx.await.map_err(|_| Gone)
    }

    /// Queues `f` ahead of background work, without waiting; `f` answers its caller itself
    /// (the group commit of uploads).
    pub fn now(&self, f: impl FnOnce(&mut dyn Store) + Send + 'static) -> Result<(), Gone> {
        self.tx.send((Lane::Now, Box::new(f))).map_err(|_| Gone)
    }

    /// Queues `f` on the store without waiting, behind every job a request waits for
    /// (background work: alert detection).
    pub fn submit(&self, f: impl FnOnce(&mut dyn Store) + Send + 'static) -> Result<(), Gone> {
        self.tx
            .send((Lane::Background, Box::new(f)))
            .map_err(|_| Gone)
    }
}

/// The jobs a store thread has received and not run yet, per lane.
#[derive(Default)]
struct Queues {
    now: VecDeque<Job>,
    background: VecDeque<Job>,
}

impl Queues {
    /// The next job: every job sent so far is taken in first, then the oldest `Now` job runs
    /// before any background job; blocks while there is none. `None` once every sender is
    /// gone and nothing is left.
    fn next(&mut self, rx: &mpsc::Receiver<(Lane, Job)>) -> Option<Job> {
        loop {
            while let Ok((lane, job)) = rx.try_recv() {
                self.push(lane, job);
            }
            if let Some(job) = self.now.pop_front().or_else(|| self.background.pop_front()) {
                return Some(job);
            }
            let (lane, job) = rx.recv().ok()?;
            self.push(lane, job);
        }
    }

    fn push(&mut self, lane: Lane, job: Job) {
        match lane {
            Lane::Now => self.now.push_back(job),
            Lane::Background => self.background.push_back(job),
        }
    }
}

/// The store threads of a server: one writer (uploads, triage, alert detection: one at a
/// time, as SQLite wants), one that reads the tokens, and readers with their own
/// connections, taken in turn, so that reads neither wait for a long write nor for each other.
pub struct StorePool {
    pub writer: StoreActor,
    /// Writers that store uploads beside `writer` (PostgreSQL; none on SQLite), each with its
    /// own connection.
    pub uploaders: Vec<StoreActor>,
    /// Reads the tokens only, so a request's check never waits behind other reads.
    pub auth: StoreActor,
    readers: Vec<StoreActor>,
    next: std::sync::atomic::AtomicUsize,
}

impl StorePool {
    /// Opens the writer first (it migrates the store), then `writers - 1` more writers for
    /// uploads, then `readers` readers that give way as `giving` says; with the threads, which end
    /// once every handle to them is dropped and their queues are done.
    pub fn start(
        open: Opener,
        writers: usize,
        readers: usize,
        giving: Giving,
    ) -> Result<(StorePool, Vec<JoinHandle<()>>), StoreError> {
        let (writer, w) = StoreActor::start(open.clone(), "pitwall-store-w")?;
        let (auth, a) = StoreActor::start(open.clone(), "pitwall-store-auth")?;
        let mut threads = vec![w, a];
        let mut uploaders = Vec::new();
        for i in 1..writers.max(1) {
            let (u, t) = StoreActor::start(open.clone(), &format!("pitwall-store-w{i}"))?;
            uploaders.push(u);
            threads.push(t);
        }
        let mut pool = Vec::new();
        for i in 0..readers.max(1) {
            let name = format!("pitwall-store-r{i}");
            let (r, t) = StoreActor::start_giving(open.clone(), &name, giving.clone())?;
            pool.push(r);
            threads.push(t);
        }
        let pool = StorePool {
            writer,
            uploaders,
            auth,
            readers: pool,
            next: std::sync::atomic::AtomicUsize::new(0),
        };
        Ok((pool, threads))
    }

    /// Every writer that stores uploads: `writer` first.
    pub fn upload_writers(&self) -> Vec<StoreActor> {
        std::iter::once(&self.writer)
            .chain(&self.uploaders)
            .cloned()
            .collect()
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
    fn jobs_a_request_waits_for_run_before_background_jobs() {
        let (tx, rx) = mpsc::channel::<(Lane, Job)>();
        let order = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        for (lane, name) in [
            (Lane::Background, "detect 1"),
            (Lane::Now, "upload 1"),
            (Lane::Background, "detect 2"),
            (Lane::Now, "upload 2"),
        ] {
            let order = order.clone();
            let job: Job = Box::new(move |_| order.lock().unwrap().push(name));
            tx.send((lane, job)).unwrap();
        }
        drop(tx);
        let dir = tempfile::tempdir().unwrap();
        let mut store = pitwall_store::SqliteStore::open(&dir.path().join("s.db")).unwrap();
        let mut queues = Queues::default();
        while let Some(job) = queues.next(&rx) {
            job(&mut store);
        }
        assert_eq!(
            *order.lock().unwrap(),
            ["upload 1", "upload 2", "detect 1", "detect 2"]
        );
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

    /// A reader that gives way starts its next job only once the pending uploads are answered,
    /// or after its limit; with none pending it does not wait.
    #[test]
    fn readers_wait_for_pending_uploads_up_to_their_limit() {
        use std::time::{Duration, Instant};
        let dir = tempfile::tempdir().unwrap();
        let uploads = std::sync::Arc::new(UploadsFirst::default());
        let giving = |max_ms| Giving {
            nice: None,
            uploads: Some((uploads.clone(), Duration::from_millis(max_ms))),
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let (reader, _t) =
            StoreActor::start_giving(sqlite(dir.path()), "r", giving(5_000)).unwrap();
        let read = |r: &StoreActor| {
            let t = Instant::now();
            rt.block_on(r.call(|_| ())).unwrap();
            t.elapsed()
        };
        assert!(read(&reader) < Duration::from_millis(1_000));
        // An upload pending for 300 ms holds the read that long.
        let pending = uploads.begin();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(pending);
        });
        let held = read(&reader);
        release.join().unwrap();
        assert!(held >= Duration::from_millis(250), "{held:?}");
        assert!(held < Duration::from_millis(4_000), "{held:?}");
        // An upload that never ends holds a read only up to the limit.
        let (short, _t2) = StoreActor::start_giving(sqlite(dir.path()), "r2", giving(200)).unwrap();
        let _forever = uploads.begin();
        let held = read(&short);
        assert!(held >= Duration::from_millis(190), "{held:?}");
        assert!(held < Duration::from_millis(3_000), "{held:?}");
    }
}
