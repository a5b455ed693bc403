//! Validating `[github]` and `[gitlab]`: where and how `pitwall comment` and `pitwall ci`
//! publish (repository, API, the variable holding the token, what is published).

use super::error::{ConfigError, Ctx};
use super::forge_model::{GithubConfig, GitlabConfig, Publish};

impl Ctx<'_> {
    pub(super) fn github(&self, g: super::raw::RawGithub) -> Result<GithubConfig, ConfigError> {
        let mut out = GithubConfig::default();
        if let Some(repo) = g.repo {
            let ok = matches!(repo.get_ref().split_once('/'), Some((o, n)) if !o.is_empty() && !n.is_empty() && !n.contains('/'));
            if !ok {
                return Err(self.at(
                    repo.span(),
                    format!("[github] repo `{}` is not OWNER/NAME", repo.get_ref()),
                    None,
                ));
            }
            out.repo = Some(repo.into_inner());
        }
        if let Some(u) = g.api_url {
            out.api_url = u;
        }
        if let Some(t) = g.token_env {
            out.token_env = self.token_env("github", t, &crate::defaults::GITHUB_TOKEN_VARS)?;
        }
        out.report_url = g.report_url;
        if let Some(list) = g.publish {
            let span = list.span();
            let mut publish = Vec::new();
            for name in list.into_inner() {
                let Some(p) = Publish::parse(&name) else {
                    return Err(self.at(
                        span,
                        format!("[github] publish: unknown target `{name}`"),
                        Some(super::keys::did_you_mean(
                            &name,
                            ["check", "comment", "status", "issue"],
                            "use any of \"check\", \"comment\", \"status\", \"issue\"",
                        )),
                    ));
                };
                if !publish.contains(&p) {
                    publish.push(p);
                }
            }
            out.publish = publish;
        }
        Ok(out)
    }

    /// `[alerts] webhook_env`: the name of a variable (letters, digits, `_`, not starting with
    /// a digit); the default `PITWALL_ALERT_WEBHOOK`.
    pub(super) fn alerts(
        &self,
        a: super::raw::RawAlerts,
    ) -> Result<super::AlertsConfig, ConfigError> {
        let Some(name) = a.webhook_env else {
            return Ok(super::AlertsConfig::default());
        };
        let n = name.get_ref();
        let valid = !n.is_empty()
            && !n.starts_with(|c: char| c.is_ascii_digit())
            && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(self.at(
                name.span(),
                format!("[alerts] webhook_env `{n}` is not a variable name"),
                Some("name the variable that holds the URL, e.g. \"SLACK_WEBHOOK_URL\"; the URL itself is a secret and does not go in pitwall.toml".into()),
            ));
        }
        Ok(super::AlertsConfig {
            webhook_env: n.clone(),
        })
    }

    pub(super) fn gitlab(&self, g: super::raw::RawGitlab) -> Result<GitlabConfig, ConfigError> {
        let token_env = match g.token_env {
            Some(t) => self.token_env("gitlab", t, &crate::defaults::GITLAB_TOKEN_VARS)?,
            None => crate::defaults::GITLAB_TOKEN_ENV.to_string(),
        };
        Ok(GitlabConfig {
            api_url: g.api_url,
            project: g.project,
            token_env,
        })
    }

    /// `[SECTION] token_env`: one of `allowed`. The file may come from the pull request being
    /// measured: naming any other variable would send that secret to the forge.
    fn token_env(
        &self,
        section: &str,
        name: toml::Spanned<String>,
        allowed: &[&str],
    ) -> Result<String, ConfigError> {
        if allowed.contains(&name.get_ref().as_str()) {
            return Ok(name.into_inner());
        }
        Err(self.at(
            name.span(),
            format!(
                "[{section}] token_env `{}` is not a token variable pitwall reads",
                name.get_ref()
            ),
            Some(format!(
                "use one of {}; put the token in one of them in the job's environment",
                allowed.join(", ")
            )),
        ))
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, Publish, SuiteSpec, parse_str};

    fn parse(text: &str) -> Config {
        parse_str(text, "pitwall.toml", "dir").unwrap()
    }

    #[test]
    fn publish_defaults_to_the_check_run_and_the_comment() {
        let c = parse("");
        assert_eq!(c.github.publish, [Publish::Check, Publish::Comment]);
        let c = parse("[github]\npublish = [\"status\", \"check\", \"status\"]\n");
        assert_eq!(c.github.publish, [Publish::Status, Publish::Check]);
        let c = parse("[github]\npublish = []\n");
        assert!(c.github.publish.is_empty());
    }

    #[test]
    fn an_unknown_publish_target_names_the_accepted_ones() {
        let e = parse_str("[github]\npublish = [\"checks\"]\n", "pitwall.toml", "d")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("pitwall.toml:2:11: [github] publish: unknown target `checks`"),
            "{e}"
        );
        assert!(
            e.contains("hint: use any of \"check\", \"comment\", \"status\", \"issue\""),
            "{e}"
        );
    }

    #[test]
    fn gitlab_keys_and_token_variables() {
        let c = parse("");
        assert_eq!(c.gitlab.token_env, "GITLAB_TOKEN");
        assert_eq!(c.gitlab.api_url, None);
        assert_eq!(
            c.token_vars(),
            ["GITHUB_TOKEN", "GITLAB_TOKEN", "PITWALL_ALERT_WEBHOOK"]
        );
        let c = parse(
            "[github]\ntoken_env = \"GH_TOKEN\"\n\n[gitlab]\napi_url = \"https://gl.example/api/v4\"\n\
             project = \"grp/app\"\ntoken_env = \"CI_JOB_TOKEN\"\n",
        );
        assert_eq!(
            c.token_vars(),
            ["GH_TOKEN", "CI_JOB_TOKEN", "PITWALL_ALERT_WEBHOOK"]
        );
        assert_eq!(
            c.gitlab.api_url.as_deref(),
            Some("https://gl.example/api/v4")
        );
        assert_eq!(c.gitlab.project.as_deref(), Some("grp/app"));
        let e = parse_str("[gitlab]\nurl = \"x\"\n", "pitwall.toml", "d")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("valid keys in [gitlab] are api_url, project, token_env"),
            "{e}"
        );
    }

    #[test]
    fn command_suites_know_what_to_pass_and_which_tokens_to_remove() {
        let c = parse(
            "[project]\nbuild = \"make\"\nenv_pass = [\"CARGO_REGISTRY_TOKEN\"]\n\n\
             [github]\ntoken_env = \"PITWALL_GITHUB_TOKEN\"\n\n\
             [[suite]]\nname = \"t\"\nkind = \"command\"\ncommand = \"true\"\nenv_pass = [\"HF_TOKEN\"]\n",
        );
        assert_eq!(c.project.env_pass, ["CARGO_REGISTRY_TOKEN"]);
        let SuiteSpec::Command(cmd) = &c.suites[0].spec else {
            panic!("{:?}", c.suites[0].spec)
        };
        assert_eq!(cmd.env_pass, ["HF_TOKEN"]);
        assert_eq!(
            cmd.token_vars,
            [
                "PITWALL_GITHUB_TOKEN",
                "GITLAB_TOKEN",
                "PITWALL_ALERT_WEBHOOK"
            ]
        );
    }

    #[test]
    fn publishing_settings_leave_the_configuration_hash_alone() {
        let base = parse("[project]\nname = \"p\"\n");
        let other = parse(
            "[project]\nname = \"p\"\n\n[github]\npublish = [\"status\"]\n\n[gitlab]\ntoken_env = \"CI_JOB_TOKEN\"\n",
        );
        assert_eq!(base.hash(), other.hash());
        // What the measured code may see is part of it.
        let passing = parse("[project]\nname = \"p\"\nenv_pass = [\"HF_TOKEN\"]\n");
        assert_ne!(base.hash(), passing.hash());
    }

    #[test]
    fn alerts_name_the_webhook_variable_and_it_is_a_secret() {
        let c = parse("[alerts]\nwebhook_env = \"SLACK_WEBHOOK_URL\"\n");
        assert_eq!(c.alerts.webhook_env, "SLACK_WEBHOOK_URL");
        assert!(c.token_vars().contains(&"SLACK_WEBHOOK_URL".to_string()));
        let d = parse("");
        assert_eq!(d.alerts.webhook_env, "PITWALL_ALERT_WEBHOOK");
        for bad in ["https://hooks.slack.com/x", "", "1X"] {
            let e = parse_str(
                &format!("[alerts]\nwebhook_env = \"{bad}\"\n"),
                "pitwall.toml",
                "d",
            )
            .unwrap_err()
            .to_string();
            assert!(
                e.starts_with("pitwall.toml:2:15: [alerts] webhook_env") && e.contains("hint:"),
                "{e}"
            );
        }
    }

    #[test]
    fn token_env_names_only_a_token_variable() {
        for (section, good) in [
            (
                "github",
                ["GITHUB_TOKEN", "GH_TOKEN", "PITWALL_GITHUB_TOKEN"],
            ),
            (
                "gitlab",
                ["GITLAB_TOKEN", "CI_JOB_TOKEN", "PITWALL_GITLAB_TOKEN"],
            ),
        ] {
            for name in good {
                parse(&format!("[{section}]\ntoken_env = \"{name}\"\n"));
            }
            for bad in [
                "AWS_SECRET_ACCESS_KEY",
                "GH_PAT",
                "PITWALL_STORE",
                "GITLAB_TOKEN ",
            ] {
                let e = parse_str(
                    &format!("[project]\nname = \"p\"\n\n[{section}]\ntoken_env = \"{bad}\"\n"),
                    "pitwall.toml",
                    "d",
                )
                .unwrap_err()
                .to_string();
                assert!(
                    e.starts_with(&format!(
                        "pitwall.toml:5:13: [{section}] token_env `{bad}` is not a token variable"
                    )),
                    "{e}"
                );
                assert!(
                    e.contains(&format!("hint: use one of {}", good.join(", "))),
                    "{e}"
                );
            }
        }
        // The GitHub token of one forge is not the other's.
        assert!(parse_str("[gitlab]\ntoken_env = \"GITHUB_TOKEN\"\n", "f", "d").is_err());
    }

    #[test]
    fn a_store_url_with_a_password_is_refused() {
        for url in [
            "postgres://bench:hunter2-pass@db.example/pw",
            "postgresql://bench@db.example/pw?password=hunter2-pass",
        ] {
            let e = parse_str(
                &format!("[project]\nname = \"p\"\n\n[store]\nurl = \"{url}\"\n"),
                "pitwall.toml",
                "d",
            )
            .unwrap_err()
            .to_string();
            assert!(
                e.starts_with("pitwall.toml:5:1: [store] url `") && e.contains("holds a password"),
                "{e}"
            );
            assert!(!e.contains("hunter2"), "{e}");
            assert!(e.contains("PGPASSWORD"), "{e}");
        }
        let c = parse("[store]\nurl = \"postgres://bench@db.example/pw\"\n");
        assert_eq!(
            c.store_url.as_deref(),
            Some("postgres://bench@db.example/pw")
        );
    }
}
