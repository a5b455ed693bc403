//! Readers for benchmark output formats: what a `command` suite prints becomes results.

pub mod pitwall_json;

pub use pitwall_json::{FormatError, ParsedBenchmark, parse_pitwall_json};
