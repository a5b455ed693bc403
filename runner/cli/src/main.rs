//! The `pitwall` binary, the only crate that sees clap: arguments become typed requests for
//! the `pitwall_pipeline` library; errors become one line and a documented exit code.

mod analyze_cmd;
mod args;
mod bisect_cmd;
mod commands;
mod exit;
mod progress;
mod publish_cmd;
mod run_cmd;

fn main() -> std::process::ExitCode {
    // Die quietly on a closed pipe (`pitwall runs | head`), as Unix tools do, instead of
    // panicking on the failed write.
    // SAFETY: resetting a signal disposition to its default touches no memory.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    commands::main()
}
