//! A multi-process collective through the real binary: three `pitwall run` processes with
//! torchrun's variables on localhost meet, rank 0 drives the CPU collectives across them and
//! stores one run with every rank's time, the other ranks follow, exit 0 and store nothing.

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::process::{Child, Stdio};

use pitwall_e2e::Sandbox;
use serde_json::Value;

const CONFIG: &str = r#"
[project]
name = "ranks"

[suites]
backend = "cpu"

[sampling]
warmup_s = 0.0
max_time_s = 0.05
min_samples = 3

[[suite]]
kind = "collective"
max_bytes = 64
"#;

/// A rank's process, killed if the test fails before it exits.
struct Rank(Option<Child>);

impl Drop for Rank {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            // Already exited when the test passed; nothing to report either way.
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn three_ranks_store_one_run_with_every_ranks_time() {
    let sb = Sandbox::new();
    sb.write("pitwall.toml", CONFIG);
    // A free port for rank 0 (closed again before the ranks start).
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let world = 3;
    let mut ranks: Vec<Rank> = (0..world)
        .map(|r| {
            let child = sb
                .cmd(&["run", "--suite", "collective", "--no-report"])
                .env("RANK", r.to_string())
                .env("WORLD_SIZE", world.to_string())
                .env("LOCAL_RANK", r.to_string())
                .env("MASTER_ADDR", "127.0.0.1")
                .env("MASTER_PORT", &port)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn pitwall");
            Rank(Some(child))
        })
        .collect();
    for (r, rank) in ranks.iter_mut().enumerate() {
        let out = rank.0.take().unwrap().wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "rank {r}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if r > 0 {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("following rank 0"), "rank {r}: {err}");
        }
    }

    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "only rank 0 stores");
    let results = runs[0]["results"].as_array().unwrap();
    let mut names = BTreeSet::new();
    let mut measures = BTreeSet::new();
    for r in results {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["params"]["ranks"], "3");
        assert_eq!(r["params"]["layout"], "processes");
        names.insert(r["name"].as_str().unwrap().to_string());
        measures.insert(r["measure"].as_str().unwrap().to_string());
    }
    let expected_names: BTreeSet<String> = [
        "allreduce_sum_f32",
        "allgather_f32",
        "reducescatter_sum_f32",
        "broadcast_f32",
        "alltoall_f32",
    ]
    .map(String::from)
    .into();
    assert_eq!(names, expected_names);
    let expected_measures: BTreeSet<String> =
        ["algbw", "busbw", "time_rank0", "time_rank1", "time_rank2"]
            .map(String::from)
            .into();
    assert_eq!(measures, expected_measures);

    // busbw = algbw × nccl-tests' factor, sample by sample: 2(n−1)/n for all-reduce, 1 for
    // broadcast, (n−1)/n for the others.
    let samples = |name: &str, bytes: &str, measure: &str| -> Vec<f64> {
        let r = results
            .iter()
            .find(|r| r["name"] == name && r["params"]["bytes"] == bytes && r["measure"] == measure)
            .unwrap_or_else(|| panic!("{name} {bytes} {measure}"));
        r["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    for (name, bytes, factor) in [
        ("allreduce_sum_f32", "64", 4.0 / 3.0),
        ("broadcast_f32", "64", 1.0),
        ("allgather_f32", "60", 2.0 / 3.0),
        ("reducescatter_sum_f32", "60", 2.0 / 3.0),
        ("alltoall_f32", "60", 2.0 / 3.0),
    ] {
        let (alg, bus) = (samples(name, bytes, "algbw"), samples(name, bytes, "busbw"));
        assert!(!alg.is_empty());
        for (a, b) in alg.iter().zip(&bus) {
            assert!((b - a * factor).abs() <= 1e-9 * b.abs(), "{name}: {a} {b}");
        }
        // Every rank's time, one per sample.
        for rank in 0..3 {
            let t = samples(name, bytes, &format!("time_rank{rank}"));
            assert_eq!(t.len(), alg.len());
            assert!(t.iter().all(|t| *t > 0.0));
        }
    }
}
