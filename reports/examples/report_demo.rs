//! A small, realistic report to look at (and to screenshot for reviews of the report's
//! readability): ten commits measured one after another, then an interleaved
//! `--base/--head` pair of an older commit against the newest (stored last, as `pitwall run
//! --base --head` stores it), a working-tree run of a benchmark measured only once, message
//! sizes as numeric parameters, and times of microseconds to milliseconds stored in ns.
//!
//! `cargo run -p pitwall-reports --example report_demo -- OUT_DIR`
//!
//! Uses only the crate's public API and the schema, so the same file renders with an older
//! version of the crate for before/after comparisons.

use std::collections::BTreeMap;

use pitwall_analysis::compare::{CompareOptions, Side, compare};
use pitwall_reports::html::{ReportInput, write_site};
use pitwall_schema::{
    BenchmarkResult, CommitInfo, Direction, Fingerprint, PairInfo, PairRole, ResultStatus, Run,
    RunStatus, Unit,
};
use pitwall_stats::AbConfig;

/// Commit subjects, oldest first (one with markup: subjects are untrusted).
const SUBJECTS: [&str; 10] = [
    "Initial NCCL benchmark harness",
    "Pin the benchmark process to NUMA node 0",
    "Use the ring algorithm for large messages",
    "Bump CUDA to 12.6",
    "Refactor <Communicator> setup & teardown",
    "Split large buffers into 4 MiB chunks",
    "Fix typo in README",
    "Tune the chunk size for H100 NVLink",
    "Log the NCCL version at start",
    "CI: run the benchmarks nightly",
];

/// Message sizes in bytes, listed out of numeric order on purpose (as text they sort wrongly).
const BYTES: [u64; 4] = [16_777_216, 2_097_152, 262_144, 134_217_728];

fn sha(i: usize) -> String {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15 ^ (i as u64 + 1).wrapping_mul(0xff51_afd7_ed55_8ccd);
    let mut s = String::new();
    while s.len() < 40 {
        h ^= h >> 29;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        s.push_str(&format!("{h:016x}"));
    }
    s.truncate(40);
    s
}

/// Deterministic noise in [-1, 1].
fn noise(seed: usize) -> f64 {
    let x = ((seed as u64).wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f64;
    x / (1u64 << 24) as f64 * 2.0 - 1.0
}

/// The time of an all-reduce of `bytes` at commit `c`: latency plus size over bandwidth; from
/// commit 5 on ("Split large buffers…") messages of 16 MiB and more are 12% slower.
///
/// The newest commit ("CI: run the benchmarks nightly") makes 2 MiB messages 5% slower: a
/// change the pair's comparison finds and the history cannot show yet (one commit after it).
fn level(bytes: u64, c: usize) -> f64 {
    let base = 9_000.0 + bytes as f64 / 110.0;
    if c >= 5 && bytes >= 16_777_216 {
        base * 1.12
    } else if c == 9 && bytes == 2_097_152 {
        base * 1.05
    } else {
        base
    }
}

fn result(
    suite: &str,
    name: &str,
    params: &[(&str, String)],
    samples: Vec<f64>,
) -> BenchmarkResult {
    BenchmarkResult {
        suite: suite.into(),
        name: name.into(),
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect::<BTreeMap<_, _>>(),
        measure: "time".into(),
        unit: Unit::new(Unit::NANOSECONDS),
        direction: Direction::LowerIsBetter,
        status: ResultStatus::Ok,
        error: None,
        samples,
        sample_meta: Vec::new(),
        replicates: (0..12).map(|i| i / 4).collect(),
        summary: None,
    }
}

/// One run of commit `c` (its n-th measurement), 12 samples per benchmark in 3 processes.
fn run(c: usize, nth: usize, pair: Option<PairInfo>) -> Run {
    let results = BYTES
        .iter()
        .enumerate()
        .map(|(b, &bytes)| {
            let samples = (0..12)
                .map(|s| level(bytes, c) * (1.0 + 0.006 * noise(c * 1000 + nth * 100 + b * 20 + s)))
                .collect();
            result(
                "nccl",
                "all_reduce",
                &[("bytes", bytes.to_string())],
                samples,
            )
        })
        .collect();
    let minute = 10 + nth * 20 + c;
    Run {
        exclusion: None,
        contention: None,
        id: format!("0193a1b2-0000-7000-8000-{:012}", nth * 100 + c),
        project: "demo".into(),
        commit: sha(c),
        branch: Some("main".into()),
        testbed: None,
        role: None,
        started_at: format!(
            "2026-12-0{}T{:02}:{:02}:00Z",
            1 + nth,
            9 + minute / 60,
            minute % 60
        ),
        finished_at: format!(
            "2026-12-0{}T{:02}:{:02}:30Z",
            1 + nth,
            9 + minute / 60,
            minute % 60
        ),
        config_hash: "ab".repeat(32),
        fingerprint: Fingerprint::default(),
        status: RunStatus::Complete,
        commit_info: Some(CommitInfo {
            first_parent_position: None,
            author: "Dev <dev@example.invalid>".into(),
            date: format!("2026-11-{:02}T1{c}:00:00+01:00", 18 + c),
            subject: SUBJECTS[c].into(),
        }),
        error: None,
        pair,
        results,
    }
}

fn pair(role: PairRole) -> Option<PairInfo> {
    Some(PairInfo {
        id: "pair-1".into(),
        role,
        rounds: 3,
        round_starts: vec![0, 1, 2],
        sequential: None,
        round_orders: Vec::new(),
        identical: Vec::new(),
        measured_ms: None,
        saved_ms_estimate: None,
    })
}

/// A working-tree run of a benchmark measured nowhere else: a one-point history.
fn working_tree() -> Run {
    let samples = (0..12)
        .map(|s| 48_500_000.0 * (1.0 + 0.01 * noise(s)))
        .collect();
    let mut r = run(7, 2, None);
    r.id = "0193a1b2-0000-7000-8000-999999999999".into();
    r.commit = "working tree".into();
    r.commit_info = None;
    r.branch = None;
    r.started_at = "2026-12-03T16:45:10Z".into();
    r.results = vec![result("startup", "cold_start", &[], samples)];
    r
}

fn main() {
    let Some(out) = std::env::args().nth(1) else {
        eprintln!("usage: report_demo OUT_DIR");
        std::process::exit(2);
    };
    // Commits 0..10 in order, then the pair (base commit 2, head commit 9) stored after them.
    let mut runs: Vec<Run> = (0..10).map(|c| run(c, 0, None)).collect();
    runs.push(run(2, 1, pair(PairRole::Base)));
    runs.push(run(9, 1, pair(PairRole::Head)));
    runs.push(working_tree());
    let (base, head) = (&runs[10], &runs[11]);
    let side = |r: &Run| Side {
        label: format!("commit {} (run {})", &r.commit[..10], r.id),
        run: Some(r.clone()),
        results: r.results.clone(),
    };
    let ab = AbConfig::default();
    let report = compare(
        &side(base),
        &side(head),
        &|_| pitwall_analysis::ThresholdRule::Fixed(ab.threshold * 100.0),
        Vec::new(),
        &ab,
        CompareOptions::default(),
        &pitwall_analysis::NoiseBook::empty(),
    );
    let comparisons = vec![pitwall_reports::html::PageComparison::new(
        "demo-pair",
        format!("{} vs {}", &base.commit[..10], &head.commit[..10]),
        report,
    )];
    let input = ReportInput {
        project: "demo",
        runs: &runs,
        comparisons: &comparisons,
        generated_at: "2026-12-03T17:00:00Z",
        history_branch: "main",
        alerts: &[],
        histories: None,
        local: None,
    };
    match write_site(&input, std::path::Path::new(&out)) {
        Ok(s) => println!("{} pages, {} benchmarks in {out}", s.pages, s.benchmarks),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
