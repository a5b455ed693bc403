//! What the command line says when it is used wrongly: flags that a command really has, hints
//! that can be followed, help text that matches the code and docs, and usage errors (exit 2)
//! instead of silently ignored or nonsensical values.

use pitwall_e2e::Sandbox;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/export-v1.json");

/// A sandbox whose store holds the fixture's runs (no interleaved pair among them).
fn with_runs() -> Sandbox {
    let sb = Sandbox::new();
    sb.run(&["import", "--quiet", FIXTURE]).expect(0);
    sb
}

#[test]
fn comment_without_a_pair_names_its_own_flags() {
    let sb = with_runs();
    let e = sb
        .run(&["comment", "--pr", "1", "--dry-run"])
        .expect(2)
        .stderr();
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(!e.contains("--pair"), "comment has no --pair flag: {e}");
    assert!(
        e.starts_with("error: no --baseline/--candidate given, so the latest stored pair is compared: no interleaved base/head pair in sqlite:.pitwall/pitwall.db")
            && e.contains("hint: `pitwall run --base REV --head REV` stores one"),
        "{e}"
    );
    // compare does have --pair, and says so.
    let e = sb.run(&["compare"]).expect(2).stderr();
    assert!(
        e.starts_with("error: --pair: no interleaved base/head pair"),
        "{e}"
    );
}

#[test]
fn ci_outside_a_repository_hints_at_something_that_exists() {
    let sb = Sandbox::new();
    let e = sb
        .run(&[
            "ci",
            "--base",
            "HEAD~1",
            "--head",
            "HEAD",
            "--pr",
            "1",
            "--dry-run",
        ])
        .expect(2)
        .stderr();
    assert!(e.contains("is not inside a git repository"), "{e}");
    assert!(!e.contains("--repo DIR"), "ci --repo is OWNER/NAME: {e}");
    assert!(
        e.contains("hint: run pitwall ci in a checkout of the repository"),
        "{e}"
    );
    assert!(!sb.db().exists(), "checked before anything is stored");
}

/// `pitwall ARGS --help` with its line wrapping undone.
fn help_text(sb: &Sandbox, args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.push("--help");
    let text = sb.run(&all).expect(0).stdout();
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn help_matches_the_code_and_the_docs() {
    let sb = Sandbox::new();
    for cmd in ["comment", "ci"] {
        let help = help_text(&sb, &[cmd]);
        assert!(
            help.contains(
                "[default: $PITWALL_GITHUB_API_URL / $PITWALL_GITLAB_API_URL, else https://api.github.com]"
            ),
            "{cmd}: {help}"
        );
    }
    let help = help_text(&sb, &["import"]);
    assert!(
        help.contains("`pitwall export` files or other tools' results (docs/FORMATS.md)"),
        "{help}"
    );
    let help = help_text(&sb, &[]);
    assert!(
        help.contains("[env: PITWALL_STORE; empty means unset]"),
        "{help}"
    );
}

#[test]
fn meaningless_values_are_usage_errors() {
    let sb = with_runs();
    let e = sb.run(&["runs", "--limit", "0"]).expect(2).stderr();
    assert!(e.contains("--limit <N>"), "{e}");
    assert_eq!(
        sb.run(&["runs", "--limit", "1"])
            .expect(0)
            .stdout()
            .lines()
            .count(),
        2
    );

    let e = sb.run(&["run", "--rounds", "2"]).expect(2).stderr();
    assert!(e.contains("--rounds") && e.contains("--base"), "{e}");

    for args in [
        &["run", "--commit", ""][..],
        &["run", "--commit", " "],
        &["run", "--base", "", "--head", "HEAD"],
        &["import", "--suite", "", FIXTURE],
    ] {
        let e = sb.run(args).expect(2).stderr();
        assert!(e.contains("must not be empty"), "{args:?}: {e}");
        assert!(!e.contains("git fetch origin"), "{args:?}: {e}");
    }
    let e = sb
        .run(&["import", "--commit", "not a sha!", FIXTURE])
        .expect(2)
        .stderr();
    assert!(
        e.contains("not a full commit sha") && e.contains("git rev-parse"),
        "{e}"
    );
    let runs_before = sb.count("runs");
    let sha = "ABCDEF0123456789abcdef0123456789abcdef01";
    let bench = sb.write(
        "b.json",
        "{\"schema\":\"pitwall/v1\",\"benchmarks\":[{\"name\":\"x\",\"samples\":[1,2,3]}]}",
    );
    sb.run(&[
        "import",
        "--quiet",
        "--commit",
        sha,
        bench.to_str().unwrap(),
    ])
    .expect(0);
    assert_eq!(sb.count("runs"), runs_before + 1);
    let latest = sb
        .run(&["show", "latest", "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(
        latest["run"]["commit"],
        sha.to_ascii_lowercase(),
        "{latest}"
    );
}

#[test]
fn report_out_naming_a_file_says_so() {
    let sb = with_runs();
    sb.write("somefile", "keep\n");
    let e = sb.run(&["report", "--out", "somefile"]).expect(2).stderr();
    assert_eq!(
        e.trim_end(),
        "error: --out somefile: is a file, not a directory (hint: the report is a directory of pages; name a new or existing directory)"
    );
    assert_eq!(
        std::fs::read_to_string(sb.path().join("somefile")).unwrap(),
        "keep\n"
    );
}

#[test]
fn control_characters_in_benchmark_names_do_not_reach_the_terminal() {
    // A tool's output names a benchmark with an ANSI escape (clear screen, red) and a newline.
    let sb = Sandbox::new();
    let evil = "bench\u{1b}[2J\u{1b}[31mred\nfake row";
    let doc = |level: f64| {
        serde_json::json!({"schema": "pitwall/v1", "benchmarks": [
            {"name": evil, "samples": [level, level + 1.0, level + 2.0, level + 1.0, level]},
            {"name": "plain", "samples": [5.0, 5.1, 5.2, 5.1, 5.0]}
        ]})
        .to_string()
    };
    sb.write("a.json", &doc(100.0));
    sb.write("b.json", &doc(150.0));
    let clean = |out: &str| {
        assert!(
            !out.chars().any(|c| c.is_control() && c != '\n'),
            "raw control character in {out:?}"
        );
        assert!(
            out.contains("bench\\x1b[2J\\x1b[31mred\\x0afake row"),
            "{out}"
        );
    };
    let out = sb
        .run(&["compare", "--baseline", "a.json", "--candidate", "b.json"])
        .expect(1)
        .stdout();
    clean(&out);
    sb.run(&[
        "import",
        "--input-format",
        "pitwall-json",
        "--suite",
        "s",
        "a.json",
    ])
    .expect(0);
    let shown = sb.run(&["show", "latest"]).expect(0).stdout();
    clean(&shown);
    // One table row per benchmark: the newline did not split the row.
    let rows = shown.lines().filter(|l| l.starts_with("s ")).count();
    assert_eq!(rows, 2, "{shown}");
}

#[test]
fn import_warns_about_rows_a_reader_left_out() {
    let sb = Sandbox::new();
    let fixture = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/nccl-tests/all_reduce_perf.txt"),
    )
    .unwrap();
    let row = fixture
        .lines()
        .find(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .unwrap();
    let size = row.split_whitespace().next().unwrap();
    let text = format!("{fixture}\n{}\n", row.replacen(size, "-8", 1));
    sb.write("nccl.txt", &text);
    let e = sb
        .run(&["import", "--input-format", "nccl-tests", "nccl.txt"])
        .expect(0)
        .stderr();
    assert!(
        e.contains("warning: nccl.txt: nccl-tests: 1 row with an impossible size (`-8`) left out"),
        "{e}"
    );
    let export = sb.run(&["export"]).expect(0).stdout();
    assert!(
        export.contains("1 row with an impossible size"),
        "kept in the run's notes"
    );
}

#[test]
fn every_command_shows_its_exit_codes_and_explains_format() {
    let sb = Sandbox::new();
    for cmd in [
        "run", "runs", "show", "export", "import", "compare", "detect", "env", "report", "comment",
        "ci",
    ] {
        let help = help_text(&sb, &[cmd]);
        assert!(help.contains("Exit codes: 0 ok"), "{cmd}: {help}");
        assert!(
            help.contains("Global options:"),
            "{cmd}: global flags apart: {help}"
        );
    }
    // bisect's own table says what docs/BISECT.md says: 0 also when uncertain, never 1.
    let bisect = help_text(&sb, &["bisect"]);
    assert!(
        bisect.contains("0 a first bad commit was found (also when uncertain"),
        "{bisect}"
    );
    assert!(!bisect.contains("1 regression found"), "{bisect}");
    for cmd in ["run", "runs", "show", "env", "compare"] {
        let help = help_text(&sb, &[cmd]);
        assert!(help.contains("--format <FORMAT> Output:"), "{cmd}: {help}");
    }
}

#[test]
fn endless_and_huge_inputs_end_in_one_short_error() {
    let sb = with_runs();
    // An endless device as config or results: refused before reading (it once took 24 GB).
    let e = sb
        .run(&["--config", "/dev/zero", "runs"])
        .expect(2)
        .stderr();
    assert!(e.contains("is a device, not a file"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    let e = sb.run(&["import", "/dev/zero"]).expect(2).stderr();
    assert!(e.contains("is a device, not a file"), "{e}");
    // A file over the cap is refused after reading just past it.
    std::fs::write(sb.path().join("huge.toml"), vec![b'#'; (16 << 20) + 1]).unwrap();
    let e = sb
        .run(&["--config", "huge.toml", "runs"])
        .expect(2)
        .stderr();
    assert!(e.contains("larger than 16 MiB"), "{e}");
    // A 1 MB unknown key is cut in the error line, the hint kept.
    sb.write("big.toml", &format!("{} = 1\n", "k".repeat(1 << 20)));
    let e = sb.run(&["--config", "big.toml", "runs"]).expect(2).stderr();
    assert!(
        e.len() < 2_000 && e.contains("characters cut"),
        "{}",
        e.len()
    );
    // A directory or a host-less PostgreSQL URL as a store is a usage error.
    std::fs::create_dir(sb.path().join("adir")).unwrap();
    for store in ["adir", "postgres://"] {
        let e = sb.run(&["--store", store, "runs"]).expect(2).stderr();
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}
