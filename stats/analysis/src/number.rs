//! Text for humans: numbers with a fixed number of significant digits (no exponent for the
//! ranges benchmarks produce), and untrusted text made safe for one terminal line.

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
}
