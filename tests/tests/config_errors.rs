//! Bad configuration reaches the user as one line naming file, line and key, with exit 2 and
//! nothing stored.

use pitwall_e2e::Sandbox;

#[test]
fn unknown_key_names_file_line_and_key() {
    let sb = Sandbox::new();
    sb.write(
        "pitwall.toml",
        "[project]\nname = \"x\"\n\n[[suite]]\nkind = \"kernel\"\ncolour = \"red\"\n",
    );
    let out = sb.run(&["run"]).expect(2);
    let e = out.stderr();
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    let cfg = sb.path().join("pitwall.toml");
    assert!(
        e.starts_with(&format!(
            "error: {}:6:1: unknown key `colour` in [[suite]]",
            cfg.display()
        )),
        "{e}"
    );
    assert!(e.contains("hint: valid keys in [[suite]] are"), "{e}");
    assert!(!sb.db().exists(), "nothing stored, not even an empty store");
}

#[test]
fn malformed_toml_and_wrong_types_exit_2() {
    let sb = Sandbox::new();
    let cfg = sb.write(
        "custom.toml",
        "[[suite]]\nkind = \"kernel\"\nmin_samples = \"ten\"\n",
    );
    let e = sb
        .run(&["run", "--config", cfg.to_str().unwrap()])
        .expect(2)
        .stderr();
    assert!(
        e.contains("custom.toml:3:15: key `min_samples` in [[suite]]: invalid type"),
        "{e}"
    );
    sb.write("pitwall.toml", "[project\nname=1");
    let e = sb.run(&["run"]).expect(2).stderr();
    assert!(e.contains("pitwall.toml:1:"), "{e}");
    // Other commands read the config too (for [store] url) and refuse it the same way.
    sb.run(&["runs"]).expect(2);
}

#[test]
fn missing_config_file_and_bad_store_url() {
    let sb = Sandbox::new();
    let e = sb.run(&["run", "--config", "nope.toml"]).expect(2).stderr();
    assert!(e.contains("cannot read config nope.toml"), "{e}");
    let e = sb
        .run(&["runs", "--store", "mysql://db/x"])
        .expect(2)
        .stderr();
    assert!(
        e.contains("--store") && e.contains("unknown scheme `mysql`"),
        "{e}"
    );
    let out = sb
        .cmd(&["runs"])
        .env("PITWALL_STORE", "postgres://u:secret@h/db?sslmode=require")
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(
        e.contains("sslmode=require") && e.contains("hint:") && !e.contains("secret"),
        "{e}"
    );
}

#[test]
fn unsupported_format_names_supported_ones() {
    let sb = Sandbox::new();
    sb.write("pitwall.toml", "[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"./bench --json\"\nformat = \"gbench\"\n");
    let e = sb.run(&["run"]).expect(2).stderr();
    assert!(e.contains("pitwall.toml:5:10: suite `toy`: format `gbench` is not supported; hint: supported formats: pitwall-json, google-benchmark, criterion, cargo-criterion, nvbench, nccl-tests, hyperfine, pytest-benchmark, mlperf-loadgen, bmf, wall-time"), "{e}");
}

#[test]
fn huge_seconds_are_a_config_error_not_a_panic() {
    let sb = Sandbox::new();
    for (toml, at) in [
        (
            "[[suite]]\nname = \"t\"\nkind = \"command\"\ncommand = \"true\"\ntimeout_s = 1e300\n",
            "5:1: suite `t`: timeout_s",
        ),
        (
            "[[suite]]\nname = \"t\"\nkind = \"command\"\ncommand = \"true\"\nformat = \"wall-time\"\ntimeout_s = 1e300\n",
            "6:1: suite `t`: timeout_s",
        ),
        (
            "[sampling]\ntimeout_s = 1e300\n\n[[suite]]\nname = \"t\"\nkind = \"command\"\ncommand = \"true\"\n",
            "2:1: [sampling]: timeout_s",
        ),
    ] {
        sb.write("pitwall.toml", toml);
        let e = sb.run(&["run"]).expect(2).stderr();
        assert_eq!(e.lines().count(), 1, "one line: {e}");
        assert!(
            e.contains(&format!(
                "pitwall.toml:{at} must be at most 31536000 seconds (one year); hint:"
            )),
            "{e}"
        );
        assert!(!e.contains("panicked"), "{e}");
    }
    assert!(!sb.db().exists());
}

#[test]
fn single_bracket_suite_names_the_key_and_the_fix() {
    let sb = Sandbox::new();
    sb.write("pitwall.toml", "[suite]\nkind = \"kernel\"\n");
    let e = sb.run(&["run"]).expect(2).stderr();
    assert!(
        e.contains("pitwall.toml:1:1: key `suite`: [suite] is one table, but `suite` is a list of tables; hint: write [[suite]]"),
        "{e}"
    );
}

#[test]
fn empty_project_values_and_wall_time_runs_are_refused() {
    let sb = Sandbox::new();
    for (toml, msg) in [
        (
            "[project]\nname = \"\"\n",
            "pitwall.toml:2:8: [project] name is empty",
        ),
        (
            "[project]\nbuild = \"\"\n",
            "pitwall.toml:2:9: [project] build is empty",
        ),
        (
            "[[suite]]\nname = \"w\"\nkind = \"command\"\ncommand = \"true\"\nformat = \"wall-time\"\nruns = 3\n",
            "suite `w`: `runs` does not apply to format `wall-time`",
        ),
    ] {
        sb.write("pitwall.toml", toml);
        let e = sb.run(&["run"]).expect(2).stderr();
        assert!(e.contains(msg) && e.contains("hint:"), "{e}");
    }
}

/// Every mistake of a file that parses, one `error:` line each in file order, with the closest
/// valid key or value (issue 28, items 2 and 7).
#[test]
fn every_mistake_at_once_with_did_you_mean() {
    let sb = Sandbox::new();
    sb.write(
        "pitwall.toml",
        "[sampling]\ntimout_s = 60\n\n[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"true\"\nformat = \"pitwal-json\"\n\n[[suite]]\nname = \"slow\"\nkind = \"kernel\"\nwarmup_s = 31536000\ntimeout_s = 10\n",
    );
    let e = sb.run(&["run"]).expect(2).stderr();
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines.len(), 3, "{e}");
    assert!(lines.iter().all(|l| l.starts_with("error: ")), "{e}");
    assert!(
        lines[0].contains("pitwall.toml:2:1: unknown key `timout_s` in [sampling]"),
        "{e}"
    );
    assert!(lines[0].ends_with("did you mean `timeout_s`?"), "{e}");
    assert!(
        lines[1].contains("pitwall.toml:8:10: suite `toy`: format `pitwal-json` is not supported"),
        "{e}"
    );
    assert!(lines[1].ends_with("did you mean `pitwall-json`?"), "{e}");
    assert!(
        lines[2].contains(
            "pitwall.toml:13:1: suite `slow`: warmup_s (31536000 s) is longer than timeout_s (10 s)"
        ),
        "{e}"
    );
    assert!(!sb.db().exists(), "nothing stored");
}

/// The kernels manifest of docs/SUITES.md with one key's expression replaced.
fn kernels_config(grid: &str) -> String {
    let example = include_str!("../../docs/examples/cuda-kernels/pitwall.toml");
    assert!(example.contains("grid = \"cdiv(n, 256)\""));
    example.replacen("grid = \"cdiv(n, 256)\"", &format!("grid = \"{grid}\""), 1)
}

#[test]
fn deeply_nested_or_huge_size_expressions_are_config_errors_not_aborts() {
    let sb = Sandbox::new();
    let line = include_str!("../../docs/examples/cuda-kernels/pitwall.toml")
        .lines()
        .position(|l| l.starts_with("grid = \"cdiv"))
        .unwrap()
        + 1;
    let cfg = sb.path().join("pitwall.toml");
    for (grid, says) in [
        (
            format!("{}n{}", "(".repeat(20_000), ")".repeat(20_000)),
            "is 40001 bytes long; an expression may be at most 4096 bytes",
        ),
        (
            "min(".repeat(50_000),
            "is 200000 bytes long; an expression may be at most 4096 bytes",
        ),
        (
            format!("n{}", " + n".repeat(250_000)),
            "is 1000001 bytes long; an expression may be at most 4096 bytes",
        ),
        (
            format!("{}n{}", "(".repeat(65), ")".repeat(65)),
            "nests parentheses and function calls more than 64 deep",
        ),
    ] {
        sb.write("pitwall.toml", &kernels_config(&grid));
        // Every command that loads the configuration, `runs` included.
        for cmd in ["runs", "run"] {
            let e = sb.run(&[cmd]).expect(2).stderr();
            assert_eq!(e.lines().count(), 1, "one line: {e}");
            assert!(
                e.starts_with(&format!("error: {}:{line}:", cfg.display())),
                "{e}"
            );
            assert!(
                e.contains("kernel `saxpy`: key `grid`:") && e.contains(says),
                "{e}"
            );
            assert!(e.len() < 600, "the expression is not echoed whole: {e}");
        }
    }
    // A flat sum within the limit loads: `runs` gets as far as the (missing) store.
    let sum = format!("cdiv(n, 256){}", " + 0".repeat(1000));
    sb.write("pitwall.toml", &kernels_config(&sum));
    let e = sb.run(&["runs"]).expect(2).stderr();
    assert!(e.contains("does not exist") && !e.contains("grid"), "{e}");
}
