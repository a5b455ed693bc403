//! The NVML-backed GPU access, on what can be checked without a GPU.

use super::*;

#[test]
fn topology_words_follow_nvidia_smi() {
    let l = |n, level| topology_label(n, level);
    assert_eq!(l(18, Some(TopologyLevel::System)).as_deref(), Some("NV18"));
    assert_eq!(l(0, Some(TopologyLevel::Single)).as_deref(), Some("PIX"));
    assert_eq!(l(0, Some(TopologyLevel::Multiple)).as_deref(), Some("PXB"));
    assert_eq!(
        l(0, Some(TopologyLevel::HostBridge)).as_deref(),
        Some("PHB")
    );
    assert_eq!(l(0, Some(TopologyLevel::Node)).as_deref(), Some("NODE"));
    assert_eq!(l(0, Some(TopologyLevel::System)).as_deref(), Some("SYS"));
    assert_eq!(l(0, None), None);
    assert_eq!(l(2, None).as_deref(), Some("NV2"));
}
