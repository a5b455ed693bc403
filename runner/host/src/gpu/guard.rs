//! `ClockGuard`: locks GPU clocks for the length of a run and puts them back however the run
//! ends: normal return (Drop), panic (Drop during unwinding), SIGINT or SIGTERM (a handler that
//! restores every active guard, then dies of the same signal). A GPU left locked after a
//! benchmark silently skews every later job on the machine, so restoring is not optional.
//!
//! What is *not* covered: `panic = "abort"` (no unwinding, so no Drop: the clocks stay locked),
//! SIGKILL, power loss and other uncatchable ends. `nvidia-smi -rgc` undoes a lock by hand.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once, OnceLock};

use super::types::{ClockMode, GpuError, Nvml};

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
    /// `Lock`: locks the SM clock of GPU `index` (min = max) to `sm_mhz`, or to the device's
    /// default applications clock when `None`, and installs the signal handler (once per
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
        let mhz = match (sm_mhz, device.base_sm_mhz) {
            (Some(mhz), _) => mhz,
            (None, Some(base)) => base,
            (None, None) => {
                return Err(GpuError::NoBaseClock {
                    index,
                    suggest: device.max_sm_mhz.map_or(1400, |m| m * 3 / 4),
                });
            }
        };
        if let Some(max) = device.max_sm_mhz.filter(|max| mhz > *max) {
            return Err(GpuError::ClockOutOfRange {
                index,
                requested: mhz,
                max,
            });
        }
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

/// Write end of the self-pipe; -1 until the handler is installed.
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);

/// Signals after which locked clocks are restored before the process dies.
pub const RESTORE_SIGNALS: [i32; 2] = [libc::SIGINT, libc::SIGTERM];

/// Installs (once per process) handlers for SIGINT and SIGTERM. The handler itself only
/// writes the signal number to a pipe (`write(2)` is async-signal-safe); a small thread
/// reads it, runs `restore_all_active()` (NVML calls, allocation, locks: none of that is
/// allowed in a signal handler), restores the default action and re-raises the signal, so the
/// process ends as killed by that signal (shell status 128 + signo; 130 for SIGINT, 143 for
/// SIGTERM). Any handler installed earlier for these signals is replaced.
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
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe(2) writes two descriptors into the array we own.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    for fd in fds {
        // SAFETY: fcntl(2) on descriptors we just created; children must not inherit them.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    // SAFETY: as above. The handler must never block on a full pipe.
    unsafe { libc::fcntl(fds[1], libc::F_SETFL, libc::O_NONBLOCK) };
    let read_fd = fds[0];
    std::thread::Builder::new()
        .name("pitwall-clock-restore".into())
        .spawn(move || restore_thread(read_fd))?;
    PIPE_WRITE.store(fds[1], Ordering::SeqCst);
    for signo in RESTORE_SIGNALS {
        // SAFETY: a zeroed sigaction is valid; we set a plain handler with an empty mask.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(signo, &action, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// Set by the first SIGINT/SIGTERM; a second one does not wait for the restore.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

/// The signal handler: async-signal-safe (atomics, `write(2)`, `signal(2)`, `raise(3)`; errno
/// preserved). The first signal asks the restore thread to restore and re-raise; a second one
/// (say a restore hung on a wedged driver and the user presses Ctrl-C again) dies at once with
/// the default action, leaving the clocks as they are.
extern "C" fn on_signal(signo: libc::c_int) {
    let fd = PIPE_WRITE.load(Ordering::SeqCst);
    if fd < 0 {
        return;
    }
    if SIGNALLED.swap(true, Ordering::SeqCst) {
        // SAFETY: signal(2) and raise(3) are async-signal-safe.
        unsafe {
            libc::signal(signo, libc::SIG_DFL);
            libc::raise(signo);
        }
        return;
    }
    let byte = signo as u8;
    // SAFETY: errno is thread-local; write(2) on a valid descriptor from a local byte.
    unsafe {
        let errno = *errno_location();
        libc::write(fd, (&byte as *const u8).cast(), 1);
        *errno_location() = errno;
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
unsafe fn errno_location() -> *mut libc::c_int {
    // SAFETY: always valid for the calling thread.
    unsafe { libc::__errno_location() }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
unsafe fn errno_location() -> *mut libc::c_int {
    // SAFETY: always valid for the calling thread (macOS and the BSDs).
    unsafe { libc::__error() }
}

fn restore_thread(read_fd: libc::c_int) {
    loop {
        let mut byte = 0u8;
        // SAFETY: read(2) of one byte into a local.
        let n = unsafe { libc::read(read_fd, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 {
            die_restored(i32::from(byte));
        }
        if n == 0 || (n < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted) {
            return;
        }
    }
}

/// Restores every active lock, then ends the process by `signo` with its default action.
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

/// Set once pitwall is dying of SIGINT/SIGTERM: nothing may be stored any more.
static TERMINATING: AtomicBool = AtomicBool::new(false);

/// Whether pitwall is dying of SIGINT/SIGTERM (results of an interrupted run are not stored).
pub fn terminating() -> bool {
    TERMINATING.load(Ordering::SeqCst)
}

fn die_restored(signo: i32) -> ! {
    TERMINATING.store(true, Ordering::SeqCst);
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
    // SAFETY: resetting a disposition, unblocking and raising a signal in this thread.
    unsafe {
        libc::signal(signo, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, signo);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(signo);
    }
    // Only reached if the signal could not kill us: exit with the status a shell would show.
    std::process::exit(128 + signo)
}
