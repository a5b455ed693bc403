//! The dispatcher: parses the command line and hands each subcommand to its module. The
//! command modules import shared helpers (`context`, `console`, `measure`, `site`,
//! `github`), never each other.

use std::process::ExitCode;

use clap::Parser;

use super::args::{Cli, Cmd};
use super::exit::{self, ExitClass};
use super::{
    alerts_cmd, analyze_cmd, bisect_cmd, calibrate_cmd, kernels_cmd, publish_cmd, push_cmd,
    run_cmd, serve_cmd, store_cmd, writeup_cmd,
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
        keep_secrets_from_children();
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
        Cmd::Calibrate(a) => calibrate_cmd::cmd_calibrate(g, a),
        Cmd::Bisect(a) => bisect_cmd::cmd_bisect(g, a),
        Cmd::Alerts(a) => alerts_cmd::cmd_alerts(g, a),
        Cmd::Alert(a) => alerts_cmd::cmd_alert(g, a),
        Cmd::Writeup(a) => writeup_cmd::cmd_writeup(g, a),
        Cmd::Kernels(a) => kernels_cmd::cmd_kernels(g, a),
        Cmd::Serve(a) => serve_cmd::cmd_serve(g, a),
        Cmd::Token(a) => serve_cmd::cmd_token(g, a),
        Cmd::Worker => run_cmd::cmd_worker(),
    };
    match result {
        Ok(class) => class.code(),
        Err(f) => exit::report(f),
    }
}

/// Makes this process non-dumpable (`PR_SET_DUMPABLE` 0): its memory and its environment
/// (`/proc/PID/environ`, which keeps the token even after the commands it starts are given a
/// scrubbed one) can no longer be read by the build and benchmark commands it runs as the same
/// user, nor can they ptrace it. Also no core dump. A failure is ignored: it only means the
/// kernel does not offer this (docs/CI.md).
fn keep_secrets_from_children() {
    // SAFETY: prctl(PR_SET_DUMPABLE) takes integer arguments and touches no memory.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn pitwall_becomes_non_dumpable() {
        // A child, so that the test process itself stays as it was.
        // SAFETY: fork in a test; the child only calls async-signal-safe functions and _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            super::keep_secrets_from_children();
            // SAFETY: prctl with PR_GET_DUMPABLE reads a flag; _exit ends the child.
            let dumpable = unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) };
            unsafe { libc::_exit(if dumpable == 0 { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    }
}
