//! NCCL, loaded at run time under the name it really has. cudarc's own loader
//! (`cudarc::nccl::sys::culib`) tries only `libnccl.so` and names built from the CUDA major
//! (`libnccl.so.13`, `.so.12`, … `.so.1`, from `cudarc::get_lib_name_candidates`), never
//! `libnccl.so.2`, the file NCCL's packages and wheels install; and loading `libnccl.so.2`
//! first with RTLD_GLOBAL does not help, because glibc matches an already loaded library only
//! by its path or SONAME (`libnccl.so.2`), not by the `libnccl.so` cudarc asks for. So pitwall
//! resolves NCCL itself ([`candidates`]: `libnccl.so.2` first, then cudarc's names) and calls
//! it through this table of NCCL's C functions, with cudarc's NCCL types
//! (`cudarc::nccl::sys`) for the arguments. Return codes are read as plain integers and named
//! here, so an unknown code is an error message, never undefined behaviour.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::OnceLock;

use cudarc::nccl::sys::{ncclComm_t, ncclDataType_t, ncclRedOp_t, ncclUniqueId};

/// The library names tried first, before cudarc's: NCCL's real file, then the development link.
pub const NCCL_NAMES: [&str; 2] = ["libnccl.so.2", "libnccl.so"];

/// Bytes of an `ncclUniqueId` (`NCCL_UNIQUE_ID_BYTES` in nccl.h).
pub const UNIQUE_ID_BYTES: usize = 128;

/// An NCCL failure: which call, and NCCL's own name and message for its code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NcclError {
    #[error(
        "no NCCL: none of {tried} could be loaded ({last}); hint: install NCCL (libnccl.so.2, e.g. pip install nvidia-nccl-cu13) and put its lib directory on LD_LIBRARY_PATH"
    )]
    NotFound { tried: String, last: String },
    #[error("NCCL library {library} lacks {symbol}: {reason}")]
    Symbol {
        library: String,
        symbol: &'static str,
        reason: String,
    },
    #[error("NCCL {call}: {name} ({message})")]
    Call {
        call: &'static str,
        name: &'static str,
        message: String,
    },
}

/// NCCL's name for a return code (`ncclResult_t` in nccl.h).
pub fn result_name(code: c_int) -> &'static str {
    match code {
        0 => "ncclSuccess",
        1 => "ncclUnhandledCudaError",
        2 => "ncclSystemError",
        3 => "ncclInternalError",
        4 => "ncclInvalidArgument",
        5 => "ncclInvalidUsage",
        6 => "ncclRemoteError",
        7 => "ncclInProgress",
        _ => "unknown ncclResult_t",
    }
}

/// The names to try, in order: [`NCCL_NAMES`], then cudarc's candidates, without repeats.
pub fn candidates() -> Vec<String> {
    let mut out: Vec<String> = NCCL_NAMES.iter().map(|s| s.to_string()).collect();
    for name in cudarc::get_lib_name_candidates("nccl") {
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// The first of `names` that `open` loads, with its name; else why none did.
pub fn resolve<L>(
    names: &[String],
    mut open: impl FnMut(&str) -> Result<L, String>,
) -> Result<(String, L), NcclError> {
    let mut last = "no candidate names".to_string();
    for name in names {
        match open(name) {
            Ok(lib) => return Ok((name.clone(), lib)),
            Err(e) => last = e,
        }
    }
    let shown: Vec<&str> = names.iter().take(3).map(String::as_str).collect();
    Err(NcclError::NotFound {
        tried: format!("{}, … ({} names)", shown.join(", "), names.len()),
        last,
    })
}

type InitRank = unsafe extern "C" fn(*mut ncclComm_t, c_int, ncclUniqueId, c_int) -> c_int;
type InitAll = unsafe extern "C" fn(*mut ncclComm_t, c_int, *const c_int) -> c_int;
type Reduce = unsafe extern "C" fn(
    *const c_void,
    *mut c_void,
    usize,
    ncclDataType_t,
    ncclRedOp_t,
    ncclComm_t,
    *mut c_void,
) -> c_int;
type Gather = unsafe extern "C" fn(
    *const c_void,
    *mut c_void,
    usize,
    ncclDataType_t,
    ncclComm_t,
    *mut c_void,
) -> c_int;
type Bcast = unsafe extern "C" fn(
    *const c_void,
    *mut c_void,
    usize,
    ncclDataType_t,
    c_int,
    ncclComm_t,
    *mut c_void,
) -> c_int;
type PointToPoint = unsafe extern "C" fn(
    *mut c_void,
    usize,
    ncclDataType_t,
    c_int,
    ncclComm_t,
    *mut c_void,
) -> c_int;

/// NCCL's functions as the collective suite calls them; the library stays loaded for the
/// process's life.
pub struct Nccl {
    pub library: String,
    _lib: libloading::Library,
    get_version: unsafe extern "C" fn(*mut c_int) -> c_int,
    get_unique_id: unsafe extern "C" fn(*mut ncclUniqueId) -> c_int,
    comm_init_rank: InitRank,
    comm_init_all: InitAll,
    comm_destroy: unsafe extern "C" fn(ncclComm_t) -> c_int,
    get_error_string: unsafe extern "C" fn(c_int) -> *const c_char,
    group_start: unsafe extern "C" fn() -> c_int,
    group_end: unsafe extern "C" fn() -> c_int,
    all_reduce: Reduce,
    reduce_scatter: Reduce,
    all_gather: Gather,
    broadcast: Bcast,
    send: PointToPoint,
    recv: PointToPoint,
}

impl std::fmt::Debug for Nccl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nccl")
            .field("library", &self.library)
            .finish_non_exhaustive()
    }
}

/// NCCL for this process: loaded on first use from the first of [`candidates`] that loads.
pub fn library() -> Result<&'static Nccl, NcclError> {
    static NCCL: OnceLock<Result<Nccl, NcclError>> = OnceLock::new();
    NCCL.get_or_init(load).as_ref().map_err(Clone::clone)
}

fn load() -> Result<Nccl, NcclError> {
    let (library, lib) = resolve(&candidates(), |name| {
        // SAFETY: loading NCCL runs only its initialisers, which need no CUDA context.
        unsafe { libloading::Library::new(name) }.map_err(|e| e.to_string())
    })?;
    fn sym<T: Copy>(
        lib: &libloading::Library,
        library: &str,
        symbol: &'static str,
    ) -> Result<T, NcclError> {
        // SAFETY: every type `T` below is the C signature of `symbol` in nccl.h (2.x).
        unsafe { lib.get::<T>(symbol.as_bytes()) }
            .map(|s| *s)
            .map_err(|e| NcclError::Symbol {
                library: library.to_string(),
                symbol,
                reason: e.to_string(),
            })
    }
    let l = &library;
    Ok(Nccl {
        get_version: sym(&lib, l, "ncclGetVersion")?,
        get_unique_id: sym(&lib, l, "ncclGetUniqueId")?,
        comm_init_rank: sym(&lib, l, "ncclCommInitRank")?,
        comm_init_all: sym(&lib, l, "ncclCommInitAll")?,
        comm_destroy: sym(&lib, l, "ncclCommDestroy")?,
        get_error_string: sym(&lib, l, "ncclGetErrorString")?,
        group_start: sym(&lib, l, "ncclGroupStart")?,
        group_end: sym(&lib, l, "ncclGroupEnd")?,
        all_reduce: sym(&lib, l, "ncclAllReduce")?,
        reduce_scatter: sym(&lib, l, "ncclReduceScatter")?,
        all_gather: sym(&lib, l, "ncclAllGather")?,
        broadcast: sym(&lib, l, "ncclBroadcast")?,
        send: sym(&lib, l, "ncclSend")?,
        recv: sym(&lib, l, "ncclRecv")?,
        library,
        _lib: lib,
    })
}

/// A CUDA stream as NCCL takes it (`cudaStream_t`: the driver's `CUstream`).
pub type Stream = *mut c_void;

const F32: ncclDataType_t = ncclDataType_t::ncclFloat32;
const SUM: ncclRedOp_t = ncclRedOp_t::ncclSum;

impl Nccl {
    fn check(&self, call: &'static str, code: c_int) -> Result<(), NcclError> {
        if code == 0 {
            return Ok(());
        }
        // SAFETY: ncclGetErrorString returns a static string for any code.
        let message = unsafe {
            let p = (self.get_error_string)(code);
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        Err(NcclError::Call {
            call,
            name: result_name(code),
            message,
        })
    }

    /// `ncclGetVersion`: 22703 for 2.27.3.
    pub fn version(&self) -> Result<i32, NcclError> {
        let mut v = 0;
        // SAFETY: writes one int.
        self.check("ncclGetVersion", unsafe { (self.get_version)(&mut v) })?;
        Ok(v)
    }

    /// `ncclGetUniqueId` (rank 0 only), as its 128 bytes.
    pub fn unique_id(&self) -> Result<[u8; UNIQUE_ID_BYTES], NcclError> {
        let mut id = ncclUniqueId {
            internal: [0; UNIQUE_ID_BYTES],
        };
        // SAFETY: writes the 128-byte struct.
        self.check("ncclGetUniqueId", unsafe { (self.get_unique_id)(&mut id) })?;
        Ok(id.internal.map(|c| c as u8))
    }

    /// `ncclCommInitRank` on the current CUDA device (the caller binds its context first).
    pub fn init_rank(
        &self,
        world_size: usize,
        id: &[u8; UNIQUE_ID_BYTES],
        rank: usize,
    ) -> Result<ncclComm_t, NcclError> {
        let mut comm: ncclComm_t = std::ptr::null_mut();
        let id = ncclUniqueId {
            internal: id.map(|b| b as c_char),
        };
        // SAFETY: writes one handle; the id is passed by value as nccl.h declares.
        let code =
            unsafe { (self.comm_init_rank)(&mut comm, world_size as c_int, id, rank as c_int) };
        self.check("ncclCommInitRank", code)?;
        Ok(comm)
    }

    /// `ncclCommInitAll` over CUDA devices `devices`: one communicator per device, rank i on
    /// `devices[i]`.
    pub fn init_all(&self, devices: &[c_int]) -> Result<Vec<ncclComm_t>, NcclError> {
        let mut comms: Vec<ncclComm_t> = vec![std::ptr::null_mut(); devices.len()];
        // SAFETY: `comms` has one slot per device.
        let code = unsafe {
            (self.comm_init_all)(comms.as_mut_ptr(), devices.len() as c_int, devices.as_ptr())
        };
        self.check("ncclCommInitAll", code)?;
        Ok(comms)
    }

    /// `ncclCommDestroy`.
    ///
    /// # Safety
    /// `comm` came from [`Nccl::init_rank`] or [`Nccl::init_all`], its work is finished, and
    /// it is destroyed once and not used after.
    pub unsafe fn destroy(&self, comm: ncclComm_t) -> Result<(), NcclError> {
        // SAFETY: as the caller promises.
        self.check("ncclCommDestroy", unsafe { (self.comm_destroy)(comm) })
    }

    pub fn group_start(&self) -> Result<(), NcclError> {
        // SAFETY: no arguments.
        self.check("ncclGroupStart", unsafe { (self.group_start)() })
    }

    pub fn group_end(&self) -> Result<(), NcclError> {
        // SAFETY: no arguments.
        self.check("ncclGroupEnd", unsafe { (self.group_end)() })
    }

    /// Enqueues one out-of-place f32 collective (sum for the reductions, root 0 for broadcast)
    /// of `op` with this rank's `(send, recv)` device buffers, as nccl-tests calls it; all-to-all
    /// is a group of `ncclSend`/`ncclRecv` of `send_elements / n` to and from every rank,
    /// itself included (nccl-tests' alltoall.cu).
    ///
    /// # Safety
    /// `send` and `recv` are device pointers on `comm`'s device holding the elements
    /// `shape` gives for this op; `stream` is a stream of that device.
    pub unsafe fn enqueue(
        &self,
        op: pitwall_schema::work::Collective,
        shape: &pitwall_schema::work::CollectiveShape,
        world_size: usize,
        (send, recv): (u64, u64),
        comm: ncclComm_t,
        stream: Stream,
    ) -> Result<(), NcclError> {
        use pitwall_schema::work::Collective as C;
        let (s, r) = (send as *const c_void, recv as *mut c_void);
        let code = match op {
            C::AllReduce => unsafe {
                (self.all_reduce)(s, r, shape.send_elements as usize, F32, SUM, comm, stream)
            },
            C::ReduceScatter => unsafe {
                (self.reduce_scatter)(s, r, shape.recv_elements as usize, F32, SUM, comm, stream)
            },
            C::AllGather => unsafe {
                (self.all_gather)(s, r, shape.send_elements as usize, F32, comm, stream)
            },
            C::Broadcast => unsafe {
                (self.broadcast)(s, r, shape.send_elements as usize, F32, 0, comm, stream)
            },
            C::AllToAll => {
                let m = shape.send_elements as usize / world_size.max(1);
                self.group_start()?;
                for peer in 0..world_size {
                    let off = (peer * m * 4) as u64;
                    let p = peer as c_int;
                    // SAFETY: block `peer` of each buffer lies inside it (m·n ≤ elements).
                    let sc = unsafe {
                        (self.send)((send + off) as *mut c_void, m, F32, p, comm, stream)
                    };
                    self.check("ncclSend", sc)?;
                    let rc = unsafe {
                        (self.recv)((recv + off) as *mut c_void, m, F32, p, comm, stream)
                    };
                    self.check("ncclRecv", rc)?;
                }
                return self.group_end();
            }
            C::Reduce => {
                return Err(NcclError::Call {
                    call: "enqueue",
                    name: "ncclInvalidUsage",
                    message: "reduce is not one of the measured collectives".to_string(),
                });
            }
        };
        self.check(op_call(op), code)
    }
}

/// NCCL's version code as `major.minor.patch`: 22703 is 2.27.3 (from 2.9 on), 2708 is 2.7.8.
pub fn version_string(code: i32) -> String {
    let (major, rest) = if code >= 10_000 {
        (code / 10_000, code % 10_000)
    } else {
        (code / 1_000, code % 1_000)
    };
    format!("{major}.{}.{}", rest / 100, rest % 100)
}

/// The line the `collective` suite records with each run: NCCL's version (`ncclGetVersion`),
/// and the algorithm and protocol as far as pitwall can know them: `NCCL_ALGO` and
/// `NCCL_PROTO` from the environment NCCL reads, else `auto` (NCCL chooses per size and does
/// not report its choice through its API).
pub fn settings_note(version: Option<i32>, env: &dyn Fn(&str) -> Option<String>) -> String {
    let version = version.map_or_else(|| "version unknown".to_string(), version_string);
    let setting = |name: &str| {
        env(name)
            .map(|v| {
                v.trim()
                    .chars()
                    .filter(|c| !c.is_control())
                    .take(64)
                    .collect()
            })
            .filter(|v: &String| !v.is_empty())
            .unwrap_or_else(|| "auto".to_string())
    };
    format!(
        "collective: NCCL {version}, algorithm {} (NCCL_ALGO), protocol {} (NCCL_PROTO)",
        setting("NCCL_ALGO"),
        setting("NCCL_PROTO")
    )
}

fn op_call(op: pitwall_schema::work::Collective) -> &'static str {
    use pitwall_schema::work::Collective as C;
    match op {
        C::AllReduce => "ncclAllReduce",
        C::ReduceScatter => "ncclReduceScatter",
        C::AllGather => "ncclAllGather",
        C::Broadcast => "ncclBroadcast",
        C::AllToAll => "ncclSend/ncclRecv",
        C::Reduce => "ncclReduce",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libnccl_so_2_is_tried_first_then_cudarcs_names() {
        let names = candidates();
        assert_eq!(&names[..2], ["libnccl.so.2", "libnccl.so"]);
        // cudarc's own list is all there (it starts with libnccl.so), without a repeat.
        for n in cudarc::get_lib_name_candidates("nccl") {
            assert_eq!(names.iter().filter(|m| **m == n).count(), 1, "{n}");
        }
        assert!(!cudarc::get_lib_name_candidates("nccl").contains(&"libnccl.so.2".to_string()));
    }

    #[test]
    fn resolution_picks_the_first_name_that_loads() {
        let names = candidates();
        // A machine with only NCCL's real file.
        let only_so2 = resolve(&names, |n| {
            if n == "libnccl.so.2" {
                Ok(n.len())
            } else {
                Err(format!("{n}: not found"))
            }
        });
        assert_eq!(only_so2.unwrap().0, "libnccl.so.2");
        // A machine with only the development link.
        let only_link = resolve(&names, |n| {
            if n == "libnccl.so" {
                Ok(())
            } else {
                Err(format!("{n}: not found"))
            }
        });
        assert_eq!(only_link.unwrap().0, "libnccl.so");
        // Both: the real file wins (tried first).
        let mut tried = Vec::new();
        let both = resolve(&names, |n| {
            tried.push(n.to_string());
            if n.starts_with("libnccl.so") {
                Ok(())
            } else {
                Err("no".to_string())
            }
        });
        assert_eq!((both.unwrap().0.as_str(), tried.len()), ("libnccl.so.2", 1));
    }

    #[test]
    fn no_nccl_names_what_was_tried_with_a_hint() {
        let names = candidates();
        let err = resolve::<()>(&names, |n| {
            Err(format!("{n}: cannot open shared object file"))
        })
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("no NCCL: none of libnccl.so.2, libnccl.so,"),
            "{err}"
        );
        assert!(err.contains(&format!("({} names)", names.len())), "{err}");
        assert!(err.contains("hint:") && !err.contains('\n'), "{err}");
    }

    /// Issue 23, defect 7: NCCL's version, algorithm and protocol are recorded with a run.
    #[test]
    fn the_settings_note_names_version_algorithm_and_protocol() {
        assert_eq!(version_string(22703), "2.27.3");
        assert_eq!(version_string(2708), "2.7.8");
        let env = |k: &str| (k == "NCCL_PROTO").then(|| "Simple\n".to_string());
        assert_eq!(
            settings_note(Some(22703), &env),
            "collective: NCCL 2.27.3, algorithm auto (NCCL_ALGO), protocol Simple (NCCL_PROTO)"
        );
        assert!(settings_note(None, &|_| None).starts_with("collective: NCCL version unknown"));
    }

    #[test]
    fn return_codes_have_nccls_names() {
        assert_eq!(result_name(0), "ncclSuccess");
        assert_eq!(result_name(2), "ncclSystemError");
        assert_eq!(result_name(7), "ncclInProgress");
        assert_eq!(result_name(42), "unknown ncclResult_t");
    }

    #[test]
    fn the_real_loader_never_panics() {
        // With NCCL on this machine it loads and reports a 2.x version; without, NotFound.
        match library() {
            Ok(nccl) => assert!(nccl.version().unwrap_or(0) >= 20000, "{nccl:?}"),
            Err(e) => assert!(matches!(e, NcclError::NotFound { .. }), "{e}"),
        }
    }
}
