//! pitwall's use cases: measure commits, measure an interleaved pair, bisect, import, with the
//! git they need, over the measurement engine and configuration of `pitwall-engine`. Each takes
//! a request (and a store where it keeps results) and returns values; the `pitwall` binary
//! parses, renders and maps them to exit codes, and is the only crate that sees clap.

pub mod alerts;
pub mod bisect;
pub mod calibrate;
pub mod cancel;
pub mod ci_suites;
pub mod compare;
pub mod detect;
pub mod exclusion;
pub mod git;
pub mod identical;
pub mod import;
pub mod labels;
pub mod measure;
pub mod noise;
pub mod pair;
pub mod prune;
pub mod publish;
pub mod request;
pub mod rounds;
pub mod run;
pub mod sessions;
pub mod setup;
pub mod source;
pub mod summaries;
pub mod tokens;
pub mod writeup;
