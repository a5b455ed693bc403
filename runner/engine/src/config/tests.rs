//! Config parsing tests: the documented shape works and every mistake names file, line, key.

use super::*;
use pitwall_schema::SuiteKind;

fn parse(text: &str) -> Result<Config, ConfigError> {
    parse_str(text, "pitwall.toml", "dirname")
}

fn err(text: &str) -> String {
    parse(text).unwrap_err().to_string()
}

#[test]
fn the_issue_example_shape_works() {
    let c = parse(
        r#"
[project]
name = "toy"
build = "make bench"

[[suite]]
name = "toy"
kind = "command"
command = "./bench --json"
format = "pitwall-json"
timeout_s = 5
env = { OMP_NUM_THREADS = "1" }

[[suite]]
kind = "kernel"
max_bytes = 1048576
min_samples = 20
"#,
    )
    .unwrap();
    assert_eq!(c.project.name, "toy");
    assert_eq!(c.project.build.as_deref(), Some("make bench"));
    assert_eq!(c.suites.len(), 2);
    let SuiteSpec::Command(cmd) = &c.suites[0].spec else {
        panic!("not a command suite")
    };
    assert_eq!(cmd.command, "./bench --json");
    assert_eq!(cmd.format, OutputFormat::PITWALL_JSON);
    assert_eq!(cmd.env["OMP_NUM_THREADS"], "1");
    assert_eq!(c.suites[0].sampling.timeout_s, 5.0);
    assert_eq!(c.suites[1].name, "kernel");
    assert_eq!(c.suites[1].sampling.min_samples, 20);
    assert!(matches!(
        c.suites[1].spec,
        SuiteSpec::Builtin {
            kind: SuiteKind::Kernel,
            max_bytes: Some(1048576),
            ..
        }
    ));
}

#[test]
fn empty_file_is_the_builtin_default() {
    let c = parse("").unwrap();
    assert_eq!(c, Config::builtin_default("dirname"));
    let kinds: Vec<&str> = c.suites.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(kinds, ["kernel", "inference", "collective"]);
    assert_eq!(c.suites[1].sampling.min_samples, 1000);
    assert_eq!(c.pinning.policy, PinPolicy::Prefer);
    assert_eq!(c.thresholds.regression_pct, 2.0);
}

#[test]
fn sampling_precedence_builtin_then_file_then_suite() {
    let c = parse(
        "[sampling]\nmin_samples = 15\nmax_time_s = 0.5\ntarget_ci_pct = 2\n\n[[suite]]\nkind = \"inference\"\n\n[[suite]]\nkind = \"kernel\"\nmin_samples = 30\n",
    )
    .unwrap();
    assert_eq!(c.suites[0].sampling.min_samples, 15);
    assert_eq!(c.suites[0].sampling.max_time_s, 0.5);
    assert_eq!(c.suites[0].sampling.target_rel_ci, 0.02);
    assert_eq!(c.suites[1].sampling.min_samples, 30);
}

#[test]
fn file_sampling_applies_to_the_default_suites() {
    let c = parse("[sampling]\nmax_time_s = 0.25\n").unwrap();
    assert_eq!(c.suites.len(), 3);
    assert!(c.suites.iter().all(|s| s.sampling.max_time_s == 0.25));
    assert_eq!(
        c.suites[1].sampling.min_samples, 1000,
        "inference keeps its own floor"
    );
}

#[test]
fn unknown_key_names_file_line_key_and_valid_keys() {
    let e = err("[project]\nname = \"x\"\n\n[[suite]]\nkind = \"kernel\"\ncolour = \"red\"\n");
    assert!(
        e.starts_with("pitwall.toml:6:1: unknown key `colour` in [[suite]]"),
        "{e}"
    );
    assert!(
        e.contains("hint: valid keys in [[suite]] are name, kind, command"),
        "{e}"
    );
    let e = err("[project]\nnmae = \"x\"\n");
    assert!(e.starts_with("pitwall.toml:2:1: unknown key `nmae` in [project]; hint: valid keys in [project] are name, build"), "{e}");
    let e = err("[projcet]\n");
    assert!(e.contains("unknown key `projcet` in the top level"), "{e}");
}

#[test]
fn wrong_type_names_the_key() {
    let e = err("[[suite]]\nkind = \"kernel\"\nmin_samples = \"ten\"\n");
    assert!(
        e.starts_with("pitwall.toml:3:15: key `min_samples` in [[suite]]: invalid type"),
        "{e}"
    );
    let e = err("[project]\nname = 5\n");
    assert!(
        e.starts_with("pitwall.toml:2:8: key `name` in [project]: invalid type"),
        "{e}"
    );
}

#[test]
fn syntax_error_has_position() {
    let e = err("[project\nname = \"x\"\n");
    assert!(e.starts_with("pitwall.toml:1:"), "{e}");
    assert!(!e.contains('\n'), "one line: {e}");
}

#[test]
fn semantic_errors() {
    let e = err("[[suite]]\nname = \"a\"\n");
    assert!(
        e.contains("[[suite]] has no `kind`") && e.contains("hint: set kind to one of"),
        "{e}"
    );
    let e = err("[[suite]]\nkind = \"gpu\"\n");
    assert!(
        e.starts_with("pitwall.toml:2:8: unknown suite kind `gpu`"),
        "{e}"
    );
    let e = err("[[suite]]\nname = \"t\"\nkind = \"command\"\n");
    assert!(
        e.contains("suite `t`: kind = \"command\" needs `command`"),
        "{e}"
    );
    let e =
        err("[[suite]]\nname = \"t\"\nkind = \"command\"\ncommand = \"x\"\nformat = \"gbench\"\n");
    assert!(
        e.starts_with("pitwall.toml:5:10: suite `t`: format `gbench` is not supported"),
        "{e}"
    );
    assert!(
        e.contains("hint: supported formats: pitwall-json, google-benchmark, criterion"),
        "{e}"
    );
    let e = err("[[suite]]\nkind = \"kernel\"\ncommand = \"x\"\n");
    assert!(
        e.contains("key `command` applies only to kind = \"command\""),
        "{e}"
    );
    let e = err("[[suite]]\nkind = \"kernel\"\n[[suite]]\nkind = \"kernel\"\n");
    assert!(
        e.starts_with("pitwall.toml:3:") && e.contains("duplicate suite name `kernel`"),
        "{e}"
    );
    let e = err("[sampling]\nmin_samples = 50\nmax_samples = 10\n");
    assert!(
        e.contains("max_samples (10) is below min_samples (50)"),
        "{e}"
    );
    let e = err("[pinning]\npolicy = \"always\"\n");
    assert!(e.starts_with("pitwall.toml:2:10: [pinning] policy `always` is not valid; hint: use require, prefer or off"), "{e}");
    let e = err("[github]\nrepo = \"nope\"\n");
    assert!(e.contains("[github] repo `nope` is not OWNER/NAME"), "{e}");
    let e = err("[store]\nurl = \"mysql://x\"\n");
    assert!(
        e.starts_with("pitwall.toml:2:1: [store] url: invalid store url"),
        "{e}"
    );
    let e = err("[[suite]]\nkind = \"collective\"\nranks = 1\n");
    assert!(e.contains("ranks must be at least 2"), "{e}");
}

#[test]
fn gpu_table() {
    use pitwall_host::gpu::{ClockMode, DeviceSelector};
    let c = parse("").unwrap();
    assert_eq!(c.gpu.clocks, ClockMode::Observe);
    let c = parse("[gpu]\ndevice = 1\nclocks = \"lock:1755\"\nmonitor_period_ms = 5\n").unwrap();
    assert_eq!(
        (c.gpu.device.clone(), c.gpu.clocks, c.gpu.monitor_period_ms),
        (
            Some(DeviceSelector::Index(1)),
            ClockMode::Lock { sm_mhz: Some(1755) },
            5
        )
    );
    // Unset: CUDA device 0, hashed as the old default `device = 0`.
    assert_eq!(parse("").unwrap().gpu.device, None);
    assert_eq!(
        parse("").unwrap().hash(),
        parse("[gpu]\ndevice = 0\n").unwrap().hash()
    );
    for (text, want) in [
        ("\"2\"", DeviceSelector::Index(2)),
        (
            "\"00000000:9A:00.0\"",
            DeviceSelector::PciBusId("00000000:9A:00.0".into()),
        ),
        (
            "\"GPU-12345678-aaaa\"",
            DeviceSelector::Uuid("GPU-12345678-aaaa".into()),
        ),
        (
            "\"MIG-12345678-bbbb\"",
            DeviceSelector::Uuid("MIG-12345678-bbbb".into()),
        ),
    ] {
        let c = parse(&format!("[gpu]\ndevice = {text}\n")).unwrap();
        assert_eq!(c.gpu.device, Some(want), "{text}");
    }
    let e = err("[gpu]\ndevice = \"cuda:1\"\n");
    assert!(
        e.starts_with("pitwall.toml:2:10: [gpu] device `cuda:1` is not an NVML index, a PCI bus id or a GPU/MIG UUID; hint:"),
        "{e}"
    );
    let e = err("[gpu]\nclocks = \"fast\"\n");
    assert!(e.starts_with("pitwall.toml:2:10: [gpu] clock mode `fast` is not valid; hint: use lock, lock:<MHz>, observe or off"), "{e}");
    let e = err("[gpu]\nclock = \"lock\"\n");
    assert!(e.contains("unknown key `clock` in [gpu]; hint: valid keys in [gpu] are device, clocks, monitor_period_ms"), "{e}");
}

#[test]
fn hash_changes_with_content() {
    let a = parse("[[suite]]\nkind = \"kernel\"\n").unwrap();
    let b = parse("[[suite]]\nkind = \"kernel\"\nmin_samples = 11\n").unwrap();
    assert_eq!(
        a.hash(),
        parse("[[suite]]\nkind = \"kernel\"\n").unwrap().hash()
    );
    assert_ne!(a.hash(), b.hash());
    assert_eq!(a.hash().len(), 64);
}

#[test]
fn the_documented_full_example_parses() {
    let doc = include_str!("../../../../docs/CONFIG.md");
    let start = doc.find("## A full example").expect("section");
    let block = &doc[start..];
    let body = &block[block.find("```toml\n").expect("toml block") + 8..];
    let toml = &body[..body.find("```").expect("end of block")];
    let c = parse(toml).unwrap_or_else(|e| panic!("docs/CONFIG.md example: {e}"));
    assert!(!c.suites.is_empty());
}

#[test]
fn seconds_are_at_most_a_year_and_the_error_points_at_the_key() {
    let e = err("[[suite]]\nkind = \"kernel\"\ntimeout_s = 1e300\n");
    assert_eq!(
        e,
        "pitwall.toml:3:1: suite `kernel`: timeout_s must be at most 31536000 seconds (one year); \
         hint: the value is in seconds, e.g. 600 for ten minutes"
    );
    let e = err("[project]\nname = \"x\"\n\n[sampling]\nmin_samples = 5\ntimeout_s = 1e300\n");
    assert!(
        e.starts_with("pitwall.toml:6:1: [sampling]: timeout_s must be at most 31536000"),
        "{e}"
    );
    let e = err(
        "[[suite]]\nname = \"t\"\nkind = \"command\"\ncommand = \"true\"\nformat = \"wall-time\"\ntimeout_s = 1e300\n",
    );
    assert!(
        e.starts_with("pitwall.toml:6:1: suite `t`: timeout_s must be at most"),
        "{e}"
    );
    let e = err("[sampling]\nwarmup_s = 4e7\n");
    assert!(
        e.contains("warmup_s must be at most 31536000 seconds"),
        "{e}"
    );
    let e = err("[[suite]]\nkind = \"kernel\"\nmax_time_s = 31536001\n");
    assert!(e.contains("max_time_s must be at most"), "{e}");
    assert!(!e.contains('\n'), "one line: {e}");
    let c = parse("[sampling]\ntimeout_s = 31536000\nwarmup_s = 31536000\n").unwrap();
    assert_eq!(c.sampling.timeout_s, MAX_SECONDS);
}

#[test]
fn a_single_table_for_suite_names_the_key_and_the_brackets() {
    let e = err("[suite]\nkind = \"kernel\"\n");
    assert_eq!(
        e,
        "pitwall.toml:1:1: key `suite`: [suite] is one table, but `suite` is a list of tables; \
         hint: write [[suite]] (two brackets) before each entry"
    );
    let e = err("[[sampling]]\nmin_samples = 5\n");
    assert!(
        e.contains("[[sampling]] is a list of tables, but `sampling` is one table")
            && e.contains("hint: write [sampling]"),
        "{e}"
    );
}

#[test]
fn empty_project_values_and_runs_with_wall_time_are_errors() {
    let e = err("[project]\nname = \"\"\n");
    assert!(
        e.starts_with("pitwall.toml:2:8: [project] name is empty; hint:"),
        "{e}"
    );
    let e = err("[project]\nbuild = \"  \"\n");
    assert!(
        e.starts_with("pitwall.toml:2:9: [project] build is empty; hint:"),
        "{e}"
    );
    let e = err(
        "[[suite]]\nname = \"t\"\nkind = \"command\"\ncommand = \"true\"\nformat = \"wall-time\"\nruns = 3\n",
    );
    assert!(
        e.contains("suite `t`: `runs` does not apply to format `wall-time`; hint:"),
        "{e}"
    );
}

#[test]
fn ci_measures_until_decided_by_default_and_can_be_told_otherwise() {
    let c = parse("").unwrap();
    assert!(c.ci.until_decided);
    assert_eq!(c.ci.max_rounds, crate::defaults::MAX_ROUNDS);
    let c = parse("[ci]\nuntil_decided = false\nmax_rounds = 8\n").unwrap();
    assert!(!c.ci.until_decided);
    assert_eq!(c.ci.max_rounds, 8);
    let e = err("[ci]\nmax_rounds = 0\n");
    assert!(
        e.contains("pitwall.toml:2:") && e.contains("[ci] max_rounds must be at least 1"),
        "{e}"
    );
    let e = err("[ci]\nrounds = 3\n");
    assert!(e.contains("rounds"), "{e}");
    assert!(
        e.contains("until_decided, max_rounds, builtin_suites"),
        "{e}"
    );
    // Built-in suites are left out of pull requests unless asked for; the default keeps the
    // hash of configurations written before the key.
    assert!(!c.ci.builtin_suites);
    assert!(!parse("").unwrap().ci.builtin_suites);
    let on = parse("[ci]\nbuiltin_suites = true\n").unwrap();
    assert!(on.ci.builtin_suites);
    assert_eq!(
        parse("[ci]\nbuiltin_suites = false\n").unwrap().hash(),
        parse("").unwrap().hash()
    );
    assert_ne!(on.hash(), parse("").unwrap().hash());
    let e = err("[ci]\nbuiltin_suites = \"yes\"\n");
    assert!(
        e.contains("pitwall.toml:2:") && e.contains("builtin_suites"),
        "{e}"
    );
}

#[test]
fn testbed_and_history_branch() {
    let c = parse("").unwrap();
    assert_eq!((c.testbed, c.history_branch.as_str()), (None, "main"));
    let c =
        parse("[testbed]\nname = \"Rack 4 / H200\"\n\n[history]\nbranch = \"trunk\"\n").unwrap();
    assert_eq!(c.testbed.as_deref(), Some("rack-4-h200"));
    assert_eq!(c.history_branch, "trunk");
    // Neither changes a measurement.
    assert_eq!(c.hash(), parse("").unwrap().hash());
    let e = err("[testbed]\nname = \"\"\n");
    assert!(
        e.starts_with("pitwall.toml:2:8: [testbed] name must not be empty"),
        "{e}"
    );
    let e = err("[history]\nbranch = \" \"\n");
    assert!(e.contains("[history] branch must not be empty"), "{e}");
    let e = err("[testbed]\nhost = \"x\"\n");
    assert!(e.contains("valid keys in [testbed] are name"), "{e}");
}

#[test]
fn suites_backend() {
    let auto = parse("").unwrap();
    assert_eq!(auto.backend, BackendChoice::Auto);
    assert_eq!(
        parse("[suites]\nbackend = \"auto\"\n").unwrap().hash(),
        auto.hash()
    );
    let cuda = parse("[suites]\nbackend = \"cuda\"\n").unwrap();
    assert_eq!(cuda.backend, BackendChoice::Cuda);
    let cpu = parse("[suites]\nbackend = \"cpu\"\n").unwrap();
    assert_eq!(cpu.backend, BackendChoice::Cpu);
    // The backend changes what is measured: so does the hash.
    assert_ne!(cpu.hash(), auto.hash());
    assert_ne!(cpu.hash(), cuda.hash());
    let e = err("[suites]\nbackend = \"rocm\"\n");
    assert!(
        e.starts_with("pitwall.toml:2:11: [suites] backend `rocm` is not known")
            && e.contains("hint: use auto, cuda or cpu"),
        "{e}"
    );
    let e = err("[suites]\ndevice = 0\n");
    assert!(e.contains("valid keys in [suites] are backend"), "{e}");
    let e = err("[suites]\nkind = \"kernel\"\n");
    assert!(
        e.contains("unknown key `kind` in [suites]")
            && e.ends_with("a suite is a [[suite]] entry (two brackets, singular)"),
        "{e}"
    );
}

#[test]
fn builtin_suites_take_a_cache_mode() {
    use pitwall_schema::backend::CacheMode;
    let c = parse("[[suite]]\nkind = \"kernel\"\ncache = \"warm\"\n").unwrap();
    let SuiteSpec::Builtin { options, cache, .. } = &c.suites[0].spec else {
        panic!("built-in");
    };
    assert_eq!(
        (options.cache, *cache),
        (CacheMode::Warm, Some(CacheMode::Warm))
    );
    let cold = parse("[[suite]]\nkind = \"kernel\"\n").unwrap();
    let SuiteSpec::Builtin { options, cache, .. } = &cold.suites[0].spec else {
        panic!("built-in");
    };
    assert_eq!((options.cache, *cache), (CacheMode::Cold, None));
    // A configured mode is in the hash; an absent one serialises nothing, so configurations
    // written before the key existed keep their hash.
    assert_ne!(c.hash(), cold.hash());
    let e = err("[[suite]]\nkind = \"kernel\"\ncache = \"hot\"\n");
    assert!(
        e.contains("suite `kernel`: cache `hot` is not known")
            && e.contains("hint: use cold or warm"),
        "{e}"
    );
    let e =
        err("[[suite]]\nname = \"t\"\nkind = \"command\"\ncommand = \"true\"\ncache = \"warm\"\n");
    assert!(
        e.contains("suite `t`: cache applies only to built-in suites"),
        "{e}"
    );
}

/// Issue 28: every mistake of a file that parses is reported at once, each with the closest
/// valid key or value within two edits.
#[test]
fn every_mistake_is_reported_at_once_with_did_you_mean() {
    let e = err(
        "[sampling]\ntimout_s = 60\n\n[[suite]]\nname = \"x\"\nkind = \"command\"\ncommand = \"true\"\nformat = \"pitwal-json\"\n\n[pinning]\npolicy = \"prefr\"\n",
    );
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines.len(), 3, "{e}");
    assert!(
        lines[0].starts_with("pitwall.toml:2:1: unknown key `timout_s` in [sampling]")
            && lines[0].ends_with("did you mean `timeout_s`?"),
        "{e}"
    );
    assert!(
        lines[1].starts_with("pitwall.toml:8:10: suite `x`: format `pitwal-json` is not supported")
            && lines[1].ends_with("did you mean `pitwall-json`?"),
        "{e}"
    );
    assert!(
        lines[2].contains("[pinning] policy `prefr` is not valid")
            && lines[2].ends_with("did you mean `prefer`?"),
        "{e}"
    );
    // Nothing close: no suggestion.
    let e = err("[project]\ncolour = \"red\"\n");
    assert!(!e.contains("did you mean"), "{e}");
    // A syntax error still stops at the first.
    let e = err("[sampling\ntimout_s = 1\n");
    assert_eq!(e.lines().count(), 1, "{e}");
}

/// Issue 26 item 5: `artifacts` of a command suite (relative, inside the checkout), and
/// `[ci] measure_identical` (default off, not hashed).
#[test]
fn artifacts_and_measure_identical() {
    let text = "[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"./bench\"\nartifacts = [\"build/bench\", \"lib/*.so\"]\n";
    let c = parse(text).unwrap();
    let SuiteSpec::Command(cmd) = &c.suites[0].spec else {
        panic!("a command suite")
    };
    assert_eq!(cmd.artifacts, ["build/bench", "lib/*.so"]);
    assert!(!c.ci.measure_identical);
    assert_eq!(crate::defaults::MEASURE_IDENTICAL, c.ci.measure_identical);
    let on = parse(&format!("{text}\n[ci]\nmeasure_identical = true\n")).unwrap();
    assert!(on.ci.measure_identical);
    assert_eq!(
        on.hash(),
        c.hash(),
        "measure_identical changes no measurement"
    );
    assert_eq!(
        err(&text.replace("\"build/bench\", ", "\"/usr/bin/bench\", ")),
        "pitwall.toml:5:14: suite `toy`: artifact `/usr/bin/bench` is an absolute path (artifacts are relative to the checkout); hint: name build outputs inside the checkout, e.g. artifacts = [\"build/bench\", \"lib/*.so\"]"
    );
    assert!(
        err(&text.replace("lib/*.so", "../lib/x.so"))
            .contains("suite `toy`: artifact `../lib/x.so` leaves the checkout (`..`)")
    );
    assert!(
        err("[[suite]]\nkind = \"kernel\"\nartifacts = [\"a\"]\n")
            .contains("key `artifacts` applies only to kind = \"command\""),
    );
}

#[test]
fn history_contended_limits() {
    let c = parse("").unwrap();
    assert_eq!(c.contended, crate::defaults::CONTENDED);
    assert_eq!(
        (
            c.contended.runnable_threads,
            c.contended.steal_pct,
            c.contended.psi_some_pct
        ),
        (0.5, 2.0, 10.0)
    );
    let c = parse(
        "[history]\ncontended_runnable_threads = 1.5\ncontended_steal_pct = 5\n\
         contended_psi_some_pct = 25.0\n",
    )
    .unwrap();
    assert_eq!(
        (
            c.contended.runnable_threads,
            c.contended.steal_pct,
            c.contended.psi_some_pct
        ),
        (1.5, 5.0, 25.0)
    );
    // Judging runs changes no measurement.
    assert_eq!(c.hash(), parse("").unwrap().hash());
    let e = err("[history]\nbranch = \"main\"\ncontended_steal_pct = -1\n");
    assert!(
        e.starts_with("pitwall.toml:3:23: [history] contended_steal_pct must be a number ≥ 0"),
        "{e}"
    );
    let e = err("[history]\ncontended_psi_some_pct = \"high\"\n");
    assert!(e.contains("pitwall.toml:2:"), "{e}");
    let e = err("[history]\ncontended = 1\n");
    assert!(e.contains("contended_runnable_threads"), "{e}");
}

#[test]
fn the_serve_url_is_an_http_address_without_user_query_or_fragment() {
    let c = parse("[serve]\nurl = \"https://pitwall.example/team/\"\n").unwrap();
    assert_eq!(c.serve.url.as_deref(), Some("https://pitwall.example/team"));
    assert_eq!(parse("").unwrap().serve.url, None);
    for (url, why) in [
        ("ftp://pitwall.example", "is not an http(s) address"),
        ("https://", "has no host"),
        ("https://me:pw@pitwall.example", "carries a user"),
        ("https://pitwall.example/?a=1", "carries a query"),
    ] {
        let e = parse(&format!("[serve]\nurl = \"{url}\"\n"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("pitwall.toml:2:7: [serve] url"), "{e}");
        assert!(e.contains(why), "{e}");
    }
}

#[test]
fn the_commit_url_holds_the_commit_and_links_hex_ids_only() {
    let c = parse("[serve]\ncommit_url = \"https://github.com/o/r/commit/{commit}\"\n").unwrap();
    assert_eq!(
        c.serve.commit_link("0a1b2c").as_deref(),
        Some("https://github.com/o/r/commit/0a1b2c")
    );
    assert_eq!(c.serve.commit_link("main\"><script>"), None);
    assert_eq!(c.serve.commit_link(""), None);
    assert_eq!(parse("").unwrap().serve.commit_link("0a1b"), None);
    for (url, why) in [
        ("https://github.com/o/r/commit/", "has no `{commit}`"),
        ("javascript:alert(1)//{commit}", "is not an http(s) address"),
        ("https://me:pw@forge.example/{commit}", "carries a user"),
    ] {
        let e = parse(&format!("[serve]\ncommit_url = \"{url}\"\n"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("pitwall.toml:2:14: [serve] commit_url"),
            "{e}"
        );
        assert!(e.contains(why), "{e}");
    }
}
