//! The orders people read results in, shared by every output: benchmarks in natural order
//! (numbers in names and parameters compare as numbers, so `bytes=2097152` comes before
//! `bytes=16777216`), and runs in the order of their commits (a history's x axis), not the order
//! they were stored in, so the base run of a `--base/--head` pair is not drawn as the newest.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use pitwall_schema::Run;

/// Compares text with runs of ASCII digits taken as whole numbers (`n=8` < `n=64`,
/// `gemm2` < `gemm10`); equal numbers with more leading zeros come after; the rest compares
/// character by character.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i].is_ascii_digit() && b[j].is_ascii_digit() {
            let (si, sj) = (i, j);
            while i < a.len() && a[i].is_ascii_digit() {
                i += 1;
            }
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let (da, db) = (&a[si..i], &b[sj..j]);
            let strip = |d: &[u8]| {
                let z = d.iter().take_while(|&&c| c == b'0').count();
                d[z.min(d.len().saturating_sub(1))..].to_vec()
            };
            let (na, nb) = (strip(da), strip(db));
            let ord = na
                .len()
                .cmp(&nb.len())
                .then_with(|| na.cmp(&nb))
                .then_with(|| da.len().cmp(&db.len()));
            if ord != Ordering::Equal {
                return ord;
            }
        } else {
            // Compare whole characters (UTF-8 sequences compare in code point order bytewise).
            if a[i] != b[j] {
                return a[i].cmp(&b[j]);
            }
            i += 1;
            j += 1;
        }
    }
    (a.len() - i).cmp(&(b.len() - j))
}

/// A parameter value as a number (`4096`, `1.5`, `64K`, `1M`, `2G` with binary multiples).
pub fn numeric_param(v: &str) -> Option<f64> {
    let v = v.trim();
    let (digits, mult) = match v.chars().last()? {
        'k' | 'K' => (&v[..v.len() - 1], 1024.0),
        'm' | 'M' => (&v[..v.len() - 1], 1024.0 * 1024.0),
        'g' | 'G' => (&v[..v.len() - 1], 1024.0 * 1024.0 * 1024.0),
        _ => (v, 1.0),
    };
    let x: f64 = digits.parse().ok()?;
    x.is_finite().then_some(x * mult)
}

/// Two parameter values: as numbers when both are (`64K` < `1M`), else in natural order.
pub fn param_cmp(a: &str, b: &str) -> Ordering {
    match (numeric_param(a), numeric_param(b)) {
        (Some(x), Some(y)) => x.total_cmp(&y).then_with(|| natural_cmp(a, b)),
        _ => natural_cmp(a, b),
    }
}

/// What identifies a benchmark measure, for ordering lists of them.
#[derive(Debug, Clone, Copy)]
pub struct BenchRef<'a> {
    pub suite: &'a str,
    pub name: &'a str,
    pub params: &'a BTreeMap<String, String>,
    pub measure: &'a str,
}

/// The order benchmark measures are listed in: suite, name, parameters (by name, then value as
/// [`param_cmp`]), measure; names in natural order.
pub fn bench_cmp(a: BenchRef<'_>, b: BenchRef<'_>) -> Ordering {
    natural_cmp(a.suite, b.suite)
        .then_with(|| natural_cmp(a.name, b.name))
        .then_with(|| {
            let mut pa = a.params.iter();
            let mut pb = b.params.iter();
            loop {
                match (pa.next(), pb.next()) {
                    (None, None) => return Ordering::Equal,
                    (None, Some(_)) => return Ordering::Less,
                    (Some(_), None) => return Ordering::Greater,
                    (Some((ka, va)), Some((kb, vb))) => {
                        let o = natural_cmp(ka, kb).then_with(|| param_cmp(va, vb));
                        if o != Ordering::Equal {
                            return o;
                        }
                    }
                }
            }
        })
        .then_with(|| natural_cmp(a.measure, b.measure))
}

/// Seconds since 1970 of an RFC 3339 time (`2026-12-02T10:00:00.5Z`, `…+01:00`); fractions of a
/// second are kept as the fraction. `None` when it is not one.
pub fn rfc3339_seconds(t: &str) -> Option<f64> {
    let b = t.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = t.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut k = 19;
    let mut frac = 0.0;
    if b.get(k) == Some(&b'.') {
        let start = k;
        k += 1;
        while b.get(k).is_some_and(u8::is_ascii_digit) {
            k += 1;
        }
        frac = t.get(start..k)?.parse::<f64>().ok()?;
    }
    let offset = match b.get(k)? {
        b'Z' | b'z' if k + 1 == b.len() => 0,
        c @ (b'+' | b'-') if k + 6 == b.len() && b[k + 3] == b':' => {
            let o = num(k + 1..k + 3)? * 3600 + num(k + 4..k + 6)? * 60;
            if *c == b'+' { o } else { -o }
        }
        _ => return None,
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let yy = if mo <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some((days * 86_400 + h * 3600 + mi * 60 + s - offset) as f64 + frac)
}

/// When a run's code was written, as far as the store knows: its commit's date when the run
/// has one, else the time the run started (a working tree, an import).
fn code_time(run: &Run) -> Option<f64> {
    run.commit_info
        .as_ref()
        .and_then(|c| rfc3339_seconds(&c.date))
        .or_else(|| rfc3339_seconds(&run.started_at))
}

/// Indices of `runs` (stored order) in commit order, the x axis of every history.
///
/// Runs whose commit records its first-parent position (`CommitInfo::first_parent_position`,
/// stored from a full clone) are in git's order: by position, which grows by one per commit
/// along a branch's first-parent history whatever the commit dates say (scripted commits that
/// share a second, rebased branches); runs of one commit keep their stored order. Runs without
/// one (imports without a repository, shallow clones, older stores) are in date order
/// ([`date_order`]) and are merged in among the positioned ones by date, each placed before
/// the first positioned run of a later date, so a store mixing both keeps every run's place as
/// far as the store can know it.
pub fn commit_order(runs: &[Run]) -> Vec<usize> {
    let position = |r: &Run| r.commit_info.as_ref().and_then(|c| c.first_parent_position);
    let dated = date_order(runs);
    let (mut placed, unplaced): (Vec<usize>, Vec<usize>) =
        dated.iter().partition(|&&i| position(&runs[i]).is_some());
    if unplaced.is_empty() || placed.is_empty() {
        placed.sort_by_key(|&i| position(&runs[i]));
        return if placed.is_empty() { dated } else { placed };
    }
    placed.sort_by_key(|&i| position(&runs[i]));
    let keys = date_keys(runs);
    let mut out = Vec::with_capacity(runs.len());
    let mut rest = unplaced.into_iter().peekable();
    for i in placed {
        while let Some(&u) = rest.peek() {
            if keys[u] < keys[i] {
                out.push(u);
                rest.next();
            } else {
                break;
            }
        }
        out.push(i);
    }
    out.extend(rest);
    out
}

/// Each run's date key (see `code_time`); a run without a readable time takes the key of the
/// run stored before it.
fn date_keys(runs: &[Run]) -> Vec<f64> {
    let mut last = f64::NEG_INFINITY;
    runs.iter()
        .map(|r| {
            if let Some(t) = code_time(r) {
                last = t;
            }
            last
        })
        .collect()
}

/// Indices of `runs` (stored order) by the commit's date, else the run's start (see
/// `code_time`); runs of the same time keep their stored order, and a run without any
/// readable time stays right after the run stored before it.
pub fn date_order(runs: &[Run]) -> Vec<usize> {
    let keys = date_keys(runs);
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| keys[a].total_cmp(&keys[b]));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_text_sort_as_numbers() {
        let mut v = vec![
            "bytes=16777216",
            "bytes=2097152",
            "bytes=262144",
            "bytes=8",
            "gemm10",
            "gemm2",
            "gemm",
            "bytes=08",
        ];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            v,
            [
                "bytes=8",
                "bytes=08",
                "bytes=262144",
                "bytes=2097152",
                "bytes=16777216",
                "gemm",
                "gemm2",
                "gemm10"
            ]
        );
        assert_eq!(natural_cmp("a", "a"), Ordering::Equal);
        assert_eq!(natural_cmp("µs1", "µs01"), Ordering::Less);
    }

    #[test]
    fn parameters_compare_by_value() {
        assert_eq!(param_cmp("64K", "1M"), Ordering::Less);
        assert_eq!(param_cmp("1.5", "1.25"), Ordering::Greater);
        assert_eq!(param_cmp("f16", "f32"), Ordering::Less);
        assert_eq!(numeric_param("64K"), Some(65536.0));
        assert_eq!(numeric_param("f32"), None);
        assert_eq!(numeric_param(""), None);
        let p = |v: &str| BTreeMap::from([("bytes".to_string(), v.to_string())]);
        let (a, b) = (p("16777216"), p("2097152"));
        let r = |params| BenchRef {
            suite: "nccl",
            name: "all_reduce",
            params,
            measure: "busbw",
        };
        assert_eq!(bench_cmp(r(&a), r(&b)), Ordering::Greater);
    }

    #[test]
    fn rfc3339_times_with_offsets() {
        assert_eq!(rfc3339_seconds("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(
            rfc3339_seconds("2026-12-02T10:00:00+01:00"),
            rfc3339_seconds("2026-12-02T09:00:00Z")
        );
        assert_eq!(
            rfc3339_seconds("2000-03-01T00:00:01.5Z"),
            Some(951_868_801.5)
        );
        assert_eq!(rfc3339_seconds("working tree"), None);
        assert_eq!(rfc3339_seconds("2026-13-02T10:00:00Z"), None);
    }
}
