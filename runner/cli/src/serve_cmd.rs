//! `pitwall serve` and `pitwall token`: the team's server over the store, and the API tokens
//! it checks (made, listed and revoked against the server's own store).

use pitwall_pipeline::tokens::{self, Expiry, TokenRole};
use pitwall_reports::Table;
use pitwall_schema::UnixTime;
use pitwall_server::{ServeOptions, serve};
use pitwall_store::OpenMode;

use super::args::{Format, Global, RoleArg, ServeArgs, TokenAction, TokenArgs};
use super::context::{load_config, open_store, open_url, redactor, store_url};
use super::exit::{ExitClass, Failure};

pub(super) fn cmd_serve(g: &Global, a: &ServeArgs) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    let url = store_url(g, &config, OpenMode::Create)?;
    if url.is_http() {
        return Err(Failure::rejected(format!(
            "--store {}: `pitwall serve` serves a database, not another server (hint: sqlite:PATH or postgres://…)",
            url.describe()
        )));
    }
    let mut options = ServeOptions::new(a.listen);
    options.public_read = config.serve.public_read;
    options.history_branch = config.history_branch.clone();
    options.threshold_pct = config.thresholds.regression_pct;
    options.config = std::sync::Arc::new(config.clone());
    if matches!(url, pitwall_store::StoreUrl::Postgres(_)) {
        options.writers = pitwall_engine::defaults::SERVE_POSTGRES_WRITERS;
        options.group_commit_max_results =
            pitwall_engine::defaults::SERVE_POSTGRES_GROUP_COMMIT_MAX_RESULTS;
    }
    let public_read = options.public_read;
    let opener: pitwall_server::Opener = std::sync::Arc::new(move || {
        open_url(&url, OpenMode::Create).map_err(|f| pitwall_store::StoreError::Corrupt {
            store: "store".into(),
            what: f.one_line(),
        })
    });
    let shown = redactor();
    serve(opener, options, |addr| {
        eprintln!(
            "listening on http://{addr} (reads {}; stop with SIGTERM or Ctrl-C)",
            if public_read {
                "public"
            } else {
                "need a token"
            }
        );
    })
    .map_err(|e| Failure::of_serve(shown.redact(&e.to_string()), e))?;
    Ok(ExitClass::Ok)
}

fn role(r: RoleArg) -> TokenRole {
    match r {
        RoleArg::Runner => TokenRole::Runner,
        RoleArg::Triage => TokenRole::Triage,
        RoleArg::Read => TokenRole::Read,
    }
}

pub(super) fn cmd_token(g: &Global, a: &TokenArgs) -> Result<ExitClass, Failure> {
    let config = load_config(g)?;
    super::context::database_only(g, &config, "`pitwall token`")?;
    match &a.action {
        TokenAction::Create {
            role: r,
            name,
            expires,
            format,
        } => {
            let expiry = match expires {
                Some(text) => Expiry::parse(text).map_err(Failure::of_token)?,
                None => Expiry::Days(tokens::DEFAULT_TOKEN_DAYS),
            };
            let mut store = open_store(g, &config, OpenMode::Create)?;
            let made = tokens::create(store.as_mut(), name, role(*r), expiry, UnixTime::now())
                .map_err(Failure::of_token)?;
            match format {
                Format::Json => println!(
                    "{}",
                    serde_json::json!({
                        "name": made.token.name,
                        "role": made.token.role,
                        "expires_at": made.token.expires_at,
                        "secret": made.secret,
                    })
                ),
                Format::Table => {
                    println!("{}", made.secret);
                    eprintln!(
                        "token `{}` ({}, expires {}): the secret above is shown once; give it to the runner as PITWALL_TOKEN",
                        made.token.name,
                        made.token.role.as_str(),
                        made.token.expires_at.as_deref().unwrap_or("never"),
                    );
                }
            }
            Ok(ExitClass::Ok)
        }
        TokenAction::List { format } => {
            let store = open_store(g, &config, OpenMode::Existing)?;
            let listed = store.list_tokens().map_err(Failure::of_store)?;
            let now = UnixTime::now();
            match format {
                Format::Json => {
                    let rows: Vec<serde_json::Value> = listed
                        .iter()
                        .map(|t| {
                            let mut v = serde_json::to_value(t).expect("tokens serialize");
                            v["state"] = tokens::state(t, now).into();
                            v
                        })
                        .collect();
                    println!("{}", serde_json::to_string_pretty(&rows).expect("json"));
                }
                Format::Table => {
                    let mut t = Table::new(&["NAME", "ROLE", "CREATED", "EXPIRES", "STATE"]);
                    for tok in &listed {
                        t.row(vec![
                            tok.name.clone(),
                            tok.role.as_str().to_string(),
                            tok.created_at.clone(),
                            tok.expires_at.clone().unwrap_or_else(|| "never".into()),
                            tokens::state(tok, now).to_string(),
                        ]);
                    }
                    if t.is_empty() {
                        eprintln!("no tokens in {}", store.describe());
                    } else {
                        print!("{}", t.render());
                    }
                }
            }
            Ok(ExitClass::Ok)
        }
        TokenAction::Revoke { name } => {
            let mut store = open_store(g, &config, OpenMode::Existing)?;
            tokens::revoke(store.as_mut(), name, UnixTime::now()).map_err(Failure::of_token)?;
            eprintln!("token `{name}` revoked");
            Ok(ExitClass::Ok)
        }
    }
}
