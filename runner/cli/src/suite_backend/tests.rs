//! The no-GPU line: short, one line whatever failed.

use super::{SuiteBackend, no_gpu_line};

fn cpu(cuda_skipped: Option<&str>) -> SuiteBackend {
    SuiteBackend {
        backend: Box::new(pitwall_cpu::CpuBackend),
        cuda_skipped: cuda_skipped.map(str::to_string),
        notes: Vec::new(),
    }
}

#[test]
fn the_no_gpu_line_is_short() {
    let reason = "nvml is not available: cannot load libnvidia-ml.so.1 (libnvidia-ml.so.1: cannot open shared object file: No such file or directory); hint: GPU features need the NVIDIA driver (libnvidia-ml.so.1); use clock mode off on machines without one";
    assert_eq!(
        no_gpu_line(Some(reason), &cpu(None)).unwrap(),
        "no GPU (no NVIDIA driver): GPU monitoring skipped, CPU suites only"
    );
    assert_eq!(
        no_gpu_line(
            Some("nvml is not available: NVML init failed: driver/library mismatch; hint: x"),
            &cpu(None)
        )
        .unwrap(),
        "no GPU (NVML init failed: driver/library mismatch): GPU monitoring skipped, CPU suites only"
    );
}

#[test]
fn no_driver_for_nvml_nor_cuda_is_one_line() {
    let reason = "nvml is not available: cannot load libnvidia-ml.so.1 (x); hint: y";
    assert_eq!(
        no_gpu_line(Some(reason), &cpu(Some("no CUDA driver"))).unwrap(),
        "no GPU (no CUDA driver): GPU monitoring and CUDA suites skipped, CPU suites only"
    );
    assert_eq!(
        no_gpu_line(None, &cpu(Some("no NVRTC"))).unwrap(),
        "no CUDA (no NVRTC): CUDA suites skipped, CPU suites only"
    );
    assert_eq!(
        no_gpu_line(Some(reason), &cpu(Some("no NVRTC"))).unwrap(),
        "no GPU (no NVIDIA driver; no NVRTC): GPU monitoring and CUDA suites skipped, CPU suites only"
    );
    assert_eq!(
        no_gpu_line(None, &cpu(Some("no CUDA driver"))).unwrap(),
        "no GPU (no CUDA driver): CUDA suites skipped, CPU suites only"
    );
    assert_eq!(no_gpu_line(None, &cpu(None)), None);
}
