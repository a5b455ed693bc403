//! `ClockGuard`: locks GPU clocks for the length of a run and puts them back however the run
//! ends: normal return (Drop), panic (Drop during unwinding), SIGINT or SIGTERM (through
//! signal-hook: a thread restores every active guard, then dies of the same signal). A GPU left locked after a
//! benchmark silently skews every later job on the machine, so restoring is not optional.
//!
//! What is *not* covered: `panic = "abort"` (no unwinding, so no Drop: the clocks stay locked),
//! SIGKILL, power loss and other uncatchable ends. `nvidia-smi -rgc` undoes a lock by hand.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once, OnceLock};
use std::time::{Duration, Instant};

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use signal_hook::low_level::emulate_default_handler;

use super::types::{ClockMode, GpuDevice, GpuError, Nvml};

/// The fraction of its maximum SM clock `lock` locks a card to when its datasheet base clock
/// is unknown: low enough that a dense GEMM stays under the power cap.
pub const LOCK_FRACTION_OF_MAX: f64 = 0.8;

/// The SM clock `ClockMode::Lock` locks `device` to: `requested` (`lock:<MHz>`) when given,
/// else the highest clock NVML offers (`GpuDevice::supported_sm_mhz`) at or below the card's
/// datasheet base clock (`pitwall_schema::datasheet`), or for a card not in it at or below
/// `LOCK_FRACTION_OF_MAX` × its maximum SM clock. Without a list of offered clocks, the bound
/// itself. Never the default applications clock: on H100/H200 that is the boost clock, where
/// bf16 and fp8 GEMMs hit the power cap and every sample throttles.
pub fn lock_target(device: &GpuDevice, requested: Option<u32>) -> Result<u32, GpuError> {
    let index = device.index;
    let mhz = match requested {
        Some(mhz) => mhz,
        None => {
            let bound = pitwall_schema::datasheet::base_sm_mhz(&device.name)
                .or_else(|| {
                    device
                        .max_sm_mhz
                        .map(|m| (f64::from(m) * LOCK_FRACTION_OF_MAX).floor() as u32)
                })
                .ok_or(GpuError::NoBaseClock {
                    index,
                    suggest: 1400,
                })?;
            device
                .supported_sm_mhz
                .iter()
                .copied()
                .filter(|m| *m <= bound)
                .max()
                .unwrap_or(bound)
        }
    };
    if let Some(max) = device.max_sm_mhz.filter(|max| mhz > *max) {
        return Err(GpuError::ClockOutOfRange {
            index,
            requested: mhz,
            max,
        });
    }
    Ok(mhz)
}

/// One lock that must be undone: which NVML, which device, and the owning guard's id.
struct Active {
    id: u64,
    nvml: Arc<dyn Nvml>,
    index: u32,
}

fn active() -> MutexGuard<'static, Vec<Active>> {
    static ACTIVE: OnceLock<Mutex<Vec<Active>>> = OnceLock::new();
    // Restoring must work even after a panic poisoned the lock.
    ACTIVE
        .get_or_init(|| Mutex::new(Vec::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Resets the clocks of every active guard and forgets them (their Drop then does nothing).
/// This is what the SIGINT/SIGTERM handler runs; callable directly, e.g. by a custom shutdown
/// path. Returns `(device index, outcome)` per restored lock.
pub fn restore_all_active() -> Vec<(u32, Result<(), GpuError>)> {
    let drained: Vec<Active> = std::mem::take(&mut *active());
    drained
        .into_iter()
        .map(|a| (a.index, a.nvml.reset_locked_clocks(a.index)))
        .collect()
}

/// How many clock locks are currently held by live guards.
pub fn active_count() -> usize {
    active().len()
}

/// Holds a GPU in the state `ClockMode` asks for; restores it on Drop.
pub struct ClockGuard {
    nvml: Arc<dyn Nvml>,
    index: u32,
    mode: ClockMode,
    /// The registry id and SM clock of the lock this guard must undo (only in `Lock` mode).
    lock: Option<(u64, u32)>,
}

impl std::fmt::Debug for ClockGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClockGuard")
            .field("index", &self.index)
            .field("mode", &self.mode)
            .field("lock", &self.lock)
            .finish()
    }
}

impl ClockGuard {
    /// `Lock`: locks the SM clock of GPU `index` (min = max) to `lock_target`, and installs the signal handler (once per
    /// process). `Observe` and `Off` touch nothing.
    pub fn acquire(
        nvml: Arc<dyn Nvml>,
        index: u32,
        mode: ClockMode,
    ) -> Result<ClockGuard, GpuError> {
        let ClockMode::Lock { sm_mhz } = mode else {
            return Ok(ClockGuard {
                nvml,
                index,
                mode,
                lock: None,
            });
        };
        let devices = nvml.devices()?;
        let device = devices
            .iter()
            .find(|d| d.index == index)
            .ok_or(GpuError::NoDevice {
                index,
                count: devices.len(),
            })?;
        let mhz = lock_target(device, sm_mhz)?;
        if !nvml.locked_clocks_supported(index) {
            return Err(GpuError::LockUnsupported {
                index,
                name: device.name.clone(),
            });
        }
        install_signal_handler()?;
        // Register before locking: a signal between the two then resets a lock that may not
        // exist yet (harmless) instead of leaving one that does.
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        active().push(Active {
            id,
            nvml: Arc::clone(&nvml),
            index,
        });
        if let Err(e) = nvml.set_locked_clocks(index, mhz, mhz) {
            active().retain(|a| a.id != id);
            return Err(e);
        }
        Ok(ClockGuard {
            nvml,
            index,
            mode,
            lock: Some((id, mhz)),
        })
    }

    pub fn index(&self) -> u32 {
        self.index
    }

    pub fn mode(&self) -> ClockMode {
        self.mode
    }

    /// The SM clock this guard locked, while it is still locked.
    pub fn locked_mhz(&self) -> Option<u32> {
        self.lock.map(|(_, mhz)| mhz)
    }

    /// Restores now and reports failure (Drop can only print it).
    pub fn restore(mut self) -> Result<(), GpuError> {
        self.restore_inner()
    }

    fn restore_inner(&mut self) -> Result<(), GpuError> {
        let Some((id, _)) = self.lock.take() else {
            return Ok(());
        };
        let mut registry = active();
        let Some(at) = registry.iter().position(|a| a.id == id) else {
            // Already restored by `restore_all_active` (a signal, or an explicit call).
            return Ok(());
        };
        registry.swap_remove(at);
        drop(registry);
        self.nvml.reset_locked_clocks(self.index)
    }
}

impl Drop for ClockGuard {
    /// Runs on normal scope exit and during panic unwinding (not with `panic = "abort"`).
    fn drop(&mut self) {
        if let Err(e) = self.restore_inner() {
            eprintln!(
                "warning: could not restore the clocks of GPU {}: {e}; hint: run `nvidia-smi -rgc -i {}` as root",
                self.index, self.index
            );
        }
    }
}

/// Signals after which locked clocks are restored before the process dies.
pub const RESTORE_SIGNALS: [i32; 2] = [SIGINT, SIGTERM];

/// Installs (once per process), through signal-hook, the handling of SIGINT and SIGTERM: a
/// small thread waits for the first one, runs the terminate hooks and `restore_all_active()`
/// (NVML calls, allocation, locks: none of that is allowed in a signal handler), then ends the
/// process with the default action of that signal, so it ends as killed by it (shell status
/// 128 + signo; 130 for SIGINT, 143 for SIGTERM). A second signal (say a restore hung on a
/// wedged driver and the user presses Ctrl-C again) dies at once with the default action,
/// leaving the clocks as they are.
pub fn install_signal_handler() -> Result<(), GpuError> {
    static ONCE: Once = Once::new();
    static RESULT: OnceLock<Result<(), i32>> = OnceLock::new();
    ONCE.call_once(|| {
        let _ = RESULT.set(install().map_err(|e| e.raw_os_error().unwrap_or(libc::EINVAL)));
    });
    match RESULT.get() {
        Some(Err(code)) => Err(GpuError::SignalSetup {
            source: io::Error::from_raw_os_error(*code),
        }),
        _ => Ok(()),
    }
}

fn install() -> io::Result<()> {
    // Set by the first signal. Signal-hook runs a signal's actions in registration order, so
    // the conditional default (registered first) sees the flag as earlier signals left it.
    let signalled = Arc::new(AtomicBool::new(false));
    for signo in RESTORE_SIGNALS {
        signal_hook::flag::register_conditional_default(signo, Arc::clone(&signalled))?;
        signal_hook::flag::register(signo, Arc::clone(&signalled))?;
    }
    let mut signals = Signals::new(RESTORE_SIGNALS)?;
    std::thread::Builder::new()
        .name("pitwall-clock-restore".into())
        .spawn(move || {
            if let Some(signo) = signals.forever().next() {
                die_restored(signo);
            }
        })?;
    Ok(())
}

/// Other cleanups to run on SIGINT/SIGTERM before the clocks are restored (e.g. killing the
/// process groups of running benchmark commands).
static TERMINATE_HOOKS: Mutex<Vec<fn()>> = Mutex::new(Vec::new());

/// Registers a cleanup for SIGINT/SIGTERM (runs once, on the restore thread, not in the
/// signal handler). Call `install_signal_handler` too.
pub fn on_terminate(hook: fn()) {
    TERMINATE_HOOKS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(hook);
}

/// The signal pitwall is dying of (SIGINT/SIGTERM), 0 while it is not: set once, first thing
/// on the restore thread; nothing may be stored any more.
static TERMINATING: AtomicI32 = AtomicI32::new(0);

/// Whether pitwall is dying of SIGINT/SIGTERM (results of an interrupted run are not stored).
pub fn terminating() -> bool {
    termination_signal().is_some()
}

/// The signal pitwall is dying of, once SIGINT/SIGTERM arrived: the library returns this as a
/// cancellation, the binary then waits in [`await_termination`].
pub fn termination_signal() -> Option<i32> {
    Some(TERMINATING.load(Ordering::SeqCst)).filter(|s| *s != 0)
}

/// `SIGINT`, `SIGTERM` (or `signal N`), as an error message names a signal.
pub fn signal_name(signo: i32) -> String {
    match signo {
        SIGINT => "SIGINT".to_string(),
        SIGTERM => "SIGTERM".to_string(),
        n => format!("signal {n}"),
    }
}

/// How long [`await_termination`] waits for the restore thread before it exits by itself.
pub const TERMINATION_WAIT: Duration = Duration::from_secs(10);

/// Called by the binary once the library returned a cancellation by `signo`: waits for the
/// restore thread to kill the benchmark commands, restore the clocks and end the process by
/// the signal. Should that not happen within [`TERMINATION_WAIT`] (a restore hung on a wedged
/// driver), exits with the status a shell shows for death by `signo` (128 + signo).
pub fn await_termination(signo: i32) -> ! {
    let deadline = Instant::now() + TERMINATION_WAIT;
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        std::thread::park_timeout(left);
    }
    std::process::exit(128 + signo)
}

/// Runs the terminate hooks, restores every active lock, then ends the process by `signo`
/// with its default action.
fn die_restored(signo: i32) -> ! {
    TERMINATING.store(signo, Ordering::SeqCst);
    let hooks = TERMINATE_HOOKS
        .lock()
        .map(|h| h.clone())
        .unwrap_or_default();
    for hook in hooks {
        hook();
    }
    for (index, outcome) in restore_all_active() {
        if let Err(e) = outcome {
            eprintln!(
                "warning: could not restore the clocks of GPU {index}: {e}; hint: run `nvidia-smi -rgc -i {index}` as root"
            );
        }
    }
    // Default action, unblocked, raised: the process ends as killed by `signo`.
    let _ = emulate_default_handler(signo);
    // Only reached if the signal could not kill us: exit with the status a shell would show.
    std::process::exit(128 + signo)
}
