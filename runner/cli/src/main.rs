//! The `pitwall` binary, the only crate that sees clap: arguments become typed requests for
//! the `pitwall_pipeline` library; errors become one line and a documented exit code.

// Commands, one module per group; they never import each other.
mod alerts_cmd;
mod analyze_cmd;
mod bisect_cmd;
mod calibrate_cmd;
mod kernels_cmd;
mod publish_cmd;
mod push_cmd;
mod run_cmd;
mod serve_cmd;
mod store_cmd;
mod writeup_cmd;

// What the commands share; none of these imports a command module.
mod alert_notice;
mod args;
mod console;
mod context;
mod exit;
mod github;
mod measure;
mod measuring;
mod progress;
mod site;
mod suite_backend;
mod worker_backends;

// The dispatcher, the only module that names every command.
mod commands;

fn main() -> std::process::ExitCode {
    // Die quietly on a closed pipe (`pitwall runs | head`), as Unix tools do, instead of
    // panicking on the failed write.
    // SAFETY: resetting a signal disposition to its default touches no memory.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    commands::main()
}
