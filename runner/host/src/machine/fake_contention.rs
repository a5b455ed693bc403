//! A scripted `ContentionProbe` for tests: compiled for this crate's tests and with the
//! `test-hooks` feature, never in a release build.

use std::sync::Mutex;

use super::contention::{ContentionProbe, ContentionSample};

/// Returns its samples in turn, then the last one forever; counts the reads.
#[derive(Debug, Default)]
pub struct FakeContention {
    script: Vec<ContentionSample>,
    reads: Mutex<usize>,
}

impl FakeContention {
    /// A probe that reads `script` in order (an empty script reads all-unknown samples).
    pub fn new(script: Vec<ContentionSample>) -> Self {
        Self {
            script,
            reads: Mutex::new(0),
        }
    }

    /// How many samples were read.
    pub fn reads(&self) -> usize {
        *self.reads.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl ContentionProbe for FakeContention {
    fn sample(&self) -> ContentionSample {
        let mut reads = self.reads.lock().unwrap_or_else(|e| e.into_inner());
        let at = (*reads).min(self.script.len().saturating_sub(1));
        *reads += 1;
        self.script.get(at).cloned().unwrap_or_default()
    }
}
