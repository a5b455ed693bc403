//! Inline SVG charts written by hand (no charting library): index sparklines, the frame and
//! scales every chart shares (the history chart is in `history_chart`), the parameter-sweep
//! chart and comparison box plots. Every text that comes from data is XML-escaped here,
//! because the templates insert these as safe HTML.

use std::fmt::Write;

use super::model::Series;
use pitwall_analysis::number::{DisplayUnit, sig};

/// Most points a sparkline draws; longer histories are reduced to bucket medians.
pub(crate) const SPARK_POINTS: usize = 60;

/// XML/HTML text and attribute escaping; control characters (not allowed in XML 1.0, and
/// invisible anyway) are written as `\xNN`, as the terminal shows them.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && !matches!(c, '\n' | '\r' | '\t') => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            _ => out.push(c),
        }
    }
    out
}

/// Linear (or log) map from a data range onto a pixel range.
#[derive(Clone, Copy)]
pub(super) struct Scale {
    d0: f64,
    d1: f64,
    r0: f64,
    r1: f64,
    log: bool,
}

impl Scale {
    pub(super) fn new(lo: f64, hi: f64, r0: f64, r1: f64, log: bool) -> Scale {
        let (mut d0, mut d1) = if log {
            (lo.log2(), hi.log2())
        } else {
            (lo, hi)
        };
        if !(d1 - d0).is_normal() || d1 < d0 {
            let pad = if d0 == 0.0 { 1.0 } else { d0.abs() * 0.01 };
            d0 -= pad;
            d1 = d0 + 3.0 * pad;
        }
        Scale {
            d0,
            d1,
            r0,
            r1,
            log,
        }
    }

    pub(super) fn at(&self, v: f64) -> f64 {
        let v = if self.log { v.log2() } else { v };
        self.r0 + (v - self.d0) / (self.d1 - self.d0) * (self.r1 - self.r0)
    }
}

/// About `n` round tick values covering [lo, hi].
fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let span = hi - lo;
    if !span.is_normal() || span <= 0.0 {
        return vec![lo];
    }
    let raw = span / n as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 && out.len() < 50 {
        out.push(t);
        t += step;
    }
    out
}

/// A round tick value with no trailing zeros (`0.5`, `1`, `2.5`, `160`).
fn tick_text(t: f64) -> String {
    let s = sig(t, 3);
    if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Median of a non-empty slice (sorts a copy).
fn bucket_median(v: &[f64]) -> f64 {
    pitwall_stats::median(v).unwrap_or(f64::NAN)
}

/// Trend sparkline of the per-run medians, with the last change point marked.
pub(crate) fn sparkline(s: &Series) -> String {
    let medians: Vec<f64> = s.points.iter().map(|p| p.median).collect();
    let n = medians.len();
    if n == 0 {
        return String::new();
    }
    let buckets = n.clamp(1, SPARK_POINTS);
    let values: Vec<f64> = (0..buckets)
        .map(|b| {
            let lo = b * n / buckets;
            let hi = ((b + 1) * n / buckets).max(lo + 1);
            bucket_median(&medians[lo..hi])
        })
        .collect();
    let mark = s.changes.last().map(|cp| {
        let class = if s.is_worse(cp.rel_change) {
            "worse"
        } else {
            "better"
        };
        (cp.index as f64 * buckets as f64 / n as f64, class)
    });
    spark_svg(&values, mark)
}

/// A sparkline of `values` (at most [`SPARK_POINTS`] of them), with a change point's line at
/// `mark`: its x in points and its class (`worse`, `better`).
pub(crate) fn spark_svg(values: &[f64], mark: Option<(f64, &str)>) -> String {
    const W: f64 = 120.0;
    const H: f64 = 28.0;
    if values.is_empty() {
        return String::new();
    }
    let buckets = values.len();
    let (lo, hi) = min_max(values.iter().copied());
    let xs = Scale::new(0.0, (buckets.max(2) - 1) as f64, 2.0, W - 2.0, false);
    let ys = Scale::new(lo, hi, H - 3.0, 3.0, false);
    let mut out = format!(
        r#"<svg class="spark" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img"><polyline points=""#
    );
    for (i, v) in values.iter().enumerate() {
        let _ = write!(out, "{:.1},{:.1} ", xs.at(i as f64), ys.at(*v));
    }
    out.push_str(r#""/>"#);
    if let Some((at, class)) = mark {
        let x = xs.at(at);
        let _ = write!(
            out,
            r#"<line class="{class}" x1="{x:.1}" x2="{x:.1}" y1="0" y2="{H}"/>"#
        );
    }
    out.push_str("</svg>");
    out
}

pub(super) fn min_max(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        })
}

/// Chart frame: y grid with tick labels in `unit` (stored values in, shown values on the
/// ticks), and the unit's name above them. Returns the y scale, over stored values.
pub(super) fn frame(
    out: &mut String,
    (lo, hi): (f64, f64),
    unit: &DisplayUnit,
    (w, h): (f64, f64),
    m: (f64, f64, f64, f64),
) -> Scale {
    let (top, right, bottom, left) = m;
    let ys = Scale::new(lo, hi, h - bottom, top, false);
    // Round ticks in the shown unit, placed at the stored value they stand for.
    let (d0, d1) = (unit.scale(ys.d0), unit.scale(ys.d1));
    let per = if d1 != d0 {
        (ys.d1 - ys.d0) / (d1 - d0)
    } else {
        1.0
    };
    for t in ticks(d0, d1, 5) {
        let y = ys.at(ys.d0 + (t - d0) * per);
        let _ = write!(
            out,
            r#"<line class="grid" x1="{left}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            w - right,
            left - 6.0,
            y + 4.0,
            tick_text(t)
        );
    }
    let _ = write!(
        out,
        r#"<text class="axis unit" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
        left - 6.0,
        (top - 8.0).max(10.0),
        esc(unit.name())
    );
    ys
}

/// One point of a parameter sweep.
pub(crate) struct SweepPoint {
    pub x: f64,
    pub y: f64,
    pub label: String,
    pub current: bool,
}

/// Latest median against a numeric parameter, log2 x axis when the values span 8× or more.
pub(crate) fn sweep(points: &[SweepPoint], param: &str, unit: &str) -> String {
    let shown = DisplayUnit::for_value(unit, min_max(points.iter().map(|p| p.y)).1);
    const W: f64 = 640.0;
    const H: f64 = 260.0;
    let m = (16.0, 16.0, 40.0, 72.0);
    let (xlo, xhi) = min_max(points.iter().map(|p| p.x));
    let (ylo, yhi) = min_max(points.iter().map(|p| p.y));
    let log = xlo > 0.0 && xhi / xlo >= 8.0;
    let mut out = format!(
        r#"<svg class="chart sweep" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" aria-label="sweep over {}">"#,
        esc(param)
    );
    let pad = (yhi - ylo) * 0.08;
    let ys = frame(&mut out, (ylo - pad, yhi + pad), &shown, (W, H), m);
    let xs = Scale::new(xlo, xhi, m.3 + 12.0, W - m.1 - 12.0, log);
    out.push_str(r#"<polyline class="median" points=""#);
    for p in points {
        let _ = write!(out, "{:.1},{:.1} ", xs.at(p.x), ys.at(p.y));
    }
    out.push_str(r#""/>"#);
    let every = points.len().div_ceil(10).max(1);
    for (i, p) in points.iter().enumerate() {
        let _ = write!(
            out,
            r#"<circle class="pt{}" cx="{:.1}" cy="{:.1}" r="4"><title>{}={}: {}</title></circle>"#,
            if p.current { " cur" } else { "" },
            xs.at(p.x),
            ys.at(p.y),
            esc(param),
            esc(&p.label),
            esc(&shown.show(p.y)),
        );
        if i % every == 0 {
            // A label that would run past the chart's right edge ends there instead.
            let half = p.label.chars().count() as f64 * 3.5;
            let anchor = if xs.at(p.x) + half > W {
                "end"
            } else {
                "middle"
            };
            let _ = write!(
                out,
                r#"<text class="tick" x="{:.1}" y="{}" text-anchor="{anchor}">{}</text>"#,
                xs.at(p.x),
                H - m.2 + 16.0,
                esc(&p.label)
            );
        }
    }
    let _ = write!(
        out,
        r#"<text class="axis" x="{:.1}" y="{}" text-anchor="middle">{}{}</text></svg>"#,
        (m.3 + W - m.1) / 2.0,
        H - 6.0,
        esc(param),
        if log { " (log scale)" } else { "" }
    );
    out
}

/// Five-number summary of one side of a comparison.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Five {
    pub min: f64,
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
    pub max: f64,
    pub n: usize,
}

impl Five {
    pub fn of(samples: &[f64]) -> Option<Five> {
        let mut s: Vec<f64> = samples.iter().copied().filter(|v| v.is_finite()).collect();
        s.sort_by(f64::total_cmp);
        let q = |p| pitwall_stats::quantile_sorted(&s, p);
        Some(Five {
            min: q(0.0)?,
            q1: q(0.25)?,
            median: q(0.5)?,
            q3: q(0.75)?,
            max: q(1.0)?,
            n: s.len(),
        })
    }

    /// Only a median known (samples unavailable): a degenerate box.
    pub fn median_only(median: f64, n: usize) -> Five {
        Five {
            min: median,
            q1: median,
            median,
            q3: median,
            max: median,
            n,
        }
    }
}

/// Baseline and candidate box plots (min–max whiskers, quartile box, median) on one scale,
/// with an axis of round values in the display unit under them.
pub(crate) fn boxes(base: Five, cand: Five, unit: &DisplayUnit) -> String {
    const W: f64 = 300.0;
    const H: f64 = 62.0;
    const AXIS_Y: f64 = 42.0;
    let (lo, hi) = min_max([base.min, cand.min, base.max, cand.max].into_iter());
    let xs = Scale::new(lo, hi, 6.0, W - 6.0, false);
    let mut out =
        format!(r#"<svg class="boxes" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img">"#);
    for (side, f, y) in [("base", base, 11.0), ("cand", cand, 31.0)] {
        let _ = write!(
            out,
            r#"<g class="{side}"><title>{side}: median {}, quartiles {}–{}, min–max {}–{}, n={}</title><line x1="{:.1}" x2="{:.1}" y1="{y}" y2="{y}"/><rect x="{:.1}" y="{}" width="{:.1}" height="14"/><line class="med" x1="{:.1}" x2="{:.1}" y1="{}" y2="{}"/></g>"#,
            esc(&unit.show(f.median)),
            unit.num(f.q1),
            unit.num(f.q3),
            unit.num(f.min),
            unit.num(f.max),
            f.n,
            xs.at(f.min),
            xs.at(f.max),
            xs.at(f.q1),
            y - 7.0,
            (xs.at(f.q3) - xs.at(f.q1)).max(1.0),
            xs.at(f.median),
            xs.at(f.median),
            y - 8.0,
            y + 8.0,
        );
    }
    let _ = write!(
        out,
        r#"<g class="axis"><line x1="{:.1}" x2="{:.1}" y1="{AXIS_Y}" y2="{AXIS_Y}"/>"#,
        xs.at(lo),
        xs.at(hi)
    );
    let marks = ticks(unit.scale(lo), unit.scale(hi), 4);
    let last = marks.len().saturating_sub(1);
    for (i, t) in marks.into_iter().enumerate() {
        let x = xs.at(t * (unit.scale(1.0).recip()));
        let label = if i == last && !unit.name().is_empty() {
            format!("{} {}", tick_text(t), unit.name())
        } else {
            tick_text(t)
        };
        let anchor = match i {
            0 if last > 0 => "start",
            i if i == last && i > 0 => "end",
            _ => "middle",
        };
        let _ = write!(
            out,
            r#"<line x1="{x:.1}" x2="{x:.1}" y1="{AXIS_Y}" y2="{:.1}"/><text x="{x:.1}" y="{:.1}" text-anchor="{anchor}">{}</text>"#,
            AXIS_Y + 4.0,
            AXIS_Y + 15.0,
            esc(&label)
        );
    }
    out.push_str("</g></svg>");
    out
}

#[cfg(test)]
mod unit_tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(
            esc(r#"<a href="x">&'"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn ticks_are_round_and_cover() {
        let t = ticks(0.0, 100.0, 5);
        assert_eq!(t, vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(ticks(5.0, 5.0, 5), vec![5.0]);
    }

    #[test]
    fn tick_labels_have_no_trailing_zeros() {
        let shown: Vec<String> = [0.0, 0.5, 1.0, 2.5, 160.0, 0.025]
            .into_iter()
            .map(tick_text)
            .collect();
        assert_eq!(shown, ["0", "0.5", "1", "2.5", "160", "0.025"]);
    }

    #[test]
    fn degenerate_scale_does_not_divide_by_zero() {
        let s = Scale::new(3.0, 3.0, 0.0, 100.0, false);
        assert!(s.at(3.0).is_finite());
    }
}
