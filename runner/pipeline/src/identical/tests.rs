//! The identity decision as pure functions: which kernels are identical, what is left to
//! measure, and the time saved estimated from an earlier pair.

use super::*;
use pitwall_engine::config::parse_str;
use pitwall_schema::{BenchmarkResult, Direction, PairInfo, PairRole, Unit};

fn d(pairs: &[(&str, Option<&str>)]) -> Vec<(String, Option<String>)> {
    pairs
        .iter()
        .map(|(n, h)| (n.to_string(), h.map(str::to_string)))
        .collect()
}

#[test]
fn a_kernel_is_identical_when_both_sides_compiled_it_to_the_same_digest() {
    let base = d(&[
        ("saxpy", Some("a")),
        ("scale", Some("b")),
        ("broken", None),
        ("gone", Some("g")),
    ]);
    let head = d(&[
        ("saxpy", Some("a")),
        ("scale", Some("B")),
        ("broken", None),
        ("new", Some("g")),
    ]);
    assert_eq!(
        identical_kernels(&base, &head),
        BTreeSet::from(["saxpy".to_string()])
    );
    assert!(identical_kernels(&base, &[]).is_empty());
}

const CONFIG: &str = r#"
[project]
name = "p"

[[suite]]
name = "k"
kind = "cuda-kernels"

[[suite.kernel]]
name = "saxpy"
source = "kernels/saxpy.cu"
entry = "saxpy"
sizes = [1024]
grid = "cdiv(n, 256)"
block = 256
args = [
  { name = "x", buffer = "f32", count = "n" },
  { name = "y", buffer = "f32", count = "n", access = "out" },
]
reference = { host = "copy", x = "x", out = "y" }

[[suite.kernel]]
name = "scale"
source = "kernels/scale.cu"
entry = "scale"
sizes = [1024]
grid = "cdiv(n, 256)"
block = 256
args = [
  { name = "x", buffer = "f32", count = "n" },
  { name = "y", buffer = "f32", count = "n", access = "out" },
]
reference = { host = "copy", x = "x", out = "y" }

[[suite]]
name = "cmd"
kind = "command"
command = "./bench"
artifacts = ["build/bench"]
"#;

fn code(suite: &str, kernel: Option<&str>) -> IdenticalCode {
    IdenticalCode {
        suite: suite.into(),
        kernel: kernel.map(str::to_string),
        basis: if kernel.is_some() {
            IdenticalBasis::Cubin
        } else {
            IdenticalBasis::Artifacts
        },
    }
}

fn kernels_of(config: &Config, suite: &str) -> Vec<String> {
    config
        .suites
        .iter()
        .find(|s| s.name == suite)
        .and_then(|s| match &s.spec {
            SuiteSpec::Builtin {
                kernels: Some(m),
                options,
                ..
            } => {
                let names: Vec<String> = m.kernels.iter().map(|k| k.name.clone()).collect();
                let in_options: Vec<String> = options
                    .kernels
                    .as_ref()
                    .map(|m| m.kernels.iter().map(|k| k.name.clone()).collect())
                    .unwrap_or_default();
                assert_eq!(names, in_options, "the manifest the backend gets agrees");
                Some(names)
            }
            _ => None,
        })
        .unwrap_or_default()
}

#[test]
fn what_is_left_to_measure_leaves_out_identical_kernels_and_suites() {
    let config = parse_str(CONFIG, "pitwall.toml", "p").unwrap();
    let all = RunRequest::default();
    // One kernel changed: only it is measured, with the command suite.
    let (left, req) = reduced(&config, &all, &[code("k", Some("saxpy"))]).unwrap();
    assert_eq!(kernels_of(&left, "k"), ["scale"]);
    assert!(req.suites.is_empty());
    assert_eq!(left.suites.len(), 2);
    // Every kernel and the command suite identical: nothing left.
    let everything = [
        code("k", Some("saxpy")),
        code("k", Some("scale")),
        code("cmd", None),
    ];
    assert!(reduced(&config, &all, &everything).is_none());
    // A request naming suites keeps naming only those left; none left is nothing to measure.
    let only_cmd = RunRequest {
        suites: vec!["cmd".into()],
        filter: None,
    };
    assert!(reduced(&config, &only_cmd, &[code("cmd", None)]).is_none());
    let (left, req) = reduced(&config, &only_cmd, &[code("k", Some("saxpy"))]).unwrap();
    assert_eq!(req.suites, ["cmd"]);
    assert_eq!(left.suites.len(), 2);
}

fn result(suite: &str, name: &str) -> BenchmarkResult {
    BenchmarkResult {
        suite: suite.into(),
        name: name.into(),
        params: Default::default(),
        measure: "time".into(),
        unit: Unit::new("ns"),
        direction: Direction::LowerIsBetter,
        status: ResultStatus::Ok,
        error: None,
        samples: vec![1.0],
        sample_meta: vec![],
        replicates: Vec::new(),
        summary: None,
    }
}

#[test]
fn the_saving_is_the_identical_codes_share_of_an_earlier_pairs_time() {
    let run_json = serde_json::json!({
        "id": "r", "project": "p", "commit": "c", "started_at": "2026-01-01T00:00:00Z",
        "finished_at": "2026-01-01T00:00:00Z", "config_hash": "h",
        "fingerprint": {"hostname": "h", "os": "linux", "arch": "x86_64"},
        "status": "complete", "results": []
    });
    let mut run: Run = serde_json::from_value(run_json).unwrap();
    run.results = vec![
        result("k", "saxpy"),
        result("k", "saxpy"),
        result("k", "scale"),
        result("cmd", "a"),
    ];
    // Not a pair, or a pair without its time: says nothing.
    assert_eq!(share(&run, &[code("k", Some("saxpy"))]), None);
    run.pair = Some(PairInfo {
        id: "p".into(),
        role: PairRole::Head,
        rounds: 3,
        round_starts: vec![],
        sequential: None,
        round_orders: vec![],
        identical: vec![],
        measured_ms: Some(800_000),
        saved_ms_estimate: None,
    });
    assert_eq!(share(&run, &[code("k", Some("saxpy"))]), Some(400_000));
    assert_eq!(share(&run, &[code("cmd", None)]), Some(200_000));
    assert_eq!(share(&run, &[code("other", None)]), None);
}
