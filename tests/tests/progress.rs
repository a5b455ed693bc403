//! Progress of long commands end to end, on a real temporary git repository: without a
//! terminal, `run --commit`, `run --base/--head` and `bisect` write one plain, timed line per
//! step on stderr (the commit checked out, the build and how long it took, the round, the
//! suite's command, each probe), escaped, and nothing with `--quiet`; stdout is the same
//! either way.

use pitwall_e2e::{LEVEL_BENCH, Sandbox, git};

const CONFIG: &str = "[project]\nname = \"repo\"\nbuild = \"sh build.sh\"\n\n[[suite]]\nname = \"toy\"\nkind = \"command\"\ncommand = \"sh bench.sh\"\n";

/// One commit per level, the second one's subject carrying a terminal escape; every sha,
/// oldest first.
fn repo(sb: &Sandbox, levels: &[u32]) -> Vec<String> {
    let dir = sb.path();
    git(dir, &["init", "-q", "-b", "main"]);
    sb.write("bench.sh", LEVEL_BENCH);
    sb.write("build.sh", "echo building\n");
    sb.write("pitwall.toml", CONFIG);
    sb.write(".gitignore", ".pitwall/\n");
    let mut shas = Vec::new();
    for (i, level) in levels.iter().enumerate() {
        sb.write("level.txt", &format!("{level}\n"));
        sb.write("NOTES", &format!("change {i}\n"));
        git(dir, &["add", "-A"]);
        let subject = if i == 1 {
            format!("commit {i} \u{1b}[31mred\u{1b}[0m at {level}")
        } else {
            format!("commit {i} at {level}")
        };
        git(dir, &["commit", "-q", "-m", &subject]);
        shas.push(git(dir, &["rev-parse", "HEAD"]));
    }
    shas
}

/// The timed progress lines of `stderr`, with the times masked (`[T]`, `built in T`) and each
/// sha as `#k`, its place in the repository.
fn progress_lines(stderr: &str, shas: &[String]) -> String {
    let mut out = String::new();
    for line in stderr.lines() {
        let Some((time, rest)) = line.split_once("] ") else {
            continue;
        };
        let t = time.trim_start_matches('[').trim();
        if !(time.starts_with('[')
            && t.ends_with('s')
            && t.starts_with(|c: char| c.is_ascii_digit()))
        {
            continue;
        }
        let mut rest = match rest.split_once(": built in ") {
            Some((head, _)) => format!("{head}: built in T"),
            None => rest.to_string(),
        };
        for (k, sha) in shas.iter().enumerate() {
            rest = rest.replace(&sha[..12], &format!("#{k}"));
        }
        out.push_str(&format!("[T] {rest}\n"));
    }
    out
}

/// `text` with every run or pair id (a UUID) as `<id>`.
fn without_ids(text: &str) -> String {
    text.split_inclusive(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .map(|word| {
            let w = word.trim_end_matches(|c: char| c.is_whitespace() || c == '(' || c == ')');
            let is_id = w.len() == 36
                && w.char_indices()
                    .all(|(i, c)| matches!(i, 8 | 13 | 18 | 23) == (c == '-'));
            if is_id {
                word.replacen(w, "<id>", 1)
            } else {
                word.to_string()
            }
        })
        .collect()
}

#[test]
fn run_commits_tell_each_step_on_stderr_and_leave_stdout_alone() {
    let sb = Sandbox::new();
    let shas = repo(&sb, &[100, 100, 150]);
    let args = [
        "run",
        "--no-report",
        "--commit",
        "HEAD~2",
        "--commit",
        "HEAD~1",
        "--commit",
        "HEAD",
    ];
    let out = sb.run(&args).expect(0);
    let stderr = out.stderr();
    assert!(!stderr.contains('\u{1b}'), "escaped: {stderr}");
    insta::assert_snapshot!("run_commits_progress", progress_lines(&stderr, &shas));

    // Quiet: the same result on stdout, no progress on stderr.
    let quiet_args: Vec<&str> = std::iter::once("--quiet").chain(args).collect();
    let quiet = sb.run(&quiet_args).expect(0);
    assert_eq!(progress_lines(&quiet.stderr(), &shas), "");
    assert_eq!(without_ids(&out.stdout()), without_ids(&quiet.stdout()));
    assert_eq!(out.stdout().matches("status complete").count(), 3);
    assert!(!out.stdout().contains("building"), "{}", out.stdout());
}

#[test]
fn a_pair_tells_each_round_and_side() {
    let sb = Sandbox::new();
    let shas = repo(&sb, &[100, 150]);
    let out = sb
        .run(&[
            "run",
            "--no-report",
            "--base",
            "HEAD~1",
            "--head",
            "HEAD",
            "--rounds",
            "2",
        ])
        .expect(1);
    let lines = progress_lines(&out.stderr(), &shas);
    let rounds: Vec<&str> = lines.lines().filter(|l| l.contains("round")).collect();
    assert_eq!(
        rounds,
        [
            "[T] round 1/2: base commit #0",
            "[T] round 1/2: head commit #1",
            // Rounds alternate their order (issue 25).
            "[T] round 2/2: head commit #1",
            "[T] round 2/2: base commit #0",
        ],
        "{lines}"
    );
    assert!(
        lines.starts_with("[T] base: #0 commit 0 at 100\n"),
        "{lines}"
    );
    assert!(out.stdout().contains("regression"), "{}", out.stdout());
    assert!(!out.stdout().contains("[T]") && !out.stdout().contains("round 1/2"));
}

#[test]
fn bisect_tells_each_probe_on_stderr_and_leaves_stdout_alone() {
    let sb = Sandbox::new();
    // Five commits after good; commit 3 is the first slow one.
    let shas = repo(&sb, &[100, 100, 101, 140, 141, 140]);
    let args = ["bisect", "--good", &shas[0], "--bad", "HEAD"];
    let out = sb.run(&args).expect(0);
    let stderr = out.stderr();
    assert!(!stderr.contains('\u{1b}'), "escaped: {stderr}");
    let lines = progress_lines(&stderr, &shas);
    insta::assert_snapshot!("bisect_progress", lines);

    let quiet_args: Vec<&str> = std::iter::once("--quiet").chain(args).collect();
    let quiet = sb.run(&quiet_args).expect(0);
    assert_eq!(progress_lines(&quiet.stderr(), &shas), "");
    assert_eq!(out.stdout(), quiet.stdout());
    assert!(
        out.stdout()
            .contains(&format!("first bad commit: {} commit 3 at 140", shas[3])),
        "{}",
        out.stdout()
    );
}
