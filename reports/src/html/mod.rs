//! Static HTML site for runs and comparisons: an index of every benchmark measure with trend
//! sparklines and change points, one page per benchmark, one per comparison and one for the
//! environments. Self-contained: inline SVG, one CSS file, the vendored uPlot for the interactive
//! history charts, no CDN, works from `file://`.

mod alert_list;
mod chart_data;
mod compare_page;
mod history_chart;
pub mod live;
pub mod live_index;
mod local_run;
mod model;
mod pages;
mod site;
mod svg;
pub mod synthetic;
mod testbeds_chart;
#[cfg(test)]
mod tests;

pub use model::PageComparison;
pub(crate) use site::render_template;
pub use site::{HtmlError, ReportInput, SiteSummary, write_site};
pub(crate) use svg::esc;
