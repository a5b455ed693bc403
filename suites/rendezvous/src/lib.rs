//! Multi-process collectives need every rank to agree on who is who and to share one session
//! blob (NCCL's unique id, the CPU backend's data-plane addresses) before they can talk: this
//! crate reads the layout from the launcher's variables and runs that rendezvous over TCP, with
//! std only, for both the CPU and the CUDA backend.
//!
//! - [`layout`]: [`Layout::from_env`] — torchrun's `RANK`/`WORLD_SIZE`/`LOCAL_RANK`/
//!   `MASTER_ADDR`/`MASTER_PORT` first, else Slurm's `SLURM_PROCID`/`SLURM_NTASKS`/
//!   `SLURM_LOCALID` with `PITWALL_RENDEZVOUS=host:port` or `MASTER_ADDR`/`MASTER_PORT`, else
//!   one process (world size 1).
//! - [`session`]: rank 0 listens, the others connect (retrying until a timeout), send a hello
//!   and receive the blob rank 0 builds from every hello; then all ranks barrier. The
//!   connections stay open as a control channel ([`Session::broadcast`], [`Session::gather`],
//!   [`Session::barrier`]).

pub mod layout;
pub mod session;

pub use layout::{Launcher, Layout, LayoutError};
pub use session::{Bound, Hello, RendezvousError, Session};
