//! Fuzz target: the pytest_benchmark reader must return a result or a FormatError on any input, never
//! panic, hang or read out of bounds.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pitwall_formats::{parse, Input, InputFormat};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(run) = parse(InputFormat::PytestBenchmark, Input::Text(text)) {
            // What a reader returns must be storable: finite samples only.
            for b in &run.benchmarks {
                assert!(b.samples.iter().all(|v| v.is_finite()), "non-finite sample from {}", b.name);
            }
        }
    }
});
