//! One of the user's kernels at one size, timed like the built-in CUDA benchmarks
//! (`device::EventTimer`: events around each launch, L2 flushed before it unless warm, two
//! buffer sets rotated): its buffers allocated and filled on the device on the first run, its
//! output checked against the reference, and only then timed. A kernel that fails its check
//! or whose source did not compile is a failed benchmark, never timed.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, LaunchConfig, PushKernelArg};

use super::reference::{
    against_host, against_kernel, decode, encode_const, host_reference, random_entry,
};
use crate::device::{Device, EventTimer};
use crate::error::CudaError;
use crate::memory::SETS;
use crate::timing::Cache;
use pitwall_schema::benchmark::{BenchError, Benchmark, BenchmarkId, MetricSpec, SamplingHint};
use pitwall_schema::check::{check, tolerance};
use pitwall_schema::manifest::{
    ElemType, HostOp, Init, KernelArg, KernelSpec, Reference, ScalarType, ScalarValue, Shape,
};
use pitwall_schema::schema::Unit;

/// The kernel's function and its reference kernel's, once loaded, or why they could not be
/// (a compile error with NVRTC's log, naming the kernel).
pub type Functions = Result<(CudaFunction, Option<CudaFunction>), String>;

/// A scalar argument's value at one size, in its parameter type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    F32(f32),
    F64(f64),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
}

impl Scalar {
    /// The value of `value` at `n` as a `ty` (the configuration checked that it fits).
    pub fn at(ty: ScalarType, value: &ScalarValue, n: u64) -> Result<Scalar, String> {
        let int = |e: &pitwall_schema::expr::Expr| e.eval(n).map_err(|e| e.to_string());
        let too_big = |v: u64| format!("{v} does not fit {}", ty.as_str());
        Ok(match (ty, value) {
            (ScalarType::F32, ScalarValue::Float(v)) => Scalar::F32(*v as f32),
            (ScalarType::F64, ScalarValue::Float(v)) => Scalar::F64(*v),
            (ScalarType::F32, ScalarValue::Int(e)) => Scalar::F32(int(e)? as f32),
            (ScalarType::F64, ScalarValue::Int(e)) => Scalar::F64(int(e)? as f64),
            (_, ScalarValue::Float(v)) => return Err(format!("{v} is not an integer")),
            (ScalarType::I32, ScalarValue::Int(e)) => {
                let v = int(e)?;
                Scalar::I32(i32::try_from(v).map_err(|_| too_big(v))?)
            }
            (ScalarType::U32, ScalarValue::Int(e)) => {
                let v = int(e)?;
                Scalar::U32(u32::try_from(v).map_err(|_| too_big(v))?)
            }
            (ScalarType::I64, ScalarValue::Int(e)) => {
                let v = int(e)?;
                Scalar::I64(i64::try_from(v).map_err(|_| too_big(v))?)
            }
            (ScalarType::U64, ScalarValue::Int(e)) => Scalar::U64(int(e)?),
        })
    }

    /// As f64, for a host reference's `a`.
    pub fn as_f64(self) -> f64 {
        match self {
            Scalar::F32(v) => f64::from(v),
            Scalar::F64(v) => v,
            Scalar::I32(v) => f64::from(v),
            Scalar::U32(v) => f64::from(v),
            Scalar::I64(v) => v as f64,
            Scalar::U64(v) => v as f64,
        }
    }
}

/// One buffer set: each argument's buffer (`None` for scalars).
type Set = Vec<Option<CudaSlice<u8>>>;

struct State {
    sets: Vec<Set>,
    scalars: Vec<Option<Scalar>>,
    func: CudaFunction,
    cfg: LaunchConfig,
    timer: EventTimer,
}

/// The user's kernel `spec` at size `n`.
pub struct UserKernelBench {
    dev: Arc<Device>,
    spec: Arc<KernelSpec>,
    n: u64,
    cache: Cache,
    functions: Functions,
    state: Option<State>,
}

/// The seed of argument `arg` of buffer set `set`: a reference kernel's set uses set 0's, so
/// both start from the same inputs.
fn seed(set: u64, arg: usize) -> u64 {
    0x5EED_0000 + set * 0x100 + arg as u64
}

impl UserKernelBench {
    pub fn new(
        dev: Arc<Device>,
        spec: Arc<KernelSpec>,
        n: u64,
        cache: Cache,
        functions: Functions,
    ) -> UserKernelBench {
        UserKernelBench {
            dev,
            spec,
            n,
            cache,
            functions,
            state: None,
        }
    }

    fn shape(&self) -> Result<Shape, BenchError> {
        self.spec
            .at(self.n)
            .map_err(|e| BenchError::Setup(format!("kernel `{}`: {e}", self.spec.name)))
    }

    /// A buffer set filled as the manifest says, with the seeds of `seed_set`.
    fn alloc_set(&self, shape: &Shape, seed_set: u64) -> Result<Set, CudaError> {
        let (dev, stream) = (&self.dev, &self.dev.stream);
        let mut set = Vec::with_capacity(self.spec.args.len());
        for (i, arg) in self.spec.args.iter().enumerate() {
            let KernelArg::Buffer { elem, init, .. } = arg else {
                set.push(None);
                continue;
            };
            let count = shape.counts[i];
            let bytes = count
                .checked_mul(elem.size_bytes())
                .and_then(|b| usize::try_from(b).ok())
                .ok_or_else(|| CudaError::Setup(format!("buffer `{}` is too large", arg.name())))?;
            // SAFETY: every byte is written right below, before any kernel reads it.
            let mut buf = unsafe { stream.alloc::<u8>(bytes) }?;
            match init {
                Init::Random => {
                    dev.fill_uniform(random_entry(*elem), &mut buf, count, seed(seed_set, i))?;
                }
                Init::Zeros => stream.memset_zeros(&mut buf)?,
                Init::Const(v) => {
                    stream.memcpy_htod(&encode_const(*elem, *v, count as usize), &mut buf)?;
                }
            }
            set.push(Some(buf));
        }
        Ok(set)
    }

    fn launch(
        &self,
        func: &CudaFunction,
        set: &Set,
        scalars: &[Option<Scalar>],
        cfg: LaunchConfig,
    ) -> Result<(), CudaError> {
        let stream = &self.dev.stream;
        let mut ptrs = Vec::with_capacity(set.len());
        let mut guards = Vec::with_capacity(set.len());
        for buf in set {
            match buf {
                Some(b) => {
                    let (p, g) = b.device_ptr(stream);
                    ptrs.push(p);
                    guards.push(g);
                }
                None => ptrs.push(0),
            }
        }
        let mut launch = stream.launch_builder(func);
        for (i, scalar) in scalars.iter().enumerate() {
            match scalar {
                None => launch.arg(&ptrs[i]),
                Some(Scalar::F32(v)) => launch.arg(v),
                Some(Scalar::F64(v)) => launch.arg(v),
                Some(Scalar::I32(v)) => launch.arg(v),
                Some(Scalar::U32(v)) => launch.arg(v),
                Some(Scalar::I64(v)) => launch.arg(v),
                Some(Scalar::U64(v)) => launch.arg(v),
            };
        }
        // SAFETY: the arguments follow the manifest's parameter list, each buffer holds the
        // elements its `count` says at this size; that they match the kernel's signature and
        // that it stays within them is the manifest's promise, which the reference check tests
        // before anything is timed.
        unsafe { launch.launch(cfg) }?;
        drop(guards);
        Ok(())
    }

    fn download(&self, buf: &CudaSlice<u8>, elem: ElemType) -> Result<Vec<f64>, CudaError> {
        let bytes = self.dev.stream.clone_dtoh(buf)?;
        self.dev.stream.synchronize()?;
        Ok(decode(elem, &bytes))
    }

    /// Runs the kernel once on set 0 and compares its outputs with the reference's.
    fn validate(
        &self,
        state: &State,
        shape: &Shape,
        reference_fn: Option<&CudaFunction>,
    ) -> Result<(), BenchError> {
        let spec = &*self.spec;
        let set0 = &state.sets[0];
        let elem_of = |name: &str| match spec.arg(name) {
            Some((i, KernelArg::Buffer { elem, .. })) => Ok((i, *elem)),
            _ => Err(BenchError::Setup(format!(
                "kernel `{}`: no buffer `{name}`",
                spec.name
            ))),
        };
        let buffer = |i: usize| set0[i].as_ref().expect("a buffer argument");
        let mut compared = Vec::new();
        let tol = match &spec.reference {
            Reference::Host(h) => {
                // Inputs as they are before the launch (`out` may be `y`).
                let (xi, x_elem) = elem_of(&h.x)?;
                let x = self.download(buffer(xi), x_elem)?;
                let y = match &h.y {
                    Some(y) => {
                        let (yi, y_elem) = elem_of(y)?;
                        self.download(buffer(yi), y_elem)?
                    }
                    None => Vec::new(),
                };
                let a =
                    h.a.as_ref()
                        .and_then(|a| spec.arg(a))
                        .and_then(|(i, _)| state.scalars[i])
                        .map_or(0.0, Scalar::as_f64);
                let want = host_reference(h.op, a, &x, &y);
                self.launch(&state.func, set0, &state.scalars, state.cfg)?;
                self.dev.stream.synchronize().map_err(CudaError::from)?;
                let (oi, out_elem) = elem_of(&h.out)?;
                let got = self.download(buffer(oi), out_elem)?;
                compared.extend(against_host(&got, &want));
                let k = if h.op == HostOp::Sum {
                    x.len() as u64
                } else {
                    1
                };
                tolerance(out_elem.dtype(), k)
            }
            Reference::Kernel { terms, .. } => {
                let reference_fn = reference_fn.expect("loaded with the kernel");
                let ref_set = self.alloc_set(shape, 0)?;
                self.launch(reference_fn, &ref_set, &state.scalars, state.cfg)?;
                self.launch(&state.func, set0, &state.scalars, state.cfg)?;
                self.dev.stream.synchronize().map_err(CudaError::from)?;
                let k = terms
                    .eval(self.n)
                    .map_err(|e| BenchError::Setup(e.to_string()))?;
                // The loosest rule among the output types.
                let mut tol = 0.0f64;
                for (i, arg) in spec.outputs() {
                    let KernelArg::Buffer { elem, .. } = arg else {
                        continue;
                    };
                    let want = self.download(ref_set[i].as_ref().expect("buffer"), *elem)?;
                    let got = self.download(buffer(i), *elem)?;
                    tol = tol.max(tolerance(elem.dtype(), k));
                    let offset = compared.len();
                    compared.extend(against_kernel(&got, &want).into_iter().map(|mut c| {
                        c.index += offset;
                        c
                    }));
                }
                tol
            }
        };
        let verdict = check(compared, tol);
        if verdict.passed() {
            Ok(())
        } else {
            Err(BenchError::Validation(
                verdict.describe(&self.id().display()),
            ))
        }
    }

    fn setup(&self) -> Result<State, BenchError> {
        let (func, reference_fn) = self.functions.clone().map_err(BenchError::Setup)?;
        let shape = self.shape()?;
        let mut scalars = Vec::with_capacity(self.spec.args.len());
        for arg in &self.spec.args {
            scalars.push(match arg {
                KernelArg::Scalar { name, ty, value } => {
                    Some(Scalar::at(*ty, value, self.n).map_err(|e| {
                        BenchError::Setup(format!(
                            "kernel `{}`: argument `{name}`: {e}",
                            self.spec.name
                        ))
                    })?)
                }
                KernelArg::Buffer { .. } => None,
            });
        }
        let mut sets = Vec::with_capacity(SETS);
        for s in 0..SETS as u64 {
            sets.push(self.alloc_set(&shape, s)?);
        }
        let cfg = LaunchConfig {
            grid_dim: shape.grid,
            block_dim: shape.block,
            shared_mem_bytes: shape.shared_mem_bytes,
        };
        let state = State {
            sets,
            scalars,
            func,
            cfg,
            timer: EventTimer::new(),
        };
        self.validate(&state, &shape, reference_fn.as_ref())?;
        // Set 0 ran in the check; the other sets' first launch is their warm-up.
        for set in &state.sets[1..] {
            self.launch(&state.func, set, &state.scalars, state.cfg)?;
        }
        self.dev.stream.synchronize().map_err(CudaError::from)?;
        Ok(state)
    }
}

impl Benchmark for UserKernelBench {
    fn id(&self) -> BenchmarkId {
        BenchmarkId::new(&self.spec.name, &[("n", self.n.to_string())])
    }

    fn sampling(&self) -> SamplingHint {
        SamplingHint::Batched
    }

    /// Time per launch, then GB/s and TFLOP/s where the manifest counts bytes and flops.
    fn metrics(&self) -> Vec<MetricSpec> {
        let mut out = vec![MetricSpec::time("time")];
        let at =
            |e: &Option<pitwall_schema::expr::Expr>| e.as_ref().and_then(|e| e.eval(self.n).ok());
        if let Some(bytes) = at(&self.spec.bytes) {
            out.push(MetricSpec::rate(
                "bandwidth",
                Unit::GB_PER_S,
                bytes as f64,
                1e9,
            ));
        }
        if let Some(flops) = at(&self.spec.flops) {
            out.push(MetricSpec::rate(
                "throughput",
                Unit::TFLOP_PER_S,
                flops as f64,
                1e12,
            ));
        }
        out
    }

    fn run(&mut self, iters: u64) -> Result<f64, BenchError> {
        self.dev.ctx.bind_to_thread().map_err(CudaError::from)?;
        if self.state.is_none() {
            self.state = Some(self.setup()?);
        }
        let mut state = self.state.take().expect("set above");
        let mut timer = std::mem::take(&mut state.timer);
        let dev = self.dev.clone();
        let timed = timer.time(&dev, self.cache, iters, |i| {
            let set = &state.sets[(i % SETS as u64) as usize];
            self.launch(&state.func, set, &state.scalars, state.cfg)
        });
        state.timer = timer;
        self.state = Some(state);
        Ok(timed?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pitwall_schema::expr::Expr;

    #[test]
    fn scalars_take_their_parameter_type() {
        let n = ScalarValue::Int(Expr::parse("n / 2").unwrap());
        assert_eq!(Scalar::at(ScalarType::I32, &n, 10), Ok(Scalar::I32(5)));
        assert_eq!(Scalar::at(ScalarType::U64, &n, 10), Ok(Scalar::U64(5)));
        assert_eq!(Scalar::at(ScalarType::F32, &n, 10), Ok(Scalar::F32(5.0)));
        let e = Scalar::at(ScalarType::I32, &n, 1 << 33).unwrap_err();
        assert_eq!(e, "4294967296 does not fit i32");
        let two = ScalarValue::Float(2.5);
        assert_eq!(Scalar::at(ScalarType::F64, &two, 0), Ok(Scalar::F64(2.5)));
        assert!(Scalar::at(ScalarType::U32, &two, 0).is_err());
        assert_eq!(Scalar::F32(2.0).as_f64(), 2.0);
    }

    #[test]
    fn a_reference_set_starts_from_set_zeros_inputs() {
        assert_eq!(seed(0, 3), seed(0, 3));
        assert_ne!(seed(0, 3), seed(1, 3));
        assert_ne!(seed(0, 3), seed(0, 4));
    }
}
