//! Which suites `pitwall ci` measures for a pull request: the built-in suites (kernel,
//! inference, collective) run pitwall's own code, the same on base and head, so the comparison
//! leaves them out unless `[ci] builtin_suites = true`; command and `cuda-kernels` suites run
//! the project's code and are always compared. History runs (`run`, `ci --push`) are
//! not selected here and measure every suite.

use crate::request::RunRequest;
use pitwall_engine::RunObserver;
use pitwall_engine::config::Config;

/// The selection of a pull request's comparison. Each built-in suite left out is one line to
/// `observer` (`suite_skipped`). A project with only built-in suites would compare nothing, so
/// they are measured anyway, with one line saying why.
pub fn pull_request_suites(config: &Config, observer: &dyn RunObserver) -> RunRequest {
    if config.ci.builtin_suites {
        return RunRequest::default();
    }
    let (builtin, own): (Vec<_>, Vec<_>) = config
        .suites
        .iter()
        .partition(|s| !s.spec.runs_project_code());
    if builtin.is_empty() {
        return RunRequest::default();
    }
    if own.is_empty() {
        observer.suite_skipped(
            "",
            &format!("{ONLY_BUILTIN} (hint: add a command suite for the project's own benchmarks, or set [ci] builtin_suites = true)"),
        );
        return RunRequest::default();
    }
    for s in builtin {
        observer.suite_skipped(
            &s.name,
            &format!(
                "suite `{}` left out: a built-in suite runs pitwall's code, the same on base and head (hint: [ci] builtin_suites = true compares it too)",
                s.name
            ),
        );
    }
    RunRequest {
        suites: own.iter().map(|s| s.name.clone()).collect(),
        filter: None,
    }
}

/// The line of a project with only built-in suites.
const ONLY_BUILTIN: &str = "[ci] builtin_suites is false, but every suite of this project is \
     built in: comparing them anyway (base and head run the same pitwall code)";

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    #[derive(Default)]
    struct Lines(RefCell<Vec<String>>);

    impl RunObserver for Lines {
        fn suite_skipped(&self, _suite: &str, reason: &str) {
            self.0.borrow_mut().push(reason.to_string());
        }
    }

    fn config(ci: &str, suites: &str) -> Config {
        pitwall_engine::config::parse_str(
            &format!("[project]\nname = \"p\"\n{ci}\n{suites}"),
            "pitwall.toml",
            "p",
        )
        .unwrap()
    }

    const MIXED: &str = "[[suite]]\nkind = \"kernel\"\n\n[[suite]]\nname = \"own\"\nkind = \"command\"\ncommand = \"true\"\n\n[[suite]]\nkind = \"collective\"\n";

    #[test]
    fn the_projects_own_cuda_kernels_are_compared() {
        // The example of docs/SUITES.md (`docs/examples/cuda-kernels`).
        let kernels = include_str!("../../../docs/examples/cuda-kernels/pitwall.toml");
        let lines = Lines::default();
        let req = pull_request_suites(&config("", &format!("{MIXED}\n{kernels}")), &lines);
        assert_eq!(
            req.suites,
            vec!["own".to_string(), "my-kernels".to_string()]
        );
        assert_eq!(lines.0.into_inner().len(), 2);
        // Its own kernels alone are the project's code: nothing left out, no line.
        let lines = Lines::default();
        let req = pull_request_suites(&config("", kernels), &lines);
        assert!(req.suites.is_empty() && req.filter.is_none());
        assert!(lines.0.into_inner().is_empty());
    }

    #[test]
    fn built_in_suites_are_left_out_by_default_each_with_one_line() {
        let lines = Lines::default();
        let req = pull_request_suites(&config("", MIXED), &lines);
        assert_eq!(req.suites, vec!["own".to_string()]);
        assert_eq!(req.filter, None);
        let lines = lines.0.into_inner();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(
            lines[0],
            "suite `kernel` left out: a built-in suite runs pitwall's code, the same on base and head (hint: [ci] builtin_suites = true compares it too)"
        );
        assert!(lines[1].starts_with("suite `collective` left out"));
    }

    #[test]
    fn builtin_suites_true_measures_every_suite() {
        let lines = Lines::default();
        let c = config("[ci]\nbuiltin_suites = true\n", MIXED);
        assert!(c.ci.builtin_suites);
        let req = pull_request_suites(&c, &lines);
        assert!(req.suites.is_empty(), "{:?}", req.suites);
        assert!(lines.0.into_inner().is_empty());
    }

    #[test]
    fn only_built_in_suites_are_measured_anyway_with_one_line() {
        for suites in ["", "[[suite]]\nkind = \"inference\"\n"] {
            let lines = Lines::default();
            let req = pull_request_suites(&config("", suites), &lines);
            assert!(req.suites.is_empty());
            let lines = lines.0.into_inner();
            assert_eq!(lines.len(), 1, "{lines:?}");
            assert!(lines[0].starts_with(ONLY_BUILTIN), "{}", lines[0]);
            assert!(lines[0].contains("hint: "), "{}", lines[0]);
        }
    }

    #[test]
    fn command_suites_alone_are_all_measured_silently() {
        let lines = Lines::default();
        let own = "[[suite]]\nname = \"a\"\nkind = \"command\"\ncommand = \"true\"\n";
        let req = pull_request_suites(&config("", own), &lines);
        assert!(req.suites.is_empty());
        assert!(lines.0.into_inner().is_empty());
    }

    #[test]
    fn the_default_keeps_the_config_hash_of_files_written_before_the_key() {
        let before = serde_json::to_string(&config("", MIXED).ci).unwrap();
        assert!(!before.contains("builtin_suites"), "{before}");
        let set = config("[ci]\nbuiltin_suites = true\n", MIXED);
        assert!(
            serde_json::to_string(&set.ci)
                .unwrap()
                .contains("\"builtin_suites\":true")
        );
        assert!(!config("", MIXED).ci.builtin_suites);
    }
}
