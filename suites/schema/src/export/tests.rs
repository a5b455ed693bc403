//! Tests of the export document: exact round trips, every version's tag and keys, and the
//! checks a run must pass; kept beside `export.rs` so that file stays about the document.

use super::*;
use crate::run::RunStatus;
use crate::run::tests::run;
use crate::schema::tests::result;
use crate::schema::{SampleMeta, SampleSummary};

#[test]
fn utc_timestamps() {
    for ok in [
        "2026-12-02T10:00:00Z",
        "2026-12-02T10:00:00.123456Z",
        "1999-01-31T23:59:60Z",
    ] {
        assert!(is_utc_rfc3339(ok), "{ok}");
    }
    for bad in [
        "2026-02-30T09:00:00Z",
        "2025-02-29T09:00:00Z",
        "2026-04-31T09:00:00Z",
        "yesterday",
        "2026-12-02",
        "2026-12-02T10:00:00",
        "2026-12-02T10:00:00+01:00",
        "2026-13-02T10:00:00Z",
        "2026-12-02T24:00:00Z",
        "2026-12-02T10:00:00.Z",
        "2026-12-02 10:00:00Z",
        "2026-12-0xT10:00:00Z",
        "２０２６-12-02T10:00:00Z",
    ] {
        assert!(!is_utc_rfc3339(bad), "{bad}");
    }
}

#[test]
fn export_round_trips_exactly() {
    let samples = vec![0.1 + 0.2, 1e-300, 123_456_789.123_456_79, 5e-324, f64::MAX];
    let mut with_replicates = result(samples.clone());
    with_replicates.name = "copy".into();
    with_replicates.replicates = vec![0, 0, 1, 1, u32::MAX];
    let doc = ExportDoc::new(vec![run(vec![result(samples), with_replicates])]);
    let text = doc.to_json();
    assert!(
        text.starts_with("{\n  \"schema\": \"pitwall/v3\",\n"),
        "{text}"
    );
    // Written only where known: once, for the second result.
    assert_eq!(text.matches("\"replicates\"").count(), 1, "{text}");
    let back = ExportDoc::from_json(&text).unwrap();
    assert_eq!(back, doc);
    assert_eq!(back.runs[0].results[1].replicates[4], u32::MAX);
    assert_eq!(back.to_json(), text);
}

#[test]
fn reads_v1_and_keeps_its_tag() {
    let v1 = ExportDoc::new(vec![run(vec![result(vec![1.0, 2.0])])])
        .to_json()
        .replace("pitwall/v3", "pitwall/v1");
    let doc = ExportDoc::from_json(&v1).unwrap();
    assert_eq!(doc.schema, SCHEMA_V1);
    assert!(doc.runs[0].results[0].replicates.is_empty());
    assert_eq!(doc.to_json(), v1, "a v1 document is written back unchanged");
}

#[test]
fn replicates_are_unknown_in_v1() {
    let mut r = result(vec![1.0, 2.0]);
    r.replicates = vec![0, 1];
    let v2 = ExportDoc::new(vec![run(vec![r])]).to_json();
    let v1 = v2.replace("pitwall/v3", "pitwall/v1");
    let line = v1
        .lines()
        .position(|l| l.contains("\"replicates\""))
        .unwrap()
        + 1;
    let e = ExportDoc::from_json(&v1).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "not valid JSON for schema pitwall/v1 at line {line}, column "
        )) && e.contains("unknown field `replicates` in schema pitwall/v1")
            && e.contains("hint: replicates are new in pitwall/v2"),
        "{e}"
    );
    // The key itself is what v1 lacks, even empty (pitwall never writes it empty).
    let doc = r#"{"schema":"pitwall/v1","runs":[RUN]}"#.replace(
        "RUN",
        &serde_json::to_string(&run(vec![result(vec![1.0])])).unwrap(),
    );
    ExportDoc::from_json(&doc).unwrap();
    let with_empty = doc.replace("\"samples\":[1.0]", "\"samples\":[1.0],\"replicates\":[]");
    assert_ne!(with_empty, doc);
    let e = ExportDoc::from_json(&with_empty).unwrap_err().to_string();
    assert!(
        e.contains("unknown field `replicates` in schema pitwall/v1"),
        "{e}"
    );
    // The same document as v2 is fine.
    let v2_empty = with_empty.replace("pitwall/v1", "pitwall/v2");
    assert!(
        ExportDoc::from_json(&v2_empty).unwrap().runs[0].results[0]
            .replicates
            .is_empty()
    );
}

#[test]
fn run_labels_are_new_in_v3() {
    let mut labelled = run(vec![result(vec![1.0])]);
    labelled.testbed = Some("h200-node07".into());
    labelled.role = Some(crate::run::RunRole::PrBase);
    let v3 = ExportDoc::new(vec![labelled]).to_json();
    let back = ExportDoc::from_json(&v3).unwrap();
    assert_eq!(back.runs[0].testbed.as_deref(), Some("h200-node07"));
    assert_eq!(back.to_json(), v3);
    assert!(v3.contains("\"role\": \"pr-base\""), "{v3}");
    for old in ["pitwall/v1", "pitwall/v2"] {
        let e = ExportDoc::from_json(&v3.replace("pitwall/v3", old))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!("not valid JSON for schema {old} at line "))
                && e.contains("a run's `testbed` and `role` are new in pitwall/v3"),
            "{e}"
        );
    }
    // An older document without them reads as before and keeps its tag.
    let v2 = ExportDoc::new(vec![run(vec![result(vec![1.0])])])
        .to_json()
        .replace("pitwall/v3", "pitwall/v2");
    let doc = ExportDoc::from_json(&v2).unwrap();
    assert_eq!((doc.schema.as_str(), doc.runs[0].role), (SCHEMA_V2, None));
    assert_eq!(doc.to_json(), v2);
}

#[test]
fn summaries_are_new_in_v4_and_stand_in_for_samples() {
    let summary = crate::schema::SampleSummary {
        n: 3,
        median: 2.0,
        median_ci: None,
        min: 1.0,
        max: 3.0,
        throttled: 0,
    };
    let mut pruned = result(Vec::new());
    pruned.summary = Some(summary.clone());
    let v4 = ExportDoc::new(vec![run(vec![pruned.clone()])]).to_json();
    assert!(v4.contains("\"schema\": \"pitwall/v4\""), "{v4}");
    assert_eq!(ExportDoc::from_json(&v4).unwrap().to_json(), v4);
    for old in ["pitwall/v1", "pitwall/v2", "pitwall/v3"] {
        let e = ExportDoc::from_json(&v4.replace("pitwall/v4", old))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a result's `summary` (a pruned result) is new in pitwall/v4"),
            "{old}: {e}"
        );
    }
    // A summary with samples, out of order, or on a failed result is refused.
    let mut both = pruned.clone();
    both.samples = vec![1.0];
    let mut disordered = pruned.clone();
    disordered.summary = Some(crate::schema::SampleSummary {
        min: 5.0,
        ..summary
    });
    let mut failed = pruned;
    failed.status = ResultStatus::Failed;
    for (bad, what) in [
        (both, "a summary (pruned) and raw samples at once"),
        (disordered, "summary out of order (min 5 median 2 max 3"),
        (failed, "status is not ok"),
    ] {
        let mut r = run(vec![bad]);
        r.status = RunStatus::from_results(&r.results);
        let e = r.validate().unwrap_err().to_string();
        assert!(e.contains(what), "{e}");
    }
}

#[test]
fn implausible_results_and_cycles_are_new_in_v5() {
    let mut implausible = result(vec![5.9e3, 6.0e3]);
    implausible.status = ResultStatus::Implausible;
    implausible.error = Some("x 5.9 TB/s > H200 HBM peak 4.8 TB/s".into());
    let mut r = run(vec![implausible, result(vec![1.0, 2.0])]);
    r.status = RunStatus::from_results(&r.results);
    assert_eq!(
        r.status,
        RunStatus::Partial,
        "an implausible result: partial"
    );
    let v5 = ExportDoc::new(vec![r]).to_json();
    assert!(v5.contains("\"schema\": \"pitwall/v5\""), "{v5}");
    assert!(v5.contains("\"status\": \"implausible\""), "{v5}");
    assert_eq!(ExportDoc::from_json(&v5).unwrap().to_json(), v5);
    for old in ["pitwall/v3", "pitwall/v4"] {
        let e = ExportDoc::from_json(&v5.replace("pitwall/v5", old))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("an `implausible` result or a sample's `cycles` is new in pitwall/v5"),
            "{old}: {e}"
        );
    }
    let mut with_cycles = result(vec![1.0]);
    with_cycles.sample_meta = vec![SampleMeta {
        sm_clock_mhz: Some(1590),
        cycles: Some(1.59),
        ..SampleMeta::default()
    }];
    let doc = ExportDoc::new(vec![run(vec![with_cycles])]);
    assert_eq!(doc.schema, crate::schema::SCHEMA_V5);
    // Without either, the document is what it was before.
    let plain = ExportDoc::new(vec![run(vec![result(vec![1.0])])]);
    assert_eq!(plain.schema, crate::schema::SCHEMA_V3);
}

#[test]
fn rejects_other_schema_and_bad_samples() {
    let text = ExportDoc::new(vec![])
        .to_json()
        .replace("pitwall/v3", "pitwall/v9");
    let e = ExportDoc::from_json(&text).unwrap_err();
    assert!(
        matches!(&e, SchemaError::Version(v) if v == "pitwall/v9"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "unsupported schema `pitwall/v9` (this pitwall reads `pitwall/v1`, `pitwall/v2`, `pitwall/v3`, `pitwall/v4`, `pitwall/v5`, `pitwall/v6`, `pitwall/v7` and `pitwall/v8`)"
    );
    // A newer document is refused for its version, not for the fields it added.
    let newer = r#"{"schema":"pitwall/v9","runs":[],"signature":"abc"}"#;
    assert!(matches!(
        ExportDoc::from_json(newer),
        Err(SchemaError::Version(_))
    ));
    // Without a readable tag, both versions are named.
    for broken in [r#"{"schema":"pitwall/v2","runs":["#, r#"{"runs":[]}"#] {
        let e = ExportDoc::from_json(broken).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "not valid JSON for schema pitwall/v1, pitwall/v2, pitwall/v3, pitwall/v4, pitwall/v5, pitwall/v6, pitwall/v7 or pitwall/v8 at line 1,"
            ),
            "{e}"
        );
    }
    let mut bad_id = run(vec![result(vec![1.0])]);
    bad_id.id = String::new();
    let text = ExportDoc::new(vec![bad_id.clone()]).to_json();
    let e = ExportDoc::from_json(&text).unwrap_err();
    assert_eq!(e.to_string(), "run 0: empty id");
    assert_eq!(bad_id.validate().unwrap_err().to_string(), "run: empty id");
    let text = ExportDoc::new(vec![run(vec![result(vec![1.0])])])
        .to_json()
        .replace("\"higher_is_better\"", "\"upwards\"");
    let e = ExportDoc::from_json(&text).unwrap_err().to_string();
    assert!(
        e.starts_with("not valid JSON for schema pitwall/v3 at line ")
            && e.contains(": unknown variant `upwards`"),
        "{e}"
    );
    assert_eq!(e.matches("line").count(), 1, "the position once: {e}");
    let mut r = run(vec![result(vec![1.0])]);
    r.results[0].sample_meta = vec![SampleMeta::default(); 2];
    assert!(
        r.validate()
            .unwrap_err()
            .to_string()
            .contains("2 sample_meta entries for 1 samples")
    );
    let mut r = run(vec![result(vec![1.0, 2.0, 3.0])]);
    r.results[0].replicates = vec![0, 1];
    assert_eq!(
        r.validate().unwrap_err().to_string(),
        format!(
            "run {}: kernel/gemm_f32[n=64]/throughput: 2 replicates entries for 3 samples",
            r.id
        )
    );
    r.results[0].replicates = vec![0, 1, 1];
    r.validate().unwrap();
    let text = ExportDoc::new(vec![r.clone()])
        .to_json()
        .replace("      1,\n            1\n", "      1\n");
    let e = ExportDoc::from_json(&text).unwrap_err().to_string();
    assert!(
        e.ends_with("2 replicates entries for 3 samples"),
        "{e}\n{text}"
    );
}

#[test]
fn leap_days_exist_only_in_leap_years() {
    assert!(is_utc_rfc3339("2024-02-29T09:00:00Z"));
    assert!(is_utc_rfc3339("2000-02-29T09:00:00Z"));
    assert!(!is_utc_rfc3339("1900-02-29T09:00:00Z"));
}

#[test]
fn import_refuses_what_cannot_be_true() {
    let msg = |r: &Run| r.validate().unwrap_err().to_string();
    // finished before started (also across a fraction and none).
    let mut r = run(vec![result(vec![1.0])]);
    r.started_at = "2026-12-02T10:00:00.5Z".into();
    r.finished_at = "2026-12-02T10:00:00Z".into();
    assert!(
        msg(&r).contains("finished_at `2026-12-02T10:00:00Z` is before started_at"),
        "{}",
        msg(&r)
    );
    r.finished_at = "2026-12-02T10:00:00.75Z".into();
    assert!(r.validate().is_ok());
    // A negative time; a negative throughput delta is not a time and stays allowed.
    let mut t = result(vec![1.0, -2.0]);
    t.unit = crate::schema::Unit::new("ns");
    t.measure = "time".into();
    let e = msg(&run(vec![t]));
    assert!(e.contains("sample 1 is a negative time (-2 ns)"), "{e}");
    assert!(run(vec![result(vec![-1.0])]).validate().is_ok());
    // Ids that would be paths or split a line.
    for (id, why) in [
        ("../../x", "starts with `.`"),
        ("a/b", "has characters other"),
        ("line\nbreak", "has characters other"),
    ] {
        let mut r = run(vec![result(vec![1.0])]);
        r.id = id.into();
        let e = msg(&r);
        assert!(e.contains(why), "{id}: {e}");
    }
    let mut r = run(vec![result(vec![1.0])]);
    r.id = "x".repeat(200);
    assert!(msg(&r).contains("longer than 128 characters"));
}

#[test]
fn imports_are_held_to_the_rules_of_fresh_runs() {
    let why = |r: &Run| r.validate().unwrap_err().to_string();
    // Testbeds: only names in the form pitwall writes them; `///` and `∅∅∅` would both be
    // written `unknown`, one series for two machines.
    for bad in ["a\nb", "../x", "<script>", "///", "∅∅∅", "H200 Node"] {
        let mut r = run(vec![result(vec![1.0])]);
        r.testbed = Some(bad.into());
        assert!(
            why(&r).contains("is not a testbed name"),
            "{bad}: {}",
            why(&r)
        );
        assert!(!why(&r).contains('\n'), "one line");
    }
    let mut r = run(vec![result(vec![1.0])]);
    r.testbed = Some("h200-node07".into());
    r.validate().unwrap();
    // Names that are no names (a kernel named `..`); control characters are shown escaped.
    for (field, value) in [("name", ".."), ("name", " "), ("suite", ".")] {
        let mut r = run(vec![result(vec![1.0])]);
        match field {
            "name" => r.results[0].name = value.into(),
            _ => r.results[0].suite = value.into(),
        }
        assert!(
            why(&r).starts_with(&format!("run {}: result 0: {field} ", r.id)),
            "{}",
            why(&r)
        );
    }
    let mut r = run(vec![result(vec![1.0])]);
    r.results[0].name = "a\nb\u{1b}[31m".into();
    r.validate().unwrap();
    r.branch = Some("main\nfake".into());
    assert!(
        why(&r).contains("branch \"main\\nfake\" has a control character"),
        "{}",
        why(&r)
    );
    // A status-ok result with samples too far apart for a median.
    let r = run(vec![result(vec![-1.7e308, 1.7e308, -1.7e308, 1.7e308])]);
    assert!(
        why(&r).contains("status ok, but samples from -1.7e308 to 1.7e308 span more"),
        "{}",
        why(&r)
    );
    // Summaries whose figures disagree.
    let pruned = |unit: &str, s: SampleSummary| {
        let mut res = result(Vec::new());
        res.unit = crate::schema::Unit::new(unit);
        res.summary = Some(s);
        run(vec![res])
    };
    let summary = |n: usize, median: f64, ci: Option<[f64; 2]>, min: f64, max: f64| SampleSummary {
        n,
        median,
        median_ci: ci,
        min,
        max,
        throttled: 0,
    };
    pruned("ns", summary(10, 5.0, Some([4.0, 6.0]), 3.0, 7.0))
        .validate()
        .unwrap();
    for (unit, s, says) in [
        ("ns", summary(10, -5.0, None, -7.0, -3.0), "negative time"),
        (
            "ns",
            summary(usize::MAX, 5.0, None, 3.0, 7.0),
            "more than the",
        ),
        (
            "ns",
            summary(10, 5.0, Some([6.0, 4.0]), 3.0, 7.0),
            "reversed",
        ),
        (
            "ns",
            summary(10, 5.0, Some([1.0, 6.0]), 3.0, 7.0),
            "reversed",
        ),
        (
            "ns",
            summary(10, 5.0, Some([4.0, 9.0]), 3.0, 7.0),
            "reversed",
        ),
        (
            "ns",
            summary(3, 5.0, Some([4.0, 6.0]), 3.0, 7.0),
            "only 3 samples",
        ),
    ] {
        let e = why(&pruned(unit, s));
        assert!(e.contains(says), "{says}: {e}");
    }
    // A negative throughput is no time: allowed.
    pruned("GB/s", summary(10, -5.0, None, -7.0, -3.0))
        .validate()
        .unwrap();
}

#[test]
fn round_orders_are_new_in_v6_and_older_pairs_still_read() {
    use crate::run::{PairInfo, PairRole, RoundOrder};
    let mut r = run(vec![result(vec![1.0, 2.0])]);
    r.pair = Some(PairInfo {
        id: "p".into(),
        role: PairRole::Base,
        rounds: 3,
        round_starts: vec![0, 1, 2],
        sequential: None,
        round_orders: vec![
            RoundOrder::BaseHead,
            RoundOrder::HeadBase,
            RoundOrder::BaseHead,
        ],
        identical: Vec::new(),
        measured_ms: None,
        saved_ms_estimate: None,
    });
    let v6 = ExportDoc::new(vec![r.clone()]).to_json();
    assert!(v6.contains("\"schema\": \"pitwall/v6\""), "{v6}");
    assert!(v6.contains("\"head_base\""), "{v6}");
    let back = ExportDoc::from_json(&v6).unwrap();
    assert_eq!(
        back.runs[0].pair.as_ref().unwrap().order_of(2),
        RoundOrder::HeadBase
    );
    assert_eq!(back.to_json(), v6);
    for old in [
        "pitwall/v1",
        "pitwall/v2",
        "pitwall/v3",
        "pitwall/v4",
        "pitwall/v5",
    ] {
        let e = ExportDoc::from_json(&v6.replace("pitwall/v6", old))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("a pair's `round_orders` is new in pitwall/v6"),
            "{old}: {e}"
        );
    }
    // One order per round, or none: a document with another count is refused, naming it.
    let wrong = v6.replacen("\"head_base\",", "", 1);
    let e = ExportDoc::from_json(&wrong).unwrap_err().to_string();
    assert!(e.contains("pair: 2 round orders for 3 rounds"), "{e}");
    // A pair from before the orders were recorded: v3 as before, read as base-head rounds.
    r.pair.as_mut().unwrap().round_orders.clear();
    let v3 = ExportDoc::new(vec![r]).to_json();
    assert!(v3.contains("\"schema\": \"pitwall/v3\""), "{v3}");
    let back = ExportDoc::from_json(&v3).unwrap();
    assert_eq!(
        back.runs[0].pair.as_ref().unwrap().order_of(2),
        RoundOrder::BaseHead
    );
}

#[test]
fn the_calibration_role_is_new_in_v7_and_older_documents_still_read() {
    use crate::run::RunRole;
    let mut r = run(vec![result(vec![1.0, 2.0])]);
    r.role = Some(RunRole::Calibration);
    let v7 = ExportDoc::new(vec![r.clone()]).to_json();
    assert!(v7.contains("\"schema\": \"pitwall/v7\""), "{v7}");
    assert!(v7.contains("\"role\": \"calibration\""), "{v7}");
    let back = ExportDoc::from_json(&v7).unwrap();
    assert_eq!(back.runs[0].role, Some(RunRole::Calibration));
    assert_eq!(back.to_json(), v7);
    for old in ["pitwall/v3", "pitwall/v6"] {
        let e = ExportDoc::from_json(&v7.replace("pitwall/v7", old))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("the role `calibration` is new in pitwall/v7"),
            "{old}: {e}"
        );
    }
    // Any other role exports as before.
    r.role = Some(RunRole::PrHead);
    let v3 = ExportDoc::new(vec![r]).to_json();
    assert!(v3.contains("\"schema\": \"pitwall/v3\""), "{v3}");
}

/// Issue 26 item 5: a pair that left identical code unmeasured is `pitwall/v7`; a document
/// declaring an older version with those fields is refused with a hint; v6 still reads.
#[test]
fn identical_code_is_new_in_v7() {
    use crate::identical::{IdenticalBasis, IdenticalCode};
    use crate::run::{PairInfo, PairRole, RoundOrder};
    let mut r = run(vec![result(vec![1.0, 2.0])]);
    r.pair = Some(PairInfo {
        id: "p".into(),
        role: PairRole::Head,
        rounds: 1,
        round_starts: vec![0],
        sequential: None,
        round_orders: vec![RoundOrder::BaseHead],
        identical: vec![IdenticalCode {
            suite: "kernels".into(),
            kernel: Some("saxpy".into()),
            basis: IdenticalBasis::Cubin,
        }],
        measured_ms: Some(240_000),
        saved_ms_estimate: Some(660_000),
    });
    let v7 = ExportDoc::new(vec![r.clone()]).to_json();
    assert!(v7.contains("\"schema\": \"pitwall/v7\""), "{v7}");
    assert!(v7.contains("\"basis\": \"cubin\""), "{v7}");
    let back = ExportDoc::from_json(&v7).unwrap();
    assert_eq!(back.runs[0], r);
    assert_eq!(back.to_json(), v7);
    for old in ["pitwall/v3", "pitwall/v5", "pitwall/v6"] {
        let e = ExportDoc::from_json(&v7.replace("pitwall/v7", old))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("are new in pitwall/v7 (hint: declare \"schema\": \"pitwall/v7\")"),
            "{old}: {e}"
        );
    }
    // Without them the pair is v6 as before.
    let p = r.pair.as_mut().unwrap();
    p.identical.clear();
    p.measured_ms = None;
    p.saved_ms_estimate = None;
    let v6 = ExportDoc::new(vec![r]).to_json();
    assert!(v6.contains("\"schema\": \"pitwall/v6\""), "{v6}");
    assert!(ExportDoc::from_json(&v6).is_ok());
}

/// Issue 27: the role `local`, an exclusion, a run's contention and a commit's first-parent
/// position are each new in v8; a document declaring v7 with one of them is refused naming it.
#[test]
fn issue_27_content_is_new_in_v8() {
    use crate::run::{CommitInfo, Exclusion, RunRole};
    let base = run(vec![result(vec![1.0, 2.0])]);
    let cases: Vec<(Run, &str)> = vec![
        (
            {
                let mut r = base.clone();
                r.role = Some(RunRole::Local);
                r
            },
            "the role `local` is new in pitwall/v8",
        ),
        (
            {
                let mut r = base.clone();
                r.exclusion = Some(Exclusion {
                    note: "busy".into(),
                    at: "2026-12-05T00:00:00Z".into(),
                });
                r
            },
            "a run's `exclusion` is new in pitwall/v8",
        ),
        (
            {
                let mut r = base.clone();
                r.contention = Some(crate::Contention::classified(
                    3,
                    Some(0.0),
                    None,
                    None,
                    None,
                    &crate::ContentionLimits {
                        runnable_threads: 0.5,
                        steal_pct: 2.0,
                        psi_some_pct: 10.0,
                    },
                ));
                r
            },
            "a run's `contention` is new in pitwall/v8",
        ),
        (
            {
                let mut r = base.clone();
                r.commit_info = Some(CommitInfo {
                    author: "a".into(),
                    date: "2026-12-05T00:00:00Z".into(),
                    subject: "s".into(),
                    first_parent_position: Some(7),
                });
                r
            },
            "a commit's `first_parent_position` is new in pitwall/v8",
        ),
    ];
    for (r, what) in cases {
        let v8 = ExportDoc::new(vec![r]).to_json();
        assert!(v8.contains("\"schema\": \"pitwall/v8\""), "{v8}");
        assert_eq!(ExportDoc::from_json(&v8).unwrap().to_json(), v8);
        let e = ExportDoc::from_json(&v8.replace("pitwall/v8", "pitwall/v7"))
            .unwrap_err()
            .to_string();
        assert!(e.contains(what), "{e}");
    }
}
