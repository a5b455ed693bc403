//! The history chart of a benchmark page, apart from the other charts because its x axis is
//! commits: points in commit order (as the analysis orders them), one label per commit that
//! fits (short sha over its subject, cut short; a working tree's start time), runs of one
//! commit sharing their label, and a single run drawn and labelled once. Every text that comes
//! from data is XML-escaped here, because the templates insert the chart as safe HTML.

use std::fmt::Write;

use pitwall_schema::Run;

use super::model::{Series, run_label, short_commit};
use super::svg::{Scale, esc, frame, min_max};
use pitwall_analysis::number::{DisplayUnit, pct, sig};

const W: f64 = 960.0;
const H: f64 = 360.0;
/// Margins: top, right, bottom (two lines of commit labels), left (value ticks).
const M: (f64, f64, f64, f64) = (28.0, 24.0, 50.0, 72.0);
/// Least distance between two commit labels' centres, in pixels: room for a 10-character sha
/// and a subject cut to [`SUBJECT_CHARS`].
const LABEL_GAP: f64 = 118.0;
/// Characters of a commit subject under its sha on the x axis (the tooltip has it whole).
pub(crate) const SUBJECT_CHARS: usize = 18;

/// `s` cut to `max` characters, the last one `…` when anything was cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A commit label on the x axis: where, and its two lines (not yet escaped).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct XLabel {
    pub x: f64,
    pub top: String,
    pub bottom: String,
}

/// What names a point's run on the axis: its commit's short sha and subject; for a run without
/// a commit (a working tree, an import) its label (`working tree`) and the minute it started,
/// so separate working-tree runs stay apart.
fn axis_name(run: &Run) -> (String, String) {
    let short = short_commit(&run.commit);
    let subject = run.commit_info.as_ref().map(|c| c.subject.trim());
    match subject {
        Some(sub) if short != run.commit || !sub.is_empty() => (
            truncate(short, 14),
            truncate(&sub.replace(char::is_control, " "), SUBJECT_CHARS),
        ),
        _ => {
            let label = run_label(run);
            let minute = label.strip_prefix(short).unwrap_or("").trim();
            // `2026-12-02 10:07` → `12-02 10:07`: the year rarely helps on an axis.
            let minute = minute.get(5..).unwrap_or(minute);
            (truncate(short, 14), minute.to_string())
        }
    }
}

/// The labels of the x axis: one per commit (adjacent runs of one commit share one, centred
/// under them), as many as fit [`LABEL_GAP`] apart, chosen from the newest back so the newest
/// commit is always named, and the oldest whenever it fits.
pub(crate) fn x_labels(s: &Series, runs: &[Run], x: &dyn Fn(usize) -> f64) -> Vec<XLabel> {
    let mut groups: Vec<(usize, usize, (String, String))> = Vec::new();
    for (i, p) in s.points.iter().enumerate() {
        let name = axis_name(&runs[p.run]);
        match groups.last_mut() {
            Some((_, last, n)) if *n == name => *last = i,
            _ => groups.push((i, i, name)),
        }
    }
    let label = |(first, last, (top, bottom)): (usize, usize, (String, String))| XLabel {
        x: (x(first) + x(last)) / 2.0,
        top,
        bottom,
    };
    let labels: Vec<XLabel> = groups.into_iter().map(label).collect();
    // The oldest commit is named too (the axis shows its range), unless it would crowd the
    // newest: the labels between keep their distance from it.
    let oldest_x = labels.first().map_or(f64::NEG_INFINITY, |o| o.x);
    let count = labels.len();
    let mut out: Vec<XLabel> = Vec::new();
    for (i, l) in labels.into_iter().enumerate().rev() {
        let clear_of_oldest = i == 0 || l.x - oldest_x >= LABEL_GAP || i + 1 == count;
        if clear_of_oldest && out.last().is_none_or(|n: &XLabel| n.x - l.x >= LABEL_GAP) {
            out.push(l);
        }
    }
    out.reverse();
    out
}

/// History of one benchmark over the runs, in commit order: raw min–max band, 95% interval
/// band of the median, median line, one marker per run (throttled runs in their own class)
/// with a tooltip, change points with their magnitude and commit range, and commit labels.
/// Values are shown in `unit`.
pub(crate) fn history(s: &Series, runs: &[Run], unit: &DisplayUnit) -> String {
    let m = M;
    let n = s.points.len();
    let (lo, hi) = min_max(
        s.points
            .iter()
            .flat_map(|p| [p.min, p.max])
            .chain(s.contended.iter().map(|c| c.point.median))
            .chain(s.excluded.iter().map(|c| c.point.median)),
    );
    let pad = (hi - lo) * 0.05;
    let mut out = format!(
        r#"<svg id="history" class="chart" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" aria-label="history of {}">"#,
        esc(&s.key)
    );
    let ys = frame(&mut out, (lo - pad, hi + pad), unit, (W, H), m);
    let xs = Scale::new(
        0.0,
        (n.max(2) - 1) as f64,
        m.3 + 12.0,
        W - m.1 - 12.0,
        false,
    );
    let x = |i: usize| {
        if n == 1 {
            (m.3 + W - m.1) / 2.0
        } else {
            xs.at(i as f64)
        }
    };
    draw_bands(&mut out, s, &x, &ys);
    out.push_str(r#"<polyline class="median" points=""#);
    for (i, p) in s.points.iter().enumerate() {
        let _ = write!(out, "{:.1},{:.1} ", x(i), ys.at(p.median));
    }
    out.push_str(r#""/>"#);
    draw_change_points(&mut out, s, runs, unit, &x);
    draw_points(&mut out, s, runs, unit, &x, &ys);
    let between = |after: usize| {
        // Half-way between the clean points around it; beside the only or last one.
        let half = if n == 1 { 24.0 } else { (x(1) - x(0)) / 2.0 };
        if after == 0 {
            x(0) - half.min(10.0)
        } else {
            x(after - 1) + half
        }
    };
    draw_contended(&mut out, s, runs, unit, &between, &ys);
    draw_x_labels(&mut out, s, runs, &x);
    out.push_str("</svg>");
    out
}

/// The raw min–max band and the 95% interval band of the median (bars for a single run).
fn draw_bands(out: &mut String, s: &Series, x: &dyn Fn(usize) -> f64, ys: &Scale) {
    let n = s.points.len();
    let band = |out: &mut String, class: &str, f: &dyn Fn(usize) -> (f64, f64)| {
        let _ = write!(out, r#"<path class="{class}" d=""#);
        for i in 0..n {
            let _ = write!(
                out,
                "{}{:.1},{:.1}",
                if i == 0 { "M" } else { "L" },
                x(i),
                ys.at(f(i).1)
            );
        }
        for i in (0..n).rev() {
            let _ = write!(out, "L{:.1},{:.1}", x(i), ys.at(f(i).0));
        }
        out.push_str(r#"Z"/>"#);
    };
    if let [p] = s.points.as_slice() {
        // One run has no bands to draw: its spread and interval as bars instead.
        let (cx, ci) = (x(0), p.ci.unwrap_or((p.median, p.median)));
        let _ = write!(
            out,
            r#"<line class="spread" x1="{cx:.1}" x2="{cx:.1}" y1="{:.1}" y2="{:.1}"/><rect class="ci" x="{:.1}" y="{:.1}" width="12" height="{:.1}"/>"#,
            ys.at(p.max),
            ys.at(p.min),
            cx - 6.0,
            ys.at(ci.1),
            (ys.at(ci.0) - ys.at(ci.1)).max(1.0),
        );
    }
    band(out, "spread", &|i| (s.points[i].min, s.points[i].max));
    band(out, "ci", &|i| {
        let p = &s.points[i];
        p.ci.unwrap_or((p.median, p.median))
    });
}

/// Each change point: a line between its two commits, its magnitude, and a tooltip with the
/// commit range, levels and p-value.
fn draw_change_points(
    out: &mut String,
    s: &Series,
    runs: &[Run],
    unit: &DisplayUnit,
    x: &dyn Fn(usize) -> f64,
) {
    let m = M;
    for cp in &s.changes {
        let cx = (x(cp.index - 1) + x(cp.index)) / 2.0;
        let class = if s.is_worse(cp.rel_change) {
            "worse"
        } else {
            "better"
        };
        let from = run_label(&runs[s.points[cp.index - 1].run]);
        let to = run_label(&runs[s.points[cp.index].run]);
        let sign = if cp.rel_change > 0.0 { "+" } else { "" };
        let _ = write!(
            out,
            r#"<g class="cp {class}"><title>change between {} and {}: {} → {} ({sign}{}, p={})</title><line x1="{cx:.1}" x2="{cx:.1}" y1="{}" y2="{}"/><text x="{:.1}" y="{}">{sign}{}</text></g>"#,
            esc(&from),
            esc(&to),
            unit.num(cp.before),
            esc(&unit.show(cp.after)),
            pct(cp.rel_change),
            sig(cp.p_value, 2),
            m.0,
            H - m.2,
            cx + 3.0,
            m.0 - 6.0,
            pct(cp.rel_change),
        );
    }
}

/// One marker per run (throttled runs in their own class) with its tooltip.
fn draw_points(
    out: &mut String,
    s: &Series,
    runs: &[Run],
    unit: &DisplayUnit,
    x: &dyn Fn(usize) -> f64,
    ys: &Scale,
) {
    for (i, p) in s.points.iter().enumerate() {
        let run = &runs[p.run];
        let subject = run
            .commit_info
            .as_ref()
            .map(|c| c.subject.as_str())
            .unwrap_or("");
        let ci =
            p.ci.map(|(a, b)| format!(" [95% CI {}–{}]", unit.num(a), unit.num(b)))
                .unwrap_or_default();
        let thr = if p.throttled > 0 {
            format!(", {} throttled", p.throttled)
        } else {
            String::new()
        };
        let _ = write!(
            out,
            r#"<circle class="pt{}" cx="{:.1}" cy="{:.1}" r="{}"><title>{} {}&#10;median {}{}&#10;min–max {}–{}, n={}{}&#10;{}</title></circle>"#,
            if p.throttled > 0 { " thr" } else { "" },
            x(i),
            ys.at(p.median),
            if p.throttled > 0 { 4 } else { 3 },
            esc(short_commit(&run.commit)),
            esc(subject),
            esc(&unit.show(p.median)),
            ci,
            unit.num(p.min),
            unit.num(p.max),
            p.n,
            thr,
            esc(&run.started_at),
        );
    }
}

/// The points of contended runs and of excluded ones, grey, each between the clean points of its
/// commit order, with why it is set apart; never joined to the median line.
fn draw_contended(
    out: &mut String,
    s: &Series,
    runs: &[Run],
    unit: &DisplayUnit,
    x: &dyn Fn(usize) -> f64,
    ys: &Scale,
) {
    let contended = s.contended.iter().map(|c| (c, "contended: "));
    for (c, why) in contended.chain(s.excluded.iter().map(|c| (c, ""))) {
        let run = &runs[c.point.run];
        let _ = write!(
            out,
            r#"<circle class="pt cont" cx="{:.1}" cy="{:.1}" r="3"><title>{} ({}{}; left out of change detection)&#10;median {}, n={}&#10;{}</title></circle>"#,
            x(c.after),
            ys.at(c.point.median),
            esc(short_commit(&run.commit)),
            why,
            esc(&c.reasons.join("; ")),
            esc(&unit.show(c.point.median)),
            c.point.n,
            esc(&run.started_at),
        );
    }
}

/// The commit labels of the x axis, anchored at an edge where centring would cut them.
fn draw_x_labels(out: &mut String, s: &Series, runs: &[Run], x: &dyn Fn(usize) -> f64) {
    let m = M;
    for l in x_labels(s, runs, x) {
        // Near an edge a label is anchored there instead of centred, so it stays inside.
        let anchor = if l.x - LABEL_GAP / 2.0 < 0.0 {
            "start"
        } else if l.x + LABEL_GAP / 2.0 > W {
            "end"
        } else {
            "middle"
        };
        let y = H - m.2;
        let _ = write!(
            out,
            r#"<g class="xl"><line x1="{x:.1}" x2="{x:.1}" y1="{y}" y2="{:.1}"/><text class="tick sha" x="{x:.1}" y="{:.1}" text-anchor="{anchor}">{}</text><text class="tick subj" x="{x:.1}" y="{:.1}" text-anchor="{anchor}">{}</text></g>"#,
            y + 4.0,
            y + 17.0,
            esc(&l.top),
            y + 31.0,
            esc(&l.bottom),
            x = l.x,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::model;
    use crate::html::synthetic;

    fn series_of(runs: &[Run]) -> Series {
        model::collect(runs, "main").remove(0)
    }

    fn labels(svg: &str) -> Vec<String> {
        svg.split(r#"<text class="tick sha""#)
            .skip(1)
            .map(|t| t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()].to_string())
            .collect()
    }

    #[test]
    fn contended_runs_are_grey_points_off_the_median_line() {
        let mut runs = synthetic::runs(1, 12, 5);
        for r in &mut runs[8..10] {
            r.contention = Some(pitwall_schema::Contention::classified(
                10,
                Some(2.0),
                None,
                None,
                None,
                &pitwall_schema::ContentionLimits {
                    runnable_threads: 0.5,
                    steal_pct: 2.0,
                    psi_some_pct: 10.0,
                },
            ));
        }
        let s = series_of(&runs);
        assert_eq!((s.points.len(), s.contended.len()), (10, 2));
        let svg = history(&s, &runs, &DisplayUnit::for_value(&s.unit, 1.0));
        assert_eq!(
            svg.matches(r#"<circle class="pt cont""#).count(),
            2,
            "{svg}"
        );
        assert!(
            svg.contains(
                "(contended: other runnable threads 2.0 ≥ 0.5; left out of change detection)"
            ),
            "{svg}"
        );
        let line = &svg[svg.find(r#"<polyline class="median""#).unwrap()..];
        let line = &line[..line.find("/>").unwrap()];
        assert_eq!(
            line.matches(',').count(),
            10,
            "the median line joins clean points only"
        );
    }

    #[test]
    fn one_run_is_labelled_once() {
        let mut runs = synthetic::runs(1, 1, 5);
        runs[0].commit = "working tree".into();
        runs[0].commit_info = None;
        runs[0].started_at = "2026-12-02T10:07:33Z".into();
        let s = series_of(&runs);
        let svg = history(&s, &runs, &DisplayUnit::for_value(&s.unit, 1.0));
        assert_eq!(labels(&svg), vec!["working tree"], "{svg}");
        assert!(!svg.contains("working treeworking tree"));
        assert!(svg.contains(">12-02 10:07</text>"), "{svg}");
        assert_eq!(svg.matches("<circle ").count(), 1);
    }

    #[test]
    fn many_commits_get_many_labels_with_subjects_cut_and_escaped() {
        let mut runs = synthetic::runs(1, 40, 5);
        runs[39].commit_info.as_mut().unwrap().subject =
            "<b>a very long subject that goes on</b> & on".into();
        let s = series_of(&runs);
        let svg = history(&s, &runs, &DisplayUnit::for_value(&s.unit, 1.0));
        let l = labels(&svg);
        assert!((6..=9).contains(&l.len()), "{l:?}");
        assert_eq!(
            l.last().unwrap(),
            short_commit(&runs[39].commit),
            "newest named"
        );
        assert!(svg.contains(">&lt;b&gt;a very long su…</text>"), "{svg}");
        assert!(!svg.contains("<b>"));
        // Labels never crowd each other.
        let xs: Vec<f64> = svg
            .split(r#"<g class="xl"><line x1=""#)
            .skip(1)
            .map(|t| t[..t.find('"').unwrap()].parse().unwrap())
            .collect();
        assert!(xs.windows(2).all(|w| w[1] - w[0] >= LABEL_GAP), "{xs:?}");
    }

    #[test]
    fn runs_of_one_commit_share_a_label() {
        let mut runs = synthetic::runs(1, 6, 5);
        let (commit, info) = (runs[2].commit.clone(), runs[2].commit_info.clone());
        for r in &mut runs[3..] {
            r.commit = commit.clone();
            r.commit_info = info.clone();
        }
        let s = series_of(&runs);
        let svg = history(&s, &runs, &DisplayUnit::for_value(&s.unit, 1.0));
        let l = labels(&svg);
        assert_eq!(l.last().unwrap(), short_commit(&runs[2].commit));
        assert_eq!(l.iter().filter(|t| **t == l[l.len() - 1]).count(), 1);
        // Runs of one commit are one point (issue 27).
        assert_eq!(svg.matches("<circle ").count(), 3);
    }

    #[test]
    fn truncation_counts_characters() {
        assert_eq!(truncate("µµµµ", 4), "µµµµ");
        assert_eq!(truncate("µµµµµ", 4), "µµµ…");
    }
}
