//! The real NCCL ranks on GPUs: one CUDA context, stream, pair of CUDA events and
//! communicator per GPU this process drives (one under a launcher, every local GPU in the
//! one-process layout), the ranks' send and receive buffers (f32 from `cuMemAlloc`, `nccl_mem`,
//! filled from the host with `nccl_data`'s known inputs), the check (one untimed collective, every rank's output read
//! back and compared with the exact reference), and the timing: each rank's start event, the
//! `iters` collectives (in an NCCL group over the local ranks, one stream per GPU), its end
//! event, its stream synchronised, its own elapsed time. Written for CUDA 13 and NCCL 2.x on
//! an H200 node; never run on a GPU yet (docs/SUITES.md).

use std::ffi::c_int;
use std::sync::Arc;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaContext, CudaEvent, CudaStream};
use cudarc::nccl::sys::ncclComm_t;

use crate::nccl::{self, Nccl, UNIQUE_ID_BYTES};
use crate::nccl_data::{Expected, input_for};
use crate::nccl_group::{LocalRanks, NcclProvider};
use crate::nccl_mem::{DeviceBuffer, shift_bytes, span_bytes};
use pitwall_schema::work::{Collective, CollectiveShape};

/// The CUDA device of local rank `local_rank` when `visible` devices are visible: the local
/// rank's own (torchrun's convention), or the only one when the launcher gave each process
/// its own GPU through `CUDA_VISIBLE_DEVICES` (Slurm's `--gpus-per-task`).
pub fn device_for_rank(local_rank: usize, visible: usize) -> Result<usize, String> {
    match visible {
        0 => Err("no CUDA device is visible".to_string()),
        1 => Ok(0),
        n if local_rank < n => Ok(local_rank),
        n => Err(format!(
            "local rank {local_rank} needs a GPU, but only {n} CUDA devices are visible (hint: start at most {n} ranks per node, or give each its GPU with CUDA_VISIBLE_DEVICES)"
        )),
    }
}

/// NCCL and the visible GPUs of this process.
#[derive(Debug, Clone, Copy)]
pub struct SystemNccl {
    /// CUDA devices visible here (the probe's count).
    pub visible: usize,
}

fn driver(e: cudarc::driver::DriverError) -> String {
    format!("CUDA driver: {e}")
}

impl NcclProvider for SystemNccl {
    fn ready(&self, local_rank: usize) -> Result<(), String> {
        nccl::library().map_err(|e| e.to_string())?;
        device_for_rank(local_rank, self.visible).map(|_| ())
    }

    fn unique_id(&self) -> Result<[u8; UNIQUE_ID_BYTES], String> {
        let nccl = nccl::library().map_err(|e| e.to_string())?;
        nccl.unique_id().map_err(|e| e.to_string())
    }

    fn join_rank(
        &self,
        rank: usize,
        world_size: usize,
        local_rank: usize,
        id: &[u8; UNIQUE_ID_BYTES],
    ) -> Result<Box<dyn LocalRanks>, String> {
        let nccl = nccl::library().map_err(|e| e.to_string())?;
        let gpu = RankGpu::open(rank, device_for_rank(local_rank, self.visible)?)?;
        gpu.ctx.bind_to_thread().map_err(driver)?;
        let comm = nccl
            .init_rank(world_size, id, rank)
            .map_err(|e| e.to_string())?;
        Ok(Box::new(NcclRanks::new(
            nccl,
            vec![gpu],
            vec![comm],
            world_size,
        )))
    }

    fn all_local(&self, devices: usize) -> Result<Box<dyn LocalRanks>, String> {
        if devices > self.visible {
            return Err(format!(
                "{devices} ranks asked for, {} CUDA devices visible (hint: lower the suite's ranks)",
                self.visible
            ));
        }
        let nccl = nccl::library().map_err(|e| e.to_string())?;
        let gpus = (0..devices)
            .map(|d| RankGpu::open(d, d))
            .collect::<Result<Vec<_>, _>>()?;
        let list: Vec<c_int> = (0..devices as c_int).collect();
        let comms = nccl.init_all(&list).map_err(|e| e.to_string())?;
        Ok(Box::new(NcclRanks::new(nccl, gpus, comms, devices)))
    }
}

/// The larger of a rank's send and receive sizes in bytes (nccl-tests' `totalnbytes`).
fn unit_bytes(shape: &CollectiveShape) -> u64 {
    shape.send_elements.max(shape.recv_elements) * 4
}

/// A rank's buffers: what they were sized for, the send buffer, the receive buffer.
type RankBuffers = ((Collective, u64, u64), DeviceBuffer, DeviceBuffer);

/// One rank's GPU: its context, stream, events and buffers.
struct RankGpu {
    rank: usize,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    start: CudaEvent,
    end: CudaEvent,
    /// (op, send elements, recv elements) the buffers hold, and the buffers.
    buffers: Option<RankBuffers>,
    /// The one f32 of the untimed all-reduce before the start event (`align_all`).
    align: DeviceBuffer,
}

impl RankGpu {
    fn open(rank: usize, ordinal: usize) -> Result<RankGpu, String> {
        let ctx = CudaContext::new(ordinal).map_err(driver)?;
        // SAFETY: nothing is allocated in this context yet, and every buffer is used on this
        // one stream, in order (as `Device::open`): no cross-stream event tracking needed.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().map_err(driver)?;
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        Ok(RankGpu {
            rank,
            align: DeviceBuffer::zeroed(&ctx, 4).map_err(driver)?,
            start: ctx.new_event(flags).map_err(driver)?,
            end: ctx.new_event(flags).map_err(driver)?,
            stream,
            ctx,
            buffers: None,
        })
    }

    /// Send buffer with this rank's input and a zeroed receive buffer for `shape`.
    fn fill(&mut self, op: Collective, shape: &CollectiveShape) -> Result<(), String> {
        let key = (op, shape.send_elements, shape.recv_elements);
        if self.buffers.as_ref().is_some_and(|b| b.0 == key) {
            return Ok(());
        }
        // The stream is idle here (synchronised after the last sample), as `cuMemFree` needs.
        self.stream.synchronize().map_err(driver)?;
        self.buffers = None; // free the previous size first
        // Room for every shifted offset (`nccl_mem::shift_bytes`); the input at offset 0,
        // where the check runs.
        let span = span_bytes(unit_bytes(shape)) as usize;
        let mut send = DeviceBuffer::zeroed(&self.ctx, span).map_err(driver)?;
        send.upload(&input_for(self.rank, shape)).map_err(driver)?;
        let recv = DeviceBuffer::zeroed(&self.ctx, span).map_err(driver)?;
        self.buffers = Some((key, send, recv));
        Ok(())
    }

    /// The send and receive pointers `offset` bytes into the buffers.
    fn pointers(&self, offset: u64) -> Result<(u64, u64), String> {
        let (_, send, recv) = self
            .buffers
            .as_ref()
            .ok_or_else(|| "buffers not allocated".to_string())?;
        Ok((send.ptr() + offset, recv.ptr() + offset))
    }
}

/// This process's ranks with their communicators.
struct NcclRanks {
    nccl: &'static Nccl,
    gpus: Vec<RankGpu>,
    comms: Vec<ncclComm_t>,
    world_size: usize,
}

// SAFETY: the communicators and contexts are used by one thread at a time (the suite's group
// is behind a mutex); NCCL communicators may be used from any thread, one at a time.
unsafe impl Send for NcclRanks {}

impl NcclRanks {
    fn new(
        nccl: &'static Nccl,
        gpus: Vec<RankGpu>,
        comms: Vec<ncclComm_t>,
        world_size: usize,
    ) -> NcclRanks {
        NcclRanks {
            nccl,
            gpus,
            comms,
            world_size,
        }
    }

    /// One in-place 1-element all-reduce on every local rank, in one NCCL group: it completes
    /// on every rank only once all ranks have entered it.
    fn align_all(&mut self) -> Result<(), String> {
        let one = CollectiveShape {
            bytes: 4,
            send_elements: 1,
            recv_elements: 1,
        };
        let ptrs = self
            .gpus
            .iter()
            .map(|g| (g.align.ptr(), g.align.ptr()))
            .collect();
        self.group(Collective::AllReduce, &one, ptrs)
    }

    /// One collective on every local rank, in one NCCL group (one stream per GPU), `offset`
    /// bytes into the buffers.
    fn enqueue_all(
        &mut self,
        op: Collective,
        shape: &CollectiveShape,
        offset: u64,
    ) -> Result<(), String> {
        let mut ptrs = Vec::with_capacity(self.gpus.len());
        for g in &self.gpus {
            ptrs.push(g.pointers(offset)?);
        }
        self.group(op, shape, ptrs)
    }

    /// `op` on every local rank with its `(send, recv)` pointers, in one NCCL group.
    fn group(
        &mut self,
        op: Collective,
        shape: &CollectiveShape,
        ptrs: Vec<(u64, u64)>,
    ) -> Result<(), String> {
        self.nccl.group_start().map_err(|e| e.to_string())?;
        for ((g, &comm), buffers) in self.gpus.iter().zip(&self.comms).zip(ptrs) {
            // SAFETY: the buffers were sized for this op and shape on this GPU (by `fill`, or
            // the 1-element `align`); the stream is this GPU's.
            let r = unsafe {
                self.nccl.enqueue(
                    op,
                    shape,
                    self.world_size,
                    buffers,
                    comm,
                    g.stream.cu_stream() as _,
                )
            };
            if let Err(e) = r {
                let _ = self.nccl.group_end();
                return Err(e.to_string());
            }
        }
        self.nccl.group_end().map_err(|e| e.to_string())
    }
}

impl LocalRanks for NcclRanks {
    fn ranks(&self) -> Vec<usize> {
        self.gpus.iter().map(|g| g.rank).collect()
    }

    fn prepare(
        &mut self,
        op: Collective,
        shape: &CollectiveShape,
        verify: bool,
    ) -> Result<Vec<Result<(), String>>, String> {
        for g in &mut self.gpus {
            g.ctx.bind_to_thread().map_err(driver)?;
            g.fill(op, shape)?;
            g.stream.synchronize().map_err(driver)?;
        }
        if !verify {
            return Ok(vec![Ok(()); self.gpus.len()]);
        }
        for g in &mut self.gpus {
            if let Some((_, _, recv)) = g.buffers.as_mut() {
                recv.zero_on(&g.stream).map_err(driver)?;
            }
        }
        self.enqueue_all(op, shape, 0)?;
        let expected = Expected::new(op, self.world_size, shape);
        let mut statuses = Vec::with_capacity(self.gpus.len());
        for g in &self.gpus {
            g.stream.synchronize().map_err(driver)?;
            let (_, _, recv) = g.buffers.as_ref().ok_or("buffers not allocated")?;
            let out = recv
                .download(shape.recv_elements as usize)
                .map_err(driver)?;
            statuses.push(expected.check(g.rank, shape.recv_elements as usize, &out));
        }
        Ok(statuses)
    }

    fn time(
        &mut self,
        op: Collective,
        shape: &CollectiveShape,
        iters: u64,
    ) -> Result<Vec<f64>, String> {
        time_ranks(
            &mut Timed {
                ranks: self,
                op,
                shape,
            },
            iters,
        )
    }
}

/// The device operations of timing this process's ranks, so their order is decided once
/// ([`time_ranks`]) and tested with a recording fake. `local` numbers this process's ranks.
pub(crate) trait RankStreams {
    fn local_ranks(&self) -> usize;
    /// One untimed 1-element all-reduce on every local rank (one NCCL group).
    fn align(&mut self) -> Result<(), String>;
    fn record_start(&mut self, local: usize) -> Result<(), String>;
    /// Iteration `iter` of the timed collective on every local rank (one NCCL group).
    fn collective(&mut self, iter: u64) -> Result<(), String>;
    fn record_end(&mut self, local: usize) -> Result<(), String>;
    fn synchronize(&mut self, local: usize) -> Result<(), String>;
    fn elapsed_ns(&mut self, local: usize) -> Result<f64, String>;
}

/// Each local rank's device time of `iters` collectives: an untimed 1-element all-reduce, its
/// start event, the collectives, its end event, its stream synchronised. The all-reduce ends on
/// a rank only when every rank has entered it, so no rank's start event fires before the last
/// rank got "go" from the rendezvous (which tells the processes one by one): without it each
/// rank's time would include the rendezvous' skew, a fixed fake straggler.
pub(crate) fn time_ranks(s: &mut dyn RankStreams, iters: u64) -> Result<Vec<f64>, String> {
    let n = s.local_ranks();
    s.align()?;
    for g in 0..n {
        s.record_start(g)?;
    }
    for i in 0..iters {
        s.collective(i)?;
    }
    for g in 0..n {
        s.record_end(g)?;
    }
    let mut ns = Vec::with_capacity(n);
    for g in 0..n {
        s.synchronize(g)?;
        ns.push(s.elapsed_ns(g)?);
    }
    Ok(ns)
}

/// [`RankStreams`] on the real ranks, for one op and shape.
struct Timed<'a> {
    ranks: &'a mut NcclRanks,
    op: Collective,
    shape: &'a CollectiveShape,
}

impl RankStreams for Timed<'_> {
    fn local_ranks(&self) -> usize {
        self.ranks.gpus.len()
    }

    fn align(&mut self) -> Result<(), String> {
        self.ranks.align_all()
    }

    fn record_start(&mut self, local: usize) -> Result<(), String> {
        let g = &self.ranks.gpus[local];
        g.start.record(&g.stream).map_err(driver)
    }

    fn collective(&mut self, iter: u64) -> Result<(), String> {
        let offset = shift_bytes(iter, unit_bytes(self.shape));
        self.ranks.enqueue_all(self.op, self.shape, offset)
    }

    fn record_end(&mut self, local: usize) -> Result<(), String> {
        let g = &self.ranks.gpus[local];
        g.end.record(&g.stream).map_err(driver)
    }

    fn synchronize(&mut self, local: usize) -> Result<(), String> {
        self.ranks.gpus[local].stream.synchronize().map_err(driver)
    }

    fn elapsed_ns(&mut self, local: usize) -> Result<f64, String> {
        let g = &self.ranks.gpus[local];
        let ms = g.start.elapsed_ms(&g.end).map_err(driver)?;
        Ok(f64::from(ms) * 1e6)
    }
}

impl Drop for NcclRanks {
    fn drop(&mut self) {
        for g in &self.gpus {
            let _ = g.stream.synchronize();
        }
        for &comm in &self.comms {
            // SAFETY: each communicator is destroyed once, after its streams finished.
            let _ = unsafe { self.nccl.destroy(comm) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_local_rank_gets_its_gpu_or_the_only_one() {
        assert_eq!(device_for_rank(3, 8), Ok(3));
        // srun --gpus-per-task=1: every process sees one GPU, its own.
        assert_eq!(device_for_rank(5, 1), Ok(0));
        let err = device_for_rank(4, 2).unwrap_err();
        assert!(
            err.starts_with("local rank 4 needs a GPU, but only 2 CUDA devices"),
            "{err}"
        );
        assert!(err.contains("hint:"));
        assert!(device_for_rank(0, 0).is_err());
    }

    #[test]
    fn without_nccl_a_rank_is_not_ready_and_says_why() {
        if nccl::library().is_ok() {
            eprintln!("skipped: this machine has NCCL");
            return;
        }
        let why = SystemNccl { visible: 1 }.ready(0).unwrap_err();
        assert!(why.starts_with("no NCCL: none of libnccl.so.2"), "{why}");
        assert!(SystemNccl { visible: 1 }.unique_id().is_err());
    }

    /// Records the device operations of [`time_ranks`] instead of running them.
    struct Recorder {
        local: usize,
        ops: Vec<String>,
    }

    impl RankStreams for Recorder {
        fn local_ranks(&self) -> usize {
            self.local
        }
        fn align(&mut self) -> Result<(), String> {
            self.ops.push("align".into());
            Ok(())
        }
        fn record_start(&mut self, local: usize) -> Result<(), String> {
            self.ops.push(format!("start {local}"));
            Ok(())
        }
        fn collective(&mut self, iter: u64) -> Result<(), String> {
            self.ops.push(format!("collective {iter}"));
            Ok(())
        }
        fn record_end(&mut self, local: usize) -> Result<(), String> {
            self.ops.push(format!("end {local}"));
            Ok(())
        }
        fn synchronize(&mut self, local: usize) -> Result<(), String> {
            self.ops.push(format!("sync {local}"));
            Ok(())
        }
        fn elapsed_ns(&mut self, _: usize) -> Result<f64, String> {
            Ok(1e3)
        }
    }

    /// Issue 23, defect 3: ranks in separate processes get "go" one after another; an untimed
    /// all-reduce right before every rank's start event makes each start event fire only when
    /// every rank has arrived, so the rendezvous' skew is not timed.
    #[test]
    fn every_rank_starts_its_clock_behind_an_untimed_all_reduce() {
        for local in [1, 2] {
            let mut r = Recorder {
                local,
                ops: Vec::new(),
            };
            let ns = time_ranks(&mut r, 2).unwrap();
            assert_eq!(ns, vec![1e3; local]);
            let mut want = vec!["align".to_string()];
            want.extend((0..local).map(|g| format!("start {g}")));
            want.extend(["collective 0".into(), "collective 1".into()]);
            want.extend((0..local).map(|g| format!("end {g}")));
            assert_eq!(r.ops[..want.len()], want[..], "{local} local ranks");
        }
    }
}
