//! No measurement of identical code (issue 26 item 5), end to end on real temporary git
//! repositories: a command suite whose `artifacts` hash the same after both builds is not
//! measured and gets the verdict `identical` (stored with the pair, shown by `compare --pair`,
//! exit 0), with the time saved estimated from the last pair that measured it;
//! `[ci] measure_identical = true` measures it anyway; artifact patterns that match nothing or
//! leave the checkout are one-line errors naming the suite and the pattern. With NVRTC, a
//! README-only change to a repository with a `cuda-kernels` suite measures no kernel (no GPU
//! needed), and a change to one kernel selects only that kernel's benchmarks.

use pitwall_e2e::{Sandbox, git};
use serde_json::Value;

/// The build copies the benchmark script to `build/bench`, the artifact; the suite runs it.
const CONFIG: &str = r#"
[project]
name = "identical"
build = "mkdir -p build && cp bench.sh build/bench"

[[suite]]
name = "toy"
kind = "command"
command = "sh build/bench"
artifacts = ["build/bench"]
"#;

/// Prints pitwall JSON at `level` (part of the code: a new level is a new artifact).
fn bench(level: u32) -> String {
    format!(
        r#"printf '{{"schema":"pitwall/v1","benchmarks":[{{"name":"work","samples":['
i=0; sep=""
while [ $i -lt 10 ]; do printf '%s{level}.%s' "$sep" "$i"; sep=","; i=$((i+1)); done
printf ']}}]}}'
"#
    )
}

/// A repository whose first commit benchmarks at 100, the second at 120 (a code change), the
/// third changes only the README.
fn repo(sb: &Sandbox, config: &str) {
    git(sb.path(), &["init", "-q", "-b", "main"]);
    sb.write("pitwall.toml", config);
    sb.write(".gitignore", ".pitwall/\nbuild/\n*.db\n");
    for (i, (level, readme)) in [(100, "a"), (120, "a"), (120, "b")].iter().enumerate() {
        sb.write("bench.sh", &bench(*level));
        sb.write("README.md", readme);
        git(sb.path(), &["add", "-A"]);
        git(sb.path(), &["commit", "-qm", &format!("commit {i}")]);
    }
}

fn runs(sb: &Sandbox) -> Vec<Value> {
    let doc: Value = serde_json::from_str(&sb.run(&["export"]).expect(0).stdout()).unwrap();
    doc["runs"].as_array().unwrap().clone()
}

#[test]
fn identical_artifacts_are_not_measured_and_the_saving_is_estimated() {
    let sb = Sandbox::new();
    repo(&sb, CONFIG);
    // A code change: measured (a regression, +20%), and the pair records its time.
    let out = sb
        .run(&[
            "run", "--base", "HEAD~2", "--head", "HEAD~1", "--rounds", "2",
        ])
        .expect(1);
    assert!(out.stdout().contains("regression"), "{}", out.stdout());
    assert!(!out.stdout().contains("identical"), "{}", out.stdout());

    // A README-only change: the same artifact on both sides, nothing measured, exit 0.
    let out = sb
        .run(&["run", "--base", "HEAD~1", "--head", "HEAD", "--rounds", "2"])
        .expect(0);
    let stdout = out.stdout();
    assert!(
        stdout.contains("toy (every benchmark)") && stdout.contains("  identical"),
        "{stdout}"
    );
    assert!(stdout.contains(", 1 identical"), "{stdout}");
    let time = stdout
        .lines()
        .find(|l| l.starts_with("time: "))
        .unwrap_or_else(|| panic!("no time line: {stdout}"));
    assert!(
        time.contains(" measured, ~") && time.ends_with(" skipped: identical builds"),
        "{time}"
    );
    assert!(
        out.stderr().contains(
            "suite `toy` not measured: its artifacts are identical on both sides (verdict identical; hint: [ci] measure_identical = true measures it anyway)"
        ),
        "{}",
        out.stderr()
    );

    let stored = runs(&sb);
    assert_eq!(stored.len(), 4);
    let (base, head) = (&stored[2], &stored[3]);
    for r in [base, head] {
        assert_eq!(r["status"], "complete", "{r}");
        assert_eq!(r["results"], serde_json::json!([]));
        assert_eq!(
            r["pair"]["identical"],
            serde_json::json!([{"suite": "toy", "basis": "artifacts"}])
        );
        assert!(r["pair"]["measured_ms"].as_u64().is_some(), "{r}");
        assert!(r["pair"]["saved_ms_estimate"].as_u64().is_some(), "{r}");
    }
    // The first pair measured the suite: its time is recorded, nothing identical.
    assert!(stored[1]["pair"]["measured_ms"].as_u64().is_some());
    assert!(stored[1]["pair"].get("identical").is_none());

    // The stored pair shows the verdict where a comparison is shown.
    let pair = head["pair"]["id"].as_str().unwrap();
    let v = sb
        .run(&["compare", "--pair", pair, "--format", "json"])
        .expect(0)
        .json();
    assert_eq!(v["identical"][0]["verdict"], "identical", "{v}");
    assert_eq!(v["counts"]["identical"], 1, "{v}");
    assert!(
        v["time_line"].as_str().unwrap().starts_with("time: "),
        "{v}"
    );
}

#[test]
fn measure_identical_measures_them_anyway() {
    let sb = Sandbox::new();
    repo(&sb, &format!("{CONFIG}\n[ci]\nmeasure_identical = true\n"));
    let out = sb
        .run(&["run", "--base", "HEAD~1", "--head", "HEAD", "--rounds", "2"])
        .expect(0);
    assert!(out.stdout().contains("unchanged"), "{}", out.stdout());
    assert!(!out.stdout().contains("identical"), "{}", out.stdout());
    let stored = runs(&sb);
    assert_eq!(stored[1]["results"].as_array().unwrap().len(), 1);
    assert!(stored[1]["pair"].get("identical").is_none());
}

#[test]
fn artifact_paths_must_be_files_inside_the_checkout() {
    let sb = Sandbox::new();
    repo(
        &sb,
        &CONFIG.replace("\"build/bench\"]", "\"build/bench\", \"lib/*.so\"]"),
    );
    let out = sb
        .run(&["run", "--base", "HEAD~1", "--head", "HEAD"])
        .expect(2);
    assert!(
        out.stderr().contains(
            "suite `toy`: artifact `lib/*.so` matches no file in the checkout; hint: check that the build writes it, or fix the pattern"
        ),
        "{}",
        out.stderr()
    );
    // A link leaving the checkout.
    let linked = CONFIG.replace(
        "cp bench.sh build/bench",
        "cp bench.sh build/bench && ln -sf /etc/passwd build/passwd",
    );
    sb.write(
        "pitwall.toml",
        &linked.replace("\"build/bench\"]", "\"build/*\"]"),
    );
    let out = sb
        .run(&["run", "--base", "HEAD~1", "--head", "HEAD", "--rebuild"])
        .expect(2);
    assert!(
        out.stderr().contains(
            "suite `toy`: artifact `build/*`: build/passwd is a link leading outside the checkout"
        ),
        "{}",
        out.stderr()
    );
    // Absolute paths and `..` are refused when the configuration is read, with file:line.
    for bad in ["/usr/bin/true", "../bench"] {
        sb.write(
            "pitwall.toml",
            &CONFIG.replace("\"build/bench\"]", &format!("\"{bad}\"]")),
        );
        let out = sb
            .run(&["run", "--base", "HEAD~1", "--head", "HEAD"])
            .expect(2);
        let err = out.stderr();
        assert!(
            err.contains("pitwall.toml:")
                && err.contains(&format!("suite `toy`: artifact `{bad}` ")),
            "{err}"
        );
    }
    assert_eq!(sb.count("runs"), 0);
}

const KERNELS: &str = r#"
[project]
name = "kernels"

[sampling]
warmup_s = 0.0
max_time_s = 0.05
min_samples = 5

[[suite]]
name = "mine"
kind = "cuda-kernels"

[[suite.kernel]]
name = "saxpy"
source = "kernels/saxpy.cu"
entry = "saxpy"
sizes = [4096]
grid = "cdiv(n, 256)"
block = 256
args = [
  { name = "n", scalar = "i32", value = "n" },
  { name = "a", scalar = "f32", value = 2.0 },
  { name = "x", buffer = "f32", count = "n" },
  { name = "y", buffer = "f32", count = "n", access = "inout" },
]
reference = { host = "axpy", a = "a", x = "x", y = "y", out = "y" }

[[suite.kernel]]
name = "copy"
source = "kernels/copy.cu"
entry = "copy"
sizes = [4096]
grid = "cdiv(n, 256)"
block = 256
args = [
  { name = "x", buffer = "f32", count = "n" },
  { name = "y", buffer = "f32", count = "n", access = "out" },
]
reference = { host = "copy", x = "x", out = "y" }
"#;

const SAXPY: &str = r#"extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"#;

const COPY: &str = r#"extern "C" __global__ void copy(const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i];
}
"#;

/// A repository with two kernels: a README-only commit, then a commit changing `saxpy`.
fn kernel_repo(sb: &Sandbox, config: &str) {
    git(sb.path(), &["init", "-q", "-b", "main"]);
    sb.write("pitwall.toml", config);
    sb.write(".gitignore", ".pitwall/\n*.db\n");
    sb.write("kernels/saxpy.cu", SAXPY);
    sb.write("kernels/copy.cu", COPY);
    sb.write("README.md", "a");
    git(sb.path(), &["add", "-A"]);
    git(sb.path(), &["commit", "-qm", "kernels"]);
    sb.write("README.md", "b");
    git(sb.path(), &["commit", "-qam", "readme"]);
    sb.write(
        "kernels/saxpy.cu",
        &SAXPY.replace("a * x[i] + y[i]", "fmaf(a, x[i], y[i])"),
    );
    git(sb.path(), &["commit", "-qam", "saxpy: fma"]);
}

/// Whether this run could not compile kernels (no libnvrtc), which the tests may skip.
fn no_nvrtc(out: &pitwall_e2e::Out) -> bool {
    if !out
        .stderr()
        .contains("cannot tell identical kernels apart (no libnvrtc)")
    {
        return false;
    }
    assert!(
        std::env::var("PITWALL_REQUIRE_NVRTC").as_deref() != Ok("1"),
        "PITWALL_REQUIRE_NVRTC=1 but pitwall found no NVRTC: {}",
        out.stderr()
    );
    eprintln!("skipped: no libnvrtc (set LD_LIBRARY_PATH to a CUDA 13 NVRTC lib directory)");
    true
}

#[test]
fn nvrtc_a_readme_only_change_measures_no_kernel() {
    let sb = Sandbox::new();
    kernel_repo(&sb, KERNELS);
    let out = sb.run(&["run", "--base", "HEAD~2", "--head", "HEAD~1"]);
    if no_nvrtc(&out) {
        return;
    }
    let out = out.expect(0);
    let stdout = out.stdout();
    for k in ["mine/copy", "mine/saxpy"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(k) && l.ends_with("identical")),
            "{k}: {stdout}"
        );
    }
    assert!(
        stdout.contains("GPU time: 0 s measured, unknown time skipped: identical kernels"),
        "{stdout}"
    );
    assert!(
        out.stderr().contains(
            "suite `mine`: 2 of 2 kernels identical on both sides, not measured (copy, saxpy); measuring: none"
        ),
        "{}",
        out.stderr()
    );
    // Nothing needed a GPU: no kernel was handed to a backend.
    assert!(
        !out.stderr().contains("suite `mine` skipped"),
        "{}",
        out.stderr()
    );
    let stored = runs(&sb);
    assert_eq!(stored.len(), 2);
    let identical: Vec<&str> = stored[1]["pair"]["identical"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kernel"].as_str().unwrap())
        .collect();
    assert_eq!(identical, ["copy", "saxpy"]);
}

#[test]
fn nvrtc_a_changed_kernel_is_the_only_one_selected() {
    let sb = Sandbox::new();
    // A command suite beside the kernels, so the pair has something a CPU can measure.
    let config = format!(
        "{KERNELS}\n[[suite]]\nname = \"cmd\"\nkind = \"command\"\ncommand = \"sh bench.sh\"\n"
    );
    sb.write("bench.sh", &bench(100));
    kernel_repo(&sb, &config);
    let out = sb.run(&["run", "--base", "HEAD~1", "--head", "HEAD", "--rounds", "2"]);
    if no_nvrtc(&out) {
        return;
    }
    let out = out.expect(0);
    let stderr = out.stderr();
    assert!(
        stderr.contains(
            "suite `mine`: 1 of 2 kernels identical on both sides, not measured (copy); measuring: saxpy"
        ),
        "{stderr}"
    );
    // The changed kernel is selected, and without a GPU skipped with the usual one line.
    if !std::path::Path::new("/dev/nvidiactl").exists() {
        assert!(
            stderr.contains("suite `mine` skipped: cuda backend unavailable"),
            "{stderr}"
        );
    }
    let stored = runs(&sb);
    assert_eq!(
        stored[1]["pair"]["identical"],
        serde_json::json!([{"suite": "mine", "kernel": "copy", "basis": "cubin"}])
    );
    assert!(out.stdout().contains("mine/copy"), "{}", out.stdout());
}

#[test]
fn the_pull_request_comment_shows_identical_code_and_the_time() {
    let sb = Sandbox::new();
    repo(&sb, &format!("{CONFIG}\n[ci]\nuntil_decided = false\n"));
    let out = sb
        .run(&[
            "ci",
            "--base",
            "HEAD~1",
            "--head",
            "HEAD",
            "--dry-run",
            "--report-dir",
            "report",
        ])
        .expect(0);
    let stdout = out.stdout();
    assert!(
        stdout.contains("| `toy (every benchmark)` | - | - | - | - | - | identical |"),
        "{stdout}"
    );
    assert!(
        stdout.contains("time: ") && stdout.contains(" skipped: identical builds"),
        "{stdout}"
    );
    let page = std::fs::read_dir(sb.path().join("report/compare"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .find(|p| p.contains(r#"<tr class="identical">"#));
    assert!(page.is_some(), "the compare page lists the identical suite");
}
