//! The rows every SQL store keeps (runs, results, samples) and how they become schema `Run`s
//! again, shared by the SQLite and PostgreSQL backends so both give back a run exactly as it
//! went in and report stored garbage the same way: as `StoreError::Corrupt` naming what is
//! wrong, never as a panic or a wrong answer.

use std::collections::BTreeMap;

use pitwall_schema::{
    BenchmarkResult, Direction, Fingerprint, PairInfo, ResultStatus, Run, RunRole, RunStatus,
    SampleMeta, SampleSummary, Unit,
};

use super::{RunSummary, StoreError};

pub(super) fn corrupt(store: &str, what: String) -> StoreError {
    StoreError::Corrupt {
        store: store.to_string(),
        what,
    }
}

/// JSON text of a value of the schema types; these always serialize.
pub(super) fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("schema types always serialize")
}

/// `sample_meta` as stored: one JSON text per sample, or NULL for every sample of a result
/// that has no metadata. (An empty `SampleMeta` is stored as `{}`, not NULL, so a result whose
/// metadata entries are all empty still comes back with them.)
pub(super) fn meta_json(result: &BenchmarkResult, idx: usize) -> Option<String> {
    result.sample_meta.get(idx).map(to_json)
}

/// `replicates` as stored: each sample's replicate, or NULL for every sample of a result whose
/// replicates are unknown (runs stored before they were recorded, foreign results).
pub(super) fn replicate(result: &BenchmarkResult, idx: usize) -> Option<i64> {
    result.replicates.get(idx).map(|&r| i64::from(r))
}

pub(super) fn parse_json<T: serde::de::DeserializeOwned>(
    store: &str,
    what: impl FnOnce() -> String,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| corrupt(store, format!("{}: {e}", what())))
}

/// The pair JSON of a run stored before rounds alternated their order, with that order made
/// explicit: every round base first (`round_orders` of `rounds` × `base_head`). `None` when
/// there is nothing to change: no rounds, orders already recorded, or text that does not parse
/// (left as it is, so a migration never makes a stored run worse).
pub(super) fn explicit_round_orders(pair_json: &str) -> Option<String> {
    let mut v: serde_json::Value = serde_json::from_str(pair_json).ok()?;
    let obj = v.as_object_mut()?;
    if obj.contains_key("round_orders") {
        return None;
    }
    let rounds = obj.get("rounds")?.as_u64()?;
    if rounds == 0 || rounds > 100_000 {
        return None;
    }
    obj.insert(
        "round_orders".into(),
        serde_json::Value::Array(vec!["base_head".into(); rounds as usize]),
    );
    serde_json::to_string(&v).ok()
}

/// The testbed and role a run stored before they were recorded is given by the migration that
/// added them (SQLite 4, PostgreSQL 3): the testbed its fingerprint implies (from the host
/// name and GPU, as for new runs without `[testbed] name`), and `pr-base`/`pr-head` for a side
/// of a pair, else `history`. Text that does not parse gives `unknown` and `history`; reading
/// the run later reports it as corrupt anyway.
pub(super) fn implied_labels(fingerprint_json: &str, pair_json: Option<&str>) -> (String, String) {
    let testbed = serde_json::from_str::<Fingerprint>(fingerprint_json)
        .map(|fp| pitwall_schema::default_testbed(&fp))
        .unwrap_or_else(|_| pitwall_schema::UNKNOWN_TESTBED.to_string());
    let pair = pair_json.and_then(|t| serde_json::from_str::<PairInfo>(t).ok());
    let role = RunRole::implied(pair.map(|p| p.role));
    (testbed, role.as_str().to_string())
}

/// One `runs` row, every column as stored.
pub(super) struct RunRow {
    pub project: String,
    pub commit: String,
    pub branch: Option<String>,
    pub testbed: Option<String>,
    pub role: Option<String>,
    pub started_at: String,
    pub finished_at: String,
    pub config_hash: String,
    pub status: String,
    pub fingerprint_json: String,
    pub commit_info_json: Option<String>,
    pub error: Option<String>,
    pub pair_json: Option<String>,
    /// `pitwall runs exclude`'s note and time (`Exclusion` JSON); NULL while included.
    pub exclusion_json: Option<String>,
    pub contention_json: Option<String>,
}

/// The JSON text of the default fingerprint, which a read without fingerprints gives each run.
pub(super) static DEFAULT_FINGERPRINT_JSON: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| to_json(&Fingerprint::default()));

impl RunRow {
    /// The row a run is stored as (without its results).
    pub fn of(run: &Run) -> RunRow {
        RunRow {
            project: run.project.clone(),
            commit: run.commit.clone(),
            branch: run.branch.clone(),
            testbed: run.testbed.clone(),
            role: run.role.map(|r| r.as_str().to_string()),
            started_at: run.started_at.clone(),
            finished_at: run.finished_at.clone(),
            config_hash: run.config_hash.clone(),
            status: run.status.as_str().to_string(),
            fingerprint_json: to_json(&run.fingerprint),
            commit_info_json: run.commit_info.as_ref().map(to_json),
            error: run.error.clone(),
            pair_json: run.pair.as_ref().map(to_json),
            exclusion_json: run.exclusion.as_ref().map(to_json),
            contention_json: run.contention.as_ref().map(to_json),
        }
    }

    /// Run `id` from this row and its results, checking every stored text.
    pub fn decode(
        self,
        store: &str,
        id: &str,
        results: Vec<BenchmarkResult>,
    ) -> Result<Run, StoreError> {
        let commit_info = self
            .commit_info_json
            .map(|text| parse_json(store, || format!("run {id}: commit_info_json"), &text))
            .transpose()?;
        let pair = self
            .pair_json
            .map(|text| parse_json(store, || format!("run {id}: pair_json"), &text))
            .transpose()?;
        let exclusion = self
            .exclusion_json
            .map(|text| parse_json(store, || format!("run {id}: exclusion_json"), &text))
            .transpose()?;
        let contention = self
            .contention_json
            .map(|text| parse_json(store, || format!("run {id}: contention_json"), &text))
            .transpose()?;
        let status = RunStatus::parse(&self.status).ok_or_else(|| {
            corrupt(
                store,
                format!("run {id}: unknown run status `{}`", self.status),
            )
        })?;
        let role = self
            .role
            .map(|r| {
                RunRole::parse(&r)
                    .ok_or_else(|| corrupt(store, format!("run {id}: unknown run role `{r}`")))
            })
            .transpose()?;
        // Reads that skip fingerprints (a history's) give every run the default's text: it
        // decodes to the default without being parsed again per run.
        let fingerprint: Fingerprint = if self.fingerprint_json == *DEFAULT_FINGERPRINT_JSON {
            Fingerprint::default()
        } else {
            parse_json(
                store,
                || format!("run {id}: fingerprint_json"),
                &self.fingerprint_json,
            )?
        };
        Ok(Run {
            contention,
            id: id.to_string(),
            project: self.project,
            commit: self.commit,
            branch: self.branch,
            testbed: self.testbed,
            role,
            started_at: self.started_at,
            finished_at: self.finished_at,
            config_hash: self.config_hash,
            fingerprint,
            status,
            commit_info,
            error: self.error,
            pair,
            exclusion,
            results,
        })
    }
}

/// Every run of a batch passes `Run::validate`, checked before anything is written.
pub(super) fn validate_all(store: &str, runs: &[Run]) -> Result<(), StoreError> {
    for run in runs {
        run.validate().map_err(|source| StoreError::Invalid {
            store: store.to_string(),
            source,
        })?;
    }
    Ok(())
}

/// What inserting `run` means when `stored` already has its id: nothing to do when identical
/// (byte-identical export is what "identical" means; imports are idempotent), else a conflict.
pub(super) fn already_stored(
    store: &str,
    stored: &Run,
    run: &Run,
) -> Result<super::InsertOutcome, StoreError> {
    if to_json(stored) == to_json(run) {
        Ok(super::InsertOutcome::AlreadyStored)
    } else {
        Err(StoreError::Conflict {
            store: store.to_string(),
            id: run.id.clone(),
        })
    }
}

/// One line of `list_runs` as queried: the run's columns and its result counts.
pub(super) struct SummaryRow {
    pub id: String,
    pub project: String,
    pub commit: String,
    pub branch: Option<String>,
    pub started_at: String,
    pub status: String,
    pub results: i64,
    pub failed_results: i64,
    pub pair_id: Option<String>,
    pub testbed: Option<String>,
    pub role: Option<String>,
    /// Whether the run is excluded from history.
    pub excluded: bool,
}

impl SummaryRow {
    pub fn decode(self, store: &str) -> Result<RunSummary, StoreError> {
        let status = RunStatus::parse(&self.status).ok_or_else(|| {
            corrupt(
                store,
                format!("run {}: unknown run status `{}`", self.id, self.status),
            )
        })?;
        Ok(RunSummary {
            id: self.id,
            project: self.project,
            commit: self.commit,
            branch: self.branch,
            started_at: self.started_at,
            status,
            results: self.results.max(0) as usize,
            failed_results: self.failed_results.max(0) as usize,
            pair_id: self.pair_id,
            testbed: self.testbed,
            role: self.role,
            excluded: self.excluded,
        })
    }
}

/// The benchmark key (`BenchmarkResult::key`) of a stored result's columns; parameters that
/// do not parse (a corrupt row, reported when the run is read) give the key without them.
pub(super) fn key_of(suite: &str, name: &str, params_json: &str, measure: &str) -> String {
    let params: BTreeMap<String, String> = serde_json::from_str(params_json).unwrap_or_default();
    pitwall_schema::schema::benchmark_key(suite, name, &params, measure)
}

/// A result's history point: the median of its finite samples with its 95% interval, the
/// range, the count and the throttled samples; for a pruned result, the summary kept in place
/// of its samples; `None` without a finite sample or a finite median. The same figures as
/// `pitwall_analysis::history::summarize` (checked against it in the pipeline's tests), kept
/// beside the samples so a history is read without them.
pub fn point_of(r: &BenchmarkResult) -> Option<SampleSummary> {
    if r.samples.is_empty() {
        return r.summary.clone();
    }
    let throttled = r.sample_meta.iter().filter(|m| m.throttled).count();
    point(r.samples.iter().copied(), throttled)
}

fn point(values: impl Iterator<Item = f64>, throttled: usize) -> Option<SampleSummary> {
    let mut sorted: Vec<f64> = values.filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = pitwall_stats::quantile_sorted(&sorted, 0.5).unwrap_or(f64::NAN);
    // Samples too far apart for a finite median (a failed result's `-1.7e308, 1.7e308`) have
    // no point: a non-finite figure would be stored as JSON null and never read back.
    if !median.is_finite() {
        return None;
    }
    Some(SampleSummary {
        n,
        median,
        median_ci: pitwall_stats::median_ci(&sorted).map(|(lo, hi)| [lo, hi]),
        min: sorted[0],
        max: sorted[n - 1],
        throttled,
    })
}

/// `point_json` of a stored result from its sample rows (value, meta_json) and its stored
/// summary (pruned), for the migration that adds the column.
pub(super) fn point_json_of_rows(
    samples: &[(f64, Option<String>)],
    summary_json: Option<&str>,
) -> Option<String> {
    if samples.is_empty() {
        return summary_json.map(str::to_string);
    }
    let throttled = samples
        .iter()
        .filter(|(_, meta)| {
            meta.as_deref()
                .and_then(|m| serde_json::from_str::<SampleMeta>(m).ok())
                .is_some_and(|m| m.throttled)
        })
        .count();
    point(samples.iter().map(|(v, _)| *v), throttled).map(|p| to_json(&p))
}

/// One `results` row before its samples are attached.
pub(super) struct ResultRow {
    pub id: i64,
    pub ord: i64,
    pub suite: String,
    pub name: String,
    pub params_json: String,
    pub measure: String,
    pub unit: String,
    pub direction: String,
    pub status: String,
    pub error: Option<String>,
    /// The summary left by `pitwall prune --keep-summaries` (migration 5); NULL while the raw
    /// samples are kept.
    pub summary_json: Option<String>,
}

/// One `samples` row, every column as stored.
pub(super) struct SampleRow {
    pub idx: i64,
    pub value: f64,
    /// Per-sample metadata; NULL for every sample of a result that has none.
    pub meta_json: Option<String>,
    /// The replicate (migration 3); NULL for every sample of a result without replicates.
    pub replicate: Option<i64>,
}

impl ResultRow {
    /// Result number `expected` of run `run_id` from this row and its sample rows (in index
    /// order), checking positions, enumerations and JSON.
    pub fn decode(
        self,
        store: &str,
        run_id: &str,
        expected: usize,
        samples: Vec<SampleRow>,
    ) -> Result<BenchmarkResult, StoreError> {
        let at = At {
            run_id,
            ord: self.ord,
        };
        if self.ord != expected as i64 {
            return Err(corrupt(
                store,
                format!("{at}: expected position {expected}"),
            ));
        }
        let params: BTreeMap<String, String> =
            parse_json(store, || format!("{at}: params_json"), &self.params_json)?;
        let direction = Direction::parse(&self.direction).ok_or_else(|| {
            corrupt(
                store,
                format!("{at}: unknown direction `{}`", self.direction),
            )
        })?;
        let status = ResultStatus::parse(&self.status)
            .ok_or_else(|| corrupt(store, format!("{at}: unknown status `{}`", self.status)))?;
        let Samples {
            samples,
            sample_meta,
            replicates,
        } = decode_samples(store, at, samples)?;
        let summary = match &self.summary_json {
            Some(text) => Some(parse_json(store, || format!("{at}: summary_json"), text)?),
            None => None,
        };
        Ok(BenchmarkResult {
            suite: self.suite,
            name: self.name,
            params,
            measure: self.measure,
            unit: Unit::new(self.unit),
            direction,
            status,
            error: self.error,
            samples,
            sample_meta,
            replicates,
            summary,
        })
    }
}

/// Where a result row is, for its errors (`run ID result N`): written only when one is said,
/// not for every row read.
#[derive(Clone, Copy)]
struct At<'a> {
    run_id: &'a str,
    ord: i64,
}

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "run {} result {}", self.run_id, self.ord)
    }
}

/// A result's sample columns, decoded.
struct Samples {
    samples: Vec<f64>,
    sample_meta: Vec<SampleMeta>,
    replicates: Vec<u32>,
}

/// Checks that the sample rows are numbered 0, 1, … and that metadata and replicates are each
/// either stored for every sample or for none.
fn decode_samples(store: &str, at: At<'_>, rows: Vec<SampleRow>) -> Result<Samples, StoreError> {
    let mut samples = Vec::with_capacity(rows.len());
    let mut metas = Vec::new();
    let mut replicates = Vec::new();
    let (mut meta_nulls, mut replicate_nulls) = (0usize, 0usize);
    for row in rows {
        let idx = row.idx;
        if idx != samples.len() as i64 {
            return Err(corrupt(
                store,
                format!(
                    "{at}: sample index {idx} where {} was expected",
                    samples.len()
                ),
            ));
        }
        samples.push(row.value);
        match row.meta_json {
            Some(text) => metas.push(parse_json(
                store,
                || format!("{at} sample {idx}: meta_json"),
                &text,
            )?),
            None => meta_nulls += 1,
        }
        match row.replicate {
            Some(r) => replicates.push(u32::try_from(r).map_err(|_| {
                corrupt(
                    store,
                    format!(
                        "{at} sample {idx}: replicate {r} is not between 0 and {}",
                        u32::MAX
                    ),
                )
            })?),
            None => replicate_nulls += 1,
        }
    }
    let n = samples.len();
    if meta_nulls > 0 && !metas.is_empty() {
        return Err(corrupt(
            store,
            format!("{at}: {meta_nulls} of {n} samples lack meta_json"),
        ));
    }
    if replicate_nulls > 0 && !replicates.is_empty() {
        return Err(corrupt(
            store,
            format!("{at}: {replicate_nulls} of {n} samples lack a replicate"),
        ));
    }
    Ok(Samples {
        samples,
        sample_meta: metas,
        replicates,
    })
}
