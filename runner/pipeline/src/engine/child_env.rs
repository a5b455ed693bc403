//! The environment a build or benchmark command runs in: pitwall's own, scrubbed of every
//! secret (the configured token variables and anything named like a secret) unless the
//! configuration passes it on purpose (`env_pass`), plus the suite's `env`; and the
//! [`Redactor`] for everything the command writes back.
//!
//! The code being measured is the pull request's: on a CI runner it must not see the token
//! that can comment, set statuses or push (docs/CI.md).

use std::collections::BTreeMap;

use pitwall_schema::secrets::is_secret_name;
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
        let mut remove = Vec::new();
        let mut redactor = Redactor::none();
        for (name, value) in inherited {
            if !is_secret(&name) {
                continue;
            }
            redactor.add(&value);
            if !pass.contains(&name) && !set.contains_key(&name) {
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

/// What the pitwall process knows to be secret: the values of its variables named like
/// secrets and of `token_vars`. For what pitwall itself prints, stores and publishes.
pub fn process_redactor(token_vars: &[String]) -> Redactor {
    Redactor::from_vars(std::env::vars(), token_vars.iter().map(String::as_str))
}

/// Redacts every string of `run` (names, parameters, errors, the fingerprint): what a
/// command wrote into a results file or directory, read by a format reader, is caught here
/// before the run is stored, exported or rendered. Untouched when nothing matches.
pub fn redact_run(run: &mut Run, redactor: &Redactor) {
    if redactor.is_empty() {
        return;
    }
    let Ok(json) = serde_json::to_string(&*run) else {
        return;
    };
    let clean = redactor.redact(&json);
    if clean != json
        && let Ok(back) = serde_json::from_str::<Run>(&clean)
    {
        *run = back;
    }
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
}
