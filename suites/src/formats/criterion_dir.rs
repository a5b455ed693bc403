//! Placeholder: the criterion directory reader (being written).

use std::path::Path;

use super::pitwall_json::FormatError;
use super::registry::ParsedRun;

/// Reads a `target/criterion` directory.
pub fn parse_dir(_dir: &Path) -> Result<ParsedRun, FormatError> {
    Err(FormatError {
        format: "criterion",
        position: String::new(),
        message: "not implemented yet".into(),
    })
}
