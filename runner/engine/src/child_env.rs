//! The environment a build or benchmark command runs in: pitwall's own, scrubbed of every
//! secret (the configured token variables, anything named like a secret, the store's URL and
//! any variable holding a secret the process knows) unless the configuration passes it on
//! purpose (`env_pass`), plus the suite's `env`; and the [`Redactor`] for everything the
//! command writes back.
//!
//! The code being measured is the pull request's: on a CI runner it must not see the token
//! that can comment, set statuses or push (docs/CI.md).

use std::collections::BTreeMap;

use pitwall_schema::secrets::{is_secret_name, remembered, store_credentials, url_secrets};
use pitwall_schema::{Redactor, Run};

/// What a child process gets, and what is scrubbed from what it writes.
#[derive(Debug, Clone, Default)]
pub struct ChildEnv {
    /// Set on top of the inherited environment (a suite's `env`).
    pub set: BTreeMap<String, String>,
    /// Inherited variables removed, by name.
    pub remove: Vec<String>,
    /// Every secret value known here, passed or not, for the command's output.
    pub redactor: Redactor,
}

impl ChildEnv {
    /// The environment for a command, from pitwall's own (`std::env::vars`).
    /// `token_vars`: the configured token variables (`[github] token_env`, `[gitlab]
    /// token_env`), removed whatever their name; `pass`: variables kept even though they
    /// look like secrets; `set`: the suite's `env`.
    pub fn scrubbed(
        set: &BTreeMap<String, String>,
        pass: &[String],
        token_vars: &[String],
    ) -> ChildEnv {
        Self::from_vars(std::env::vars(), set, pass, token_vars)
    }

    /// As [`ChildEnv::scrubbed`], from the given inherited variables.
    pub fn from_vars(
        inherited: impl IntoIterator<Item = (String, String)>,
        set: &BTreeMap<String, String>,
        pass: &[String],
        token_vars: &[String],
    ) -> ChildEnv {
        let is_secret = |name: &str| is_secret_name(name) || token_vars.iter().any(|t| t == name);
        let inherited: Vec<(String, String)> = inherited.into_iter().collect();
        // The store URL's credentials (`PITWALL_STORE`, `--store`), whatever variable holds
        // them; and every other secret the process knows (a token, read by name).
        let mut store = store_credentials();
        for (name, value) in &inherited {
            if STORE_VARS.contains(&name.as_str()) {
                store.extend(url_secrets(value, false));
            }
        }
        let known = remembered();
        let mut remove = Vec::new();
        let mut redactor = Redactor::none();
        for k in known.iter().chain(&store) {
            redactor.add(k);
        }
        for (name, value) in inherited {
            // The store's URL goes whatever `env_pass` says: it grants write access to the
            // shared store.
            if STORE_VARS.contains(&name.as_str()) {
                redactor.add(&value);
                remove.push(name);
                continue;
            }
            let holds_store = store.iter().any(|k| value.contains(k.as_str()));
            let holds_known = known.iter().any(|k| value.contains(k.as_str()));
            if !is_secret(&name) && !holds_known && !holds_store {
                continue;
            }
            redactor.add(&value);
            if holds_store || (!pass.contains(&name) && !set.contains_key(&name)) {
                remove.push(name);
            }
        }
        // A secret written into the configuration on purpose is still not shown back.
        for (name, value) in set {
            if is_secret(name) {
                redactor.add(value);
            }
        }
        ChildEnv {
            set: set.clone(),
            remove,
            redactor,
        }
    }

    /// Applies this environment to `cmd`.
    pub fn apply(&self, cmd: &mut std::process::Command) {
        for name in &self.remove {
            cmd.env_remove(name);
        }
        cmd.envs(&self.set);
    }
}

/// Variables that hold the store's URL: never passed to a command, their credentials
/// redacted.
pub const STORE_VARS: &[&str] = &["PITWALL_STORE"];

/// What the pitwall process knows to be secret: the values of its variables named like
/// secrets and of `token_vars`, the credentials of the store URL (`PITWALL_STORE`) and every
/// value it remembered (`pitwall_schema::secrets::remember`: `--store`'s password, a token).
/// For what pitwall itself prints, stores and publishes.
pub fn process_redactor(token_vars: &[String]) -> Redactor {
    let mut r = Redactor::from_vars(std::env::vars(), token_vars.iter().map(String::as_str));
    for var in STORE_VARS {
        if let Ok(url) = std::env::var(var) {
            for s in url_secrets(&url, false) {
                r.add(&s);
            }
        }
    }
    r
}

/// Redacts every string of `run` (names, parameters, errors, the fingerprint), whatever
/// characters the secret holds: what a command wrote into a results file or directory,
/// read by a format reader, is caught here before the run is stored, exported or rendered.
/// A run that no longer reads back once redacted (a secret that was a whole enum tag) has
/// its results' free text replaced whole (`pitwall_store::redact_run`).
pub fn redact_run(run: &mut Run, redactor: &Redactor) {
    pitwall_store::redact_run(redactor, run);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> Vec<(String, String)> {
        [
            ("PATH", "/usr/bin"),
            ("GITHUB_TOKEN", "ghs_actions_token_123"),
            ("HF_TOKEN", "hf_abcdefghijkl"),
            ("MY_CUSTOM_VAR", "custom-credential-1"),
            ("AWS_SECRET_ACCESS_KEY", "aws/secret+key"),
            ("OMP_NUM_THREADS", "4"),
            ("TOKENIZERS_PARALLELISM", "false"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    #[test]
    fn secrets_and_token_vars_are_removed_unless_passed() {
        let set = BTreeMap::from([("OMP_NUM_THREADS".to_string(), "1".to_string())]);
        let env = ChildEnv::from_vars(
            vars(),
            &set,
            &["HF_TOKEN".to_string()],
            &["MY_CUSTOM_VAR".to_string()],
        );
        let mut removed = env.remove.clone();
        removed.sort();
        assert_eq!(
            removed,
            ["AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "MY_CUSTOM_VAR"]
        );
        // Passed or not, every secret value is redacted from what comes back.
        let shown = env
            .redactor
            .redact("ghs_actions_token_123 hf_abcdefghijkl custom-credential-1 aws/secret+key");
        assert_eq!(shown, "*** *** *** ***");
        assert_eq!(env.redactor.redact("4 false /usr/bin"), "4 false /usr/bin");
    }

    #[test]
    fn the_child_really_does_not_see_them() {
        let env = ChildEnv::from_vars(vars(), &BTreeMap::new(), &[], &[]);
        let mut cmd = std::process::Command::new("sh");
        cmd.arg("-c").arg("env").env_clear();
        for (k, v) in vars() {
            cmd.env(k, v);
        }
        env.apply(&mut cmd);
        let out = String::from_utf8(cmd.output().unwrap().stdout).unwrap();
        assert!(!out.contains("GITHUB_TOKEN"), "{out}");
        assert!(!out.contains("HF_TOKEN"), "{out}");
        assert!(out.contains("TOKENIZERS_PARALLELISM=false"), "{out}");
        assert!(out.contains("OMP_NUM_THREADS=4"), "{out}");
    }

    #[test]
    fn a_secret_set_in_the_configuration_is_passed_and_redacted() {
        let set = BTreeMap::from([("API_KEY".to_string(), "configured-key-value".to_string())]);
        let env = ChildEnv::from_vars(
            [("API_KEY".to_string(), "inherited-key-value".to_string())],
            &set,
            &[],
            &[],
        );
        assert!(env.remove.is_empty());
        assert_eq!(
            env.redactor
                .redact("configured-key-value inherited-key-value"),
            "*** ***"
        );
    }

    #[test]
    fn the_store_url_never_reaches_a_command_and_its_password_is_redacted() {
        let url = "postgres://bench:Pg-Pass-4711@db.example/pw";
        let inherited = [
            ("PITWALL_STORE".to_string(), url.to_string()),
            ("DATABASE_URL".to_string(), url.to_string()),
            ("PATH".to_string(), "/usr/bin".to_string()),
        ];
        // Not even when the configuration passes it.
        let env = ChildEnv::from_vars(
            inherited,
            &BTreeMap::new(),
            &["PITWALL_STORE".to_string(), "DATABASE_URL".to_string()],
            &[],
        );
        let mut removed = env.remove.clone();
        removed.sort();
        assert_eq!(removed, ["DATABASE_URL", "PITWALL_STORE"]);
        assert_eq!(
            env.redactor
                .redact("password Pg-Pass-4711, bench:Pg-Pass-4711"),
            "password ***, ***"
        );
    }

    #[test]
    fn a_remembered_store_password_is_redacted_and_its_variables_removed() {
        pitwall_schema::secrets::remember_store_credential("flag-store-pass-99");
        pitwall_schema::secrets::remember("remembered-token-77");
        let env = ChildEnv::from_vars(
            [
                ("MY_DSN".to_string(), "x:flag-store-pass-99@h".to_string()),
                ("COPY".to_string(), "remembered-token-77".to_string()),
                ("PASSED".to_string(), "remembered-token-77".to_string()),
            ],
            &BTreeMap::new(),
            &["MY_DSN".to_string(), "PASSED".to_string()],
            &[],
        );
        // The store's credential goes whatever env_pass says; a token only unless passed.
        assert_eq!(env.remove, ["MY_DSN", "COPY"]);
        assert_eq!(
            env.redactor
                .redact("flag-store-pass-99 remembered-token-77"),
            "*** ***"
        );
    }

    #[test]
    fn a_secret_with_quotes_or_backslashes_is_redacted_from_a_run() {
        let secret = r#"tok"en\value-123"#;
        let redactor = Redactor::new([secret]);
        let failed = pitwall_schema::BenchmarkResult::failed(
            "s",
            &format!("echo {secret}"),
            BTreeMap::new(),
            format!("said {secret}"),
        );
        let mut run = Run {
            exclusion: None,
            contention: None,
            id: "r1".into(),
            project: "p".into(),
            commit: "working tree".into(),
            branch: None,
            testbed: None,
            role: None,
            started_at: "2026-12-02T10:00:00.000000Z".into(),
            finished_at: "2026-12-02T10:00:05.000000Z".into(),
            config_hash: "ab".repeat(32),
            fingerprint: pitwall_schema::Fingerprint::default(),
            status: pitwall_schema::RunStatus::Failed,
            commit_info: None,
            error: None,
            pair: None,
            results: vec![failed],
        };
        redact_run(&mut run, &redactor);
        let text = serde_json::to_string(&run).unwrap();
        assert!(!text.contains("value-123"), "{text}");
        assert_eq!(run.results[0].name, "echo ***");
    }
}
