//! `pitwall run`, `runs`, `show` end to end: built-in suites are measured and stored, tables
//! and JSON come out, and a fresh directory with no config uses the built-in default.

use pitwall_e2e::{QUICK_BUILTINS, Sandbox};

#[test]
fn builtin_suites_run_store_and_show() {
    let sb = Sandbox::new();
    sb.write("pitwall.toml", QUICK_BUILTINS);
    let out = sb.run(&["run"]).expect(0);
    let table = out.stdout();
    for needle in [
        "gemm_f32[n=64]",
        "stream_triad",
        "reduce_sum",
        "mlp_forward[batch=1]",
        "latency",
        "allreduce_sum_f32[bytes=8,ranks=2]",
        "busbw",
        "status complete",
    ] {
        assert!(table.contains(needle), "missing {needle} in\n{table}");
    }
    assert!(out.stderr().contains("stored run "), "{}", out.stderr());
    assert!(sb.db().exists());

    let runs = sb.run(&["runs", "--format", "json"]).expect(0).json();
    assert_eq!(runs.as_array().unwrap().len(), 1);
    assert_eq!(runs[0]["status"], "complete");
    assert_eq!(runs[0]["project"], "quick");
    assert_eq!(runs[0]["failed_results"], 0);
    let id = runs[0]["id"].as_str().unwrap().to_string();

    let shown = sb
        .run(&["show", &id[..8], "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(shown["run"]["id"], id.as_str());
    let benches = shown["benchmarks"].as_array().unwrap();
    let mlp = benches
        .iter()
        .find(|b| {
            b["name"] == "mlp_forward" && b["measure"] == "latency" && b["params"]["batch"] == "1"
        })
        .unwrap();
    assert!(
        mlp["n"].as_u64().unwrap() >= 20,
        "inference keeps per-pass samples: {mlp}"
    );
    assert_eq!(mlp["unit"], "ns");
    assert!(mlp["p999"].as_f64().unwrap() >= mlp["median"].as_f64().unwrap());
    let busbw = benches.iter().find(|b| b["measure"] == "busbw").unwrap();
    let algbw = benches
        .iter()
        .find(|b| b["measure"] == "algbw" && b["params"] == busbw["params"])
        .unwrap();
    // 2 ranks: busbw = algbw * 2(n-1)/n = algbw.
    assert_eq!(busbw["median"], algbw["median"]);
    // The triad's bandwidth as a percentage of the copy of its size, measured in the same run
    // (in the worker of the kernel suite): the ratio of the two medians, as the medians of the
    // derived samples and of the triad's own samples differ only by that factor.
    let by = |name: &str, measure: &str| {
        benches
            .iter()
            .find(|b| {
                b["name"] == name && b["measure"] == measure && b["params"]["bytes"] == "16384"
            })
            .unwrap_or_else(|| panic!("no {name} {measure} in {shown}"))
    };
    let pct = by("stream_triad", "bandwidth_of_copy");
    assert_eq!(pct["unit"], "%");
    assert_eq!(pct["direction"], "higher_is_better");
    let ratio = by("stream_triad", "bandwidth")["median"].as_f64().unwrap()
        / by("stream_copy", "bandwidth")["median"].as_f64().unwrap();
    let shown_pct = pct["median"].as_f64().unwrap();
    assert!(
        (shown_pct / (ratio * 100.0) - 1.0).abs() < 1e-9,
        "{shown_pct} vs {ratio}"
    );
    assert_eq!(busbw["direction"], "higher_is_better");

    let listed = sb.run(&["runs"]).expect(0).stdout();
    assert!(
        listed.starts_with("RUN") && listed.contains(&id),
        "{listed}"
    );
    sb.run(&["show", "latest"]).expect(0);
}

#[test]
fn no_config_uses_builtin_default_and_json_output() {
    let sb = Sandbox::new();
    // No pitwall.toml: the built-in default (all three suites); select one small benchmark.
    let out = sb
        .run(&[
            "run",
            "--suite",
            "kernel",
            "--bench",
            "gemm_f32[n=64]",
            "--format",
            "json",
            "--quiet",
        ])
        .expect(0);
    let v = out.json();
    assert_eq!(v["run"]["status"], "complete");
    let b = v["benchmarks"].as_array().unwrap();
    assert_eq!(b.len(), 1);
    assert_eq!(b[0]["unit"], "GFLOP/s");
    assert!(
        b[0]["n"].as_u64().unwrap() >= 10,
        "default min_samples is 10"
    );
    assert!(b[0]["median"].as_f64().unwrap() > 0.0);
    // `--quiet` hides progress, never warnings (issue 24): what stays is the no-GPU line and
    // `warning:` lines.
    let stderr = out.stderr();
    assert!(
        stderr
            .lines()
            .all(|l| l.starts_with("warning:") || l.starts_with("no GPU (")),
        "--quiet prints only warnings on stderr: {stderr}"
    );
    let project = sb.path().file_name().unwrap().to_str().unwrap();
    assert_eq!(v["run"]["project"], project);
}

#[test]
fn unknown_suite_and_empty_selection_are_usage_errors() {
    let sb = Sandbox::new();
    let e = sb.run(&["run", "--suite", "gpu"]).expect(2).stderr();
    assert!(
        e.starts_with(
            "error: unknown suite `gpu` (hint: configured suites are kernel, inference, collective)"
        ),
        "{e}"
    );
    let e = sb
        .run(&["run", "--suite", "kernel", "--bench", "nothing-matches"])
        .expect(2)
        .stderr();
    assert!(e.contains("no benchmark matched"), "{e}");
    assert!(!sb.db().exists() || sb.count("runs") == 0);
}

#[test]
fn help_documents_exit_codes() {
    let sb = Sandbox::new();
    let out = sb.run(&["run", "--help"]).expect(0).stdout();
    assert!(
        out.contains("1  regression found") && out.contains("3  infrastructure failure"),
        "{out}"
    );
    let e = sb.run(&["run", "--no-such-flag"]).expect(2).stderr();
    assert!(e.contains("--no-such-flag"), "{e}");
}
