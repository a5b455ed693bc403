//! The Python helper (`suites/python/pitwall_bench.py`) end to end: a user's benchmark script
//! emits pitwall JSON with every raw sample, read by a `command` suite like any other output;
//! a benchmark that raises is recorded as failed while the others are kept, and one the script
//! skips (no GPU) is recorded as skipped.

use pitwall_e2e::Sandbox;
use serde_json::Value;

const SCRIPT: &str = r#"
from pitwall_bench import Bench

def boom():
    raise RuntimeError("kernel launch failed")

bench = Bench()
data = list(range(2000))
bench.run("sum", lambda: sum(data), params={"n": 2000}, max_time_s=0.2, min_samples=12)
bench.run("sorted", lambda: sorted(data), params={"n": 2000}, max_time_s=0.2)
bench.run("broken", boom)
bench.skip("matmul", "no CUDA device", params={"n": 4096})
bench.emit()
"#;

#[test]
fn python_helper_output_is_stored_with_every_sample() {
    let sb = Sandbox::new();
    sb.write("bench_kernels.py", SCRIPT);
    let helper_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../suites/python");
    sb.write(
        "pitwall.toml",
        &format!(
            "[[suite]]\nname = \"py\"\nkind = \"command\"\ncommand = \"python3 bench_kernels.py\"\nformat = \"pitwall-json\"\nenv = {{ PYTHONPATH = \"{helper_dir}\" }}\n"
        ),
    );
    let out = sb.run(&["run", "--format", "json"]).expect(3);
    let v = out.json();
    let benches = v["benchmarks"].as_array().unwrap();
    let find = |n: &str| {
        benches
            .iter()
            .find(|b| b["name"] == n)
            .unwrap_or_else(|| panic!("{n} in {v}"))
    };
    let sum = find("sum");
    assert_eq!(sum["status"], "ok");
    assert_eq!(sum["params"]["n"], "2000");
    assert_eq!(sum["unit"], "ns");
    assert!(
        sum["n"].as_u64().unwrap() >= 12,
        "min_samples honoured: {sum}"
    );
    assert!(sum["median"].as_f64().unwrap() > 0.0);
    let broken = find("broken");
    assert_eq!(broken["status"], "failed");
    assert_eq!(broken["error"], "RuntimeError: kernel launch failed");
    let skipped = find("matmul");
    assert_eq!(skipped["status"], "skipped");
    assert_eq!(skipped["error"], "no CUDA device");
    assert_eq!(skipped["params"]["n"], "4096");
    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    let stored = doc["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "sum")
        .unwrap()
        .clone();
    assert_eq!(
        stored["samples"].as_array().unwrap().len() as u64,
        sum["n"].as_u64().unwrap(),
        "every raw sample kept"
    );
}
