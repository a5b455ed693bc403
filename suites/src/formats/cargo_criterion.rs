//! Placeholder: the cargo_criterion reader (being written).

use super::pitwall_json::FormatError;
use super::registry::ParsedRun;

const FORMAT: &str = "cargo-criterion";

/// Reads cargo_criterion output.
pub fn parse(_text: &str) -> Result<ParsedRun, FormatError> {
    Err(FormatError {
        format: FORMAT,
        position: String::new(),
        message: "not implemented yet".into(),
    })
}

/// Whether `text` is unmistakably this format.
pub fn looks_like(_text: &str) -> bool {
    false
}
