//! What a run records of the machine's contention while it measured (other processes'
//! runnable threads on the benchmark CPUs, steal time, CPU pressure stalls) and the rule that
//! calls a run `contended`, so history and comparisons can leave such runs out or warn.

use serde::{Deserialize, Serialize};

/// The machine's contention over a run's measured time, summarized from samples taken every
/// 100 ms. A figure is `None` when the kernel did not say (no PSI, a container without
/// `/proc/stat`): unknown, never zero.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contention {
    /// Samples taken.
    pub samples: u32,
    /// Mean over the samples of other processes' threads in state `R` whose last CPU is a
    /// benchmark CPU (pitwall and the processes it started left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_runnable_threads: Option<f64>,
    /// Steal time as a percentage of the benchmark CPUs' time (`/proc/stat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_pct: Option<f64>,
    /// Share of the measured wall time in which some task of the whole system waited for a
    /// CPU (`/proc/pressure/cpu`, `some`, from its `total` counter), in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psi_some_pct: Option<f64>,
    /// The same for pitwall's own cgroup (cgroup v2 `cpu.pressure`), when it has one: the
    /// stalls of pitwall and its benchmarks, not counted against the machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psi_cgroup_some_pct: Option<f64>,
    /// Whether the run is contended by [`ContentionLimits`].
    pub contended: bool,
    /// One line per limit reached, e.g. `other runnable threads 1.8 ≥ 0.5`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
}

/// When a run is contended (`[history] contended_*`); reaching any one limit is enough.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ContentionLimits {
    /// Mean other runnable threads on the benchmark CPUs.
    pub runnable_threads: f64,
    /// Steal time, percent.
    pub steal_pct: f64,
    /// CPU pressure `some` not explained by pitwall's own cgroup, percent
    /// ([`Contention::others_psi_some_pct`]).
    pub psi_some_pct: f64,
}

impl Contention {
    /// A summary of measured figures, classified by `limits`.
    pub fn classified(
        samples: u32,
        other_runnable_threads: Option<f64>,
        steal_pct: Option<f64>,
        psi_some_pct: Option<f64>,
        psi_cgroup_some_pct: Option<f64>,
        limits: &ContentionLimits,
    ) -> Contention {
        let mut c = Contention {
            samples,
            other_runnable_threads,
            steal_pct,
            psi_some_pct,
            psi_cgroup_some_pct,
            contended: false,
            reasons: Vec::new(),
        };
        c.classify(limits);
        c
    }

    /// The CPU pressure `some` the classification uses: the system's minus pitwall's own
    /// cgroup's (at least 0), when both are known; the system's alone otherwise. The system's
    /// stalled time is the union of the stalls of pitwall's cgroup and of the rest, so this is
    /// a lower bound on the share of time in which only tasks outside pitwall's cgroup
    /// waited: a benchmark with more threads than CPUs does not make its own run contended.
    pub fn others_psi_some_pct(&self) -> Option<f64> {
        let system = self.psi_some_pct?;
        Some(match self.psi_cgroup_some_pct {
            Some(own) => (system - own).max(0.0),
            None => system,
        })
    }

    /// Sets `contended` and `reasons` from the figures and `limits`.
    pub fn classify(&mut self, limits: &ContentionLimits) {
        let mut reasons = Vec::new();
        if let Some(t) = self.other_runnable_threads {
            if t >= limits.runnable_threads {
                reasons.push(format!(
                    "other runnable threads {t:.1} ≥ {}",
                    limits.runnable_threads
                ));
            }
        }
        if let Some(s) = self.steal_pct {
            if s >= limits.steal_pct {
                reasons.push(format!("steal {s:.1}% ≥ {}%", limits.steal_pct));
            }
        }
        if let Some(p) = self.others_psi_some_pct() {
            if p >= limits.psi_some_pct {
                reasons.push(format!("cpu pressure {p:.1}% ≥ {}%", limits.psi_some_pct));
            }
        }
        self.contended = !reasons.is_empty();
        self.reasons = reasons;
    }

    /// `contended: reason; reason` or `not contended`, for a line of output.
    pub fn verdict(&self) -> String {
        if self.contended {
            format!("contended: {}", self.reasons.join("; "))
        } else {
            "not contended".to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: ContentionLimits = ContentionLimits {
        runnable_threads: 0.5,
        steal_pct: 2.0,
        psi_some_pct: 10.0,
    };

    fn c(t: Option<f64>, s: Option<f64>, p: Option<f64>, own: Option<f64>) -> Contention {
        Contention::classified(10, t, s, p, own, &LIMITS)
    }

    #[test]
    fn each_limit_alone_makes_a_run_contended() {
        assert!(!c(Some(0.4), Some(1.9), Some(9.9), None).contended);
        let threads = c(Some(0.5), Some(0.0), Some(0.0), None);
        assert_eq!(threads.reasons, vec!["other runnable threads 0.5 ≥ 0.5"]);
        let steal = c(Some(0.0), Some(2.0), None, None);
        assert_eq!(steal.reasons, vec!["steal 2.0% ≥ 2%"]);
        let psi = c(None, None, Some(12.0), None);
        assert_eq!(psi.reasons, vec!["cpu pressure 12.0% ≥ 10%"]);
        assert_eq!(
            c(Some(2.0), Some(5.0), Some(50.0), None).reasons.len(),
            3,
            "every limit reached is named"
        );
    }

    #[test]
    fn unknown_figures_never_make_a_run_contended() {
        let none = c(None, None, None, None);
        assert!(!none.contended && none.reasons.is_empty());
        assert_eq!(none.verdict(), "not contended");
    }

    #[test]
    fn pitwalls_own_cgroup_stalls_are_not_counted() {
        let own = c(None, None, Some(30.0), Some(25.0));
        assert_eq!(own.others_psi_some_pct(), Some(5.0));
        assert!(!own.contended);
        assert_eq!(
            c(None, None, Some(10.0), Some(40.0)).others_psi_some_pct(),
            Some(0.0)
        );
        assert!(c(None, None, Some(40.0), Some(5.0)).contended);
    }

    #[test]
    fn round_trips_through_json_without_unknown_fields() {
        let c = c(Some(1.25), None, Some(3.0), None);
        let text = serde_json::to_string(&c).unwrap();
        assert!(!text.contains("steal_pct"), "{text}");
        assert_eq!(serde_json::from_str::<Contention>(&text).unwrap(), c);
    }
}
