//! Evaluation of `pitwall_stats::changepoint::detect` with its default settings on the Turing
//! Change Point Dataset (van den Burg & Williams, arXiv:2003.06222, univariate series as in the
//! paper) and on seeded synthetic benchmark histories; prints per-series and mean F1 / cover,
//! and false alarms per 1000 points on the no-change histories.
//!
//! `cargo run --release -p pitwall-stats --example tcpd_eval -- tests/data/tcpd
//!     [--json] [--write-synth DIR] [--set key=value ...]`
//! `--json` prints one machine-readable object (predictions, scores, detection wall time) for
//! `stats/eval/otava_compare.py`; `--write-synth DIR` writes the synthetic set as
//! `DIR/synth.json`; `--set` overrides a `DetectConfig` field (for sensitivity checks only:
//! the reported numbers use the defaults).

mod synth;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use pitwall_stats::changepoint::metrics::{covering, f1_score};
use pitwall_stats::changepoint::{DetectConfig, detect};
use serde_json::{Value, json};

/// Series the TCPD paper leaves out: synthetic quality-control series, a series with missing
/// years, and the multivariate run log.
fn scored(name: &str) -> bool {
    !(name.starts_with("quality_control") || name == "uk_coal_employ" || name == "run_log")
}

/// Series of a TCPD file: `series[0].raw`. Missing values (`null`/NaN) are filled with the
/// previous value (the next one at the start) so that indices keep matching the annotations;
/// none of the scored series has any.
fn load_series(path: &Path) -> Vec<f64> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: Value = serde_json::from_str(&text).expect("TCPD JSON");
    let raw: Vec<Option<f64>> = v["series"][0]["raw"]
        .as_array()
        .expect("series[0].raw")
        .iter()
        .map(Value::as_f64)
        .collect();
    let first = raw.iter().flatten().copied().next().unwrap_or(0.0);
    let mut last = first;
    raw.into_iter()
        .map(|x| {
            if let Some(x) = x.filter(|x| x.is_finite()) {
                last = x;
            }
            last
        })
        .collect()
}

struct Scored {
    name: String,
    n: usize,
    predicted: Vec<usize>,
    f1: f64,
    cover: f64,
    seconds: f64,
}

fn run(name: &str, x: &[f64], ann: &[Vec<usize>], cfg: &DetectConfig) -> Scored {
    let t0 = Instant::now();
    let cps = detect(x, cfg);
    let seconds = t0.elapsed().as_secs_f64();
    let predicted: Vec<usize> = cps.iter().map(|c| c.index).collect();
    Scored {
        name: name.to_string(),
        n: x.len(),
        f1: f1_score(ann, &predicted, 5),
        cover: covering(ann, &predicted, x.len()),
        predicted,
        seconds,
    }
}

/// True change points matched to a prediction within 5 points (TCPD's rule: in order, the
/// nearest still-unmatched prediction, ties to the smaller), and how many of those exactly.
fn placement(truth: &[usize], predicted: &[usize]) -> (usize, usize) {
    let mut free = predicted.to_vec();
    let (mut matched, mut exact) = (0, 0);
    for &t in truth {
        let nearest = free
            .iter()
            .enumerate()
            .filter(|(_, p)| p.abs_diff(t) <= 5)
            .min_by_key(|(_, p)| (p.abs_diff(t), **p))
            .map(|(i, _)| i);
        if let Some(i) = nearest {
            matched += 1;
            exact += usize::from(free.remove(i) == t);
        }
    }
    (matched, exact)
}

fn apply_set(cfg: &mut DetectConfig, kv: &str) {
    let (k, v) = kv.split_once('=').expect("--set key=value");
    match k {
        "detrend" => cfg.detrend = v == "true",
        "robust_start" => cfg.robust_start = v == "true",
        _ => cfg.set(k, v).unwrap_or_else(|e| panic!("--set {kv}: {e}")),
    }
}

fn mean(xs: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = xs.collect();
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut dir = PathBuf::from("tests/data/tcpd");
    let mut as_json = false;
    let mut synth_dir: Option<PathBuf> = None;
    let mut cfg = DetectConfig::default();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--json" => as_json = true,
            "--write-synth" => synth_dir = Some(args.next().expect("--write-synth DIR").into()),
            "--set" => apply_set(&mut cfg, &args.next().expect("--set key=value")),
            _ => dir = PathBuf::from(a),
        }
    }
    let ann_text = std::fs::read_to_string(dir.join("annotations.json")).expect("annotations.json");
    let ann: BTreeMap<String, BTreeMap<String, Vec<usize>>> =
        serde_json::from_str(&ann_text).expect("annotations");

    let wall = Instant::now();
    let mut tcpd = Vec::new();
    for (name, by_user) in &ann {
        let path = dir.join("datasets").join(name).join(format!("{name}.json"));
        if !scored(name) || !path.exists() {
            continue;
        }
        let x = load_series(&path);
        let sets: Vec<Vec<usize>> = by_user.values().cloned().collect();
        tcpd.push(run(name, &x, &sets, &cfg));
    }
    let set = synth::generate(20_261_202, 60, 40, 500);
    let mut synth_scores = Vec::new();
    let (mut flat_points, mut flat_alarms) = (0usize, 0usize);
    let (mut matched, mut exact) = (0usize, 0usize);
    for s in &set {
        let r = run(&s.name, &s.series, std::slice::from_ref(&s.truth), &cfg);
        let (m, e) = placement(&s.truth, &r.predicted);
        (matched, exact) = (matched + m, exact + e);
        if s.kind == "nochange" {
            flat_points += s.series.len();
            flat_alarms += r.predicted.len();
        }
        synth_scores.push(r);
    }
    let detect_seconds: f64 = tcpd.iter().chain(&synth_scores).map(|r| r.seconds).sum();
    let wall_seconds = wall.elapsed().as_secs_f64();
    let shift = || synth_scores.iter().filter(|r| r.name.starts_with("shift"));
    let fa_per_1000 = 1000.0 * flat_alarms as f64 / flat_points.max(1) as f64;

    if let Some(d) = &synth_dir {
        std::fs::create_dir_all(d).expect("create synth dir");
        let text = serde_json::to_string(&set).expect("serialise");
        std::fs::write(d.join("synth.json"), text).expect("write synth.json");
    }
    let row = |r: &Scored| json!({"name": r.name, "n": r.n, "predicted": r.predicted, "f1": r.f1, "cover": r.cover});
    if as_json {
        let out = json!({
            "config": format!("{cfg:?}"),
            "tcpd": tcpd.iter().map(row).collect::<Vec<_>>(),
            "synth": synth_scores.iter().map(row).collect::<Vec<_>>(),
            "tcpd_mean_f1": mean(tcpd.iter().map(|r| r.f1)),
            "tcpd_mean_cover": mean(tcpd.iter().map(|r| r.cover)),
            "synth_mean_f1": mean(shift().map(|r| r.f1)),
            "synth_mean_cover": mean(shift().map(|r| r.cover)),
            "synth_false_alarms_per_1000": fa_per_1000,
            "detect_seconds": detect_seconds,
            "wall_seconds": wall_seconds,
        });
        println!("{out}");
        return;
    }
    println!("{cfg:?}\n\nTCPD (univariate, {} series)", tcpd.len());
    println!(
        "{:<20} {:>5} {:>6} {:>6}  predicted",
        "series", "n", "F1", "cover"
    );
    for r in &tcpd {
        println!(
            "{:<20} {:>5} {:>6.3} {:>6.3}  {:?}",
            r.name, r.n, r.f1, r.cover, r.predicted
        );
    }
    println!(
        "TCPD mean F1 {:.3}  mean cover {:.3}",
        mean(tcpd.iter().map(|r| r.f1)),
        mean(tcpd.iter().map(|r| r.cover))
    );
    println!(
        "synthetic ({} with shifts): mean F1 {:.3}  mean cover {:.3}",
        shift().count(),
        mean(shift().map(|r| r.f1)),
        mean(shift().map(|r| r.cover))
    );
    println!(
        "synthetic change points found within 5 points: {matched}, at exactly the true index: {exact} ({:.1}%)",
        100.0 * exact as f64 / matched.max(1) as f64
    );
    println!(
        "synthetic no-change: {flat_alarms} false alarms in {flat_points} points = {fa_per_1000:.3} per 1000"
    );
    println!(
        "detect time {:.4} s (wall {:.3} s)",
        detect_seconds, wall_seconds
    );
    // Scale: 100,000 points of a benchmark-like history (the synthetic histories end to end).
    let long: Vec<f64> = set
        .iter()
        .flat_map(|s| s.series.iter().copied())
        .cycle()
        .take(100_000)
        .collect();
    let t0 = Instant::now();
    let found = detect(&long, &cfg).len();
    println!(
        "100000 points: {found} change points in {:.3} s",
        t0.elapsed().as_secs_f64()
    );
}
