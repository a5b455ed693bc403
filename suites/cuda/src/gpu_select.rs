//! Which CUDA device is `[gpu] device`. The configuration names an NVML index (the GPU whose
//! clocks pitwall watches and whose NUMA node it pins to); CUDA numbers devices its own way,
//! after `CUDA_VISIBLE_DEVICES` and in `CUDA_DEVICE_ORDER` (fastest first by default), so the
//! two indices differ on many machines. The parent pitwall turns the NVML index into the GPU's
//! PCI bus id (`SuiteOptions::gpu_pci_bus_id`); here that id is matched against each visible
//! CUDA device's PCI domain, bus and device numbers. Without an id, CUDA device 0. A MIG
//! instance shares its GPU's bus id with the GPU's other instances, so the parent passes its
//! UUID (`SuiteOptions::gpu_uuid`), matched against each CUDA device's UUID.

use cudarc::driver::sys::CUdevice_attribute as Attr;

/// A PCI address as NVML (`00000000:17:00.0`) and CUDA (`0000:17:00.0`) write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PciAddress {
    pub domain: u32,
    pub bus: u32,
    pub device: u32,
}

impl PciAddress {
    /// Parses `domain:bus:device.function` (hex, any case, any domain width); the function is
    /// ignored (a GPU is function 0, and CUDA does not report it).
    pub fn parse(s: &str) -> Option<PciAddress> {
        let mut parts = s.trim().split(':');
        let (domain, bus, rest) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let device = rest.split('.').next()?;
        let hex = |h: &str| u32::from_str_radix(h, 16).ok();
        Some(PciAddress {
            domain: hex(domain)?,
            bus: hex(bus)?,
            device: hex(device)?,
        })
    }
}

impl std::fmt::Display for PciAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:04x}:{:02x}:{:02x}.0",
            self.domain, self.bus, self.device
        )
    }
}

/// The visible CUDA devices' PCI addresses and UUIDs, by CUDA ordinal.
pub trait CudaDevices {
    fn pci_addresses(&self) -> Result<Vec<PciAddress>, String>;
    /// Each device's UUID as hex digits (`cuDeviceGetUuid`: a MIG instance's own UUID).
    fn uuids(&self) -> Result<Vec<String>, String> {
        Ok(Vec::new())
    }
}

/// The hex digits of a UUID, lower case, without `GPU-`/`MIG-` and dashes.
pub fn uuid_hex(uuid: &str) -> String {
    let t = uuid.trim();
    let body = t
        .get(..4)
        .filter(|p| p.eq_ignore_ascii_case("GPU-") || p.eq_ignore_ascii_case("MIG-"))
        .map_or(t, |_| &t[4..]);
    body.chars()
        .filter(char::is_ascii_hexdigit)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// The CUDA ordinal of the MIG instance or GPU `uuid`, else of the GPU with PCI bus id
/// `bus_id` (neither: device 0).
pub fn cuda_ordinal_of(
    uuid: Option<&str>,
    bus_id: Option<&str>,
    devices: &dyn CudaDevices,
) -> Result<usize, String> {
    let Some(uuid) = uuid else {
        return cuda_ordinal(bus_id, devices);
    };
    let want = uuid_hex(uuid);
    let seen = devices.uuids()?;
    seen.iter().position(|u| uuid_hex(u) == want).ok_or_else(|| {
        format!(
            "[gpu] device `{uuid}` is not one of the {} CUDA devices visible here; hint: with MIG, set CUDA_VISIBLE_DEVICES to the instance's UUID (`nvidia-smi -L` lists them)",
            seen.len()
        )
    })
}

/// The CUDA ordinal of the GPU with PCI bus id `bus_id` (`None`: device 0).
pub fn cuda_ordinal(bus_id: Option<&str>, devices: &dyn CudaDevices) -> Result<usize, String> {
    let Some(bus_id) = bus_id else {
        return Ok(0);
    };
    let want = PciAddress::parse(bus_id)
        .ok_or_else(|| format!("[gpu] device: `{bus_id}` is not a PCI bus id"))?;
    let seen = devices.pci_addresses()?;
    seen.iter().position(|a| *a == want).ok_or_else(|| {
        let list: Vec<String> = seen.iter().map(ToString::to_string).collect();
        format!(
            "[gpu] device (PCI {want}) is not one of the CUDA devices visible here ({}); hint: check CUDA_VISIBLE_DEVICES, or set [gpu] device to a visible GPU's NVML index",
            if list.is_empty() { "none".to_string() } else { list.join(", ") }
        )
    })
}

/// The machine's CUDA devices through the driver (call only after the probe found it).
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemDevices;

impl CudaDevices for SystemDevices {
    fn pci_addresses(&self) -> Result<Vec<PciAddress>, String> {
        use cudarc::driver::result::device;
        let e = |e: cudarc::driver::DriverError| format!("CUDA driver: {e}");
        let count = device::get_count().map_err(e)?;
        (0..count)
            .map(|ordinal| {
                let dev = device::get(ordinal).map_err(e)?;
                // SAFETY: `dev` is a valid device handle; each call writes one int.
                let attr = |a| unsafe { device::get_attribute(dev, a) }.map_err(e);
                Ok(PciAddress {
                    domain: attr(Attr::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID)? as u32,
                    bus: attr(Attr::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID)? as u32,
                    device: attr(Attr::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID)? as u32,
                })
            })
            .collect()
    }

    fn uuids(&self) -> Result<Vec<String>, String> {
        use cudarc::driver::result::device;
        let e = |e: cudarc::driver::DriverError| format!("CUDA driver: {e}");
        let count = device::get_count().map_err(e)?;
        (0..count)
            .map(|ordinal| {
                let id = device::get_uuid(device::get(ordinal).map_err(e)?).map_err(e)?;
                Ok(id
                    .bytes
                    .iter()
                    .map(|b| format!("{:02x}", *b as u8))
                    .collect())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine whose CUDA order is not NVML's: CUDA_VISIBLE_DEVICES=3,1 on a node whose
    /// GPUs sit at buses 0x17, 0x3a, 0x5d, 0x9a (NVML indices 0–3).
    struct Fake(Vec<&'static str>);

    impl CudaDevices for Fake {
        fn pci_addresses(&self) -> Result<Vec<PciAddress>, String> {
            Ok(self
                .0
                .iter()
                .map(|s| PciAddress::parse(s).unwrap())
                .collect())
        }
    }

    /// Two MIG instances on one GPU: same bus id, told apart by UUID.
    struct Mig;

    impl CudaDevices for Mig {
        fn pci_addresses(&self) -> Result<Vec<PciAddress>, String> {
            Ok(vec![PciAddress::parse("0000:9a:00.0").unwrap(); 2])
        }
        fn uuids(&self) -> Result<Vec<String>, String> {
            Ok(vec![
                "aaaaaaaa000000000000000000000001".into(),
                "aaaaaaaa000000000000000000000002".into(),
            ])
        }
    }

    #[test]
    fn a_mig_instance_is_found_by_uuid_not_by_its_shared_bus_id() {
        let second = "MIG-aaaaaaaa-0000-0000-0000-000000000002";
        assert_eq!(
            cuda_ordinal_of(Some(second), Some("00000000:9A:00.0"), &Mig),
            Ok(1)
        );
        // By bus id alone it would be the first instance.
        assert_eq!(cuda_ordinal_of(None, Some("00000000:9A:00.0"), &Mig), Ok(0));
        let e = cuda_ordinal_of(Some("MIG-ffffffff-0000-0000-0000-000000000000"), None, &Mig)
            .unwrap_err();
        assert!(
            e.contains("is not one of the 2 CUDA devices visible here; hint:"),
            "{e}"
        );
        assert_eq!(uuid_hex("GPU-AB-cd"), "abcd");
    }

    #[test]
    fn nvml_and_cuda_spellings_of_one_address_are_equal() {
        let nvml = PciAddress::parse("00000000:9A:00.0").unwrap();
        let cuda = PciAddress::parse("0000:9a:00.0").unwrap();
        assert_eq!(nvml, cuda);
        assert_eq!(nvml.to_string(), "0000:9a:00.0");
        assert_eq!(PciAddress::parse("0001:17:02.1").unwrap().domain, 1);
        for bad in ["", "17:00.0", "zz:17:00.0", "0:1:2:3"] {
            assert_eq!(PciAddress::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_nvml_gpu_is_found_by_bus_id_whatever_cudas_order() {
        let visible = Fake(vec!["0000:9a:00.0", "0000:3a:00.0"]);
        // NVML index 3 (bus 0x9a) is CUDA 0, NVML index 1 (bus 0x3a) is CUDA 1.
        assert_eq!(cuda_ordinal(Some("00000000:9A:00.0"), &visible), Ok(0));
        assert_eq!(cuda_ordinal(Some("00000000:3A:00.0"), &visible), Ok(1));
        assert_eq!(cuda_ordinal(None, &visible), Ok(0));
        let hidden = cuda_ordinal(Some("00000000:17:00.0"), &visible).unwrap_err();
        assert!(
            hidden.starts_with("[gpu] device (PCI 0000:17:00.0) is not one of the CUDA devices visible here (0000:9a:00.0, 0000:3a:00.0); hint:"),
            "{hidden}"
        );
        assert!(
            cuda_ordinal(Some("gpu0"), &visible)
                .unwrap_err()
                .contains("not a PCI bus id")
        );
        assert!(
            cuda_ordinal(Some("0000:17:00.0"), &Fake(vec![]))
                .unwrap_err()
                .contains("(none)")
        );
        // Two PCI domains with the same bus number: the domain decides.
        let domains = Fake(vec!["0000:17:00.0", "0001:17:00.0"]);
        assert_eq!(cuda_ordinal(Some("00000001:17:00.0"), &domains), Ok(1));
        assert_eq!(cuda_ordinal(Some("00000000:17:00.0"), &domains), Ok(0));
    }
}
