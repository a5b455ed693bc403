//! Contention sampling on the prepared machine: the probe a run's rounds sample while each
//! side measures, and the one-second sample of `pitwall env`.

use std::sync::Arc;
use std::time::Duration;

use pitwall_host::machine::{ContentionProbe, ContentionTally, ContentionWatch, SAMPLE_PERIOD};
use pitwall_schema::{Contention, ContentionLimits};

use super::RunEnvironment;

impl RunEnvironment {
    /// Samples contention with `probe` while measuring (none: not sampled, the runs carry no
    /// `contention`).
    pub fn set_contention_probe(&mut self, probe: Option<Arc<dyn ContentionProbe>>) {
        self.contention = probe;
    }

    /// Starts sampling contention, when there is a probe; stop it with
    /// [`ContentionWatch::stop`] and add the window to a [`ContentionTally`].
    pub fn watch_contention(&self) -> Option<ContentionWatch> {
        self.contention
            .as_ref()
            .map(|p| ContentionWatch::start(Arc::clone(p), SAMPLE_PERIOD))
    }

    /// How contended the machine is over the next `duration` (`pitwall env`); `None` without
    /// a probe.
    pub fn sample_contention(
        &self,
        duration: Duration,
        limits: &ContentionLimits,
    ) -> Option<Contention> {
        let watch = self.watch_contention()?;
        std::thread::sleep(duration);
        let mut tally = ContentionTally::default();
        tally.add_window(&watch.stop());
        tally.summary(limits)
    }
}
