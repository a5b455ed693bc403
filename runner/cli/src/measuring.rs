//! The one set-up of every measuring command (`run`, `run --base --head`, `ci`, `ci --push`,
//! `bisect`, `alert bisect`): the console (progress, machine set-up, the no-GPU line and
//! warnings) and the use case's `Measurer` around it, with the progress line cleared before
//! the command prints its result. Identical kernels are told apart by NVRTC (`NvrtcDigests`).

use pitwall_engine::config::Config;
use pitwall_pipeline::labels::Labels;
use pitwall_pipeline::measure::Measurer;

use super::args::Global;
use super::console::{Console, OnStored};
use super::exit::Failure;

/// Runs `use_case` with a `Measurer` whose backend and hooks are a new console's, stored runs
/// labelled with `labels` (a bisection stores none: `Labels::default()`), each stored run
/// shown by `on_stored` as soon as it is stored. The console is finished when `use_case`
/// returns, whatever it returned.
pub(super) fn measuring<'a, T>(
    g: &'a Global,
    config: &'a Config,
    labels: Labels,
    on_stored: Option<&'a OnStored<'a>>,
    use_case: impl FnOnce(&Measurer<'_>) -> T,
) -> Result<T, Failure> {
    let mut console = Console::new(g, config)?;
    if let Some(f) = on_stored {
        console = console.on_stored(f);
    }
    let m = Measurer {
        config,
        backend: console.backend(),
        hooks: &console,
        labels,
        kernels: Some(&NvrtcDigests),
    };
    let out = use_case(&m);
    console.finish();
    Ok(out)
}

/// Identical kernels told apart by compiling both checkouts with NVRTC for one architecture
/// (`pitwall_engine::defaults::IDENTITY_SM`), no GPU needed.
struct NvrtcDigests;

impl pitwall_pipeline::identical::KernelDigests for NvrtcDigests {
    fn digests(
        &self,
        checkout: &std::path::Path,
        manifest: &pitwall_schema::manifest::KernelManifest,
    ) -> Result<Vec<(String, Option<String>)>, String> {
        pitwall_cuda::user::identity::kernel_digests(
            checkout,
            manifest,
            pitwall_engine::defaults::IDENTITY_SM,
        )
    }
}
