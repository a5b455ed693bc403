//! Every default that more than one place relies on, named once: the CLI's flags, the
//! configuration file and the use cases all read them from here.

/// Interleaved rounds of `--base/--head` (and the first batch of `--until-decided`, of
/// `pitwall ci` and of `pitwall bisect`) when `--rounds` is not given.
pub const ROUNDS: u32 = 3;
/// The most rounds `--until-decided` measures when `--max-rounds` is not given.
pub const MAX_ROUNDS: u32 = 15;
