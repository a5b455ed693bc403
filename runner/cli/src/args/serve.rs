//! Raw arguments of `pitwall serve` and `pitwall token` (clap derive): the team's server and
//! the API tokens it checks, kept beside `args.rs`; `args` re-exports them.

use std::net::SocketAddr;

use clap::{Args, Subcommand, ValueEnum};

use super::{Format, non_empty};

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address and port to listen on (port 0: any free port, printed when listening)
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
}

#[derive(Debug, Args)]
pub struct TokenArgs {
    #[command(subcommand)]
    pub action: TokenAction,
}

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RoleArg {
    /// Upload runs (and read)
    Runner,
    /// Change alerts (and read)
    Triage,
    /// Read only
    Read,
}

/// `pitwall token create|list|revoke`.
#[derive(Debug, Subcommand)]
pub enum TokenAction {
    /// Make a token for the server's API; its secret is printed once and never stored
    Create {
        /// What the token may do
        #[arg(long, value_enum)]
        role: RoleArg,
        /// Its name, unique among unrevoked tokens (letters, digits, `.`, `_`, `-`)
        #[arg(long, value_parser = non_empty)]
        name: String,
        /// How long it counts: days (`90d`) or `never` [default: 90d]
        #[arg(long, value_name = "DAYS|never")]
        expires: Option<String>,
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// List tokens (never their secrets): role, created, expires, state
    List {
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
    /// Revoke a token at once: the server refuses it from the next request
    Revoke {
        /// The token's name
        name: String,
    },
}
