//! The `pitwall` binary: parses arguments and hands over to the CLI layer.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
