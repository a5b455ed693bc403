//! One benchmark measure on every testbed side by side: the per-run medians of each testbed's
//! series of the same key and branch as one line each, over the time they were measured, so a
//! benchmark page shows how an H200 runner compares with an A100 one, or a runner with itself
//! after a driver upgrade, in one chart. Shown when the key has a history on two testbeds or
//! more.

use std::fmt::Write as _;

use pitwall_analysis::order::rfc3339_seconds;
use pitwall_schema::Run;

use super::model::Series;
use super::svg::{Scale, esc, frame, min_max};
use pitwall_analysis::number::DisplayUnit;

/// Most testbeds drawn (each has its own line style, `tb0`…`tb5` in style.css).
pub(crate) const MAX_TESTBEDS: usize = 6;

const W: f64 = 960.0;
const H: f64 = 320.0;
/// Margins: top, right, bottom, left.
const M: (f64, f64, f64, f64) = (24.0, 150.0, 36.0, 72.0);

/// The chart, or `None` when `s`'s key has a history on one testbed only.
pub(crate) fn testbeds(
    s: &Series,
    series: &[Series],
    runs: &[Run],
    unit: &DisplayUnit,
) -> Option<String> {
    let same: Vec<&Series> = series
        .iter()
        .filter(|t| t.key == s.key && t.branch == s.branch)
        .take(MAX_TESTBEDS)
        .collect();
    if same.len() < 2 {
        return None;
    }
    // (testbed, points as (seconds, median)), points in time order.
    let lines: Vec<(&str, Vec<(f64, f64)>)> = same
        .iter()
        .map(|t| {
            let mut pts: Vec<(f64, f64)> = t
                .points
                .iter()
                .filter_map(|p| Some((rfc3339_seconds(&runs[p.run].started_at)?, p.median)))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            (t.testbed.as_str(), pts)
        })
        .collect();
    let (t0, t1) = min_max(lines.iter().flat_map(|(_, p)| p.iter().map(|q| q.0)));
    let (lo, hi) = min_max(lines.iter().flat_map(|(_, p)| p.iter().map(|q| q.1)));
    if !t0.is_finite() || !lo.is_finite() {
        return None;
    }
    let (top, right, bottom, left) = M;
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg class="chart testbeds" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" aria-label="{} on every testbed">"#,
        esc(&s.key)
    );
    let ys = frame(&mut out, (lo, hi), unit, (W, H), M);
    let xs = Scale::new(t0, t1, left + 8.0, W - right - 8.0, false);
    for (i, (testbed, pts)) in lines.iter().enumerate() {
        let path: String = pts
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1} ", xs.at(*x), ys.at(*y)))
            .collect();
        let _ = write!(
            out,
            r#"<polyline class="median tb{i}" points="{path}"><title>{}</title></polyline>"#,
            esc(testbed)
        );
        let ly = top + 16.0 * i as f64 + 8.0;
        let _ = write!(
            out,
            r#"<line class="median tb{i}" x1="{:.1}" x2="{:.1}" y1="{ly:.1}" y2="{ly:.1}"/><text class="legend" x="{:.1}" y="{:.1}">{}</text>"#,
            W - right + 12.0,
            W - right + 32.0,
            W - right + 38.0,
            ly + 4.0,
            esc(testbed)
        );
    }
    let _ = write!(
        out,
        r#"<text class="axis" x="{:.1}" y="{:.1}" text-anchor="middle">time measured</text></svg>"#,
        (left + W - right) / 2.0,
        H - bottom / 3.0
    );
    Some(out)
}
