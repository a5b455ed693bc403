//! `pitwall serve` (issue 29): the team's HTTP server over one store. Runners upload runs with
//! a token instead of holding database credentials; the server stores each upload in one
//! transaction, answers, and then re-detects the alerts of the series it touched in the
//! background, coalesced per series. People and programs read runs, series, alerts and pairs
//! through the versioned JSON API under `/api/v1/p/<project>/` (docs/SERVE.md). People sign
//! in from a browser and triage alerts on its pages (issue 30).
//!
//! The only crate with axum and tokio's server side: the other commands do not pay for them.

mod access_log;
mod actor;
mod alert_pages;
mod api;
mod auth;
mod commit;
mod history_pages;
mod pages;
mod routes;
mod session;
mod upload;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use tower_http::timeout::TimeoutLayer;

pub use actor::Opener;
use actor::StorePool;
use pitwall_engine::defaults;

/// How the server listens and what it allows.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub listen: SocketAddr,
    /// `[serve] public_read`: reads need no token.
    pub public_read: bool,
    /// Largest request body (413 above).
    pub max_body_bytes: usize,
    /// Uploads one token may make a minute (429 above).
    pub uploads_per_minute: usize,
    /// Longest a request may take (408 after).
    pub request_timeout: Duration,
    /// Store threads that serve reads, each with its own connection.
    pub readers: usize,
    /// The nice value of the reader threads (`None`: left as the process's).
    pub reader_nice: Option<i32>,
    /// The longest a reader waits before a read while uploads are being stored (zero: reads
    /// do not wait).
    pub read_yield: Duration,
    /// The configuration the server was started with: the thresholds of its comparison
    /// pages.
    pub config: std::sync::Arc<pitwall_engine::config::Config>,
    /// Most results stored in one transaction when uploads queue up (group commit).
    pub group_commit_max_results: usize,
    /// Store threads that store uploads side by side, each with its own connection: one on
    /// SQLite (one writer at a time), `SERVE_POSTGRES_WRITERS` on PostgreSQL.
    pub writers: usize,
    /// The project whose `[history] branch` and thresholds the server was started with: the
    /// defaults of an upload that names none.
    pub history_branch: String,
    pub threshold_pct: f64,
}

impl ServeOptions {
    /// The defaults of `pitwall_engine::defaults` on `listen`.
    pub fn new(listen: SocketAddr) -> ServeOptions {
        ServeOptions {
            listen,
            public_read: defaults::SERVE_PUBLIC_READ,
            max_body_bytes: defaults::SERVE_MAX_BODY_BYTES,
            uploads_per_minute: defaults::SERVE_UPLOADS_PER_MINUTE,
            request_timeout: Duration::from_secs(defaults::SERVE_REQUEST_TIMEOUT_S),
            readers: defaults::serve_readers(),
            reader_nice: Some(defaults::SERVE_READER_NICE),
            read_yield: Duration::from_millis(defaults::SERVE_READ_YIELD_MAX_MS),
            config: std::sync::Arc::new(pitwall_engine::config::Config::builtin_default("pitwall")),
            group_commit_max_results: defaults::SERVE_GROUP_COMMIT_MAX_RESULTS,
            writers: 1,
            history_branch: defaults::HISTORY_BRANCH.to_string(),
            threshold_pct: defaults::REGRESSION_PCT,
        }
    }
}

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Store(#[from] pitwall_store::StoreError),
    #[error(
        "cannot listen on {addr}: {source} (hint: another process may hold the port; choose one with --listen)"
    )]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("the server failed: {0}")]
    Io(#[from] std::io::Error),
}

/// What every handler shares.
pub(crate) struct StateInner {
    pub store: StorePool,
    pub options: ServeOptions,
    pub uploads: upload::RateLimiter,
    pub tokens: auth::TokenCache,
    pub refresher: upload::Refresher,
    pub commit: commit::GroupCommit,
}

pub(crate) type State = Arc<StateInner>;

fn router(state: State) -> Router {
    let api = Router::new()
        .route("/runs", get(routes::list_runs).post(upload::upload_run))
        .route("/runs/batch", post(upload::upload_batch))
        .route("/runs/{id}", get(routes::get_run))
        .route("/series", get(routes::series))
        .route("/alerts", get(routes::list_alerts))
        .route(
            "/alerts/{id}",
            get(routes::get_alert).post(routes::triage_alert),
        )
        .route("/pairs/{id}", get(routes::get_pair));
    let limit = state.options.max_body_bytes;
    let timeout = state.options.request_timeout;
    Router::new()
        .route("/healthz", get(routes::healthz))
        // Browsers ask for it on every page: no icon, and no 404 in their console.
        .route(
            "/favicon.ico",
            get(|| async { axum::http::StatusCode::NO_CONTENT }),
        )
        .route("/p/{project}/assets/{*path}", get(history_pages::asset))
        .route("/p/{project}/bench", get(history_pages::bench))
        .route("/p/{project}/", get(history_pages::index))
        .route("/p/{project}", get(history_pages::to_index))
        .route("/p/{project}/compare/{id}", get(pages::compare_pair))
        .route("/p/{project}/alerts", get(alert_pages::alerts))
        .route(
            "/p/{project}/alerts/{id}",
            get(alert_pages::alert).post(alert_pages::triage),
        )
        .route(
            "/p/{project}/signin",
            get(session::signin_page).post(session::signin),
        )
        .route("/p/{project}/signout", post(session::signout))
        .nest("/api/v1/p/{project}", api)
        .fallback(routes::not_found)
        .with_state(state)
        .layer(DefaultBodyLimit::max(limit))
        .layer(TimeoutLayer::with_status_code(
            axum::http::StatusCode::REQUEST_TIMEOUT,
            timeout,
        ))
        .layer(axum::middleware::from_fn(access_log::log))
}

/// Serves the store `open` opens until SIGTERM or SIGINT, then finishes the requests in flight
/// and the queued alert detection before returning. `listening` is told the bound address
/// once the port is open (`--listen 127.0.0.1:0` picks a free one).
pub fn serve(
    open: Opener,
    options: ServeOptions,
    listening: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    let uploads_first = Arc::new(actor::UploadsFirst::default());
    let giving = actor::Giving {
        nice: options.reader_nice,
        uploads: (!options.read_yield.is_zero())
            .then(|| (uploads_first.clone(), options.read_yield)),
    };
    let (store, store_threads) = StorePool::start(open, options.writers, options.readers, giving)?;
    // The index's series summaries of the newest history, in the background: a store from
    // before they were kept gets its index, and one changed from the command line is current.
    let branch = options.history_branch.clone();
    let _ = store.writer.submit(move |s| {
        let now = pitwall_schema::time::now_rfc3339();
        let line = match pitwall_pipeline::summaries::backfill(s, &branch, &now) {
            Ok(n) => serde_json::json!({"event": "summaries", "series": n}),
            Err(e) => serde_json::json!({"event": "summaries", "error": e.to_string()}),
        };
        eprintln!("{line}");
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("pitwall-serve")
        .build()?;
    let result = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(options.listen)
            .await
            .map_err(|source| ServeError::Listen {
                addr: options.listen,
                source,
            })?;
        listening(listener.local_addr()?);
        let state = Arc::new(StateInner {
            refresher: upload::Refresher::new(store.writer.clone()),
            commit: commit::GroupCommit::new(
                store.upload_writers(),
                options.group_commit_max_results,
            )
            .counting(uploads_first),
            uploads: upload::RateLimiter::new(options.uploads_per_minute),
            tokens: auth::TokenCache::default(),
            store,
            options,
        });
        axum::serve(listener, router(state))
            .with_graceful_shutdown(shutdown_signal())
            .await?;
        Ok::<(), ServeError>(())
    });
    // The router and its state are gone: the store threads end after their queued jobs
    // (the writer's alert detection included).
    drop(runtime);
    for t in store_threads {
        let _ = t.join();
    }
    result
}

/// SIGTERM (systemd, a container runtime) or SIGINT (Ctrl-C).
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).ok();
    let term = async {
        match term.as_mut() {
            Some(t) => {
                t.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = term => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    eprintln!(
        "{}",
        serde_json::json!({"event": "shutdown", "reason": "signal"})
    );
}
