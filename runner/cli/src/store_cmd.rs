//! `pitwall runs`, `show`, `export`, `import` and `prune`: the stored runs, listed, printed,
//! written out as versioned JSON, read in from export files and other tools' results, or
//! pruned when old.

use pitwall_pipeline::import::{ImportOptions, ImportRequest, import};
use pitwall_reports::{Table, exporter_for};
use pitwall_schema::ExportDoc;
use pitwall_store::OpenMode;

use super::alert_notice::announce_alerts;
use super::args::{
    ExportArgs, Format, Global, ImportArgs, PruneArgs, RunsAction, RunsArgs, ShowArgs,
};
use super::context::{format, load_config, open_store, write_atomically};
use super::exit::{ExitClass, Failure};

pub(super) fn cmd_runs(g: &Global, a: &RunsArgs) -> Result<ExitClass, Failure> {
    if let Some(action) = &a.action {
        return cmd_exclusion(g, action);
    }
    let config = load_config(g)?;
    let store = open_store(g, &config, OpenMode::Existing)?;
    let runs = store
        .list_runs(a.limit.map(|n| usize::try_from(n).unwrap_or(usize::MAX)))
        .map_err(Failure::of_store)?;
    match a.format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&runs).expect("summaries serialize");
            s.push('\n');
            print!("{s}");
        }
        Format::Table => {
            let mut t = Table::new(&[
                "RUN", "STARTED", "PROJECT", "COMMIT", "BRANCH", "TESTBED", "ROLE", "STATUS",
                ">RESULTS", ">FAILED",
            ]);
            for r in &runs {
                let commit = if r.commit.len() == 40 {
                    r.commit[..12].to_string()
                } else {
                    r.commit.clone()
                };
                t.row(vec![
                    r.id.clone(),
                    r.started_at.clone(),
                    r.project.clone(),
                    commit,
                    counted_branch(
                        r.branch.as_deref(),
                        r.role.as_deref(),
                        &config.history_branch,
                    ),
                    r.testbed.clone().unwrap_or_else(|| "-".into()),
                    match (r.role.clone().unwrap_or_else(|| "-".into()), r.excluded) {
                        (role, true) => format!("{role} (excluded)"),
                        (role, false) => role,
                    },
                    r.status.as_str().to_string(),
                    r.results.to_string(),
                    r.failed_results.to_string(),
                ]);
            }
            if t.is_empty() {
                eprintln!("no runs in {}", store.describe());
            } else {
                print!("{}", t.render());
            }
        }
    }
    Ok(ExitClass::Ok)
}

/// `pitwall runs exclude ID --note TEXT` / `runs include ID`.
fn cmd_exclusion(g: &Global, action: &RunsAction) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    super::context::database_only(g, &config, "`pitwall runs exclude`/`include`")?;
    let mut store = open_store(g, &config, OpenMode::Existing)?;
    let (id, note) = match action {
        RunsAction::Exclude { run, note } => (run, Some(note.as_str())),
        RunsAction::Include { run } => (run, None),
    };
    let settings = pitwall_pipeline::alerts::AlertSettings::of(&config);
    let now = pitwall_schema::time::now_rfc3339();
    let out = pitwall_pipeline::exclusion::set_excluded(store.as_mut(), id, note, &settings, &now)
        .map_err(Failure::of_exclusion)?;
    if !g.quiet {
        let state = match (&out.run.exclusion, out.changed) {
            (Some(_), true) => "excluded from history",
            (Some(_), false) => "was already excluded from history",
            (None, true) => "included in history again",
            (None, false) => "was already in history",
        };
        eprintln!(
            "run {} {state}",
            pitwall_reports::table::escape_controls(&out.run.id)
        );
    }
    announce_alerts(g, &config, &out.new_alerts);
    Ok(ExitClass::Ok)
}

/// The branch a listed run counts for: its own, else (a `history` run that records none, as
/// `run --commit` on a detached checkout stores) the history branch, whose history admits it
/// (`HistoryFilter::admits`), else `-`. A working-tree (`local`) or calibration run counts for
/// no branch's history whatever branch was checked out, so it is `-` too; a pull request's
/// runs keep the branch they measured (their role says they are no history).
fn counted_branch(branch: Option<&str>, role: Option<&str>, history_branch: &str) -> String {
    match (branch, role) {
        (_, Some("local" | "calibration")) => "-".into(),
        (Some(b), _) => b.to_string(),
        (None, None | Some("history")) => history_branch.to_string(),
        (None, Some(_)) => "-".into(),
    }
}

pub(super) fn cmd_show(g: &Global, a: &ShowArgs) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    let store = open_store(g, &config, OpenMode::Existing)?;
    let run = store.get_run(&a.run).map_err(Failure::of_store)?;
    print!("{}", exporter_for(format(a.format)).render(&run, &[]));
    Ok(ExitClass::Ok)
}

pub(super) fn cmd_export(g: &Global, a: &ExportArgs) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    let store = open_store(g, &config, OpenMode::Existing)?;
    let runs = if a.runs.is_empty() {
        store.all_runs().map_err(Failure::of_store)?
    } else {
        a.runs
            .iter()
            .map(|id| store.get_run(id))
            .collect::<Result<Vec<_>, _>>()
            .map_err(Failure::of_store)?
    };
    let text = ExportDoc::new(runs).to_json();
    match &a.out {
        None => print!("{text}"),
        Some(path) => write_atomically(path, &text)
            .map_err(|e| Failure::of_io(format!("cannot write {}", path.display()), e))?,
    }
    Ok(ExitClass::Ok)
}

pub(super) fn cmd_import(g: &Global, a: &ImportArgs) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    let options = ImportOptions {
        format: a.input_format,
        suite: a.suite.clone(),
        commit: a.commit.clone(),
        repo: std::env::current_dir().ok(),
        labels: pitwall_pipeline::labels::Labels::from_env(&config, &a.labels.request()),
    };
    // Read and validate every file before a store is opened.
    let request = ImportRequest::read(&config, &a.files, &options).map_err(Failure::of_import)?;
    let mut store = open_store(g, &config, OpenMode::Create)?;
    let outcome = import(&request, store.as_mut()).map_err(Failure::of_import)?;
    if !g.quiet {
        for w in &request.warnings {
            eprintln!("warning: {}", pitwall_reports::table::escape_controls(w));
        }
        eprintln!(
            "imported {} run(s), {} already stored, into {}",
            outcome.inserted,
            outcome.already,
            store.describe()
        );
    }
    announce_alerts(g, &config, &outcome.new_alerts);
    Ok(ExitClass::Ok)
}

pub(super) fn cmd_prune(g: &Global, a: &PruneArgs) -> Result<ExitClass, Failure> {
    use pitwall_pipeline::prune::{PruneRequest, prune};
    let config = load_config(g)?;
    super::context::database_only(g, &config, "`pitwall prune`")?;
    let mut store = open_store(g, &config, OpenMode::Existing)?;
    let request = PruneRequest {
        older_than_days: a.older_than,
        keep_summaries: a.keep_summaries,
        dry_run: a.dry_run,
        now: pitwall_schema::time::now_rfc3339(),
    };
    let out = prune(&request, store.as_mut()).map_err(Failure::of_prune)?;
    match a.format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&out).expect("outcomes serialize");
            s.push('\n');
            print!("{s}");
        }
        Format::Table => {
            let verb = if out.dry_run { "would prune" } else { "pruned" };
            let what = if a.keep_summaries {
                format!(
                    "{} run(s) summarized, {} raw sample(s) dropped, {} already summarized",
                    out.runs_summarized, out.samples_dropped, out.runs_already_summarized
                )
            } else {
                format!("{} run(s) deleted", out.runs_deleted)
            };
            println!(
                "{verb}: {} run(s) started before {} ({} days ago) in {}: {what}",
                out.old_runs,
                out.cutoff,
                a.older_than,
                store.describe()
            );
        }
    }
    Ok(ExitClass::Ok)
}

#[cfg(test)]
mod tests {
    use super::counted_branch;

    #[test]
    fn a_history_run_without_a_branch_counts_for_the_history_branch() {
        assert_eq!(counted_branch(None, Some("history"), "main"), "main");
        assert_eq!(counted_branch(None, None, "main"), "main");
        assert_eq!(counted_branch(Some("dev"), Some("history"), "main"), "dev");
        assert_eq!(counted_branch(None, Some("pr-head"), "main"), "-");
        assert_eq!(counted_branch(Some("main"), Some("local"), "main"), "-");
        assert_eq!(
            counted_branch(Some("main"), Some("calibration"), "main"),
            "-"
        );
        assert_eq!(
            counted_branch(Some("feat"), Some("pr-head"), "main"),
            "feat"
        );
    }
}
