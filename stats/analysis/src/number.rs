//! Text for humans: numbers with a fixed number of significant digits (no exponent for the
//! ranges benchmarks produce), times in the unit that reads best ([`DisplayUnit`], the one
//! scaling the terminal, Markdown and HTML share), and untrusted text made safe for one
//! terminal line.

/// `v` with `sig` significant digits (`1234.5678` → `1235`, `0.012345` → `0.01235`).
pub fn sig(v: f64, sig: usize) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let magnitude = v.abs().log10().floor() as i32;
    if !(-6..=15).contains(&magnitude) {
        return format!("{:.*e}", sig.saturating_sub(1), v);
    }
    let decimals = (sig as i32 - 1 - magnitude).max(0) as usize;
    format!("{v:.decimals$}")
}

/// Time units values may be stored in, with their size in nanoseconds.
const TIME_UNITS: [(&str, f64); 5] = [
    ("ns", 1.0),
    ("us", 1e3),
    ("µs", 1e3),
    ("ms", 1e6),
    ("s", 1e9),
];

/// The unit a set of values of one stored unit is shown in. Times (`ns`, `us`/`µs`, `ms`, `s`)
/// are shown in the largest of ns, µs, ms and s that keeps the representative value at 1 or
/// more (`149690 ns` reads `149.7 µs`); other units as stored. Every output uses it, so the
/// same number reads the same in `run`, `compare`, the PR comment and the report.
#[derive(Debug, Clone, PartialEq)]
pub struct DisplayUnit {
    /// Stored value ÷ this = shown value.
    divisor: f64,
    name: String,
}

impl DisplayUnit {
    /// The unit for values of `unit` like `value` (a median: a row's baseline, a chart's
    /// latest point). A zero or non-finite value keeps the stored unit.
    pub fn for_value(unit: &str, value: f64) -> DisplayUnit {
        let keep = DisplayUnit {
            divisor: 1.0,
            name: unit.to_string(),
        };
        let Some(&(_, ns)) = TIME_UNITS.iter().find(|(u, _)| *u == unit) else {
            return keep;
        };
        let v = (value * ns).abs();
        if !v.is_normal() {
            return keep;
        }
        let (size, name) = [(1e9, "s"), (1e6, "ms"), (1e3, "µs")]
            .into_iter()
            .find(|(size, _)| v >= *size)
            .unwrap_or((1.0, "ns"));
        DisplayUnit {
            divisor: size / ns,
            name: name.to_string(),
        }
    }

    /// The unit's name (`µs`, `GB/s`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A stored value in this unit, as a number (for charts).
    pub fn scale(&self, v: f64) -> f64 {
        v / self.divisor
    }

    /// A stored value in this unit with 4 significant digits, without the unit (`149.7`).
    pub fn num(&self, v: f64) -> String {
        sig(self.scale(v), 4)
    }

    /// A stored value in this unit with `digits` significant digits, without the unit.
    pub fn num_sig(&self, v: f64, digits: usize) -> String {
        sig(self.scale(v), digits)
    }

    /// A stored value with 4 significant digits and the unit (`149.7 µs`).
    pub fn show(&self, v: f64) -> String {
        if self.name.is_empty() {
            self.num(v)
        } else {
            format!("{} {}", self.num(v), self.name)
        }
    }
}

/// `value` of `unit` as people read it: `with_unit(149690.0, "ns")` is `149.7 µs`.
pub fn with_unit(value: f64, unit: &str) -> String {
    DisplayUnit::for_value(unit, value).show(value)
}

/// A fraction as a percentage with two significant digits (`0.0123` → `1.2%`).
pub fn pct(fraction: f64) -> String {
    format!("{}%", sig(fraction * 100.0, 2))
}

/// `text` with every control character (C0, DEL and C1: ESC, newline, carriage return,
/// backspace…) written as `\xNN`, so untrusted text (benchmark names, a command's stderr)
/// cannot move the cursor, recolour or clear a terminal, or split a line. Tabs are kept.
pub fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\t' => out.push(c),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_digits() {
        assert_eq!(sig(1234.5678, 4), "1235");
        assert_eq!(sig(0.012345, 4), "0.01235");
        assert_eq!(sig(12.0, 4), "12.00");
        assert_eq!(sig(0.0, 4), "0");
        assert_eq!(sig(-4.56789, 3), "-4.57");
        assert_eq!(sig(1e20, 3), "1.00e20");
        assert_eq!(pct(0.0123), "1.2%");
    }

    #[test]
    fn times_are_shown_in_the_unit_that_reads_best() {
        assert_eq!(with_unit(149_690.0, "ns"), "149.7 µs");
        assert_eq!(with_unit(999.0, "ns"), "999.0 ns");
        assert_eq!(with_unit(2.5e9, "ns"), "2.500 s");
        assert_eq!(with_unit(0.25, "ms"), "250.0 µs");
        assert_eq!(with_unit(1500.0, "us"), "1.500 ms");
        assert_eq!(with_unit(0.0, "ns"), "0 ns");
        assert_eq!(with_unit(12.34, "GB/s"), "12.34 GB/s");
        assert_eq!(with_unit(3.0, ""), "3.000");
        // One unit for a row or a chart: chosen once, applied to every value.
        let u = DisplayUnit::for_value("ns", 149_690.0);
        assert_eq!((u.name(), u.num(152_000.0)), ("µs", "152.0".to_string()));
        assert_eq!(u.num(900.0), "0.9000");
        assert_eq!(u.scale(2000.0), 2.0);
    }
}
