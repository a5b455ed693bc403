//! `pitwall compare`, `pitwall detect` and `pitwall env`: reading stored or given results and
//! the machine, changing nothing.

use std::path::Path;

use pitwall_host::gpu::load_nvml;
use pitwall_host::machine::{DirSysfs, ProcessAffinity};
use pitwall_pipeline::setup::{Mode, RunEnvironment};
use pitwall_pipeline::{compare, detect, source};
use pitwall_stats::ab::AbConfig;
use pitwall_stats::changepoint::DetectConfig;
use pitwall_store::OpenMode;
use std::sync::Arc;

use super::args::{CompareArgs, CompareFormat, DetectArgs, EnvArgs, Format, Global};
use super::context::{load_config, noise_book, open_store, resolve_side, store_for};
use super::exit::{ExitClass, Failure};

pub(super) fn cmd_compare(g: &Global, a: &CompareArgs) -> Result<ExitClass, Failure> {
    if let Some(t) = a.threshold {
        if !(t > 0.0 && t.is_finite()) {
            return Err(Failure::rejected(format!(
                "--threshold {t}: must be a positive percentage (hint: --threshold 2 means ±2%)"
            )));
        }
    }
    let config = load_config(g)?;
    let (store, (baseline, candidate)) = match (&a.baseline, &a.candidate) {
        (Some(b), Some(c)) => {
            let store = store_for(g, &config, b, c)?;
            let sides = (
                resolve_side("--baseline", b, store.as_deref(), a.input_format)?,
                resolve_side("--candidate", c, store.as_deref(), a.input_format)?,
            );
            (store, sides)
        }
        _ => {
            let store = open_store(g, &config, OpenMode::Existing)?;
            let pair = a.pair.as_deref().unwrap_or("latest");
            let sides = source::resolve_pair(pair, store.as_ref())
                .map_err(|e| Failure::of_pair("--pair", e))?;
            (Some(store), sides)
        }
    };
    let noise = noise_book(store.as_deref(), (&baseline, &candidate))?;
    let report = compare::compare(
        &baseline,
        &candidate,
        &config,
        a.threshold,
        &AbConfig::default(),
        compare::CompareOptions {
            allow_env_mismatch: a.allow_env_mismatch,
            exclude_throttled: a.exclude_throttled,
        },
        &noise,
    );
    let nothing_in_common = report.benchmarks.is_empty()
        && report.failed.is_empty()
        && report.skipped.is_empty()
        && report.incompatible.is_empty()
        && report.identical.is_empty();
    if nothing_in_common {
        return Err(Failure::rejected(format!(
            "{} and {} have no benchmark in common (hint: compare runs of the same suites)",
            baseline.label, candidate.label
        )));
    }
    let text = match a.format {
        CompareFormat::Table => pitwall_reports::compare::render_table(&report),
        CompareFormat::Json => pitwall_reports::compare::render_json(&report),
        CompareFormat::Markdown => pitwall_reports::compare::render_markdown(&report),
    };
    print!("{text}");
    // A pair whose code was all identical has its verdicts: `identical`, never a regression.
    if report.benchmarks.is_empty() && report.identical.is_empty() {
        // Printed above: what failed, was skipped or differs in unit; none of it is a verdict.
        return Err(Failure::rejected(format!(
            "{} and {} have no benchmark that could be compared (hint: see the lists above)",
            baseline.label, candidate.label
        )));
    }
    if report.incomparable {
        return Err(Failure::rejected(format!(
            "the runs are incomparable: {} (hint: --allow-env-mismatch compares anyway)",
            report.env_mismatch.join("; ")
        )));
    }
    Ok(ExitClass::of_comparison(&report))
}

pub(super) fn cmd_detect(g: &Global, a: &DetectArgs) -> Result<ExitClass, Failure> {
    let config = DetectConfig::default();
    let mut out = Vec::new();
    if !a.series.is_empty() {
        // Read every file first, so a bad one fails before any output.
        let mut series = Vec::new();
        for path in &a.series {
            series.push((
                path,
                detect::read_series_file(path).map_err(Failure::of_series)?,
            ));
        }
        for (path, values) in series {
            out.push(detect::detect_values(
                &path.display().to_string(),
                &values,
                &config,
            ));
        }
    }
    if let Some(pattern) = &a.benchmark {
        let cfg = load_config(g)?;
        let store = open_store(g, &cfg, OpenMode::Existing)?;
        let filter = detect::HistoryFilter {
            branch: a
                .branch
                .clone()
                .unwrap_or_else(|| cfg.history_branch.clone()),
            testbed: a.testbed.as_deref().map(pitwall_schema::sanitize_testbed),
        };
        let histories = detect::detect_history(store.as_ref(), pattern, &filter, &config)
            .map_err(Failure::of_store)?;
        if histories.is_empty() {
            let testbed = filter
                .testbed
                .as_deref()
                .map(|t| format!(" on testbed `{t}`"))
                .unwrap_or_default();
            return Err(Failure::rejected(format!(
                "no stored benchmark matches `{pattern}` in the history of branch `{}`{testbed} in {} (hint: --branch and --testbed choose another history; pull-request runs and the working tree's local runs are never history: `pitwall run --commit REV` measures a commit into it)",
                pitwall_reports::table::escape_controls(&filter.branch),
                store.describe()
            )));
        }
        out.extend(histories);
    }
    print!(
        "{}",
        match a.format {
            Format::Table => pitwall_reports::detect::render_table(&out),
            Format::Json => pitwall_reports::detect::render_json_lines(&out),
        }
    );
    Ok(ExitClass::Ok)
}

/// How long `pitwall env` samples the machine's contention.
const ENV_CONTENTION_SAMPLE: std::time::Duration = std::time::Duration::from_secs(1);

pub(super) fn cmd_env(g: &Global, a: &EnvArgs) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    let nvml = load_nvml().map(Arc::from);
    let env = RunEnvironment::prepare(
        &config,
        Path::new("/"),
        &DirSysfs::real(),
        &ProcessAffinity,
        nvml,
        Mode::Inspect,
    )
    .map_err(Failure::of_setup)?;
    // What the fingerprint holds of the environment is shown: nothing of a known secret.
    let redactor = super::context::redactor();
    let mut fingerprint = env.fingerprint.clone();
    if redactor.redact_serde(&mut fingerprint).is_err() {
        fingerprint.env.clear();
    }
    let warnings: Vec<String> = env.warnings.iter().map(|w| redactor.redact(w)).collect();
    // Contended now? The benchmark cpus (the pinning plan) sampled as a run samples them.
    let contention = env.sample_contention(ENV_CONTENTION_SAMPLE, &config.contended);
    match a.format {
        Format::Json => {
            let doc = serde_json::json!({
                "fingerprint": fingerprint,
                "warnings": warnings,
                "contention": contention,
            });
            println!(
                "{}",
                serde_json::to_string_pretty(&doc).expect("fingerprint serializes")
            );
        }
        Format::Table => {
            print!(
                "{}",
                pitwall_reports::env::render_env(&fingerprint, &warnings)
            );
            if let Some(c) = &contention {
                print!(
                    "\n{}",
                    pitwall_reports::env::render_contention(c, ENV_CONTENTION_SAMPLE.as_secs_f64())
                );
            }
        }
    }
    Ok(ExitClass::Ok)
}
