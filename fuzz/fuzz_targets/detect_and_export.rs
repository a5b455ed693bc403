//! Fuzz target: format detection and the export-document reader (`pitwall import`) on any
//! input: no panics, and whatever is detected must then parse or fail cleanly.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pitwall_schema::ExportDoc;
use pitwall_formats::{detect, parse, Input};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Some(format) = detect(text) {
            let _ = parse(format, Input::Text(text));
        }
        if let Ok(doc) = ExportDoc::from_json(text) {
            // A valid document re-exports and reads back to the same value.
            assert_eq!(ExportDoc::from_json(&doc.to_json()).ok(), Some(doc));
        }
    }
});
