//! The dispatcher: parses the command line and hands each subcommand to its module. The
//! command modules import shared helpers (`context`, `environment`, `measure`, `site`,
//! `github`), never each other.

use std::process::ExitCode;

use clap::Parser;

use super::args::{Cli, Cmd};
use super::environment;
use super::exit::{self, ExitClass};
use super::{
    alerts_cmd, analyze_cmd, bisect_cmd, kernels_cmd, publish_cmd, push_cmd, run_cmd, store_cmd,
    writeup_cmd,
};

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitClass::Usage
            } else {
                ExitClass::Ok
            }
            .code();
        }
    };
    let g = &cli.global;
    super::context::remember_store_secrets(g);
    if matches!(
        cli.command,
        Cmd::Run(_) | Cmd::Ci(_) | Cmd::Bisect(_) | Cmd::Comment(_)
    ) {
        environment::keep_secrets_from_children();
    }
    let result = match &cli.command {
        Cmd::Run(a) => run_cmd::cmd_run(g, a),
        Cmd::Runs(a) => store_cmd::cmd_runs(g, a),
        Cmd::Show(a) => store_cmd::cmd_show(g, a),
        Cmd::Export(a) => store_cmd::cmd_export(g, a),
        Cmd::Prune(a) => store_cmd::cmd_prune(g, a),
        Cmd::Import(a) => store_cmd::cmd_import(g, a),
        Cmd::Compare(a) => analyze_cmd::cmd_compare(g, a),
        Cmd::Detect(a) => analyze_cmd::cmd_detect(g, a),
        Cmd::Env(a) => analyze_cmd::cmd_env(g, a),
        Cmd::Report(a) => publish_cmd::cmd_report(g, a),
        Cmd::Comment(a) => publish_cmd::cmd_comment(g, a),
        Cmd::Ci(a) if a.push => push_cmd::cmd_ci_push(g, a),
        Cmd::Ci(a) => publish_cmd::cmd_ci(g, a),
        Cmd::Bisect(a) => bisect_cmd::cmd_bisect(g, a),
        Cmd::Alerts(a) => alerts_cmd::cmd_alerts(g, a),
        Cmd::Alert(a) => alerts_cmd::cmd_alert(g, a),
        Cmd::Writeup(a) => writeup_cmd::cmd_writeup(g, a),
        Cmd::Kernels(a) => kernels_cmd::cmd_kernels(g, a),
        Cmd::Worker => run_cmd::cmd_worker(),
    };
    match result {
        Ok(class) => class.code(),
        Err(f) => exit::report(f),
    }
}
