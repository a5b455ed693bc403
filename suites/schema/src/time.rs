//! Instants as pitwall writes and reads them: RFC 3339 text (written in UTC with `Z`; read with
//! `Z` or a numeric offset) and seconds since the Unix epoch, over the proleptic Gregorian
//! calendar. The day arithmetic is H. Hinnant's `days_from_civil` / `civil_from_days`
//! ("chrono-Compatible Low-Level Date Algorithms", 2013), exact for every year written here.
//!
//! No date library: pitwall needs timestamps and fixed offsets only, no time zones, and a
//! date crate was a few percent of the release build (docs/PERFORMANCE.md "Build time").

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// An instant: whole seconds since 1970-01-01T00:00:00Z and nanoseconds after them. Ordered
/// by time; written (`Display`) as RFC 3339 UTC with the fraction it has (none when whole).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct UnixTime {
    pub secs: i64,
    pub nanos: u32,
}

/// Seconds from 1970-01-01 to 0000-01-01 and to 10000-01-01: the years RFC 3339 can write.
const MIN_SECS: i64 = -62_167_219_200;
const MAX_SECS_EXCLUSIVE: i64 = 253_402_300_800;
const SECS_PER_DAY: i64 = 86_400;

impl UnixTime {
    /// The system clock's time (the epoch itself if the clock is before it).
    pub fn now() -> Self {
        let d = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        UnixTime {
            secs: d.as_secs() as i64,
            nanos: d.subsec_nanos(),
        }
    }

    /// `secs` seconds earlier; `None` before year 0000.
    pub fn checked_sub_secs(self, secs: i64) -> Option<Self> {
        let s = self.secs.checked_sub(secs)?;
        (s >= MIN_SECS).then_some(UnixTime { secs: s, ..self })
    }

    /// Parses RFC 3339 (`2026-12-02T10:00:00.5Z`, `…+01:00`): four-digit year, a real calendar
    /// date, hours below 24, a leap second `:60` read as `:59`, a fraction of 1–9 digits, `T`
    /// or `t`, and `Z`, `z` or `±HH:MM`. `None` for anything else.
    pub fn parse(s: &str) -> Option<Self> {
        let b = s.as_bytes();
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let part = b.get(r)?;
            part.iter()
                .all(u8::is_ascii_digit)
                .then(|| part.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
        };
        if b.len() < 20
            || b[4] != b'-'
            || b[7] != b'-'
            || !matches!(b[10], b'T' | b't')
            || b[13] != b':'
            || b[16] != b':'
        {
            return None;
        }
        let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if !(1..=12).contains(&mo) || d < 1 || d > i64::from(days_in_month(y, mo as u32)) {
            return None;
        }
        if h > 23 || mi > 59 || sec > 60 {
            return None;
        }
        let mut i = 19;
        let mut nanos = 0u32;
        if b[i] == b'.' {
            let start = i + 1;
            let mut end = start;
            while end < b.len() && b[end].is_ascii_digit() {
                end += 1;
            }
            let digits = end - start;
            if !(1..=9).contains(&digits) {
                return None;
            }
            nanos = num(start..end)? as u32 * 10u32.pow((9 - digits) as u32);
            i = end;
        }
        let offset_secs = match &b[i..] {
            [b'Z' | b'z'] => 0,
            [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
                let (oh, om) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
                if oh > 23 || om > 59 {
                    return None;
                }
                let off = oh * 3600 + om * 60;
                if *sign == b'-' { -off } else { off }
            }
            _ => return None,
        };
        let secs = days_from_civil(y, mo as u32, d as u32) * SECS_PER_DAY
            + h * 3600
            + mi * 60
            + sec.min(59)
            - offset_secs;
        Some(UnixTime { secs, nanos })
    }

    /// RFC 3339 UTC with exactly `digits` (0–9) fraction digits; `None` outside years
    /// 0000–9999.
    pub fn to_rfc3339(self, digits: usize) -> Option<String> {
        let digits = digits.min(9);
        let mut out = civil_text(self.secs)?;
        if digits > 0 {
            let frac = format!("{:09}", self.nanos);
            out.push('.');
            out.push_str(&frac[..digits]);
        }
        out.push('Z');
        Some(out)
    }
}

impl fmt::Display for UnixTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The fraction's digits without its trailing zeros.
        let (mut digits, mut rest) = (9, self.nanos);
        while digits > 0 && rest % 10 == 0 {
            (digits, rest) = (digits - 1, rest / 10);
        }
        match self.to_rfc3339(digits) {
            Some(text) => f.write_str(&text),
            None => write!(f, "{}s since 1970-01-01T00:00:00Z", self.secs),
        }
    }
}

/// The current UTC time, RFC 3339 with microseconds: the form of every time pitwall stores.
pub fn now_rfc3339() -> String {
    UnixTime::now()
        .to_rfc3339(6)
        .expect("the system clock is within years 0000-9999")
}

/// `secs` since the epoch as local time at a fixed offset east of UTC, RFC 3339 with the
/// offset (`2026-12-02T11:00:00+01:00`), as git records an author's time. `None` outside years
/// 0000–9999 or for an offset beyond ±23:59.
pub fn rfc3339_at_offset(secs: i64, offset_minutes: i32) -> Option<String> {
    if offset_minutes.unsigned_abs() >= 24 * 60 {
        return None;
    }
    let mut out = civil_text(secs.checked_add(i64::from(offset_minutes) * 60)?)?;
    let sign = if offset_minutes < 0 { '-' } else { '+' };
    let m = offset_minutes.unsigned_abs();
    out.push_str(&format!("{sign}{:02}:{:02}", m / 60, m % 60));
    Some(out)
}

/// `YYYY-MM-DDTHH:MM:SS` of `secs` since the epoch; `None` outside years 0000–9999.
fn civil_text(secs: i64) -> Option<String> {
    if !(MIN_SECS..MAX_SECS_EXCLUSIVE).contains(&secs) {
        return None;
    }
    let (days, rem) = (secs.div_euclid(SECS_PER_DAY), secs.rem_euclid(SECS_PER_DAY));
    let (y, m, d) = civil_from_days(days);
    Some(format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    ))
}

/// Days in month `mo` (1–12) of year `y` (proleptic Gregorian).
fn days_in_month(y: i64, mo: u32) -> u32 {
    match mo {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to `y`-`m`-`d` (Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `days` after 1970-01-01 (Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> UnixTime {
        UnixTime::parse(s).unwrap_or_else(|| panic!("{s} should parse"))
    }

    #[test]
    fn known_instants() {
        // Epoch seconds from Python's datetime.
        assert_eq!(t("1970-01-01T00:00:00Z").secs, 0);
        assert_eq!(t("2000-02-29T23:59:59Z").secs, 951_868_799);
        assert_eq!(t("0001-01-01T00:00:00Z").secs, -62_135_596_800);
        assert_eq!(t("9999-12-31T23:59:59Z").secs, 253_402_300_799);
        assert_eq!(t("0000-01-01T00:00:00Z").secs, MIN_SECS);
        let x = t("2026-12-03T08:45:46.241109Z");
        assert_eq!((x.secs, x.nanos), (1_796_287_546, 241_109_000));
        assert_eq!(t("2026-12-03T09:45:46.241109+01:00"), x);
        assert_eq!(t("2026-12-03t03:15:46.241109-05:30"), x);
        assert_eq!(t("1999-01-31T23:59:60Z"), t("1999-01-31T23:59:59Z"));
    }

    #[test]
    fn refuses_what_is_not_rfc_3339() {
        for bad in [
            "2026-02-30T09:00:00Z",
            "2025-02-29T09:00:00Z",
            "1900-02-29T09:00:00Z",
            "2026-04-31T09:00:00Z",
            "2026-13-02T10:00:00Z",
            "2026-12-02T24:00:00Z",
            "2026-12-02T10:60:00Z",
            "2026-12-02T10:00:00.Z",
            "2026-12-02T10:00:00.1234567890Z",
            "2026-12-02T10:00:00",
            "2026-12-02T10:00:00+01",
            "2026-12-02T10:00:00+24:00",
            "2026-12-02 10:00:00Z",
            "2026-12-0xT10:00:00Z",
            "２０２６-12-02T10:00:00Z",
            "+2026-12-02T10:00:00Z",
            "yesterday",
            "",
        ] {
            assert_eq!(UnixTime::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn writes_utc_and_offsets() {
        let x = t("2026-12-03T08:45:46.241109Z");
        assert_eq!(x.to_string(), "2026-12-03T08:45:46.241109Z");
        assert_eq!(x.to_rfc3339(6).unwrap(), "2026-12-03T08:45:46.241109Z");
        assert_eq!(x.to_rfc3339(0).unwrap(), "2026-12-03T08:45:46Z");
        assert_eq!(
            t("2026-11-02T00:00:00Z").to_string(),
            "2026-11-02T00:00:00Z"
        );
        assert_eq!(
            t("2026-11-02T00:00:00.5Z").to_string(),
            "2026-11-02T00:00:00.5Z"
        );
        assert_eq!(
            rfc3339_at_offset(x.secs, 60).unwrap(),
            "2026-12-03T09:45:46+01:00"
        );
        assert_eq!(
            rfc3339_at_offset(0, -330).unwrap(),
            "1969-12-31T18:30:00-05:30"
        );
        assert_eq!(
            rfc3339_at_offset(0, 0).unwrap(),
            "1970-01-01T00:00:00+00:00"
        );
        assert_eq!(rfc3339_at_offset(0, 24 * 60), None);
        assert_eq!(rfc3339_at_offset(MAX_SECS_EXCLUSIVE, 0), None);
        assert_eq!(rfc3339_at_offset(i64::MAX, 60), None);
        let now = now_rfc3339();
        assert!(now.len() == 27 && UnixTime::parse(&now).is_some(), "{now}");
    }

    #[test]
    fn every_day_of_years_0000_to_9999_round_trips() {
        let mut days = days_from_civil(0, 1, 1);
        for y in 0..10_000i64 {
            for m in 1..=12u32 {
                for d in 1..=days_in_month(y, m) {
                    assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
                    assert_eq!(civil_from_days(days), (y, m, d));
                    days += 1;
                }
            }
        }
        assert_eq!(days * SECS_PER_DAY, MAX_SECS_EXCLUSIVE);
    }

    #[test]
    fn subtracting_stops_at_year_zero() {
        let x = t("2026-12-01T00:00:00Z");
        assert_eq!(
            x.checked_sub_secs(30 * SECS_PER_DAY).unwrap().to_string(),
            "2026-11-01T00:00:00Z"
        );
        assert_eq!(x.checked_sub_secs(i64::from(u32::MAX) * SECS_PER_DAY), None);
        assert_eq!(x.checked_sub_secs(i64::MIN), None);
    }
}
