//! What change-point detection is given and what it finds: the settings of `detect` with their
//! defaults, and the change point it reports. The detector, the tip check and the merge step's
//! verdict all read these, so they live apart from each of them.

use serde::Serialize;

/// Settings of the detector, `detect`. The defaults are the values used for every series in
/// pitwall's evaluation (`stats/eval/README.md`): one setting for all series, chosen by a small
/// grid (window, test window, effect floors, autocorrelation cap) scored on the TCPD series and
/// the synthetic benchmark histories together, not per series.
#[derive(Debug, Clone, PartialEq)]
pub struct DetectConfig {
    /// Length of the E-divisive windows; consecutive windows overlap by half. Default 30.
    pub window: usize,
    /// Fewest points a segment may have; change points closer than this are merged.
    /// Default 5.
    pub min_segment: usize,
    /// Most points on each side of a change point that its test uses. Bounds the cost and
    /// makes change points independent of data far away. Default 100.
    pub test_window: usize,
    /// Significance level of the final (merge) step. Default 0.001 (Otava's default).
    pub max_p_value: f64,
    /// Relaxed level at which the split step keeps weak change points. Default 0.01 (10× the
    /// final level, as Otava does).
    pub weak_p_value: f64,
    /// Smallest step, in robust standard deviations of the residuals (1.4826·MAD), that counts
    /// as a change. Default 2.0.
    pub min_effect: f64,
    /// Smallest |after/before − 1| of the medians of the test windows that counts as a change.
    /// Default 0.01 (1%).
    pub min_rel_change: f64,
    /// Fit a common linear trend across each tested pair of segments, so drifts are not read
    /// as steps. Default true.
    pub detrend: bool,
    /// Histories shorter than this many points are tested for level steps alone: no common
    /// trend and no autocorrelation correction. On a short history the trend and step columns
    /// of the regression are strongly correlated (at 5 + 5 points r ≈ 0.87, so the step's
    /// standard error is about twice that without the trend), and a lag-1 autocorrelation
    /// estimated from a dozen residuals is mostly noise (standard deviation about 1/√n) that,
    /// clamped at 0, can only inflate the variance: together they found a 5σ step with 5 runs
    /// either side in 23% of trials, 98.5% without (issue 27; `stats/examples/short_steps.rs`,
    /// docs/STATISTICS.md "Short histories"). The rule looks at the whole series, not the
    /// tested stretch, so long series (TCPD, the generated sets) are tested as before; the
    /// price is that a series crossing the length can lose a change point that rested on the
    /// plain test. 0 fits both everywhere (the behaviour before). Default 24.
    pub short_history: usize,
    /// Winsorising constant: residuals are clipped at this many robust standard deviations
    /// before the test. Default 2.5.
    pub clip: f64,
    /// Largest lag-1 autocorrelation of the residuals that the test corrects for (variance
    /// inflated by (1 + ρ)/(1 − ρ), degrees of freedom shrunk to the effective sample size;
    /// Bayley & Hammersley, "The effective number of independent observations in an
    /// autocorrelated time series", JRSS Suppl. 8(2), 1946). 0 treats the noise as independent.
    /// Default 0.5.
    pub max_autocorrelation: f64,
    /// Smallest change of slope that counts as a change on its own (a "kink", tested by
    /// `kink_test` against the same straight-line null as the step test), as the deviation
    /// it builds up over the shorter side of the test window, in robust standard deviations of
    /// the residuals. `f64::INFINITY` turns the kink test off. Default off (`f64::INFINITY`):
    /// at 16 (with `kink_p_factor` 0.03) every stats test passes and TCPD F1 is 0.753, but only
    /// at that one grid point, and detection is about 2× slower (0.036–0.039 s for the whole
    /// evaluation against a 0.035 s budget); see `stats/eval/README.md`.
    pub kink_min_effect: f64,
    /// The kink test's significance level, as a multiple of the step test's (both in the
    /// split and in the merge step): the hinge is placed where it fits best, so its p-value
    /// needs a stricter bar. Default 0.01.
    pub kink_p_factor: f64,
    /// Start the winsorising of the step and kink tests from a robust fit (a Theil line on
    /// each side of the candidate, `steptest::robust_start`) instead of plain least squares,
    /// so outliers cannot bend the first fit. Default false: it scored lower on TCPD
    /// (`stats/eval/README.md`).
    pub robust_start: bool,
    /// Also detect changes of slope on smooth series: when the lag-1 autocorrelation r₁ of the
    /// first differences exceeds `slope_change_z`/√(n − 1) (a one-sided large-sample test of
    /// positively autocorrelated increments; under independent increments r₁ is approximately
    /// normal with standard deviation 1/√(n − 1), Bartlett 1946), the split/merge detection is
    /// run again on the first differences and its change points (the first point after the
    /// slope changed) are added wherever no level change point lies within `min_segment`.
    /// Measurement noise around a level gives r₁ ≈ −0.5 and a random walk r₁ ≈ 0, so the pass
    /// is only taken on series whose local slope persists (macro-economic series, slow
    /// warm-ups). The decision is made once for the whole series, so for a series near the
    /// threshold appending data can switch the pass on or off. `f64::INFINITY` turns it off.
    /// Default 1.645 (one-sided 5%); see `stats/eval/README.md`.
    pub slope_change_z: f64,
    /// Most points the refinement step may move a change point: after the merge step each one
    /// is re-placed at the least-absolute-deviation single split of the stretch between its
    /// neighbours (at most `window` points to either side), if it still passes there
    /// (`refine.rs`; Bai 1997's "repartition"). The E-divisive split alone is off by one for
    /// about one step in ten; with this, 98.2% of the found 4–12 σ steps of the generated set
    /// are placed on their first point, against 89.6% without (`stats/examples/
    /// cp_localization.rs`, docs/STATISTICS.md). 0 turns it off. Default 5 (the minimum
    /// segment; not tuned).
    pub refine_radius: usize,
    /// The testbed's noise record of this series (`known::KnownNoise`), pooled into the
    /// variance of the plain level-step test on short histories (`short_history`) where the
    /// data agree with it; long histories estimate their noise well enough alone. Not a
    /// setting: the history layer fills it per series from the store. Default `None`.
    pub known_noise: Option<super::known::KnownNoise>,
    /// On histories under `scan_below` points, correct each step test's p-value for the scan
    /// over the places the step could have been put between its neighbours (`scan.rs`,
    /// Siegmund 1988): the split tested is the best of those, so its plain p-value
    /// understates the chance that noise alone gives one as good. At 5 + 5 points there is
    /// one place and nothing changes. Default true.
    pub short_multiplicity: bool,
    /// The history length (points) from which the scan correction is no longer applied.
    /// Default 40: the largest that leaves the TCPD figures of docs/STATISTICS.md as they
    /// were (48 and above lower TCPD F1); below it, 30-point no-change series gave 0.33 false
    /// alarms per 1000 points, and 0.05 with it. Chosen on those two figures, not tuned
    /// further.
    pub scan_below: usize,
}

impl DetectConfig {
    /// Sets the numeric field `key` from text (`window=30`), for the evaluation examples'
    /// `--set key=value`; an unknown key or a value that does not parse is an error.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let f = || value.parse::<f64>().map_err(|e| format!("{key}: {e}"));
        let u = || value.parse::<usize>().map_err(|e| format!("{key}: {e}"));
        match key {
            "window" => self.window = u()?,
            "min_segment" => self.min_segment = u()?,
            "test_window" => self.test_window = u()?,
            "short_history" => self.short_history = u()?,
            "refine_radius" => self.refine_radius = u()?,
            "max_p_value" => self.max_p_value = f()?,
            "weak_p_value" => self.weak_p_value = f()?,
            "min_effect" => self.min_effect = f()?,
            "min_rel_change" => self.min_rel_change = f()?,
            "clip" => self.clip = f()?,
            "max_autocorrelation" => self.max_autocorrelation = f()?,
            "kink_min_effect" => self.kink_min_effect = f()?,
            "kink_p_factor" => self.kink_p_factor = f()?,
            "slope_change_z" => self.slope_change_z = f()?,
            "short_multiplicity" => self.short_multiplicity = u()? != 0,
            "scan_below" => self.scan_below = u()?,
            _ => return Err(format!("unknown or unsupported DetectConfig field {key}")),
        }
        Ok(())
    }
}

impl Default for DetectConfig {
    fn default() -> Self {
        DetectConfig {
            window: 30,
            min_segment: 5,
            test_window: 100,
            max_p_value: 0.001,
            weak_p_value: 0.01,
            min_effect: 2.0,
            min_rel_change: 0.01,
            detrend: true,
            short_history: 24,
            clip: 2.5,
            max_autocorrelation: 0.5,
            kink_min_effect: f64::INFINITY,
            kink_p_factor: 0.01,
            robust_start: false,
            slope_change_z: 1.645,
            refine_radius: 5,
            known_noise: None,
            short_multiplicity: true,
            scan_below: 40,
        }
    }
}

/// One detected change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangePoint {
    /// 0-based index of the first point of the new regime.
    pub index: usize,
    /// Median of the segment before (from the previous change point or the start).
    pub before: f64,
    /// Median of the segment after (up to the next change point or the end).
    pub after: f64,
    /// after / before − 1 (±∞ when `before` is 0 and `after` is not, 0 when both are).
    pub rel_change: f64,
    /// Two-sided p-value of the step test that accepted this change point.
    pub p_value: f64,
}
