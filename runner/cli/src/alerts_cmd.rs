//! `pitwall alerts` and `pitwall alert ack|dismiss|fix|expect ID`: the alerts detection keeps
//! in the store, listed (open first) and triaged. Detection itself happens when history runs
//! are stored (`run`, `import`); these commands only read and update what it found.

use pitwall_pipeline::alerts::{self, AlertQuery, TriageError, TriageRequest};
use pitwall_pipeline::measure::bisect;
use pitwall_schema::AlertStatus;
use pitwall_schema::time::now_rfc3339;
use pitwall_store::OpenMode;

use super::args::{
    AlertAction, AlertArgs, AlertBisectArgs, AlertShowArgs, AlertStatusArg, AlertsArgs, Format,
    Global,
};
use super::context::{current_dir, load_config, open_store};
use super::exit::{ExitClass, Failure};
use super::measuring::measuring;

fn status_of(arg: AlertStatusArg) -> AlertStatus {
    match arg {
        AlertStatusArg::Active => AlertStatus::Active,
        AlertStatusArg::Suspected => AlertStatus::Suspected,
        AlertStatusArg::Acknowledged => AlertStatus::Acknowledged,
        AlertStatusArg::Dismissed => AlertStatus::Dismissed,
        AlertStatusArg::Fixed => AlertStatus::Fixed,
        AlertStatusArg::Expected => AlertStatus::Expected,
        AlertStatusArg::Improvement => AlertStatus::Improvement,
    }
}

/// `pitwall alerts`: the stored alerts the flags admit, open ones first.
pub(super) fn cmd_alerts(g: &Global, a: &AlertsArgs) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    let store = open_store(g, &config, OpenMode::Existing)?;
    let query = AlertQuery {
        status: a.status.map(status_of),
        testbed: a.testbed.as_deref().map(pitwall_schema::sanitize_testbed),
        branch: a.branch.clone(),
    };
    let listed = alerts::list(store.as_ref(), &query).map_err(Failure::of_store)?;
    print!(
        "{}",
        match a.format {
            Format::Table => pitwall_reports::alerts::render_table(&listed),
            Format::Json => pitwall_reports::alerts::render_json(&listed),
        }
    );
    Ok(ExitClass::Ok)
}

/// `pitwall alert ack|dismiss|fix|expect ID [--note TEXT]`.
pub(super) fn cmd_alert(g: &Global, a: &AlertArgs) -> Result<ExitClass, Failure> {
    let (status, args) = match &a.action {
        AlertAction::Bisect(b) => return cmd_alert_bisect(g, b),
        AlertAction::Show(a) => return cmd_alert_show(g, a),
        AlertAction::Ack(t) => (AlertStatus::Acknowledged, t),
        AlertAction::Dismiss(t) => (AlertStatus::Dismissed, t),
        AlertAction::Fix(t) => (AlertStatus::Fixed, t),
        AlertAction::Expect(t) => (AlertStatus::Expected, t),
    };
    let config = load_config(g)?;
    let mut store = open_store(g, &config, OpenMode::Existing)?;
    let request = TriageRequest {
        id: args.id.clone(),
        status,
        note: args.note.clone(),
        by: Some(local_user()),
    };
    let alert = alerts::triage(store.as_mut(), &request, &now_rfc3339()).map_err(|e| match e {
        TriageError::Store(e) => Failure::of_store(e),
        e @ (TriageError::NotTriage(_) | TriageError::NoteTooLong { .. }) => {
            Failure::rejected(e.to_string())
        }
    })?;
    if !g.quiet {
        print!("{}", pitwall_reports::alerts::render_triaged(&alert));
    }
    Ok(ExitClass::Ok)
}

/// `pitwall alert bisect ID`: the bisect use case over the alert's commit range, for its
/// benchmark, on its testbed; the first bad commit found is kept on the alert as its culprit.
fn cmd_alert_bisect(g: &Global, a: &AlertBisectArgs) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    let mut store = open_store(g, &config, OpenMode::Existing)?;
    let alert = alerts::find(store.as_ref(), &a.id).map_err(Failure::of_store)?;
    let here = alerts::this_testbed(&config);
    let request = alerts::bisect_request(
        &alert,
        &here,
        a.search.rounds,
        a.search.max_rounds,
        a.search.rebuild,
    )
    .map_err(|e| Failure::rejected(e.to_string()))?;
    let repo = match &a.search.repo {
        Some(r) => r.clone(),
        None => current_dir()?,
    };
    // A bisection stores no runs.
    let report = measuring(g, &config, Default::default(), None, |m| {
        bisect(m, &repo, &request)
    })?;
    let report = report.map_err(Failure::of_measure)?;
    let stored = alerts::record_culprit(
        store.as_mut(),
        &alert.id,
        &report.first_bad.sha,
        &now_rfc3339(),
        &local_user(),
    )
    .map_err(Failure::of_store)?;
    print!(
        "{}",
        match a.search.format {
            Format::Table => pitwall_reports::bisect::render_table(&report),
            Format::Json => pitwall_reports::bisect::render_json(&report),
        }
    );
    if !g.quiet {
        eprintln!(
            "alert {}: culprit {} recorded{}",
            stored.id,
            pitwall_reports::alerts::short(&report.first_bad.sha),
            if report.uncertain { " (uncertain)" } else { "" }
        );
    }
    Ok(ExitClass::Ok)
}

/// This command line's user, as an alert's changes record them (`local:USER`).
fn local_user() -> String {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .ok();
    alerts::local_actor(user.as_deref())
}

/// `pitwall alert show ID [--format json]`.
fn cmd_alert_show(g: &Global, a: &AlertShowArgs) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    let store = open_store(g, &config, OpenMode::Existing)?;
    let alert = alerts::find(store.as_ref(), &a.id).map_err(Failure::of_store)?;
    let changes = store.alert_changes(&alert.id).map_err(Failure::of_store)?;
    let out = match a.format {
        Format::Table => pitwall_reports::alerts::render_show_table(&alert, &changes),
        Format::Json => pitwall_reports::alerts::render_show_json(&alert, &changes),
    };
    print!("{out}");
    Ok(ExitClass::Ok)
}
