//! How results are shown: text tables and JSON for the terminal and for machines now; HTML,
//! Markdown and charts as they land. One `Exporter` per output format.

pub mod alerts;
pub mod bisect;
pub mod calibration;
pub mod compare;
pub mod detect;
pub mod env;
pub mod exporter;
pub mod github;
pub mod html;
pub mod markdown;
pub mod notify;
pub mod table;
#[cfg(test)]
mod test_alerts;
pub mod writeup;

pub use exporter::{Exporter, JsonExporter, OutputFormat, TableExporter, exporter_for};
pub use table::Table;
