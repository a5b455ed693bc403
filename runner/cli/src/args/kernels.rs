//! Raw arguments of `pitwall kernels` (clap derive), the compile-only check of the
//! `cuda-kernels` suites, kept beside `args.rs`; `args` re-exports them.

use clap::Args;

use super::non_empty;

/// The architectures compiled for when `--sm` is not given: Ampere (A100) and Hopper (H100,
/// H200), the ones the built-in kernels are tested for.
pub const DEFAULT_SMS: [u32; 2] = [80, 90];

#[derive(Debug, Args)]
pub struct KernelsArgs {
    /// Compile the sources of this commit (checked out in .pitwall/worktrees, as `run
    /// --commit` does) [default: the working tree]
    #[arg(long, value_name = "REV", value_parser = non_empty)]
    pub commit: Option<String>,
    /// Compile for sm_<N> (repeatable, e.g. --sm 90) [default: 80 and 90]
    #[arg(long = "sm", value_name = "N", value_parser = clap::value_parser!(u32).range(50..=200))]
    pub sms: Vec<u32>,
    /// Only this cuda-kernels suite (repeatable)
    #[arg(long = "suite", value_name = "NAME", value_parser = non_empty)]
    pub suites: Vec<String>,
}

impl KernelsArgs {
    /// The architectures asked for, or the default ones.
    pub fn sms(&self) -> Vec<u32> {
        if self.sms.is_empty() {
            DEFAULT_SMS.to_vec()
        } else {
            self.sms.clone()
        }
    }
}
