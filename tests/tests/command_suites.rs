//! `command` suites: pitwall JSON output is stored with every sample; a command that fails,
//! prints garbage or hangs is recorded as failed while the others are kept, and exit is 3;
//! criterion results that earlier runs left in the output directory are not read as new.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use pitwall_e2e::Sandbox;

const GOOD: &str = r#"printf '{"schema":"pitwall/v1","benchmarks":[{"name":"parse","params":{"size":1024},"samples":[10.5,11.0,10.75]},{"name":"rate","measure":"throughput","unit":"items/s","direction":"higher","samples":[5,6]}]}'"#;

fn config(extra: &str) -> String {
    format!(
        "[project]\nname = \"toy\"\n\n[[suite]]\nname = \"good\"\nkind = \"command\"\ncommand = '''{GOOD}'''\nruns = 2\n{extra}"
    )
}

#[test]
fn pitwall_json_samples_are_stored_exactly_and_merged_over_runs() {
    let sb = Sandbox::new();
    sb.write("pitwall.toml", &config(""));
    sb.run(&["run"]).expect(0);
    let doc: serde_json::Value =
        serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    let results = doc["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["name"], "parse");
    assert_eq!(results[0]["params"]["size"], "1024");
    assert_eq!(
        results[0]["samples"],
        serde_json::json!([10.5, 11.0, 10.75, 10.5, 11.0, 10.75])
    );
    assert_eq!(results[1]["direction"], "higher_is_better");
    assert_eq!(results[1]["unit"], "items/s");
}

#[test]
fn failing_garbage_and_hanging_commands_are_recorded_and_others_kept() {
    let sb = Sandbox::new();
    let extra = r#"
[[suite]]
name = "crashes"
kind = "command"
command = "echo about to fail >&2; exit 7"

[[suite]]
name = "garbage"
kind = "command"
command = "echo 'this is not json'"

[[suite]]
name = "hangs"
kind = "command"
command = "sleep 60"
timeout_s = 1

[[suite]]
name = "after"
kind = "command"
format = "wall-time"
command = "true"
max_time_s = 0.05
min_samples = 3
"#;
    sb.write("pitwall.toml", &config(extra));
    let start = Instant::now();
    let out = sb.run(&["run", "--format", "json"]).expect(3);
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "the hang was not cut at its timeout"
    );
    let v = out.json();
    assert_eq!(v["run"]["status"], "partial");
    let by_suite = |s: &str| {
        v["benchmarks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["suite"] == s)
            .cloned()
            .collect::<Vec<_>>()
    };
    let crashed = &by_suite("crashes")[0];
    assert_eq!(crashed["status"], "failed");
    assert_eq!(
        crashed["error"],
        "command `echo about to fail >&2; exit 7` exited with status 7; stderr tail: about to fail"
    );
    let garbage = &by_suite("garbage")[0];
    assert!(
        garbage["error"]
            .as_str()
            .unwrap()
            .contains("is not valid: pitwall-json: line 1, column 2: expected ident"),
        "{garbage}"
    );
    let hung = &by_suite("hangs")[0];
    assert!(
        hung["error"]
            .as_str()
            .unwrap()
            .contains("timed out after 1s and was killed"),
        "{hung}"
    );
    assert_eq!(by_suite("good").len(), 2);
    assert!(by_suite("good").iter().all(|b| b["status"] == "ok"));
    let after = &by_suite("after")[0];
    assert_eq!(after["status"], "ok");
    assert!(after["n"].as_u64().unwrap() >= 3);

    // Stored as partial with the good results intact.
    let runs = sb.run(&["runs", "--format", "json"]).expect(0).json();
    assert_eq!(runs[0]["status"], "partial");
    assert_eq!(runs[0]["failed_results"], 3);
    assert_eq!(runs[0]["results"], 6);
    let shown = sb.run(&["show", "latest"]).expect(0).stdout();
    assert!(
        shown.contains("FAILED") && shown.contains("failures:"),
        "{shown}"
    );
}

#[test]
fn failing_build_command_stops_before_measuring() {
    let sb = Sandbox::new();
    sb.write("pitwall.toml", "[project]\nname = \"b\"\nbuild = \"echo compiler exploded >&2; exit 2\"\n\n[[suite]]\nname = \"t\"\nkind = \"command\"\nformat = \"wall-time\"\ncommand = \"true\"\n");
    let e = sb.run(&["run"]).expect(3).stderr();
    assert!(
        e.contains("build command `echo compiler exploded >&2; exit 2` failed")
            && e.contains("compiler exploded"),
        "{e}"
    );
    assert!(!sb.db().exists() || sb.count("runs") == 0);
    // The build's progress (`[  0.0s] the working tree: building with …`), then one error
    // line, then the log tail as indented context lines.
    let lines: Vec<&str> = e.lines().skip_while(|l| l.starts_with('[')).collect();
    assert_eq!(
        e.lines().filter(|l| l.starts_with('[')).count(),
        2,
        "build started and failed: {e}"
    );
    assert_eq!(
        lines[0],
        "error: the working tree: build command `echo compiler exploded >&2; exit 2` failed: \
         command `echo compiler exploded >&2; exit 2` exited with status 2",
        "{e}"
    );
    assert_eq!(lines[1..], ["  | compiler exploded"], "{e}");
}

/// What a command suite's failure says when the fault is not the command's: a bad `workdir`
/// is named, warm-up spending the whole limit is not called a hang (warmup_s equal to
/// timeout_s: a longer warm-up is a config error), and control characters
/// from a command's stderr reach neither the terminal nor the store raw.
#[test]
fn failures_say_what_happened_and_escape_control_characters() {
    let sb = Sandbox::new();
    sb.write("afile", "");
    sb.write(
        "pitwall.toml",
        r#"
[[suite]]
name = "nodir"
kind = "command"
format = "wall-time"
command = "true"
workdir = "nonexistent"

[[suite]]
name = "filedir"
kind = "command"
command = "true"
workdir = "afile"

[[suite]]
name = "warm"
kind = "command"
format = "wall-time"
command = "true"
warmup_s = 0.2
timeout_s = 0.2

[[suite]]
name = "ansi"
kind = "command"
command = '''printf '\033[31mred\033[0m\a\n' >&2; exit 1'''
"#,
    );
    let out = sb.run(&["run", "--format", "json"]).expect(3);
    let v = out.json();
    let error = |suite: &str| {
        v["benchmarks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["suite"] == suite)
            .map(|b| b["error"].as_str().unwrap().to_string())
            .unwrap()
    };
    let nodir = error("nodir");
    assert!(
        nodir.starts_with("workdir `nonexistent` does not exist: ")
            && nodir.contains("hint: create it"),
        "{nodir}"
    );
    assert!(!nodir.contains("cannot start command"), "{nodir}");
    let filedir = error("filedir");
    assert!(
        filedir.starts_with("workdir `afile` is not a directory: "),
        "{filedir}"
    );
    let warm = error("warm");
    assert!(
        warm.starts_with("warm-up used up timeout_s (0.2s) before any sample was taken")
            && warm.contains("hint: make timeout_s larger than warmup_s"),
        "{warm}"
    );
    assert!(!warm.contains("timed out after"), "{warm}");
    assert_eq!(
        error("ansi"),
        r"command `printf '\033[31mred\033[0m\a\n' >&2; exit 1` exited with status 1; stderr tail: \x1b[31mred\x1b[0m\x07"
    );
    let stderr = out.stderr();
    assert!(stderr.contains(r"\x1b[31mred"), "{stderr}");
    for text in [
        stderr,
        out.stdout(),
        sb.run(&["show", "latest"]).expect(0).stdout(),
    ] {
        assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    }
}

/// A benchmark the tool skips on purpose (pitwall JSON `skipped`, as nvbench and Google
/// Benchmark can say) is stored as skipped, shown as such, and neither fails the run nor is
/// compared; the store keeps the status through export and import.
#[test]
fn skipped_benchmarks_are_kept_as_skipped_not_failed() {
    let sb = Sandbox::new();
    let skips = r#"printf '{"schema":"pitwall/v1","benchmarks":[{"name":"cpu","samples":[10,11,12,10,11,12,10,11,12,10]},{"name":"gpu","skipped":"no GPU on this runner"}]}'"#;
    sb.write(
        "pitwall.toml",
        &format!(
            "[[suite]]\nname = \"s\"\nkind = \"command\"\ncommand = '''{skips}'''\nruns = 2\n"
        ),
    );
    let out = sb.run(&["run", "--no-report"]).expect(0);
    let table = out.stdout();
    assert!(table.contains("status complete"), "{table}");
    let gpu_row = table.lines().find(|l| l.contains(" gpu ")).unwrap();
    assert!(gpu_row.trim_end().ends_with("skipped"), "{gpu_row}");
    assert!(table.contains("s/gpu: no GPU on this runner"), "{table}");

    let doc: serde_json::Value =
        serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    let gpu = &doc["runs"][0]["results"][1];
    assert_eq!(gpu["status"], "skipped", "{gpu}");
    assert_eq!(gpu["error"], "no GPU on this runner");
    assert_eq!(doc["runs"][0]["status"], "complete");

    sb.run(&["run", "--no-report"]).expect(0);
    let cmp = sb
        .run(&[
            "compare",
            "--baseline",
            doc["runs"][0]["id"].as_str().unwrap(),
            "--candidate",
            "latest",
            "--format",
            "json",
        ])
        .expect(0)
        .json();
    assert_eq!(cmp["skipped"], serde_json::json!(["s/gpu/time"]), "{cmp}");
    assert_eq!(cmp["failed"], serde_json::json!([]));
    assert_eq!(cmp["benchmarks"].as_array().unwrap().len(), 1);

    // Export → import into a fresh store keeps the status.
    let file = sb.write("export.json", &sb.run(&["export"]).expect(0).stdout());
    let other = Sandbox::new();
    other.run(&["import", file.to_str().unwrap()]).expect(0);
    let back: serde_json::Value =
        serde_json::from_str(&other.run(&["export"]).expect(0).stdout()).unwrap();
    assert_eq!(back["runs"][0]["results"][1]["status"], "skipped");
}

/// The outputs of `runs = N` are merged by the same rule as duplicates within one output: a
/// benchmark whose unit changes between runs fails the suite, naming it.
#[test]
fn runs_that_disagree_on_a_unit_fail_the_suite() {
    let sb = Sandbox::new();
    let flip = r#"if [ -f once ]; then u=ms; else touch once; u=ns; fi; printf '{"schema":"pitwall/v1","benchmarks":[{"name":"x","unit":"%s","samples":[1]}]}' $u"#;
    sb.write(
        "pitwall.toml",
        &format!("[[suite]]\nname = \"s\"\nkind = \"command\"\ncommand = '''{flip}'''\nruns = 2\n"),
    );
    let v = sb
        .run(&["run", "--format", "json", "--no-report"])
        .expect(3)
        .json();
    let b = &v["benchmarks"][0];
    assert_eq!(
        (&b["name"], &b["status"]),
        (&"command".into(), &"failed".into()),
        "{v}"
    );
    assert!(
        b["error"].as_str().unwrap().contains(
            "the 2 runs of command `if [ -f once ]; then u=ms; else touch once; u=ns; fi; printf"
        ) && b["error"].as_str().unwrap().contains(
            "disagree: benchmark `x/time` is given more than once with different units (`ns`, then `ms`)"
        ),
        "{b}"
    );
}

/// `--bench TEXT` keeps only the command suites' results whose `name[params]` contains TEXT, as
/// for built-in suites; a wall-time suite is one benchmark named after the suite.
#[test]
fn bench_filter_applies_to_command_suites() {
    let sb = Sandbox::new();
    sb.write(
        "pitwall.toml",
        &config(
            "\n[[suite]]\nname = \"timed\"\nkind = \"command\"\nformat = \"wall-time\"\ncommand = \"true\"\nmax_time_s = 0.05\nmin_samples = 3\n",
        ),
    );
    let v = sb
        .run(&[
            "run",
            "--bench",
            "size=1024",
            "--format",
            "json",
            "--no-report",
        ])
        .expect(0)
        .json();
    let names: Vec<&str> = v["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["parse"], "{v}");
    let v = sb
        .run(&["run", "--bench", "tim", "--format", "json", "--no-report"])
        .expect(0)
        .json();
    assert_eq!(v["benchmarks"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["benchmarks"][0]["name"], "timed");
    let e = sb
        .run(&["run", "--bench", "nothing-has-this", "--no-report"])
        .expect(2)
        .stderr();
    assert!(e.contains("no benchmark matched the selection"), "{e}");
    // A suite that fails as a whole is still reported: what it would have measured is unknown.
    sb.write(
        "pitwall.toml",
        &config("\n[[suite]]\nname = \"broken\"\nkind = \"command\"\ncommand = \"exit 4\"\n"),
    );
    let v = sb
        .run(&["run", "--bench", "parse", "--format", "json", "--no-report"])
        .expect(3)
        .json();
    let suites: Vec<(&str, &str)> = v["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["suite"].as_str().unwrap(), b["name"].as_str().unwrap()))
        .collect();
    assert_eq!(suites, [("good", "parse"), ("broken", "command")], "{v}");
}

/// Copies the real criterion tree into `to`, every file dated an hour back: an earlier run's.
fn earlier_criterion_run(to: &Path) {
    fn copy(from: &Path, to: &Path, when: SystemTime) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let path = entry.unwrap().path();
            let dest = to.join(path.file_name().unwrap());
            if path.is_dir() {
                copy(&path, &dest, when);
            } else {
                std::fs::copy(&path, &dest).unwrap();
                let file = std::fs::File::options().write(true).open(&dest).unwrap();
                file.set_modified(when).unwrap();
            }
        }
    }
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/criterion");
    copy(&fixture, to, SystemTime::now() - Duration::from_secs(3600));
}

/// The issue: with a filter in the command, `ci` read every benchmark under target/criterion,
/// so results no run had rewritten were reported (one as +219%). Only what the execution wrote
/// is read, the rest is named in a warning, and an execution that wrote nothing fails the suite.
#[test]
fn criterion_results_left_by_earlier_runs_are_ignored_with_a_warning() {
    let sb = Sandbox::new();
    earlier_criterion_run(&sb.path().join("target/criterion"));
    earlier_criterion_run(&sb.path().join("other/criterion"));
    // Stands for `cargo bench -- fold/100`: criterion rewrites that one benchmark's files.
    let fresh = format!(
        "cp '{}'/fixtures/criterion/sum/fold/100/new/*.json target/criterion/sum/fold/100/new/",
        env!("CARGO_MANIFEST_DIR")
    );
    sb.write(
        "pitwall.toml",
        &format!(
            "[[suite]]\nname = \"crit\"\nkind = \"command\"\ncommand = \"{fresh}\"\nformat = \"criterion\"\noutput = \"target/criterion\"\nruns = 2\n\n[[suite]]\nname = \"matched-nothing\"\nkind = \"command\"\ncommand = \"true\"\nformat = \"criterion\"\noutput = \"other/criterion\"\n"
        ),
    );
    let out = sb
        .run(&["run", "--format", "json", "--no-report"])
        .expect(3);
    let v = out.json();
    let b = v["benchmarks"].as_array().unwrap();
    let crit: Vec<_> = b.iter().filter(|b| b["suite"] == "crit").collect();
    assert_eq!(crit.len(), 1, "{v}");
    assert_eq!(
        (&crit[0]["name"], &crit[0]["status"]),
        (&"sum/fold".into(), &"ok".into())
    );
    assert_eq!(crit[0]["params"]["value"], "100");
    // 100 criterion samples from each of the two executions, none from the earlier run's files.
    assert_eq!(crit[0]["n"], 200, "{}", crit[0]);
    let dir = sb.path().join("target/criterion");
    let warning = format!(
        "suite `crit` (criterion): 4 results under {} predate this execution (left by earlier runs) and were ignored: bytes/checksum, sum/fold/1000, sum/iter_sum/100 and 1 more",
        dir.display()
    );
    let stderr = out.stderr();
    assert_eq!(
        stderr.matches(&format!("warning: {warning}\n")).count(),
        1,
        "{stderr}"
    );
    let none = b.iter().find(|b| b["suite"] == "matched-nothing").unwrap();
    assert_eq!(none["status"], "failed");
    let error = none["error"].as_str().unwrap();
    assert!(
        error.contains(&format!(
            "no results under {} were written by this execution: all 5 there predate it (left by earlier runs); hint: ",
            sb.path().join("other/criterion").display()
        )),
        "{error}"
    );
    // The stored run says so too, for whoever reads it later.
    let doc: serde_json::Value =
        serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    let notes = &doc["runs"][0]["fingerprint"]["extra"]["format_notes"];
    assert_eq!(notes, &serde_json::json!([warning]), "{notes}");
}

#[test]
fn output_files_that_are_devices_fifos_or_too_large_are_refused() {
    let sb = Sandbox::new();
    let fifo = sb.path().join("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let extra = r#"
[[suite]]
name = "zero"
kind = "command"
command = "true"
output = "/dev/zero"
timeout_s = 20

[[suite]]
name = "fifo"
kind = "command"
command = "true"
output = "pipe"
timeout_s = 20
"#;
    sb.write("pitwall.toml", &config(extra));
    let start = Instant::now();
    let v = sb.run(&["run", "--format", "json"]).expect(3).json();
    // Before: /dev/zero grew to gigabytes and the FIFO hung past timeout_s.
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    for suite in ["zero", "fifo"] {
        let b = v["benchmarks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["suite"] == suite)
            .unwrap_or_else(|| panic!("{suite} in {v}"));
        assert_eq!(b["status"], "failed", "{b}");
        let e = b["error"].as_str().unwrap();
        assert!(e.contains("not a regular file"), "{e}");
    }
    assert_eq!(v["run"]["status"], "partial");
}
