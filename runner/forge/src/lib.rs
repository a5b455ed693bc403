//! pitwall's side of the forges: one HTTP client ([`http`]), GitHub (the sticky comment, the
//! check run, the commit status and alert issues), GitLab (the sticky merge-request note),
//! the alert webhook, and what the CI job's environment says ([`ci`]). What is published is
//! rendered by `pitwall-reports` and handed in as text; this crate never renders a
//! comparison. The store over a `pitwall serve`'s API ([`store_client`]) uses the same client.

pub mod ci;
pub mod github;
pub mod gitlab;
pub mod http;
pub mod store_client;
pub mod webhook;

pub use github::Secret;
