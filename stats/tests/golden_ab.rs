//! Checks the A/B tests against SciPy: the golden values in `stats/golden/*.json` come from
//! `stats/golden/gen_golden.py` (SciPy 1.17), embedded here so the tests run offline.
//!
//! Tolerance: 1e-9 relative for every p-value, t and df (plus 1e-300 absolute for p-values that
//! underflow), 1e-12 for BH q-values. The exact MWU tail is an exact integer ratio and the
//! normal tails use erfc, so agreement is to a few ulps in practice.

use pitwall_stats::ab::{Alternative, MwuMethod, benjamini_hochberg, mann_whitney_u, welch_t_test};
use serde_json::Value;

const MWU: &str = include_str!("../golden/mwu.json");
const WELCH: &str = include_str!("../golden/welch.json");
const BH: &str = include_str!("../golden/bh.json");

fn cases(json: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(json).unwrap();
    v["cases"].as_array().unwrap().clone()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn close(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want.abs().max(got.abs()) + 1e-300
}

#[test]
fn mann_whitney_matches_scipy() {
    let cases = cases(MWU);
    assert!(cases.len() >= 20);
    let mut failures = Vec::new();
    for c in &cases {
        let name = c["name"].as_str().unwrap();
        let (x, y) = (floats(&c["x"]), floats(&c["y"]));
        for (key, alt) in [
            ("two_sided", Alternative::TwoSided),
            ("greater", Alternative::Greater),
            ("less", Alternative::Less),
        ] {
            let r = mann_whitney_u(&x, &y, alt).unwrap();
            let want = c["p"][key].as_f64().unwrap();
            if !close(r.p_value, want, 1e-9) {
                failures.push(format!("{name} {key}: got {} want {want}", r.p_value));
            }
            assert_eq!(r.u1, c["u1"].as_f64().unwrap(), "{name}");
            let method = match r.method {
                MwuMethod::Exact => "exact",
                MwuMethod::Asymptotic => "asymptotic",
            };
            assert_eq!(method, c["method"].as_str().unwrap(), "{name}");
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn welch_matches_scipy() {
    let cases = cases(WELCH);
    assert!(cases.len() >= 20);
    let mut failures = Vec::new();
    for c in &cases {
        let name = c["name"].as_str().unwrap();
        let r = welch_t_test(&floats(&c["x"]), &floats(&c["y"])).unwrap();
        let (t, df, p) = (
            c["t"].as_f64().unwrap(),
            c["df"].as_f64().unwrap(),
            c["p"].as_f64().unwrap(),
        );
        if !close(r.t, t, 1e-9) || !close(r.df, df, 1e-9) || !close(r.p_value, p, 1e-9) {
            failures.push(format!(
                "{name}: got t {} df {} p {}, want {t} {df} {p}",
                r.t, r.df, r.p_value
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn benjamini_hochberg_matches_scipy() {
    let cases = cases(BH);
    assert!(cases.len() >= 20);
    for c in &cases {
        let name = c["name"].as_str().unwrap();
        let q = benjamini_hochberg(&floats(&c["p"]));
        for (got, want) in q.iter().zip(floats(&c["q"])) {
            assert!(close(*got, want, 1e-12), "{name}: got {got} want {want}");
        }
    }
}
