//! The device-selection table: every way `[gpu] device` can name a GPU, on a four-GPU node
//! whose CUDA order is not NVML's (`CUDA_VISIBLE_DEVICES=3,1`), with MIG instances on GPU 2.

use super::*;
use crate::gpu::{FakeNvml, fake_device};

struct Cuda(CudaDevice0);

impl CudaDriver for Cuda {
    fn device0(&self) -> CudaDevice0 {
        self.0.clone()
    }
}

/// NVML indices 0–3 at buses 0x17, 0x18, 0x19, 0x1A (`fake_device`).
fn node() -> (FakeNvml, Vec<GpuDevice>) {
    let devices: Vec<GpuDevice> = (0..4).map(fake_device).collect();
    let nvml = FakeNvml::new()
        .with_devices(devices.clone())
        .with_mig("MIG-aaaaaaaa-0000-0000-0000-000000000001", 2);
    (nvml, devices)
}

fn select(selector: Option<&str>, cuda: CudaDevice0) -> Result<SelectedGpu, String> {
    let (nvml, devices) = node();
    let parsed = selector.map(|s| DeviceSelector::parse(s).unwrap());
    select_gpu(parsed.as_ref(), &devices, &nvml, &Cuda(cuda)).map_err(|e| e.to_string())
}

#[test]
fn the_selection_table() {
    let cuda0_is_nvml3 = || CudaDevice0::BusId("0000:1A:00.0".into());
    // (value, what CUDA device 0 is, NVML index chosen, MIG uuid carried)
    let table: [(Option<&str>, CudaDevice0, u32, Option<&str>); 9] = [
        // Unset: CUDA device 0's bus id, whatever NVML's order.
        (None, cuda0_is_nvml3(), 3, None),
        // Unset, no CUDA driver here: NVML's first GPU (no CUDA suite can run anyway).
        (None, CudaDevice0::NoDriver, 0, None),
        // An NVML index, as a number or as digits.
        (Some("1"), cuda0_is_nvml3(), 1, None),
        (Some("0"), cuda0_is_nvml3(), 0, None),
        // A PCI bus id in NVML's and in CUDA's spelling.
        (Some("00000000:19:00.0"), cuda0_is_nvml3(), 2, None),
        (Some("0000:18:00.0"), cuda0_is_nvml3(), 1, None),
        // A GPU UUID, any case.
        (
            Some("GPU-00000000-0000-0000-0000-000000000002"),
            cuda0_is_nvml3(),
            2,
            None,
        ),
        (
            Some("gpu-00000000-0000-0000-0000-000000000001"),
            cuda0_is_nvml3(),
            1,
            None,
        ),
        // A MIG instance: its GPU for clocks and pinning, its UUID for CUDA.
        (
            Some("MIG-aaaaaaaa-0000-0000-0000-000000000001"),
            cuda0_is_nvml3(),
            2,
            Some("MIG-aaaaaaaa-0000-0000-0000-000000000001"),
        ),
    ];
    for (value, cuda, index, mig) in table {
        let got = select(value, cuda.clone()).unwrap_or_else(|e| panic!("{value:?}: {e}"));
        assert_eq!(got.index, index, "{value:?} with {cuda:?}");
        assert_eq!(got.mig_uuid.as_deref(), mig, "{value:?}");
        assert_eq!(
            got.pci_bus_id,
            fake_device(index).pci_bus_id,
            "{value:?}: the bus id the CUDA backend maps"
        );
        assert_eq!(got.warning, None, "{value:?}");
    }
}

#[test]
fn what_cannot_be_selected_is_named() {
    let e = select(Some("7"), CudaDevice0::NoDriver).unwrap_err();
    assert!(
        e.starts_with("[gpu] device `7`: no GPU with NVML index 7 (NVML sees 0 00000000:17:00.0,"),
        "{e}"
    );
    assert!(e.contains("hint:"), "{e}");
    let e = select(Some("0000:99:00.0"), CudaDevice0::NoDriver).unwrap_err();
    assert!(e.contains("no GPU at this PCI bus id"), "{e}");
    let e = select(Some("GPU-ffffffff"), CudaDevice0::NoDriver).unwrap_err();
    assert!(e.contains("no GPU with this UUID"), "{e}");
    let e = select(Some("MIG-ffffffff"), CudaDevice0::NoDriver).unwrap_err();
    assert!(e.contains("NVML knows no MIG instance"), "{e}");
    // CUDA device 0 that NVML does not see: no guess at another GPU.
    let e = select(None, CudaDevice0::BusId("0000:99:00.0".into())).unwrap_err();
    assert!(e.contains("CUDA device 0 is at PCI 0000:99:00.0"), "{e}");
}

#[test]
fn a_driver_that_cannot_say_falls_back_to_nvml_0_with_a_warning() {
    let got = select(
        None,
        CudaDevice0::Failed("no CUDA device is visible".into()),
    )
    .unwrap();
    assert_eq!(got.index, 0);
    let w = got.warning.unwrap();
    assert!(
        w.starts_with("gpu: CUDA device 0 is unknown (no CUDA device is visible)"),
        "{w}"
    );
}

#[test]
fn values_parse_by_their_form() {
    use DeviceSelector as D;
    assert_eq!(D::parse("3"), Ok(D::Index(3)));
    assert_eq!(
        D::parse(" 0000:9a:00.0 "),
        Ok(D::PciBusId("0000:9a:00.0".into()))
    );
    assert_eq!(D::parse("9A:00.0"), Ok(D::PciBusId("9A:00.0".into())));
    assert!(D::parse("MIG-1234").unwrap().is_mig());
    assert!(!D::parse("GPU-1234").unwrap().is_mig());
    for bad in ["", "gpu0", "GPU-", "17:00", "-1", "cuda:0"] {
        let e = D::parse(bad).unwrap_err();
        assert!(
            e.contains("hint:") || e.contains("not a valid"),
            "{bad}: {e}"
        );
    }
}

#[test]
fn the_real_driver_answers_without_a_gpu() {
    // On a machine without libcuda.so.1 this says so; with one it names a bus id or why not.
    match SystemCuda.device0() {
        CudaDevice0::NoDriver | CudaDevice0::Failed(_) => {}
        CudaDevice0::BusId(id) => assert!(normalize_pci_bus_id(&id).is_some(), "{id}"),
    }
}
