//! Documented exit codes and the mapping from errors to them.

use std::process::ExitCode;

use pitwall_pipeline::config::ConfigError;
use pitwall_pipeline::engine::escape_controls;
use pitwall_pipeline::run::RunError;
use pitwall_store::StoreError;

/// Everything went as asked.
pub const OK: u8 = 0;
/// A regression was found (comparisons).
pub const REGRESSION: u8 = 1;
/// Bad usage or configuration: flags, config file, input files, unknown run.
pub const USAGE: u8 = 2;
/// Infrastructure failure: a benchmark failed or hung, the build or the store failed.
pub const INFRA: u8 = 3;

/// An error with the exit code it maps to.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub error: anyhow::Error,
    /// Context printed after the one-line error, indented (e.g. a failed build's log tail).
    pub details: Vec<String>,
}

impl Failure {
    pub fn usage(error: anyhow::Error) -> Failure {
        Failure {
            code: USAGE,
            error,
            details: Vec::new(),
        }
    }

    pub fn infra(error: anyhow::Error) -> Failure {
        Failure {
            code: INFRA,
            error,
            details: Vec::new(),
        }
    }

    pub fn with_details(mut self, details: Vec<String>) -> Failure {
        self.details = details;
        self
    }
}

impl From<anyhow::Error> for Failure {
    /// Classifies by the root error: configuration and lookup mistakes are usage errors,
    /// everything else is infrastructure.
    fn from(error: anyhow::Error) -> Failure {
        let usage = error.chain().any(|e| {
            e.downcast_ref::<ConfigError>().is_some()
                || matches!(
                    e.downcast_ref::<RunError>(),
                    Some(RunError::UnknownSuite { .. })
                )
                || matches!(
                    e.downcast_ref::<StoreError>(),
                    Some(
                        StoreError::BadUrl { .. }
                            | StoreError::Missing { .. }
                            | StoreError::Foreign { .. }
                            | StoreError::NotFound { .. }
                            | StoreError::Ambiguous { .. }
                            | StoreError::Invalid { .. }
                            | StoreError::Conflict { .. }
                    )
                )
        });
        Failure {
            code: if usage { USAGE } else { INFRA },
            error,
            details: Vec::new(),
        }
    }
}

/// Prints context lines under an error: indented, control characters escaped (they come from
/// commands' output).
pub fn print_details(lines: &[String]) {
    for line in lines {
        eprintln!("  | {}", escape_controls(line));
    }
}

/// Prints the error as one line (`error: outer: inner: root`), then its details, and returns
/// its code.
pub fn report(f: Failure) -> ExitCode {
    let mut line = String::from("error: ");
    let parts: Vec<String> = f.error.chain().map(|e| e.to_string()).collect();
    // anyhow chains repeat the source's text when a variant embeds it; keep distinct parts.
    let mut kept: Vec<&str> = Vec::new();
    for p in &parts {
        if !kept.iter().any(|k| k.contains(p.as_str())) {
            kept.push(p);
        }
    }
    line.push_str(&kept.join(": "));
    eprintln!("{}", line.replace('\n', " "));
    print_details(&f.details);
    ExitCode::from(f.code)
}
