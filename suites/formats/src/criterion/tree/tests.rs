//! Tests of the target/criterion tree reader, on the fixture tree and on trees built here.

use super::*;
use pitwall_schema::schema::Direction;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/criterion")
}

#[test]
fn reads_a_real_criterion_tree() {
    let run = parse_dir(&fixture()).unwrap();
    let keys: Vec<_> = run
        .benchmarks
        .iter()
        .map(|b| {
            format!(
                "{} {:?} {}",
                b.name,
                b.params.get("value").map(String::as_str),
                b.measure
            )
        })
        .collect();
    assert_eq!(
        keys,
        [
            "bytes/checksum None time",
            "bytes/checksum None throughput",
            "sum/fold Some(\"100\") time",
            "sum/fold Some(\"1000\") time",
            "sum/iter_sum Some(\"100\") time",
            "sum/iter_sum Some(\"1000\") time",
        ]
    );
    for b in &run.benchmarks {
        assert_eq!(b.samples.len(), 100, "{}", b.name);
        assert!(b.error.is_none());
    }
    let fold = &run.benchmarks[2];
    assert_eq!(fold.unit.as_str(), "ns");
    assert_eq!(fold.direction, Direction::LowerIsBetter);
    // sample.json: iters[0] = 5745, times[0] is the total for those iterations.
    let raw: Value = serde_json::from_str(
        &std::fs::read_to_string(fixture().join("sum/fold/100/new/sample.json")).unwrap(),
    )
    .unwrap();
    let t0 = raw["times"][0].as_f64().unwrap();
    assert_eq!(raw["iters"][0].as_f64(), Some(5745.0));
    assert!((fold.samples[0] - t0 / 5745.0).abs() < 1e-12);
    // A per-iteration sum of 100 numbers takes tens of nanoseconds, not microseconds.
    assert!(fold.samples.iter().all(|s| (1.0..1000.0).contains(s)));
    let thr = &run.benchmarks[1];
    assert_eq!(thr.unit.as_str(), "B/s");
    assert_eq!(thr.direction, Direction::HigherIsBetter);
    let ns = run.benchmarks[0].samples[0];
    assert!((thr.samples[0] - 4096.0 / (ns * 1e-9)).abs() < 1e-3);
}

fn scratch(name: &str, sample: &str, id: &str) -> PathBuf {
    let root =
        std::env::temp_dir().join(format!("pitwall-criterion-{name}-{}", std::process::id()));
    let new = root.join("g/f/new");
    std::fs::create_dir_all(&new).unwrap();
    std::fs::write(new.join("benchmark.json"), id).unwrap();
    std::fs::write(new.join("sample.json"), sample).unwrap();
    root
}

const ID: &str = r#"{"group_id":"g","function_id":"f","value_str":null,"throughput":null}"#;

#[test]
fn bad_trees_are_errors_with_position() {
    let cases = [
        (
            "trunc",
            r#"{"sampling_mode":"Linear","iters":[1.0,2.0],"ti"#,
            ID,
            "g/f/new/sample.json: line 1, column",
        ),
        (
            "types",
            r#"{"iters":[1.0],"times":["x"]}"#,
            ID,
            "benchmark 0 (g/f): ",
        ),
        (
            "neg",
            r#"{"iters":[1.0],"times":[-4.0]}"#,
            ID,
            "benchmark 0 (g/f): ",
        ),
        (
            "empty",
            r#"{"iters":[],"times":[]}"#,
            ID,
            "benchmark 0 (g/f): ",
        ),
        (
            "len",
            r#"{"iters":[1.0],"times":[1.0,2.0]}"#,
            ID,
            "benchmark 0 (g/f): ",
        ),
        (
            "zero",
            r#"{"iters":[0.0],"times":[1.0]}"#,
            ID,
            "benchmark 0 (g/f): ",
        ),
        (
            "noid",
            r#"{"iters":[1.0],"times":[1.0]}"#,
            r#"{"function_id":"f"}"#,
            "benchmark 0 (g/f): ",
        ),
        (
            "bmf",
            r#"{"g":{"latency":{"value":1.0}}}"#,
            ID,
            "benchmark 0 (g/f): ",
        ),
    ];
    for (name, sample, id, position) in cases {
        let dir = scratch(name, sample, id);
        let e = parse_dir(&dir).unwrap_err();
        assert!(e.position.starts_with(position), "{name}: {e}");
        assert_eq!(e.format, "criterion");
        std::fs::remove_dir_all(&dir).unwrap();
    }
    let empty = std::env::temp_dir().join(format!("pitwall-criterion-none-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    assert!(
        parse_dir(&empty)
            .unwrap_err()
            .message
            .contains("no criterion results")
    );
    std::fs::remove_dir_all(&empty).unwrap();
    let missing = fixture().join("does-not-exist");
    assert!(
        parse_dir(&missing)
            .unwrap_err()
            .message
            .contains("not a directory")
    );
}

/// Results an earlier run left are not this execution's: the issue's `+219%` came from a
/// file no `ci` run had rewritten being read as new each time.
#[test]
fn only_results_written_since_the_execution_started_are_read() {
    let root = scratch("since", r#"{"iters":[1.0],"times":[5.0]}"#, ID);
    let copy = |to: &str| {
        let new = root.join(to).join("new");
        std::fs::create_dir_all(&new).unwrap();
        for f in READ {
            std::fs::copy(root.join("g/f/new").join(f), new.join(f)).unwrap();
        }
        new
    };
    let (old, older) = (copy("g/old"), copy("h/older"));
    let started = SystemTime::now();
    let an_hour_ago = started - Duration::from_secs(3600);
    let age = |new: &Path, files: &[&str]| {
        for f in files {
            let file = std::fs::File::options().write(true).open(new.join(f));
            file.unwrap().set_modified(an_hour_ago).unwrap();
        }
    };
    age(&old, &READ);
    // One file older than the execution is enough: criterion rewrites both every time.
    age(&older, &["sample.json"]);
    let run = parse_dir_since(&root, started).unwrap();
    let names: Vec<_> = run.benchmarks.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["g/f"]);
    assert_eq!(
        run.warnings,
        [format!(
            "2 results under {} predate this execution (left by earlier runs) and were ignored: g/old, h/older",
            root.display()
        )]
    );
    assert!(run.notes.is_empty());
    // `pitwall import` has no execution to date from: it reads everything, silently.
    let all = parse_dir(&root).unwrap();
    assert_eq!(all.benchmarks.len(), 3);
    assert!(all.warnings.is_empty());
    // Nothing fresh at all: an error naming the directory, with a hint.
    age(&root.join("g/f/new"), &READ);
    let e = parse_dir_since(&root, started).unwrap_err();
    assert_eq!(e.position, "");
    assert!(
        e.message.starts_with(&format!(
            "no results under {} were written by this execution: all 3 there predate it",
            root.display()
        )) && e.message.contains("; hint: check that the command writes"),
        "{e}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// What the tree reader reads stays under the directory it was given: a linked folder is not
/// followed, and a `sample.json` that is no regular file (a FIFO would block, a device has no
/// end) is refused with its path.
#[test]
fn links_are_not_followed_and_only_regular_files_are_read() {
    let sample = r#"{"sampling_mode":"Linear","iters":[1.0,2.0],"times":[10.0,20.0]}"#;
    let outside = scratch("outside", sample, ID);
    let root =
        std::env::temp_dir().join(format!("pitwall-criterion-linked-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let link = root.join("elsewhere");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    assert!(parse_dir(&root).is_err(), "nothing under the link is read");

    let device = scratch("device", sample, ID);
    let sample_path = device.join("g/f/new/sample.json");
    std::fs::remove_file(&sample_path).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &sample_path).unwrap();
    let e = parse_dir(&device).unwrap_err().to_string();
    assert!(
        e.contains("sample.json") && e.contains("not a regular file"),
        "{e}"
    );
    for dir in [outside, root, device] {
        let _ = std::fs::remove_dir_all(dir);
    }
}
