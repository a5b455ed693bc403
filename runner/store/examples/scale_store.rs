//! Generates the store of issue 13's scale targets, so `detect`, `alerts` and `report` can be
//! timed on it: RUNS history runs on main, one testbed, each with MEASURES benchmark measures
//! of SAMPLES samples, commits one per run, a +8% step in one benchmark from run 5,000 on.
//!
//! STORE is a SQLite path or any store URL (`postgres://…`); runs are stored 100 to a
//! transaction (`Store::insert_runs`).
//!
//! ```sh
//! cargo run --release -p pitwall-store --example scale_store -- /tmp/scale.db 10000 200 10
//! cargo run --release -p pitwall-store --example scale_store -- postgres://pitwall@127.0.0.1:5544/scale 10000 200 10
//! # one more run, the 10,001st (FIRST = 10000), into a store of its own, to import:
//! cargo run --release -p pitwall-store --example scale_store -- /tmp/next.db 1 200 10 10000
//! ```
//! docs/PERFORMANCE.md ("History at scale") has the figures and the commands that time them.

use std::collections::BTreeMap;

use pitwall_schema::{
    BenchmarkResult, Direction, Fingerprint, ResultStatus, Run, RunStatus, Unit, UnixTime,
};
use pitwall_store::{OpenMode, StoreUrl};

/// Runs stored per transaction.
const BATCH: usize = 100;

/// Deterministic noise in [-1, 1) (a multiplicative hash; no dependency needed).
fn noise(a: u64, b: u64) -> f64 {
    let x = (a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
        .wrapping_mul(0x1656_67B1_9E37_79F9);
    (x >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

fn result(run: u64, m: u64, samples: u64, stepped: bool) -> BenchmarkResult {
    let level = 1000.0 + 37.0 * m as f64;
    let level = if stepped { level * 1.08 } else { level };
    BenchmarkResult {
        suite: "kernel".into(),
        name: format!("bench_{:03}", m / 2),
        params: BTreeMap::from([("n".to_string(), format!("{}", 1 << (m % 2 + 8)))]),
        measure: "time".into(),
        unit: Unit::new(Unit::NANOSECONDS),
        direction: Direction::LowerIsBetter,
        status: ResultStatus::Ok,
        error: None,
        samples: (0..samples)
            .map(|k| level * (1.0 + 0.01 * noise(run * 1_000 + m, k)))
            .collect(),
        sample_meta: Vec::new(),
        replicates: Vec::new(),
        summary: None,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, runs, measures, samples, first) = match &args[..] {
        [p, r, m, s] => (p, r, m, s, "0"),
        [p, r, m, s, f] => (p, r, m, s, f.as_str()),
        _ => {
            eprintln!("usage: scale_store STORE RUNS MEASURES SAMPLES [FIRST]");
            std::process::exit(2);
        }
    };
    let first: u64 = first.parse().expect("FIRST");
    let (runs, measures, samples): (u64, u64, u64) = (
        runs.parse().expect("RUNS"),
        measures.parse().expect("MEASURES"),
        samples.parse().expect("SAMPLES"),
    );
    let url = StoreUrl::parse(path).expect("a store path or URL");
    let mut store = pitwall_store::open(&url, OpenMode::Create).expect("open store");
    let started = std::time::Instant::now();
    let mut batch = Vec::with_capacity(BATCH);
    for i in first..first + runs {
        let secs = 1_700_000_000 + i * 3_600;
        // One run an hour.
        let at = UnixTime {
            secs: secs as i64,
            nanos: 0,
        }
        .to_rfc3339(0)
        .expect("a time within years 0000-9999");
        let results: Vec<BenchmarkResult> = (0..measures)
            .map(|m| result(i, m, samples, m == 0 && i >= 5_000))
            .collect();
        let run = Run {
            exclusion: None,
            contention: None,
            id: format!("01900000-0000-7000-8000-{i:012}"),
            project: "scale".into(),
            commit: format!("{i:012x}{:028x}", 0),
            branch: Some("main".into()),
            testbed: Some("scale-tb".into()),
            role: None,
            started_at: at.clone(),
            finished_at: at,
            config_hash: "scale".into(),
            fingerprint: Fingerprint::default(),
            status: RunStatus::from_results(&results),
            commit_info: None,
            error: None,
            pair: None,
            results,
        };
        batch.push(run);
        if batch.len() == BATCH || i + 1 == first + runs {
            store.insert_runs(&batch).expect("insert");
            batch.clear();
        }
        if (i + 1) % 1000 == 0 {
            eprintln!("{} runs in {:.0?}", i + 1, started.elapsed());
        }
    }
}
