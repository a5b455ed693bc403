//! New alerts, said on the console: how many need attention, and the publish use case's
//! webhook and GitHub issues (`pitwall_pipeline::publish`), whose failures are warnings.

use pitwall_engine::config::Config;
use pitwall_pipeline::publish;
use pitwall_schema::Alert;

use super::args::Global;

/// Says on stderr how many new alerts need attention, posts the open ones to the webhook
/// `PITWALL_ALERT_WEBHOOK` names (when set) and opens a GitHub issue for each when
/// `[github] publish` names `issue`. A notification that fails is a warning: the runs and
/// alerts are stored, and `pitwall alerts` lists them.
pub fn announce_alerts(g: &Global, config: &Config, alerts: &[Alert]) {
    let open: Vec<Alert> = alerts
        .iter()
        .filter(|a| a.status.is_open())
        .cloned()
        .collect();
    if open.is_empty() {
        return;
    }
    if !g.quiet {
        eprintln!(
            "{} new alert(s) (hint: `pitwall alerts` lists them)",
            open.len()
        );
    }
    if let Some(Err(e)) = publish::alert_webhook(config, &open) {
        eprintln!("warning: {e}");
    }
    let vars = pitwall_forge::ci::CiVars::from_env();
    let warn = |w: &str| eprintln!("warning: {w}");
    match publish::alert_issues(config, &vars, &open, &warn) {
        Ok(outcomes) if !outcomes.is_empty() && !g.quiet => {
            let list: Vec<String> = outcomes.iter().map(ToString::to_string).collect();
            eprintln!("alert issue(s) {}", list.join(", "));
        }
        Ok(_) => {}
        Err(e) => eprintln!(
            "warning: cannot open alert issues: {}",
            pitwall_reports::table::escape_controls(&e)
        ),
    }
}
