//! Site tests: page structure and counts, escaping of untrusted names and subjects, and
//! snapshots of the index and one benchmark page for a small deterministic input.

use super::synthetic;
use super::{ReportInput, write_site};
use pitwall_schema::Run;

/// 16 measures (two suites, sweeps over `size`) × 30 runs, one renamed to a script tag, one
/// commit subject with markup, and a comparison across a GPU change.
fn input_runs() -> Vec<Run> {
    let mut runs = synthetic::runs(16, 30, 8);
    for run in &mut runs {
        run.results[3].name = "<script>alert(1)</script>".into();
    }
    runs[29].commit_info.as_mut().unwrap().subject = "fix <b>bold</b> & \"quoted\"".into();
    runs
}

fn render(runs: &[Run]) -> (tempfile::TempDir, super::SiteSummary) {
    let comparisons = vec![super::PageComparison::new(
        "0123abcd",
        "first vs last",
        synthetic::comparison(&runs[0], &runs[runs.len() - 1]),
    )];
    let dir = tempfile::tempdir().unwrap();
    let input = ReportInput {
        project: "demo <p>",
        runs,
        comparisons: &comparisons,
        generated_at: "2026-12-02T10:00:00Z",
        history_branch: "main",
        alerts: &[],
        histories: None,
        local: None,
    };
    let summary = write_site(&input, dir.path()).unwrap();
    (dir, summary)
}

fn read(dir: &tempfile::TempDir, rel: &str) -> String {
    std::fs::read_to_string(dir.path().join(rel)).unwrap()
}

fn bench_pages(dir: &tempfile::TempDir) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir.path().join("bench"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn writes_every_page() {
    let runs = input_runs();
    let (dir, summary) = render(&runs);
    assert_eq!(summary.benchmarks, 16);
    assert_eq!(summary.pages, 16 + 1 + 1 + 1);
    assert_eq!(bench_pages(&dir).len(), 16);
    for f in [
        "index.html",
        "env.html",
        "compare/0123abcd.html",
        "assets/style.css",
        "assets/history.js",
        "assets/vendor/uplot/uPlot.iife.min.js",
        "assets/vendor/uplot/uPlot.min.css",
        "assets/vendor/uplot/LICENSE",
    ] {
        assert!(dir.path().join(f).is_file(), "{f} missing");
    }
    let index = read(&dir, "index.html");
    assert_eq!(summary.index_bytes, index.len() as u64);
    assert_eq!(index.matches("<tr data-suite=").count(), 16);
    assert_eq!(index.matches(r#"<svg class="spark""#).count(), 16);
    for page in bench_pages(&dir) {
        assert!(
            index.contains(&format!(r#"href="bench/{page}""#)),
            "{page} not linked"
        );
    }
    // No remote resources anywhere: the site works from file:// without a network.
    for f in ["index.html", "env.html", "compare/0123abcd.html"] {
        let html = read(&dir, f);
        assert!(
            !html.contains("http://") && !html.contains("https://"),
            "{f}"
        );
        assert!(html.contains("assets/style.css"));
    }
}

#[test]
fn benchmark_page_has_history_bands_change_points_and_sweep() {
    let runs = input_runs();
    let (dir, _) = render(&runs);
    // Measure 0 steps by 10% at run 20 (see `synthetic::runs`).
    let page = bench_pages(&dir)
        .into_iter()
        .find(|p| p.starts_with("kernel-gemm0-size-64-"))
        .unwrap();
    let html = read(&dir, &format!("bench/{page}"));
    let history = &html[html.find(r#"id="history""#).unwrap()..];
    let history = &history[..history.find("</svg>").unwrap()];
    assert_eq!(
        history.matches("<circle ").count(),
        30,
        "one marker per run"
    );
    let sweep = &html[html.find(r#"class="chart sweep""#).unwrap()..];
    let sweep = &sweep[..sweep.find("</svg>").unwrap()];
    // sizes 64..8192 of gemm0, less the one renamed to a script tag.
    assert_eq!(sweep.matches("<circle ").count(), 7);
    assert_eq!(sweep.matches(r#"class="pt cur""#).count(), 1);
    assert!(html.contains(r#"<path class="spread""#) && html.contains(r#"<path class="ci""#));
    assert!(
        html.contains(r#"<g class="cp worse">"#),
        "the step is marked"
    );
    // Verdict first, with the magnitude (about +10%) and the commit range.
    let latest = html.split("Latest change: <strong>+").nth(1).unwrap();
    let magnitude: f64 = latest[..latest.find('%').unwrap()].parse().unwrap();
    assert!((8.0..12.0).contains(&magnitude), "{magnitude}");
    assert!(html.contains("<title>change between "));
    assert!(
        html.contains(r#"class="pt thr""#),
        "throttled run drawn apart"
    );
    assert!(html.contains("Latest median by size"));
    assert!(html.contains("change number 20"), "subject shown");
}

#[test]
fn untrusted_text_is_escaped() {
    let runs = input_runs();
    let (dir, _) = render(&runs);
    let mut all =
        read(&dir, "index.html") + &read(&dir, "compare/0123abcd.html") + &read(&dir, "env.html");
    for p in bench_pages(&dir) {
        all += &read(&dir, &format!("bench/{p}"));
    }
    assert!(
        !all.contains("<script>alert(1)"),
        "benchmark name must be text"
    );
    assert!(all.contains("&lt;script&gt;alert(1)&lt;"));
    assert!(!all.contains("<b>bold</b>"), "commit subject must be text");
    assert!(!all.contains("demo <p>"), "project name must be text");
    // The only script is the index filter.
    assert_eq!(all.matches("<script>").count(), 1);
}

/// The interactive chart's data sits in a `<script type="application/json">` element: a
/// hostile name or subject (`</script>`, `<!--`, U+2028) stays inside it as JSON text.
#[test]
fn chart_data_cannot_leave_its_script_element() {
    let mut runs = input_runs();
    runs[28].commit_info.as_mut().unwrap().subject =
        "</script><img src=x onerror=alert(1)> <!-- \u{2028}".into();
    let (dir, _) = render(&runs);
    let mut hostile_keys = 0;
    for p in bench_pages(&dir) {
        let html = read(&dir, &format!("bench/{p}"));
        // Two scripts loaded from assets/, and the data: nothing closes a script early.
        assert_eq!(html.matches("</script>").count(), 3, "{p}");
        assert!(!html.contains("<img") && !html.contains("<!--"), "{p}");
        let open = r#"<script type="application/json" id="history-data">"#;
        let data = &html[html.find(open).unwrap() + open.len()..];
        let data = &data[..data.find("</script>").unwrap()];
        assert!(!data.contains('<') && !data.contains('\u{2028}'), "{p}");
        let v: serde_json::Value = serde_json::from_str(data).unwrap();
        let subjects: Vec<&str> = v["points"]["subject"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        assert!(subjects.contains(&"</script><img src=x onerror=alert(1)> <!-- \u{2028}"));
        hostile_keys += usize::from(v["key"].as_str().unwrap().contains("<script>alert(1)"));
    }
    assert_eq!(
        hostile_keys, 1,
        "the hostile name's page holds its name as data"
    );
}

#[test]
fn control_characters_show_as_escapes_in_pages() {
    let mut runs = input_runs();
    for run in &mut runs {
        run.results[4].name = "red\u{1b}[31mname".into();
    }
    runs[29].commit_info.as_mut().unwrap().subject = "bell\u{7} subject".into();
    let (dir, _) = render(&runs);
    let mut all = read(&dir, "index.html") + &read(&dir, "compare/0123abcd.html");
    for p in bench_pages(&dir) {
        all += &read(&dir, &format!("bench/{p}"));
    }
    for c in ['\u{1b}', '\u{7}'] {
        if let Some(i) = all.find(c) {
            let from = all[..i].char_indices().rev().nth(80).map_or(0, |x| x.0);
            panic!(
                "raw control character in: {:?}",
                &all[from..(i + 40).min(all.len())]
            );
        }
    }
    assert!(
        all.contains("red\\x1b[31mname"),
        "the name, escaped as the terminal shows it"
    );
    assert!(all.contains("bell\\x07 subject"));
}

#[test]
fn comparison_page_orders_regressions_first_and_shows_mismatch() {
    let mut runs = input_runs();
    let last = runs.len() - 1;
    runs[last].fingerprint.gpus[0].model = "H200".into();
    let (dir, _) = render(&runs);
    let html = read(&dir, "compare/0123abcd.html");
    let first_reg = html.find(r#"<tr class="regression">"#).unwrap();
    let first_unch = html.find(r#"<tr class="unchanged">"#).unwrap();
    assert!(first_reg < first_unch);
    assert!(html.contains(r#"class="mismatch""#) && html.contains("gpu model: H100 vs H200"));
    assert_eq!(html.matches(r#"<svg class="boxes""#).count(), 16);
    // Two separately measured runs: one process a side, and the page says so.
    assert!(html.contains("rounds: sides measured separately"), "{html}");
    assert!(html.contains("warning: one process per side (1 replicate)"));
    assert!(
        !html.contains("show the median only"),
        "samples found in the runs"
    );
    let env = read(&dir, "env.html");
    assert_eq!(env.matches("<table class=\"env\">").count(), 2);
    assert!(env.contains(r#"<tr class="differs"><th>gpu 0 model</th><td>H200</td>"#));
}

#[test]
fn empty_input_still_writes_a_site() {
    let (dir, summary) = render_empty();
    assert_eq!(summary.benchmarks, 0);
    assert_eq!(summary.pages, 2);
    assert!(read(&dir, "index.html").contains("0 benchmark measures over 0 runs"));
}

fn render_empty() -> (tempfile::TempDir, super::SiteSummary) {
    let dir = tempfile::tempdir().unwrap();
    let input = ReportInput {
        project: "p",
        runs: &[],
        comparisons: &[],
        generated_at: "t",
        history_branch: "main",
        alerts: &[],
        histories: None,
        local: None,
    };
    let s = write_site(&input, dir.path()).unwrap();
    (dir, s)
}

fn snapshot_filters() -> Vec<(&'static str, &'static str)> {
    vec![
        (r"\b[0-9a-f]{40}\b", "[sha]"),
        (r"\b[0-9a-f]{10}\b", "[short-sha]"),
        (r"-[0-9a-f]{8}\.html", "-[hash].html"),
        (r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", "[time]"),
    ]
}

#[test]
fn index_snapshot() {
    let runs: Vec<Run> = synthetic::runs(4, 12, 6);
    let (dir, _) = render(&runs);
    insta::with_settings!({ filters => snapshot_filters() }, {
        insta::assert_snapshot!(read(&dir, "index.html"));
    });
}

#[test]
fn benchmark_page_snapshot() {
    let runs: Vec<Run> = synthetic::runs(4, 12, 6);
    let (dir, _) = render(&runs);
    let page = bench_pages(&dir)
        .into_iter()
        .find(|p| p.starts_with("kernel-gemm0-size-64-"))
        .unwrap();
    insta::with_settings!({ filters => snapshot_filters() }, {
        insta::assert_snapshot!(read(&dir, &format!("bench/{page}")));
    });
}

/// Issue 28, item 3: each pair's page has its own stable path (`compare/<pair-id>.html`), so
/// a second pair's report never overwrites the first's page, and the box plots have an axis.
#[test]
fn each_pair_keeps_its_own_comparison_page() {
    let runs = input_runs();
    let (dir, _) = render(&runs);
    let first = read(&dir, "compare/0123abcd.html");
    let later = vec![super::PageComparison::new(
        "77ee0011",
        "another pair",
        synthetic::comparison(&runs[1], &runs[2]),
    )];
    let input = ReportInput {
        project: "demo",
        runs: &runs,
        comparisons: &later,
        generated_at: "2026-12-02T11:00:00Z",
        history_branch: "main",
        alerts: &[],
        histories: None,
        local: None,
    };
    write_site(&input, dir.path()).unwrap();
    assert_eq!(read(&dir, "compare/0123abcd.html"), first, "unchanged");
    assert!(read(&dir, "compare/77ee0011.html").contains("another pair"));
    assert!(read(&dir, "index.html").contains("href=\"compare/77ee0011.html\""));
    assert!(
        first.contains("<g class=\"axis\">"),
        "box plots have an axis"
    );
    // An id that is not a file name is made one.
    let odd = super::PageComparison::new("../x y", "t", synthetic::comparison(&runs[1], &runs[2]));
    assert_eq!(odd.page(), "---x-y");
}

#[test]
fn a_rewrite_removes_pages_the_history_no_longer_has() {
    let runs = input_runs();
    let (dir, first) = render(&runs);
    assert_eq!(first.stale_removed, 0);
    let mine = dir.path().join("bench").join("notes.txt");
    std::fs::write(&mine, "kept").unwrap();
    // The same directory, rendered again with fewer benchmark measures and no comparison.
    let mut fewer = runs.clone();
    for run in &mut fewer {
        run.results.truncate(10);
    }
    let input = ReportInput {
        project: "demo",
        runs: &fewer,
        comparisons: &[],
        generated_at: "2026-12-02T11:00:00Z",
        history_branch: "main",
        alerts: &[],
        histories: None,
        local: None,
    };
    let second = write_site(&input, dir.path()).unwrap();
    assert_eq!(second.benchmarks, 10);
    assert_eq!(
        second.stale_removed,
        16 - 10,
        "6 benchmark pages; the comparison page keeps its path"
    );
    let pages: Vec<String> = bench_pages(&dir)
        .into_iter()
        .filter(|p| p.ends_with(".html"))
        .collect();
    assert_eq!(pages.len(), 10);
    assert!(
        dir.path().join("compare/0123abcd.html").exists(),
        "a PR comment may link to it"
    );
    assert_eq!(
        std::fs::read_to_string(&mine).unwrap(),
        "kept",
        "not ours: left alone"
    );
    // Every remaining link from the index still resolves.
    let index = read(&dir, "index.html");
    for page in &pages {
        assert!(index.contains(&format!("bench/{page}")), "{page} linked");
    }
}

#[test]
fn a_report_deletes_only_files_its_manifest_lists() {
    let runs = input_runs();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // A directory the user already keeps pages in, before any report was written there.
    for sub in ["bench", "compare"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    std::fs::write(root.join("bench/mine.html"), "mine").unwrap();
    std::fs::write(root.join("compare/7.html"), "mine too").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("victim.html"), "outside").unwrap();
    fn input(runs: &[Run]) -> ReportInput<'_> {
        ReportInput {
            project: "demo",
            runs,
            comparisons: &[],
            generated_at: "2026-12-02T11:00:00Z",
            history_branch: "main",
            alerts: &[],
            histories: None,
            local: None,
        }
    }
    let first = write_site(&input(&runs), root).unwrap();
    assert_eq!(first.stale_removed, 0, "nothing of ours to remove yet");
    assert_eq!(read(&dir, "bench/mine.html"), "mine");
    assert_eq!(read(&dir, "compare/7.html"), "mine too");
    let manifest = read(&dir, ".pitwall-manifest");
    assert!(manifest.lines().any(|l| l == "index.html"), "{manifest}");
    assert!(!manifest.contains("mine"), "{manifest}");
    // A tampered manifest names files outside the directory, a link and a directory.
    std::os::unix::fs::symlink(
        outside.path().join("victim.html"),
        root.join("bench/link.html"),
    )
    .unwrap();
    let victim = outside.path().join("victim.html");
    std::fs::write(
        root.join(".pitwall-manifest"),
        format!(
            "{manifest}../victim.html\n{}\nbench/link.html\nbench\n",
            victim.display()
        ),
    )
    .unwrap();
    let mut fewer = runs.clone();
    for run in &mut fewer {
        run.results.truncate(10);
    }
    let second = write_site(&input(&fewer), root).unwrap();
    assert_eq!(second.stale_removed, 16 - 10, "our 6 benchmark pages");
    assert_eq!(read(&dir, "bench/mine.html"), "mine");
    assert_eq!(read(&dir, "compare/7.html"), "mine too");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "outside");
    assert!(root.join("bench/link.html").symlink_metadata().is_ok());
    assert!(root.join("bench").is_dir());
    let manifest = read(&dir, ".pitwall-manifest");
    assert!(
        !manifest.contains("victim") && !manifest.contains("link"),
        "{manifest}"
    );
    // A manifest that is a link is neither read nor written through.
    std::fs::remove_file(root.join(".pitwall-manifest")).unwrap();
    std::os::unix::fs::symlink(&victim, root.join(".pitwall-manifest")).unwrap();
    write_site(&input(&fewer), root).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "outside");
    assert!(
        root.join(".pitwall-manifest")
            .symlink_metadata()
            .unwrap()
            .is_file()
    );
}

/// The measures' rows on the index, as `data-name` shows them, in order.
fn index_names(index: &str) -> Vec<String> {
    index
        .split(r#"data-name=""#)
        .skip(1)
        .map(|t| t[..t.find('"').unwrap()].to_string())
        .collect()
}

#[test]
fn the_index_tells_one_story_in_one_banner() {
    // A comparison with a regression, a history without a worse change point (12 runs).
    let runs = synthetic::runs(4, 12, 6);
    let (dir, _) = render(&runs);
    let index = read(&dir, "index.html");
    assert_eq!(index.matches(r#"class="verdict"#).count(), 1, "{index}");
    assert!(
        index.contains(r#"<section class="verdict worse">"#),
        "{index}"
    );
    assert!(
        index.contains("1 regression") && index.contains("History of main: 4 benchmark measures")
    );
    // Without a comparison and without change points, the one banner is ok.
    let dir = tempfile::tempdir().unwrap();
    let input = ReportInput {
        project: "p",
        runs: &runs,
        comparisons: &[],
        generated_at: "t",
        history_branch: "main",
        alerts: &[],
        histories: None,
        local: None,
    };
    write_site(&input, dir.path()).unwrap();
    let index = read(&dir, "index.html");
    assert_eq!(index.matches(r#"class="verdict"#).count(), 1, "{index}");
    assert!(index.contains(r#"<section class="verdict ok">"#), "{index}");
}

#[test]
fn times_read_as_the_cli_shows_them() {
    // gemm times of 100–800 µs, stored in ns.
    let mut runs = synthetic::runs(4, 12, 6);
    for r in &mut runs {
        for b in &mut r.results {
            b.samples.iter_mut().for_each(|v| *v *= 1000.0);
        }
    }
    let (dir, _) = render(&runs);
    let cli = crate::Exporter::render(&crate::TableExporter, &runs[11], &[]);
    let cli_row = cli.lines().find(|l| l.contains("gemm0[size=64]")).unwrap();
    let cli_median = cli_row.split_whitespace().nth(4).unwrap();
    assert!(cli_row.contains(" µs "), "{cli_row}");
    let index = read(&dir, "index.html");
    let row = &index[index.find(r#"data-name="gemm0[size=64] time""#).unwrap()..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(
        row.contains(&format!(r#"<td class="num">{cli_median}</td>"#))
            && row.contains("<td>µs</td>"),
        "{row} vs {cli_row}"
    );
    let page = bench_pages(&dir)
        .into_iter()
        .find(|p| p.starts_with("kernel-gemm0-size-64-"))
        .unwrap();
    let html = read(&dir, &format!("bench/{page}"));
    assert!(
        html.contains("(µs, lower is better)"),
        "one unit on the page"
    );
    assert!(html.contains(r#"<text class="axis unit""#) && !html.contains(" ns<"));
    let compare = read(&dir, "compare/0123abcd.html");
    assert!(compare.contains("<td>µs</td>") && !compare.contains("<td>ns</td>"));
}

#[test]
fn benchmarks_are_listed_with_numbers_as_numbers() {
    let runs = synthetic::runs(8, 12, 6);
    let (dir, _) = render(&runs);
    let sizes = ["64", "128", "256", "512", "1024", "2048", "4096", "8192"];
    let expected: Vec<String> = sizes
        .iter()
        .map(|s| format!("gemm0[size={s}] time"))
        .collect();
    assert_eq!(index_names(&read(&dir, "index.html")), expected);
    // The comparison lists its unchanged rows in the same order.
    let compare = read(&dir, "compare/0123abcd.html");
    let unchanged: Vec<&str> = compare
        .split(r#"<tr class="unchanged">"#)
        .skip(1)
        .map(|t| {
            let t = &t[t.find("size=").unwrap() + 5..];
            &t[..t.find(']').unwrap()]
        })
        .collect();
    let mut sorted = unchanged.clone();
    sorted.sort_by_key(|s| s.parse::<u32>().unwrap());
    assert!(unchanged.len() >= 6, "{unchanged:?}");
    assert_eq!(unchanged, sorted);
}

#[test]
fn a_pairs_base_run_is_drawn_at_its_commit_not_as_the_newest() {
    // Ten commits, then a pair's base run of commit 2, stored last (commit dates give the order).
    let mut runs = synthetic::runs(1, 10, 6);
    for (i, r) in runs.iter_mut().enumerate() {
        r.commit_info.as_mut().unwrap().date = format!("2026-01-01T{i:02}:00:00Z");
    }
    let mut base = runs[2].clone();
    base.id = "pair-base".into();
    runs.push(base);
    let (dir, _) = render(&runs);
    let html = read(&dir, &format!("bench/{}", bench_pages(&dir)[0]));
    let recent = &html[html
        .find("<h2>Latest runs, newest commit first</h2>")
        .unwrap()..];
    let first_row = &recent[recent.find("<tbody>").unwrap()..];
    let newest = super::model::short_commit(&runs[9].commit);
    assert!(
        first_row[..first_row.find("</tr>").unwrap()].contains(newest),
        "the newest commit heads the table"
    );
    let history = &html[html.find(r#"id="history""#).unwrap()..];
    let last_label = history.rsplit(r#"<text class="tick sha""#).next().unwrap();
    assert!(last_label.contains(newest), "{last_label}");
}

#[test]
fn a_benchmark_page_flags_a_run_whose_interval_missed_its_target() {
    // issue 25: the newest run recorded a target of ±0.5% for every suite: its intervals
    // are wider, so its row says noisy with both numbers; runs without targets say nothing.
    let mut runs = synthetic::runs(2, 8, 8);
    let last = runs.len() - 1;
    let suites: Vec<String> = runs[last].results.iter().map(|r| r.suite.clone()).collect();
    runs[last]
        .fingerprint
        .set_section(&pitwall_schema::sections::SamplingTargets(
            suites.into_iter().map(|s| (s, 0.5)).collect(),
        ));
    let (dir, _) = render(&runs);
    let page = read(&dir, &format!("bench/{}", bench_pages(&dir)[0]));
    assert_eq!(page.matches(r#"<span class="noisy""#).count(), 1, "{page}");
    assert!(page.contains("reached, target ±0.50%"), "{page}");
}

/// Issue 26 item 5: code a pair left unmeasured shows on the compare page as rows with the
/// verdict `identical` (escaped), with the pair's time line.
#[test]
fn comparison_page_shows_identical_code_and_the_time_line() {
    use pitwall_analysis::identical::{IDENTICAL, IdenticalEntry, PairTime};
    use pitwall_schema::{IdenticalBasis, IdenticalCode};
    let runs = input_runs();
    let mut report = synthetic::comparison(&runs[0], &runs[runs.len() - 1]);
    report.identical = vec![IdenticalEntry {
        code: IdenticalCode {
            suite: "kernels".into(),
            kernel: Some("<script>saxpy".into()),
            basis: IdenticalBasis::Cubin,
        },
        verdict: IDENTICAL,
    }];
    report.time = Some(PairTime {
        measured_ms: Some(240_000),
        saved_ms_estimate: Some(660_000),
        gpu: true,
        identical: true,
    });
    let comparisons = vec![super::PageComparison::new("0123abcd", "pair", report)];
    let dir = tempfile::tempdir().unwrap();
    let input = ReportInput {
        project: "demo",
        runs: &runs,
        comparisons: &comparisons,
        generated_at: "2026-12-02T10:00:00Z",
        history_branch: "main",
        alerts: &[],
        histories: None,
        local: None,
    };
    write_site(&input, dir.path()).unwrap();
    let html = read(&dir, "compare/0123abcd.html");
    let row = html
        .lines()
        .find(|l| l.starts_with(r#"<tr class="identical">"#))
        .unwrap_or_else(|| panic!("no identical row: {html}"));
    insta::assert_snapshot!("compare_page_identical_row", row);
    assert!(!html.contains("<script>saxpy"));
    assert!(
        html.contains("<br>GPU time: 4 min measured, ~11 min skipped: identical kernels</p>"),
        "{html}"
    );
}

#[test]
fn the_first_report_shows_the_latest_local_run_marked_local() {
    let mut local = synthetic::runs(2, 1, 5).remove(0);
    local.role = Some(pitwall_schema::RunRole::Local);
    local.commit = pitwall_schema::WORKING_TREE.into();
    local.results[1].name = "<b>x</b>".into();
    let dir = tempfile::tempdir().unwrap();
    let input = ReportInput {
        project: "p",
        runs: std::slice::from_ref(&local),
        comparisons: &[],
        generated_at: "t",
        history_branch: "main",
        alerts: &[],
        histories: None,
        local: Some(&local),
    };
    write_site(&input, dir.path()).unwrap();
    let index = read(&dir, "index.html");
    let start = index.find("<section class=\"local\">").unwrap();
    let end = start + index[start..].find("</section>").unwrap();
    insta::assert_snapshot!(&index[start..end]);
    assert!(!index.contains("<b>x</b>"), "names are escaped");
}

/// The index and every benchmark page count the same runs: the history runs of the series,
/// never a pull request's run or another branch's.
#[test]
fn every_page_counts_the_history_runs() {
    let mut runs = synthetic::runs(2, 9, 8);
    let mut pr = runs[8].clone();
    pr.id = "pr-run".into();
    pr.role = Some(pitwall_schema::RunRole::PrHead);
    let mut other = runs[8].clone();
    other.id = "other-branch".into();
    other.branch = Some("feature".into());
    runs.extend([pr.clone(), pr, other]);
    let (dir, _) = render(&runs);
    let index = read(&dir, "index.html");
    assert!(
        index.contains("2 benchmark measures over 9 runs"),
        "{index}"
    );
    for page in bench_pages(&dir) {
        let html = read(&dir, &format!("bench/{page}"));
        assert!(html.contains("over 9 runs"), "{page}: {html}");
    }
}
