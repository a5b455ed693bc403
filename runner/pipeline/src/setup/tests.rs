//! The machine set-up against fake sysfs, NVML and CUDA drivers: what is pinned, locked,
//! monitored and recorded, and every warning.

use super::*;
use pitwall_host::gpu::{CudaDevice0, FakeNvml, fake_device};
use pitwall_host::machine::{DirSysfs, FakeAffinity};

struct Cuda(CudaDevice0);

impl CudaDriver for Cuda {
    fn device0(&self) -> CudaDevice0 {
        self.0.clone()
    }
}

/// `prepare` on an empty machine tree with `nvml`, CUDA device 0 at `cuda0`.
fn prepare(config: &Config, nvml: &FakeNvml, cuda0: CudaDevice0) -> RunEnvironment {
    let root = tempfile::tempdir().unwrap();
    let shared: Arc<dyn Nvml> = Arc::new(nvml.clone());
    RunEnvironment::prepare_with(
        config,
        root.path(),
        &DirSysfs::new(root.path()),
        &FakeAffinity::new(vec![0, 1]),
        Ok(shared),
        &Cuda(cuda0),
        Mode::Apply,
    )
    .unwrap()
}

#[test]
fn unset_device_is_cuda_device_0_for_clocks_monitor_and_pinning() {
    // NVML 0–2; CUDA_VISIBLE_DEVICES=2 makes NVML 2 (bus 0x19) CUDA's device 0.
    let nvml = FakeNvml::new().with_devices((0..3).map(fake_device).collect());
    let mut config = Config::builtin_default("p");
    config.gpu.clocks = ClockMode::Lock { sm_mhz: None };
    let env = prepare(&config, &nvml, CudaDevice0::BusId("0000:19:00.0".into()));
    assert_eq!(env.gpu_pci_bus_id.as_deref(), Some("00000000:19:00.0"));
    assert_eq!(env.monitor_health().map(|h| h.device), Some(2));
    assert_eq!(nvml.locked(2), Some((1575, 1575)), "{:?}", nvml.calls());
    assert_eq!(nvml.locked(0), None);
    let clocks = env.fingerprint.section::<Clocks>().unwrap();
    assert_eq!(clocks.device, Some(2));
    assert_eq!(clocks.lock_target_sm_mhz, Some(1575));
    env.finish().unwrap();
    assert_eq!(nvml.locked(2), None, "restored");
}

#[test]
fn without_nvml_a_named_bus_id_or_uuid_still_reaches_the_cuda_suites() {
    let root = tempfile::tempdir().unwrap();
    let suite_options = |device: &str| {
        let mut config = Config::builtin_default("p");
        config.gpu.device = Some(DeviceSelector::parse(device).unwrap());
        let env = RunEnvironment::prepare_with(
            &config,
            root.path(),
            &DirSysfs::new(root.path()),
            &FakeAffinity::new(vec![0]),
            Err(GpuError::Unavailable {
                reason: "no driver".into(),
            }),
            &Cuda(CudaDevice0::NoDriver),
            Mode::Inspect,
        )
        .unwrap();
        let suite = config
            .suites
            .iter()
            .find(|s| matches!(s.spec, SuiteSpec::Builtin { .. }))
            .unwrap();
        match &env.with_gpu(suite).spec {
            SuiteSpec::Builtin { options, .. } => {
                (options.gpu_pci_bus_id.clone(), options.gpu_uuid.clone())
            }
            _ => unreachable!(),
        }
    };
    assert_eq!(
        suite_options("0000:9a:00.0"),
        (Some("0000:9a:00.0".into()), None)
    );
    assert_eq!(
        suite_options("MIG-abcd-1"),
        (None, Some("MIG-abcd-1".into()))
    );
    assert_eq!(
        suite_options("3"),
        (None, None),
        "an index means nothing to CUDA"
    );
}

#[test]
fn a_denied_lock_observes_and_is_recorded_as_such() {
    let nvml = FakeNvml::new().denying_lock();
    let mut config = Config::builtin_default("p");
    config.gpu.clocks = ClockMode::Lock { sm_mhz: None };
    let env = prepare(&config, &nvml, CudaDevice0::NoDriver);
    let clocks = env.fingerprint.section::<Clocks>().unwrap();
    assert_eq!(clocks.mode.as_deref(), Some(LOCK_DENIED_MODE));
    assert_eq!(clocks.locked_sm_mhz, None);
    assert!(env.monitor_health().is_some(), "observed");
    let said: Vec<&String> = env
        .warnings
        .iter()
        .filter(|w| w.contains("not allowed to lock the clocks"))
        .collect();
    assert_eq!(said.len(), 1, "{:?}", env.warnings);
    assert!(said[0].contains("hint:"), "{}", said[0]);
    // Once per process: a second set-up says nothing more.
    let again = prepare(&config, &nvml, CudaDevice0::NoDriver);
    assert!(
        !again
            .warnings
            .iter()
            .any(|w| w.contains("not allowed to lock")),
        "{:?}",
        again.warnings
    );
    // A denied-lock run never compares with a locked one.
    let mut locked = env.fingerprint.clone();
    locked.set_section(&Clocks {
        mode: Some("lock".into()),
        ..Clocks::default()
    });
    let d = pitwall_host::fingerprint::differences(&env.fingerprint, &locked);
    assert!(
        d.iter()
            .any(|l| l == "gpu clock policy: observe (lock denied) vs lock"),
        "{d:?}"
    );
}

#[test]
fn built_in_suites_carry_the_pci_bus_id_of_gpu_device() {
    let config = Config::builtin_default("p");
    let suite = config
        .suites
        .iter()
        .find(|s| matches!(s.spec, SuiteSpec::Builtin { .. }))
        .expect("the default has built-in suites");
    let bus_id = |s: &SuiteConfig| match &s.spec {
        SuiteSpec::Builtin { options, .. } => options.gpu_pci_bus_id.clone(),
        _ => None,
    };
    let mut env = RunEnvironment::plain(Fingerprint::default());
    // Without NVML's device the suite is passed on as configured.
    assert!(matches!(env.with_gpu(suite), std::borrow::Cow::Borrowed(_)));
    env.gpu_pci_bus_id = Some("00000000:9A:00.0".to_string());
    let on_gpu = env.with_gpu(suite);
    assert_eq!(bus_id(&on_gpu).as_deref(), Some("00000000:9A:00.0"));
    assert_eq!(on_gpu.name, suite.name);
    assert_eq!(bus_id(suite), None, "the configuration itself is unchanged");
}
