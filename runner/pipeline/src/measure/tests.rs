//! The progress the measuring use cases report, event by event, on a real temporary git
//! repository with a command suite: which commit is checked out, the build and its end, each
//! round and side, the suite's command, the looks of a pair measured until decided, and each
//! bisect probe with its verdict. The CLI draws exactly these events.

use std::cell::RefCell;
use std::path::Path;

use pitwall_cpu::CpuBackend;
use pitwall_e2e::git;
use pitwall_store::SqliteStore;

use super::*;
use crate::pair::UntilDecided;
use pitwall_engine::Step;
use pitwall_engine::config::parse_str;

/// The benchmark prints pitwall JSON around the level in `level.txt`; the build logs itself.
const BENCH: &str = r#"level=$(cat level.txt)
printf '{"schema":"pitwall/v1","benchmarks":[{"name":"work","samples":['
i=0; sep=""
while [ $i -lt 10 ]; do printf '%s%s.%s' "$sep" "$level" "$i"; sep=","; i=$((i+1)); done
printf ']}]}'
"#;

/// `SIGTERM` on Linux.
const SIGTERM: i32 = 15;

const CONFIG: &str = "[project]\nname = \"repo\"\nbuild = \"sh build.sh\"\n\n[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"sh bench.sh\"\n";

/// Commits at these levels (a build script that fails where `broken`); their shas, oldest
/// first.
fn repo(dir: &Path, levels: &[u32], broken: Option<usize>) -> Vec<String> {
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("bench.sh"), BENCH).unwrap();
    std::fs::write(dir.join("pitwall.toml"), CONFIG).unwrap();
    std::fs::write(dir.join(".gitignore"), ".pitwall/\n").unwrap();
    let mut shas = Vec::new();
    for (i, level) in levels.iter().enumerate() {
        std::fs::write(dir.join("level.txt"), format!("{level}\n")).unwrap();
        let build = if broken == Some(i) {
            "exit 1\n"
        } else {
            "true\n"
        };
        std::fs::write(dir.join("build.sh"), build).unwrap();
        std::fs::write(dir.join("NOTES"), format!("change {i}\n")).unwrap();
        git(dir, &["add", "-A"]);
        git(
            dir,
            &["commit", "-q", "-m", &format!("commit {i} at {level}")],
        );
        shas.push(git(dir, &["rev-parse", "HEAD"]));
    }
    shas
}

/// Records every event as one line, shas as `#0`, `#1`… (their place in the repository) and
/// times left out, and stands in for the machine setup.
struct Recorder {
    shas: Vec<String>,
    events: RefCell<Vec<String>>,
    /// SIGTERM arrives (for this test thread) with the first event starting with this.
    terminate_at: Option<&'static str>,
    /// The contention the prepared machine reads, when sampled.
    contention: Option<std::sync::Arc<pitwall_host::machine::FakeContention>>,
}

impl Recorder {
    fn new(shas: &[String]) -> Recorder {
        Recorder {
            shas: shas.to_vec(),
            events: RefCell::new(Vec::new()),
            terminate_at: None,
            contention: None,
        }
    }

    fn push(&self, line: String) {
        let mut line = line;
        for (i, sha) in self.shas.iter().enumerate() {
            line = line.replace(sha.as_str(), &format!("#{i}"));
            line = line.replace(&sha[..12], &format!("#{i}"));
        }
        if self.terminate_at.is_some_and(|at| line.starts_with(at)) {
            cancel::terminate_for_test(Some(SIGTERM));
        }
        self.events.borrow_mut().push(line);
    }

    /// The events, without the engine's per-benchmark ones when `steps_only`.
    fn events(&self, steps_only: bool) -> Vec<String> {
        let all = self.events.borrow().clone();
        all.into_iter()
            .filter(|e| !steps_only || !e.starts_with("engine "))
            .collect()
    }
}

impl RunObserver for Recorder {
    fn suite_started(&self, suite: &str, n: usize) {
        self.push(format!("engine suite {suite} {n}"));
    }
    fn benchmark_started(&self, suite: &str, b: &str) {
        self.push(format!("engine bench {suite}/{b}"));
    }
    fn step(&self, step: &Step<'_>) {
        self.push(match step {
            Step::Checkout {
                label,
                sha,
                subject,
            } => format!("checkout {label} {sha} {subject}"),
            Step::BuildStarted { target, command } => format!("build {target} `{command}`"),
            Step::BuildFinished { target, ok, .. } => format!("built {target} ok={ok}"),
            Step::BuildCached { target } => format!("cached {target}"),
            Step::Round {
                round,
                rounds,
                side,
                target,
            } => format!("round {round}/{rounds} {} {target}", side.unwrap_or("-")),
            Step::Command {
                suite,
                command,
                execution,
            } => format!("command {suite} `{command}` {execution:?}"),
            Step::Look(p) => format!("look {}/{} decided={}", p.round, p.max_rounds, p.decided),
            Step::Budget(b) => format!("budget {} record={}", b.max_rounds, b.record_pairs),
            Step::Probe {
                probe,
                bound,
                sha,
                subject,
            } => format!("probe {probe}/~{bound} {sha} {subject}"),
            Step::ProbeFinished { probe, class, .. } => format!("probed {probe} {class}"),
        });
    }
}

impl MeasureHooks for Recorder {
    fn observer(&self) -> &dyn RunObserver {
        self
    }
    fn prepare(&self, _config: &Config) -> Result<RunEnvironment, EnvironmentError> {
        self.push("prepare".into());
        let mut env = RunEnvironment::plain(pitwall_host::fingerprint::current());
        env.set_contention_probe(
            self.contention
                .clone()
                .map(|p| p as std::sync::Arc<dyn pitwall_host::machine::ContentionProbe>),
        );
        Ok(env)
    }
    fn build_failed(&self, target: &Target, _run: &Run, _error: &RunError, _store: &str) {
        self.push(format!("build failed {}", target.describe()));
    }
    fn run_stored(&self, report: &RunReport, _store: &mut dyn Store) {
        self.push(format!("stored {}", report.run.commit));
    }
}

fn setup(levels: &[u32], broken: Option<usize>) -> (tempfile::TempDir, Vec<String>, Config) {
    let dir = tempfile::tempdir().unwrap();
    let shas = repo(dir.path(), levels, broken);
    let config = parse_str(CONFIG, "pitwall.toml", "repo").unwrap();
    (dir, shas, config)
}

#[test]
fn commits_tell_each_checkout_build_and_measurement_in_order() {
    let (dir, shas, config) = setup(&[100, 120, 100], Some(1));
    let rec = Recorder::new(&shas);
    let m = Measurer {
        config: &config,
        backend: &CpuBackend,
        hooks: &rec,
        labels: Default::default(),
        kernels: None,
    };
    let mut store = SqliteStore::open(&dir.path().join("p.db")).unwrap();
    let req = CommitsRequest {
        select: RunRequest::default(),
        revisions: Revisions::Commits {
            repo: dir.path().to_path_buf(),
            revs: vec!["HEAD~2".into(), "HEAD~1".into(), "HEAD".into()],
            rebuild: false,
        },
    };
    let outcome = measure_commits(&m, &mut store, &req).unwrap();
    assert!(outcome.build_failed);
    assert_eq!(
        rec.events(false),
        [
            "checkout commit 1/3 #0 commit 0 at 100",
            "build commit #0 `sh build.sh`",
            "built commit #0 ok=true",
            "checkout commit 2/3 #1 commit 1 at 120",
            "build commit #1 `sh build.sh`",
            "built commit #1 ok=false",
            "build failed commit #1",
            "checkout commit 3/3 #2 commit 2 at 100",
            "build commit #2 `sh build.sh`",
            "built commit #2 ok=true",
            "prepare",
            "round 1/1 - commit #0",
            "engine suite toy 0",
            "command toy `sh bench.sh` Some((1, 1))",
            "engine bench toy/command",
            "stored #0",
            "round 1/1 - commit #2",
            "engine suite toy 0",
            "command toy `sh bench.sh` Some((1, 1))",
            "engine bench toy/command",
            "stored #2",
        ]
    );

    // Measured again, the built commit's build is cached and says so.
    let rec = Recorder::new(&shas);
    let m = Measurer { hooks: &rec, ..m };
    let req = CommitsRequest {
        revisions: Revisions::Commits {
            repo: dir.path().to_path_buf(),
            revs: vec!["HEAD".into()],
            rebuild: false,
        },
        ..req
    };
    measure_commits(&m, &mut store, &req).unwrap();
    assert_eq!(
        rec.events(true)[..3],
        [
            "checkout commit 1/1 #2 commit 2 at 100",
            "cached commit #2",
            "prepare"
        ]
    );
}

#[test]
fn a_pair_until_decided_tells_rounds_sides_and_looks() {
    let (dir, shas, config) = setup(&[100, 140], None);
    // Two other threads run on the benchmark cpus throughout.
    let probe = std::sync::Arc::new(pitwall_host::machine::FakeContention::new(vec![
        pitwall_host::machine::ContentionSample {
            other_runnable_threads: Some(2),
            ..Default::default()
        },
    ]));
    let rec = Recorder {
        contention: Some(probe.clone()),
        ..Recorder::new(&shas)
    };
    let m = Measurer {
        config: &config,
        backend: &CpuBackend,
        hooks: &rec,
        labels: Default::default(),
        kernels: None,
    };
    let mut store = SqliteStore::open(&dir.path().join("p.db")).unwrap();
    let req = PairRequest {
        select: RunRequest::default(),
        repo: dir.path().to_path_buf(),
        base: "HEAD~1".into(),
        head: "HEAD".into(),
        rounds: PairRounds {
            rounds: 3,
            until_decided: Some(UntilDecided {
                max_rounds: 6,
                max_time: None,
            }),
        },
        rebuild: false,
    };
    let PairResult::Measured(pair) = measure_pair(&m, &mut store, &req).unwrap() else {
        panic!("both commits build");
    };
    assert_eq!(pair.outcome.rounds, 3, "decided at the first look");
    let mut expected = vec![
        "checkout base #0 commit 0 at 100".to_string(),
        "build commit #0 `sh build.sh`".into(),
        "built commit #0 ok=true".into(),
        "checkout head #1 commit 1 at 140".into(),
        "build commit #1 `sh build.sh`".into(),
        "built commit #1 ok=true".into(),
        "prepare".into(),
        "budget 6 record=0".into(),
    ];
    // Rounds alternate their order: base-head, head-base, base-head.
    for round in 1..=3 {
        let sides = if round % 2 == 1 {
            [("base", 0), ("head", 1)]
        } else {
            [("head", 1), ("base", 0)]
        };
        for (side, sha) in sides {
            expected.push(format!("round {round}/6 {side} commit #{sha}"));
            expected.push("command toy `sh bench.sh` Some((1, 1))".into());
        }
    }
    expected.push("look 3/6 decided=1".into());
    assert_eq!(rec.events(true), expected);
    // The order is recorded with the pair, in the run and in the store.
    use pitwall_schema::RoundOrder::{BaseHead, HeadBase};
    let info = pair.outcome.head.run.pair.clone().unwrap();
    assert_eq!(info.round_orders, [BaseHead, HeadBase, BaseHead]);
    let stored = store.get_run(&pair.outcome.head.run.id).unwrap();
    assert_eq!(stored.pair.unwrap().round_orders, info.round_orders);
    // Each side sampled contention while it measured (at least at the start and end of each
    // of its 3 rounds), and the stored runs keep it.
    for side in [&pair.outcome.base.run, &pair.outcome.head.run] {
        let c = side.contention.clone().expect("sampled");
        assert!(c.samples >= 6, "{c:?}");
        assert_eq!(c.other_runnable_threads, Some(2.0));
        assert!(c.contended, "{c:?}");
        assert_eq!(store.get_run(&side.id).unwrap().contention, Some(c));
    }
    assert!(probe.reads() >= 12);
}

#[test]
fn a_bisection_tells_each_probe_with_its_commit_and_verdict() {
    // Five commits after good; the third (commit 3) is the first slow one.
    let (dir, shas, config) = setup(&[100, 100, 100, 140, 140, 140], None);
    let rec = Recorder::new(&shas);
    let m = Measurer {
        config: &config,
        backend: &CpuBackend,
        hooks: &rec,
        labels: Default::default(),
        kernels: None,
    };
    let req = BisectRequest {
        good: "HEAD~5".into(),
        bad: "HEAD".into(),
        select: RunRequest::default(),
        rounds: 3,
        max_rounds: 6,
        rebuild: false,
    };
    let report = bisect(&m, dir.path(), &req).unwrap();
    assert_eq!(report.first_bad.sha, shas[3]);
    let events = rec.events(true);
    assert_eq!(
        events[..7],
        [
            "prepare",
            "checkout good #0 commit 0 at 100",
            "build commit #0 `sh build.sh`",
            "built commit #0 ok=true",
            "checkout bad #5 commit 5 at 140",
            "build commit #5 `sh build.sh`",
            "built commit #5 ok=true",
        ]
    );
    // The endpoints' pair is measured as good and bad.
    assert_eq!(events[7], "round 1/6 good commit #0");
    assert_eq!(events[9], "round 1/6 bad commit #5");
    assert!(
        events.contains(&"look 3/6 decided=1".to_string()),
        "{events:#?}"
    );
    // Each probe: announced with its commit, built, measured against good, then classified.
    let probes: Vec<&String> = events
        .iter()
        .filter(|e| e.starts_with("probe") || e.starts_with("probed"))
        .collect();
    assert_eq!(probes.len(), 2 * report.steps.len(), "{events:#?}");
    for (k, step) in report.steps.iter().enumerate() {
        let at = shas.iter().position(|s| *s == step.commit.sha).unwrap();
        assert_eq!(
            *probes[2 * k],
            format!(
                "probe {}/~3 #{at} commit {at} at {}",
                k + 1,
                if at >= 3 { 140 } else { 100 }
            )
        );
        assert_eq!(
            *probes[2 * k + 1],
            format!("probed {} {}", k + 1, step.class)
        );
        let announced = events.iter().position(|e| *e == *probes[2 * k]).unwrap();
        assert_eq!(
            events[announced + 1..announced + 3],
            [
                format!("build commit #{at} `sh build.sh`"),
                format!("built commit #{at} ok=true"),
            ]
        );
        assert_eq!(
            events[announced + 3],
            "round 1/6 good commit #0",
            "{events:#?}"
        );
    }
}

/// What a terminating pitwall's use case leaves: the cancellation, returned (not parked on),
/// with the events so far and nothing stored.
fn cancelled<T: std::fmt::Debug>(
    result: Result<T, MeasureError>,
    rec: &Recorder,
    store: &SqliteStore,
) -> Vec<String> {
    cancel::terminate_for_test(None);
    let err = result.unwrap_err();
    assert!(
        matches!(err, MeasureError::Cancelled(Cancelled { signal: SIGTERM })),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "interrupted by SIGTERM; nothing stored");
    assert!(store.list_runs(None).unwrap().is_empty(), "nothing stored");
    let events = rec.events(false);
    // Rounds after the signal run no benchmark (and tell none).
    assert!(
        !events
            .iter()
            .any(|e| e.starts_with("command") || e.starts_with("round")),
        "{events:#?}"
    );
    events
}

#[test]
fn every_measuring_use_case_returns_cancelled_once_terminating() {
    let (dir, shas, config) = setup(&[100, 140], None);
    let rec = Recorder {
        terminate_at: Some("prepare"),
        ..Recorder::new(&shas)
    };
    let m = Measurer {
        config: &config,
        backend: &CpuBackend,
        hooks: &rec,
        labels: Default::default(),
        kernels: None,
    };
    let mut store = SqliteStore::open(&dir.path().join("p.db")).unwrap();
    let commits = CommitsRequest {
        select: RunRequest::default(),
        revisions: Revisions::Commits {
            repo: dir.path().to_path_buf(),
            revs: vec!["HEAD~1".into(), "HEAD".into()],
            rebuild: false,
        },
    };
    let events = cancelled(measure_commits(&m, &mut store, &commits), &rec, &store);
    assert_eq!(events.last().map(String::as_str), Some("prepare"));

    let rec = Recorder {
        terminate_at: Some("prepare"),
        ..Recorder::new(&shas)
    };
    let m = Measurer { hooks: &rec, ..m };
    let pair = PairRequest {
        select: RunRequest::default(),
        repo: dir.path().to_path_buf(),
        base: "HEAD~1".into(),
        head: "HEAD".into(),
        rounds: PairRounds {
            rounds: 3,
            until_decided: Some(UntilDecided {
                max_rounds: 6,
                max_time: None,
            }),
        },
        rebuild: false,
    };
    cancelled(measure_pair(&m, &mut store, &pair), &rec, &store);

    let rec = Recorder {
        terminate_at: Some("prepare"),
        ..Recorder::new(&shas)
    };
    let m = Measurer { hooks: &rec, ..m };
    let req = BisectRequest {
        good: "HEAD~1".into(),
        bad: "HEAD".into(),
        select: RunRequest::default(),
        rounds: 3,
        max_rounds: 6,
        rebuild: false,
    };
    let events = cancelled(bisect(&m, dir.path(), &req), &rec, &store);
    assert!(
        !events.iter().any(|e| e.starts_with("probe")),
        "{events:#?}"
    );
}

#[test]
fn a_build_ended_by_the_signal_is_not_stored_as_a_failed_build() {
    let (dir, shas, config) = setup(&[100, 120, 100], Some(1));
    let rec = Recorder {
        terminate_at: Some("built commit #1"),
        ..Recorder::new(&shas)
    };
    let m = Measurer {
        config: &config,
        backend: &CpuBackend,
        hooks: &rec,
        labels: Default::default(),
        kernels: None,
    };
    let mut store = SqliteStore::open(&dir.path().join("p.db")).unwrap();
    let req = CommitsRequest {
        select: RunRequest::default(),
        revisions: Revisions::Commits {
            repo: dir.path().to_path_buf(),
            revs: vec!["HEAD~2".into(), "HEAD~1".into(), "HEAD".into()],
            rebuild: false,
        },
    };
    let events = cancelled(measure_commits(&m, &mut store, &req), &rec, &store);
    // Stopped where the signal came: no failed build stored, no third checkout, no set-up.
    assert_eq!(
        events.last().map(String::as_str),
        Some("built commit #1 ok=false")
    );
}
