//! GPU teams' own benchmark binaries end to end, on real temporary git repositories with
//! stand-ins that write what the tools write: nvbench's per-sample times (`--jsonbin` files
//! beside its JSON) become the samples, each execution a replicate; a short sample file fails
//! the suite naming file and state; nccl-tests repeated with `runs` gives one sample per run
//! and a replicate verdict; `pitwall ci` leaves the built-in suites out of a pull request's
//! comparison unless `[ci] builtin_suites = true`.

use pitwall_e2e::{Sandbox, git};
use serde_json::Value;

/// Writes what `reduce_bench --jsonbin out/reduce.json` writes: `out/reduce.json` with two
/// states, and their sample times (float32 seconds, little-endian) in `out/reduce.json-bin/`.
/// State 0 names its file as nvbench #405 and later do (relative to the JSON's directory),
/// state 1 as older nvbench did (the `--jsonbin` path, relative to its working directory).
/// `level.txt` holds the GPU time in µs; each process draws its own offset. `SHORT=1` writes
/// 3 samples where the JSON says 200.
const NVBENCH: &str = r#"import json, os, random, struct
rng = random.Random(os.urandom(16))
level = float(open("level.txt").read()) * 1e-6
os.makedirs("out/reduce.json-bin", exist_ok=True)
offset = rng.lognormvariate(0.0, 0.002)
states = []
for i, (elements, name) in enumerate([("1048576", "reduce.json-bin/0.bin"), ("16777216", "out/reduce.json-bin/1.bin")]):
    times = [level * (i + 1) * offset * rng.lognormvariate(0.0, 0.001) for _ in range(200)]
    written = times[:3] if os.environ.get("SHORT") == "1" else times
    with open("out/reduce.json-bin/%d.bin" % i, "wb") as f:
        f.write(b"".join(struct.pack("<f", t) for t in written))
    mean = sum(times) / len(times)
    states.append({
        "name": "Device=0 Elements=2^%d" % (20 + 4 * i), "device": 0, "type_config_index": 0,
        "axis_values": [{"name": "Elements", "type": "int64", "value": elements}],
        "summaries": [
            {"tag": "nv/cold/time/gpu/mean", "name": "GPU Time", "hint": "duration",
             "data": [{"name": "value", "type": "float64", "value": repr(mean)}]},
            {"tag": "nv/cold/bw/global/bytes_per_second", "name": "GlobalMem BW", "hint": "byte_rate",
             "data": [{"name": "value", "type": "float64", "value": repr(int(elements) * 4 / mean)}]},
            {"tag": "nv/json/bin:nv/cold/sample_times", "name": "Sample Times File",
             "hint": "file/sample_times", "hide": "Not needed in table.",
             "data": [{"name": "filename", "type": "string", "value": name},
                      {"name": "size", "type": "int64", "value": str(len(times))}]},
        ],
        "is_skipped": False,
    })
doc = {"meta": {"argv": ["./reduce_bench", "--jsonbin", "out/reduce.json"]},
       "devices": [{"id": 0, "name": "NVIDIA H200"}],
       "benchmarks": [{"name": "reduce", "index": 0, "devices": [0],
                       "axes": [{"name": "Elements", "type": "int64", "flags": "pow2", "values": []}],
                       "states": states}]}
json.dump(doc, open("out/reduce.json", "w"), indent=2)
"#;

/// Prints what `all_reduce_perf -b 1M -e 128M -f 8 -g 8` prints, with times from `scale.txt`
/// and an offset drawn per process.
const NCCL_TESTS: &str = r##"import os, random
rng = random.Random(os.urandom(16))
scale = float(open("scale.txt").read())
offset = rng.lognormvariate(0.0, 0.003)
print("# nccl-tests version 2.17.6 nccl-headers=22703 nccl-library=22703")
print("# Collective test starting: all_reduce_perf")
print("# nThread 1 nGpus 8 minBytes 1048576 maxBytes 134217728 step: 8(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0")
print("#")
print("# Using devices")
for r in range(8):
    print("#  Rank %2d Group  0 Pid  41230 on gpu-node-1 device %2d [0000:%d8:00] NVIDIA H200" % (r, r, r + 1))
print("#")
print("#                                                              out-of-place                       in-place          ")
print("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong ")
print("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         ")
for size in [1048576, 8388608, 67108864]:
    cols = []
    for _ in range(2):
        t = (20.0 + size / 2.0e5) * scale * offset * rng.lognormvariate(0.0, 0.001)
        algbw = size / t / 1e3
        cols.append("%8.2f %7.2f %7.2f %7d" % (t, algbw, algbw * 2 * 7 / 8, 0))
    print("%12d  %12d  %8s  %6s  %6d  %s  %s" % (size, size // 4, "float", "sum", -1, cols[0], cols[1]))
print("# Out of bounds values : 0 OK")
print("# Avg bus bandwidth    : 81.5376 ")
print("#")
print("# Collective test concluded: all_reduce_perf")
"##;

/// A repository with `files` at its first commit and `change` (a file and its new body) at
/// the second; returns (base, head).
fn repo(sb: &Sandbox, files: &[(&str, &str)], change: (&str, &str)) -> (String, String) {
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    for (name, body) in files {
        sb.write(name, body);
    }
    sb.write(".gitignore", ".pitwall/\nout/\n");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "base"]);
    let base = git(dir, &["rev-parse", "HEAD"]);
    sb.write(change.0, change.1);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "change"]);
    (base, git(dir, &["rev-parse", "HEAD"]))
}

fn results<'a>(run: &'a Value, measure: &str) -> Vec<&'a Value> {
    run["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["measure"] == measure)
        .collect()
}

fn by_key<'a>(v: &'a Value, key: &str) -> &'a Value {
    v["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["key"] == key)
        .unwrap_or_else(|| panic!("{key} in {v}"))
}

const NVBENCH_SUITE: &str = "[project]\nname = \"gpu\"\n\n[[suite]]\nname = \"nvb\"\nkind = \"command\"\ncommand = \"python3 reduce_bench.py\"\nformat = \"nvbench\"\noutput = \"out/reduce.json\"\nruns = 2\n";

#[test]
fn nvbench_jsonbin_sample_times_are_the_samples_with_each_execution_a_replicate() {
    let sb = Sandbox::new();
    let (base, head) = repo(
        &sb,
        &[
            ("reduce_bench.py", NVBENCH),
            ("level.txt", "10\n"),
            ("pitwall.toml", NVBENCH_SUITE),
        ],
        ("level.txt", "13\n"),
    );
    let out = sb.run(&[
        "run",
        "--base",
        &base,
        "--head",
        &head,
        "--rounds",
        "2",
        "--no-report",
    ]);
    out.expect(1);
    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for run in runs {
        let gpu = results(run, "gpu_time");
        assert_eq!(gpu.len(), 2, "{run}");
        for r in &gpu {
            // 2 rounds × 2 executions × 200 samples, each execution its own replicate.
            let samples = r["samples"].as_array().unwrap();
            assert_eq!(samples.len(), 800, "{r}");
            let reps = r["replicates"].as_array().unwrap();
            assert_eq!(reps.len(), 800);
            let distinct: std::collections::BTreeSet<u64> =
                reps.iter().map(|x| x.as_u64().unwrap()).collect();
            assert_eq!(distinct.len(), 4, "{distinct:?}");
            assert_eq!(r["unit"], "ns");
        }
        // The file's times, in ns: 10 µs (base) or 13 µs (head) for the first state.
        let first = gpu.iter().find(|r| r["params"]["Elements"] == "1048576");
        let s0 = first.unwrap()["samples"][0].as_f64().unwrap();
        assert!((9_500.0..13_700.0).contains(&s0), "{s0}");
        // Bandwidth stays one summary per execution.
        for r in results(run, "bandwidth") {
            assert_eq!(r["samples"].as_array().unwrap().len(), 4, "{r}");
        }
        let notes = run["fingerprint"]["extra"]["format_notes"].to_string();
        assert!(
            notes.contains(
                "per-sample times of 2 of 2 measured state(s) read from their --jsonbin files"
            ),
            "{notes}"
        );
    }
    // Replicate verdicts: 4 processes a side, 30% slower at head.
    let v = sb
        .run(&["compare", "--pair", "latest", "--format", "json"])
        .expect(1)
        .json();
    let r = by_key(&v, "nvb/reduce[Elements=1048576,device=0]/gpu_time");
    assert_eq!(r["verdict"], "regression", "{r}");
    assert_eq!(r["method"], "replicates", "{r}");
    assert_eq!(r["cand_replicates"], 4, "{r}");
}

#[test]
fn a_short_nvbench_sample_file_fails_the_suite_naming_file_and_state() {
    let sb = Sandbox::new();
    sb.write("reduce_bench.py", NVBENCH);
    sb.write("level.txt", "10\n");
    sb.write(
        "pitwall.toml",
        &NVBENCH_SUITE.replace("python3 reduce_bench.py", "SHORT=1 python3 reduce_bench.py"),
    );
    let v = sb.run(&["run", "--format", "json"]).expect(3).json();
    let b = &v["benchmarks"][0];
    assert_eq!(b["status"], "failed", "{v}");
    let e = b["error"].as_str().unwrap();
    assert!(!e.contains('\n'), "{e}");
    assert!(
        e.contains(
            "nvbench: benchmark 0 (reduce): state `Device=0 Elements=2^20`: sample file \
             reduce.json-bin/0.bin ("
        ) && e.contains("holds 3 samples, but `nv/json/bin:nv/cold/sample_times` says 200"),
        "{e}"
    );
}

#[test]
fn an_imported_nvbench_file_brings_its_sample_files_and_fails_without_them() {
    let sb = Sandbox::new();
    sb.write("reduce_bench.py", NVBENCH);
    sb.write("level.txt", "10\n");
    let status = std::process::Command::new("python3")
        .arg("reduce_bench.py")
        .current_dir(sb.path())
        .status()
        .unwrap();
    assert!(status.success());
    // Read from another directory: the files are found beside the JSON, not in the cwd.
    let json = sb.path().join("out/reduce.json");
    let elsewhere = Sandbox::new();
    elsewhere.run(&["import", json.to_str().unwrap()]).expect(0);
    let doc: Value = serde_json::from_str(&elsewhere.run(&["export"]).expect(0).stdout()).unwrap();
    let gpu = results(&doc["runs"][0], "gpu_time");
    assert_eq!(gpu.len(), 2);
    assert!(
        gpu.iter()
            .all(|r| r["samples"].as_array().unwrap().len() == 200)
    );
    // Without its -bin directory: exit 2, one line naming the state and the file, nothing stored.
    std::fs::remove_file(sb.path().join("out/reduce.json-bin/1.bin")).unwrap();
    let out = elsewhere.run(&["import", json.to_str().unwrap()]);
    let err = out.stderr();
    out.expect(2);
    assert!(
        err.contains(&format!(
            "state `Device=0 Elements=2^24`: sample file out/reduce.json-bin/1.bin not found (looked for {0}/out/reduce.json-bin/1.bin and {0}/reduce.json-bin/1.bin) (hint: keep the `-bin` directory that nvbench --jsonbin wrote next to the JSON file)",
            sb.path().join("out").display()
        )),
        "{err}"
    );
    assert_eq!(elsewhere.count("runs"), 1);
}

#[test]
fn nccl_tests_repeated_with_runs_gives_a_sample_per_run_and_a_replicate_verdict() {
    let sb = Sandbox::new();
    let config = "[project]\nname = \"net\"\n\n[[suite]]\nname = \"nccl\"\nkind = \"command\"\ncommand = \"python3 all_reduce_perf.py\"\nformat = \"nccl-tests\"\nruns = 5\n";
    let (base, head) = repo(
        &sb,
        &[
            ("all_reduce_perf.py", NCCL_TESTS),
            ("scale.txt", "1.0\n"),
            ("pitwall.toml", config),
        ],
        ("scale.txt", "1.25\n"),
    );
    sb.run(&[
        "run",
        "--base",
        &base,
        "--head",
        &head,
        "--rounds",
        "1",
        "--no-report",
    ])
    .expect(1);
    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    for run in doc["runs"].as_array().unwrap() {
        // 3 sizes × 2 placements, each with time, algbw and busbw.
        assert_eq!(run["results"].as_array().unwrap().len(), 18, "{run}");
        for r in run["results"].as_array().unwrap() {
            assert_eq!(r["samples"].as_array().unwrap().len(), 5, "{r}");
            assert_eq!(r["replicates"], serde_json::json!([0, 1, 2, 3, 4]), "{r}");
        }
        let notes = run["fingerprint"]["extra"]["format_notes"].to_string();
        assert!(
            notes.contains("(`runs = N`: one sample per run, each run a replicate)"),
            "{notes}"
        );
    }
    let v = sb
        .run(&["compare", "--pair", "latest", "--format", "json"])
        .expect(1)
        .json();
    let key =
        "nccl/all_reduce_perf[placement=out-of-place,redop=sum,size=67108864,type=float]/time";
    let r = by_key(&v, key);
    assert_eq!(r["verdict"], "regression", "{r}");
    assert_eq!(r["method"], "replicates", "{r}");
    // Five single-sample replicates per side; with five or more, single-sample replicates are
    // screened for slow outliers (5 robust SDs, docs/STATISTICS.md), and five random offsets
    // can leave a tiny MAD, so one may be set aside: 4 or 5 are counted, never fewer here.
    for side in ["base_replicates", "cand_replicates"] {
        let n = r[side].as_u64().unwrap();
        assert!((4..=5).contains(&n), "{side}: {r}");
    }
    let bw = by_key(&v, &key.replace("/time", "/busbw"));
    assert_eq!(bw["verdict"], "regression", "{bw}");
}

const OWN: &str = "[[suite]]\nname = \"own\"\nkind = \"command\"\ncommand = \"sh bench.sh\"\n";
const KERNEL: &str = "[[suite]]\nkind = \"kernel\"\nmax_bytes = 65536\n";
const QUICK: &str = "[project]\nname = \"pr\"\n\n[ci]\nuntil_decided = false\n\n[sampling]\nwarmup_s = 0.0\nmax_time_s = 0.05\nmin_samples = 5\n\n";
const BENCH: &str = "l=$(cat level.txt)\nprintf '{\"schema\":\"pitwall/v1\",\"benchmarks\":[{\"name\":\"work\",\"samples\":[%s.1,%s.2,%s.3,%s.4,%s.5,%s.6]}]}' $l $l $l $l $l $l\n";

/// `pitwall ci --dry-run` of the pair; the suites of its stored head run.
fn ci_suites(sb: &Sandbox, base: &str, head: &str) -> (String, Vec<String>) {
    let out = sb.run(&[
        "ci",
        "--base",
        base,
        "--head",
        head,
        "--rounds",
        "1",
        "--dry-run",
        "--report-dir",
        "report",
    ]);
    let err = out.stderr();
    // The own suite is unchanged; a built-in suite's noise may still read as a change.
    assert!([0, 1].contains(&out.code()), "{err}");
    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    let last = doc["runs"].as_array().unwrap().last().unwrap().clone();
    let mut suites: Vec<String> = last["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["suite"].as_str().unwrap().to_string())
        .collect();
    suites.dedup();
    (err, suites)
}

#[test]
fn ci_leaves_built_in_suites_out_of_a_pull_request_unless_asked() {
    let sb = Sandbox::new();
    let (base, head) = repo(
        &sb,
        &[
            ("bench.sh", BENCH),
            ("level.txt", "100\n"),
            ("pitwall.toml", &format!("{QUICK}{OWN}\n{KERNEL}")),
        ],
        ("NOTES", "unchanged benchmark\n"),
    );
    let (err, suites) = ci_suites(&sb, &base, &head);
    assert_eq!(suites, vec!["own".to_string()], "{err}");
    assert!(
        err.contains("suite `kernel` left out: a built-in suite runs pitwall's code, the same on base and head (hint: [ci] builtin_suites = true compares it too)"),
        "{err}"
    );
    // Asked for: both are compared (the configuration is read from the working directory).
    sb.write(
        "pitwall.toml",
        &format!(
            "{}{OWN}\n{KERNEL}",
            QUICK.replace("[ci]\n", "[ci]\nbuiltin_suites = true\n")
        ),
    );
    let (err, suites) = ci_suites(&sb, &base, &head);
    assert_eq!(
        suites,
        vec!["own".to_string(), "kernel".to_string()],
        "{err}"
    );
    assert!(!err.contains("left out"), "{err}");
    // Only built-in suites: compared anyway, with one line saying so.
    sb.write("pitwall.toml", &format!("{QUICK}{KERNEL}"));
    let (err, suites) = ci_suites(&sb, &base, &head);
    assert_eq!(suites, vec!["kernel".to_string()], "{err}");
    assert_eq!(
        err.matches("[ci] builtin_suites is false, but every suite of this project is built in: comparing them anyway").count(),
        1,
        "{err}"
    );
}
