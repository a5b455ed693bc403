//! The `pitwall` binary: parses arguments and hands over to the CLI layer.

mod cli;

fn main() -> std::process::ExitCode {
    // Die quietly on a closed pipe (`pitwall runs | head`), as Unix tools do, instead of
    // panicking on the failed write.
    // SAFETY: resetting a signal disposition to its default touches no memory.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    cli::main()
}
