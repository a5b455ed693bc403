//! The set of formats pitwall reads: their names (`format = "…"`, `--input-format`), dispatch
//! to each reader, and auto-detection for formats that are unambiguous.

use std::path::Path;
use std::time::SystemTime;

use super::parsed::{FormatError, ParsedRun};
use super::side_files::SideFiles;

/// Where the output is: text (stdout, a file) or a directory (`target/criterion`).
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// Text alone: files it names beside itself (nvbench's `--jsonbin` samples) are not read.
    Text(&'a str),
    /// Text, and the files beside it (the output file's directory, or the working directory of
    /// the command that printed it) for the readers that open files it names.
    TextBeside(&'a str, &'a dyn SideFiles),
    /// A directory read whole, whenever its results were written (`pitwall import`).
    Dir(&'a Path),
    /// A directory that a command writing into it has just left: only the results written at
    /// or after the time (when that execution started) are read; older ones, left by earlier
    /// runs, are ignored with a warning.
    DirSince(&'a Path, SystemTime),
}

/// Every format pitwall reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputFormat {
    PitwallJson,
    GoogleBenchmark,
    Criterion,
    CargoCriterion,
    Nvbench,
    NcclTests,
    Hyperfine,
    PytestBenchmark,
    MlperfLoadgen,
    Bmf,
}

impl InputFormat {
    pub const ALL: [InputFormat; 10] = [
        InputFormat::PitwallJson,
        InputFormat::GoogleBenchmark,
        InputFormat::Criterion,
        InputFormat::CargoCriterion,
        InputFormat::Nvbench,
        InputFormat::NcclTests,
        InputFormat::Hyperfine,
        InputFormat::PytestBenchmark,
        InputFormat::MlperfLoadgen,
        InputFormat::Bmf,
    ];

    /// The name used in `format = "…"` and `--input-format`.
    pub fn name(self) -> &'static str {
        match self {
            InputFormat::PitwallJson => "pitwall-json",
            InputFormat::GoogleBenchmark => "google-benchmark",
            InputFormat::Criterion => "criterion",
            InputFormat::CargoCriterion => "cargo-criterion",
            InputFormat::Nvbench => "nvbench",
            InputFormat::NcclTests => "nccl-tests",
            InputFormat::Hyperfine => "hyperfine",
            InputFormat::PytestBenchmark => "pytest-benchmark",
            InputFormat::MlperfLoadgen => "mlperf-loadgen",
            InputFormat::Bmf => "bmf",
        }
    }

    pub fn parse_name(s: &str) -> Option<InputFormat> {
        InputFormat::ALL.into_iter().find(|f| f.name() == s)
    }

    /// All names, comma-separated, for hints.
    pub fn names() -> String {
        InputFormat::ALL.map(InputFormat::name).join(", ")
    }

    /// Whether the format is read from a directory rather than text.
    pub fn reads_dir(self) -> bool {
        self == InputFormat::Criterion
    }
}

/// Reads `input` as `format`, after a leading UTF-8 byte order mark. Whatever the reader, the
/// result is checked afterwards (finite samples, no negative times: see `checks.rs`), so that
/// bad values reject the output as a whole, and entries of the same benchmark (name, params,
/// measure) are merged into one.
pub fn parse(format: InputFormat, input: Input<'_>) -> Result<ParsedRun, FormatError> {
    let input = match input {
        Input::Text(t) => Input::Text(super::checks::strip_bom(t)),
        Input::TextBeside(t, files) => Input::TextBeside(super::checks::strip_bom(t), files),
        dir => dir,
    };
    let mut run = read(format, input).map_err(|e| match input {
        Input::Text(t) | Input::TextBeside(t, _) => other_format(format, t).unwrap_or(e),
        Input::Dir(_) | Input::DirSince(..) => e,
    })?;
    super::checks::validate(format.name(), &run.benchmarks)?;
    run.benchmarks = super::checks::merge_duplicates(std::mem::take(&mut run.benchmarks))
        .map_err(|m| FormatError::new(format.name(), "", m))?;
    Ok(run)
}

/// When output that `format`'s reader rejected is recognisably another format's (detection
/// picks exactly that one), an error saying so; no guess otherwise.
fn other_format(format: InputFormat, text: &str) -> Option<FormatError> {
    let other = detect(text).filter(|f| *f != format)?;
    let (given, other) = (format.name(), other.name());
    Some(FormatError::new(
        given,
        "",
        format!(
            "this is {other} output, not {given} (hint: read it as {other}: --input-format {other}, or format = \"{other}\" in a suite)"
        ),
    ))
}

/// Dispatches to the reader of `format`.
fn read(format: InputFormat, input: Input<'_>) -> Result<ParsedRun, FormatError> {
    let text = |input: Input<'_>| -> Result<String, FormatError> {
        match input {
            Input::Text(t) | Input::TextBeside(t, _) => Ok(t.to_string()),
            Input::Dir(d) | Input::DirSince(d, _) => Err(FormatError {
                format: format.name(),
                position: String::new(),
                message: format!(
                    "{} is a directory; this format is read from a file or stdout",
                    d.display()
                ),
            }),
        }
    };
    match format {
        InputFormat::PitwallJson => Ok(ParsedRun::new(super::parse_pitwall_json(&text(input)?)?)),
        InputFormat::GoogleBenchmark => super::google_benchmark::parse(&text(input)?),
        InputFormat::Criterion => match input {
            Input::Dir(d) => super::criterion::tree::parse_dir(d),
            Input::DirSince(d, since) => super::criterion::tree::parse_dir_since(d, since),
            Input::Text(_) | Input::TextBeside(..) => Err(FormatError {
                format: format.name(),
                position: String::new(),
                message: "criterion results are a directory (target/criterion); for JSON lines use cargo-criterion".into(),
            }),
        },
        InputFormat::CargoCriterion => super::criterion::messages::parse(&text(input)?),
        InputFormat::Nvbench => match input {
            Input::TextBeside(t, files) => super::nvbench::parse_with(t, Some(files)),
            _ => super::nvbench::parse(&text(input)?),
        },
        InputFormat::NcclTests => super::nccl::parse(&text(input)?),
        InputFormat::Hyperfine => super::hyperfine::parse(&text(input)?),
        InputFormat::PytestBenchmark => super::pytest_benchmark::parse(&text(input)?),
        InputFormat::MlperfLoadgen => super::mlperf_loadgen::parse(&text(input)?),
        InputFormat::Bmf => super::bmf::parse(&text(input)?),
    }
}

/// The format of `text` when it is unambiguous, by each reader's own signature check (after a
/// leading byte order mark, which [`parse`] drops too).
pub fn detect(text: &str) -> Option<InputFormat> {
    let text = super::checks::strip_bom(text);
    let candidates: Vec<InputFormat> = [
        (InputFormat::PitwallJson, looks_like_pitwall_json(text)),
        (
            InputFormat::GoogleBenchmark,
            super::google_benchmark::looks_like(text),
        ),
        (
            InputFormat::CargoCriterion,
            super::criterion::messages::looks_like(text),
        ),
        (InputFormat::Nvbench, super::nvbench::looks_like(text)),
        (InputFormat::NcclTests, super::nccl::looks_like(text)),
        (InputFormat::Hyperfine, super::hyperfine::looks_like(text)),
        (
            InputFormat::PytestBenchmark,
            super::pytest_benchmark::looks_like(text),
        ),
        (
            InputFormat::MlperfLoadgen,
            super::mlperf_loadgen::looks_like(text),
        ),
        (InputFormat::Bmf, super::bmf::looks_like(text)),
    ]
    .into_iter()
    .filter_map(|(f, yes)| yes.then_some(f))
    .collect();
    (candidates.len() == 1).then(|| candidates[0])
}

fn looks_like_pitwall_json(text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| {
        v.get("schema").and_then(|s| s.as_str()) == Some(pitwall_schema::schema::SCHEMA_V1)
            && v.get("benchmarks").is_some()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(rel: &str) -> String {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/");
        std::fs::read_to_string(format!("{dir}{rel}")).unwrap()
    }

    /// Output given to the wrong reader is named by what detection finds, not by a key guess:
    /// nccl-tests JSON has `results` as hyperfine's does, and was called hyperfine output.
    #[test]
    fn output_of_another_tool_is_named_by_detection() {
        use InputFormat::*;
        for (given, file, detected) in [
            (
                GoogleBenchmark,
                "nccl-tests/all_reduce_perf.json",
                NcclTests,
            ),
            (GoogleBenchmark, "hyperfine/sleeps.json", Hyperfine),
            (
                GoogleBenchmark,
                "pytest-benchmark/with-data.json",
                PytestBenchmark,
            ),
            (
                Hyperfine,
                "google-benchmark/repetitions.json",
                GoogleBenchmark,
            ),
            (Hyperfine, "nccl-tests/all_reduce_perf.json", NcclTests),
            (PytestBenchmark, "hyperfine/sleeps.json", Hyperfine),
            (PitwallJson, "bmf/multi.json", Bmf),
            (Nvbench, "mlperf-loadgen/offline_valid.txt", MlperfLoadgen),
            (CargoCriterion, "nvbench/reduce.json", Nvbench),
        ] {
            let e = parse(given, Input::Text(&fixture(file))).unwrap_err();
            let (g, d) = (given.name(), detected.name());
            assert_eq!(
                e.to_string(),
                format!(
                    "{g}: this is {d} output, not {g} (hint: read it as {d}: --input-format {d}, or format = \"{d}\" in a suite)"
                )
            );
        }
        // Not recognisable as anything: the reader's own error, no guess.
        let e = parse(GoogleBenchmark, Input::Text(r#"{"results":[1]}"#)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "google-benchmark: no `benchmarks` in the JSON object"
        );
    }
}
