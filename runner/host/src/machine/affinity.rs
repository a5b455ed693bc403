//! Where the process runs and where its memory comes from: cpu affinity and NUMA memory
//! policy behind a trait, with the real system calls (the recording fake is in `fake_affinity`);
//! and how much of the cpu a thread of pitwall's own gets (`lower_thread_priority`).

use std::io;

/// Sets and reads the cpu affinity and memory policy of the calling thread, which threads
/// and child processes it creates afterwards inherit.
pub trait Affinity {
    /// Restricts execution to `cpus`.
    fn set_cpus(&self, cpus: &[usize]) -> io::Result<()>;
    /// The cpus execution is restricted to, sorted.
    fn cpus(&self) -> io::Result<Vec<usize>>;
    /// Makes memory come from NUMA node `node`.
    fn bind_memory(&self, node: u32) -> io::Result<()>;
    /// The nodes the memory policy names; `None` for the default policy (local allocation).
    fn memory_nodes(&self) -> io::Result<Option<Vec<u32>>>;
}

/// The real [`Affinity`], through `sched_setaffinity` and `set_mempolicy`.
///
/// Both calls act on the calling thread only (`sched_setaffinity(0, …)` means "this
/// thread"; `set_mempolicy` has no target at all). Threads and processes spawned afterwards
/// from that thread inherit both; threads that already run keep theirs. Call it early, from
/// the thread that runs in-process benchmarks and spawns benchmark commands.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessAffinity;

/// 1024 cpus, the size of glibc's `cpu_set_t`.
const CPU_MASK_WORDS: usize = 16;
/// 1024 nodes, the kernel's largest `MAX_NUMNODES`: `get_mempolicy` refuses a smaller mask
/// than the kernel's node count.
const NODE_MASK_WORDS: usize = 16;

#[cfg(target_os = "linux")]
impl Affinity for ProcessAffinity {
    fn set_cpus(&self, cpus: &[usize]) -> io::Result<()> {
        if cpus.is_empty() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty cpu set"));
        }
        let mask = to_mask::<CPU_MASK_WORDS>(cpus)?;
        // SAFETY: the mask is a live buffer of exactly the size passed; a cpu_set_t is a
        // plain bit array, so any u64 buffer of that size is a valid one.
        let rc = unsafe {
            libc::sched_setaffinity(0, std::mem::size_of_val(&mask), mask.as_ptr().cast())
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    fn cpus(&self) -> io::Result<Vec<usize>> {
        let mut mask = [0u64; CPU_MASK_WORDS];
        // SAFETY: the kernel writes at most the size passed into the live buffer.
        let rc = unsafe {
            libc::sched_getaffinity(0, std::mem::size_of_val(&mask), mask.as_mut_ptr().cast())
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(from_mask(&mask))
    }

    /// Uses `MPOL_PREFERRED`, not `MPOL_BIND`: allocations come from `node` while it has
    /// free memory and spill to other nodes instead of failing when it is full. A benchmark
    /// killed by the OOM killer on a machine with free memory elsewhere is a worse outcome
    /// than some remote pages; the memory policy read back shows what was set.
    fn bind_memory(&self, node: u32) -> io::Result<()> {
        let mask = to_mask::<NODE_MASK_WORDS>(&[node as usize])?;
        // The kernel reads `maxnode - 1` bits (a long-standing off-by-one that libnuma also
        // compensates for), hence the + 1.
        let maxnode = (NODE_MASK_WORDS * 64 + 1) as libc::c_ulong;
        // SAFETY: set_mempolicy reads `maxnode - 1` bits from the live mask buffer.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_set_mempolicy,
                libc::MPOL_PREFERRED,
                mask.as_ptr(),
                maxnode,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    fn memory_nodes(&self) -> io::Result<Option<Vec<u32>>> {
        let mut mode: libc::c_int = 0;
        let mut mask = [0u64; NODE_MASK_WORDS];
        let maxnode = (NODE_MASK_WORDS * 64) as libc::c_ulong;
        // SAFETY: get_mempolicy writes one int to `mode` and at most `maxnode` bits to the
        // live mask buffer; addr is null and flags 0 (the thread's policy).
        let rc = unsafe {
            libc::syscall(
                libc::SYS_get_mempolicy,
                &mut mode as *mut libc::c_int,
                mask.as_mut_ptr(),
                maxnode,
                std::ptr::null::<libc::c_void>(),
                0 as libc::c_ulong,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        let nodes: Vec<u32> = from_mask(&mask).into_iter().map(|n| n as u32).collect();
        if mode == libc::MPOL_DEFAULT || mode == libc::MPOL_LOCAL || nodes.is_empty() {
            Ok(None)
        } else {
            Ok(Some(nodes))
        }
    }
}

#[cfg(not(target_os = "linux"))]
impl Affinity for ProcessAffinity {
    fn set_cpus(&self, _cpus: &[usize]) -> io::Result<()> {
        Err(io::ErrorKind::Unsupported.into())
    }
    fn cpus(&self) -> io::Result<Vec<usize>> {
        Err(io::ErrorKind::Unsupported.into())
    }
    fn bind_memory(&self, _node: u32) -> io::Result<()> {
        Err(io::ErrorKind::Unsupported.into())
    }
    fn memory_nodes(&self) -> io::Result<Option<Vec<u32>>> {
        Err(io::ErrorKind::Unsupported.into())
    }
}

/// Lowers the calling thread's scheduling priority to `nice` (0 to 19; higher gets less of a
/// busy cpu): the server's reader threads, so that 200 readers do not slow an upload down.
/// Only that thread changes (Linux gives each thread its own nice value); raising a nice value
/// needs no privilege. Elsewhere than Linux it does nothing.
pub fn lower_thread_priority(nice: i32) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid has no arguments; setpriority takes plain integers.
        let rc = unsafe {
            let tid = libc::gettid() as libc::id_t;
            libc::setpriority(libc::PRIO_PROCESS, tid, nice)
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
    Ok(())
}

fn to_mask<const W: usize>(bits: &[usize]) -> io::Result<[u64; W]> {
    let mut mask = [0u64; W];
    for &b in bits {
        if b >= W * 64 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("id {b} is beyond the {} ids supported", W * 64),
            ));
        }
        mask[b / 64] |= 1 << (b % 64);
    }
    Ok(mask)
}

fn from_mask(mask: &[u64]) -> Vec<usize> {
    (0..mask.len() * 64)
        .filter(|b| mask[b / 64] & (1 << (b % 64)) != 0)
        .collect()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    /// The nice value of the calling thread.
    fn nice() -> i32 {
        // SAFETY: as in `lower_thread_priority`.
        unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
    }

    #[test]
    fn only_the_calling_thread_is_lowered() {
        let before = nice();
        let inside = std::thread::spawn(move || {
            super::lower_thread_priority(before.max(0) + 5).unwrap();
            nice()
        })
        .join()
        .unwrap();
        assert_eq!(inside, before.max(0) + 5);
        assert_eq!(nice(), before, "other threads keep theirs");
    }
}
