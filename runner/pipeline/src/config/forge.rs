//! Validating `[github]` and `[gitlab]`: where and how `pitwall comment` and `pitwall ci`
//! publish (repository, API, the variable holding the token, what is published).

use super::load::{ConfigError, Ctx};
use super::model::{GithubConfig, GitlabConfig, Publish};

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
            out.token_env = t;
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
                        Some("use any of \"check\", \"comment\", \"status\"".into()),
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

    pub(super) fn gitlab(&self, g: super::raw::RawGitlab) -> GitlabConfig {
        let mut out = GitlabConfig::default();
        out.api_url = g.api_url;
        out.project = g.project;
        if let Some(t) = g.token_env {
            out.token_env = t;
        }
        out
    }
}
