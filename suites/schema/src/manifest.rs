//! The manifest of a `cuda-kernels` suite as values: for each of the user's kernels, the `.cu`
//! file of the measured commit that holds it, its entry point, the sizes `n` it is measured
//! at, its launch shape and argument buffers as expressions of `n`, and the reference its
//! output is checked against. The configuration builds it (with file:line errors), the worker
//! protocol carries it, the CUDA backend compiles and runs it; all of them evaluate sizes and
//! launch limits through [`KernelSpec::at`], so what the configuration accepted is what runs.

use crate::expr::{Expr, ExprError};
use crate::work::Dtype;

/// Every kernel of one `cuda-kernels` suite.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KernelManifest {
    pub kernels: Vec<KernelSpec>,
}

/// One kernel, measured at each of `sizes`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KernelSpec {
    /// The benchmark's name (`saxpy` → `saxpy[n=1048576]`).
    pub name: String,
    /// The `.cu` file, relative to the checkout, `/`-separated, inside it.
    pub source: String,
    /// The `extern "C" __global__` function launched.
    pub entry: String,
    pub sizes: Vec<u64>,
    pub grid: [Expr; 3],
    pub block: [Expr; 3],
    pub shared_mem_bytes: Expr,
    /// In the kernel's parameter order.
    pub args: Vec<KernelArg>,
    pub reference: Reference,
    /// Bytes moved per launch, for GB/s.
    pub bytes: Option<Expr>,
    /// Floating-point operations per launch, for TFLOP/s.
    pub flops: Option<Expr>,
}

/// Element types of argument buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ElemType {
    F64,
    F32,
    F16,
    Bf16,
}

impl ElemType {
    pub const ALL: [ElemType; 4] = [ElemType::F64, ElemType::F32, ElemType::F16, ElemType::Bf16];

    pub fn as_str(self) -> &'static str {
        self.dtype().as_str()
    }

    pub fn parse(s: &str) -> Option<ElemType> {
        ElemType::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// The type whose tolerance (`check::tolerance`) applies.
    pub fn dtype(self) -> Dtype {
        match self {
            ElemType::F64 => Dtype::F64,
            ElemType::F32 => Dtype::F32,
            ElemType::F16 => Dtype::F16,
            ElemType::Bf16 => Dtype::Bf16,
        }
    }

    pub fn size_bytes(self) -> u64 {
        self.dtype().size_bytes()
    }
}

/// Types of scalar arguments, passed by value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScalarType {
    F32,
    F64,
    I32,
    U32,
    I64,
    U64,
}

impl ScalarType {
    pub const ALL: [ScalarType; 6] = [
        ScalarType::F32,
        ScalarType::F64,
        ScalarType::I32,
        ScalarType::U32,
        ScalarType::I64,
        ScalarType::U64,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
            ScalarType::I32 => "i32",
            ScalarType::U32 => "u32",
            ScalarType::I64 => "i64",
            ScalarType::U64 => "u64",
        }
    }

    pub fn parse(s: &str) -> Option<ScalarType> {
        ScalarType::ALL.into_iter().find(|t| t.as_str() == s)
    }

    pub fn is_float(self) -> bool {
        matches!(self, ScalarType::F32 | ScalarType::F64)
    }

    /// The largest value an integer type holds.
    pub fn max_int(self) -> u64 {
        match self {
            ScalarType::I32 => i32::MAX as u64,
            ScalarType::U32 => u64::from(u32::MAX),
            ScalarType::I64 => i64::MAX as u64,
            ScalarType::U64 | ScalarType::F32 | ScalarType::F64 => u64::MAX,
        }
    }
}

/// How a buffer is filled before the first launch (and before the reference is computed).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Init {
    /// Uniform in (−1, 1), never zero, from a counter hash (`random_init.cu`).
    Random,
    Zeros,
    Const(f64),
}

/// What the kernel does with a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    In,
    Out,
    InOut,
}

impl Access {
    pub const ALL: [Access; 3] = [Access::In, Access::Out, Access::InOut];

    pub fn as_str(self) -> &'static str {
        match self {
            Access::In => "in",
            Access::Out => "out",
            Access::InOut => "inout",
        }
    }

    pub fn parse(s: &str) -> Option<Access> {
        Access::ALL.into_iter().find(|a| a.as_str() == s)
    }

    /// Written by the kernel: compared with the reference.
    pub fn is_output(self) -> bool {
        self != Access::In
    }
}

/// One kernel parameter.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelArg {
    /// A device pointer to `count` elements.
    Buffer {
        name: String,
        elem: ElemType,
        count: Expr,
        init: Init,
        access: Access,
    },
    /// A value: a float for f32/f64, an expression of `n` for the integer types.
    Scalar {
        name: String,
        ty: ScalarType,
        value: ScalarValue,
    },
}

impl KernelArg {
    pub fn name(&self) -> &str {
        match self {
            KernelArg::Buffer { name, .. } | KernelArg::Scalar { name, .. } => name,
        }
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScalarValue {
    Float(f64),
    Int(Expr),
}

/// What a kernel's outputs are checked against before it is timed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reference {
    /// A second kernel with the same parameters and launch shape, run on identically
    /// initialised buffers; every output buffer compared element by element. `terms`: the
    /// number of terms each output element sums (the √k of the tolerance), 1 by default.
    Kernel {
        entry: String,
        /// Its file when not the kernel's own.
        source: Option<String>,
        terms: Expr,
    },
    /// A host function of the closed set [`HostOp`], in f64 over the same rounded inputs.
    Host(HostRef),
}

/// The host references pitwall computes itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostOp {
    /// out[i] = x[i]
    Copy,
    /// out[i] = a·x[i]
    Scale,
    /// out[i] = a·x[i] + y[i] (y's value before the launch; `out` may be `y`)
    Axpy,
    /// out[i] = x[i] + y[i]
    Add,
    /// out[0] = Σ x[i]
    Sum,
}

impl HostOp {
    pub const ALL: [HostOp; 5] = [
        HostOp::Copy,
        HostOp::Scale,
        HostOp::Axpy,
        HostOp::Add,
        HostOp::Sum,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HostOp::Copy => "copy",
            HostOp::Scale => "scale",
            HostOp::Axpy => "axpy",
            HostOp::Add => "add",
            HostOp::Sum => "sum",
        }
    }

    pub fn parse(s: &str) -> Option<HostOp> {
        HostOp::ALL.into_iter().find(|o| o.as_str() == s)
    }

    /// Takes the scalar operand `a`.
    pub fn needs_a(self) -> bool {
        matches!(self, HostOp::Scale | HostOp::Axpy)
    }

    /// Takes the second buffer `y`.
    pub fn needs_y(self) -> bool {
        matches!(self, HostOp::Axpy | HostOp::Add)
    }
}

/// A host reference and the arguments (by name) it reads and checks.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HostRef {
    pub op: HostOp,
    pub a: Option<String>,
    pub x: String,
    pub y: Option<String>,
    pub out: String,
}

/// CUDA's launch limits (the CUDA C++ Programming Guide, "Technical Specifications per Compute
/// Capability", unchanged from sm_70 to sm_100): grid x up to 2³¹−1, y and z up to 65535; block
/// x and y up to 1024, z up to 64, at most 1024 threads; dynamic shared memory above 48 KiB
/// needs an opt-in attribute pitwall does not set.
pub const MAX_GRID: [u64; 3] = [(1 << 31) - 1, 65_535, 65_535];
pub const MAX_BLOCK: [u64; 3] = [1024, 1024, 64];
pub const MAX_THREADS_PER_BLOCK: u64 = 1024;
pub const MAX_DYNAMIC_SHARED_BYTES: u64 = 48 * 1024;

/// A kernel's launch and buffers at one size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub shared_mem_bytes: u32,
    /// Elements of each argument, in order (0 for scalars).
    pub counts: Vec<u64>,
}

impl Shape {
    /// Device bytes of one set of the argument buffers.
    pub fn buffer_bytes(&self, spec: &KernelSpec) -> u64 {
        spec.args
            .iter()
            .zip(&self.counts)
            .map(|(a, c)| match a {
                KernelArg::Buffer { elem, .. } => c.saturating_mul(elem.size_bytes()),
                KernelArg::Scalar { .. } => 0,
            })
            .fold(0, u64::saturating_add)
    }
}

/// Why a kernel cannot be launched at a size: one line naming what and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    #[error("{what}: {source}")]
    Expr {
        what: String,
        #[source]
        source: ExprError,
    },
    #[error("{what} is {value} at n = {n}; {limit}")]
    Limit {
        what: String,
        value: u64,
        n: u64,
        limit: String,
    },
}

impl KernelSpec {
    /// The argument named `name` and its position.
    pub fn arg(&self, name: &str) -> Option<(usize, &KernelArg)> {
        self.args.iter().enumerate().find(|(_, a)| a.name() == name)
    }

    /// The launch shape and buffer sizes at `n`, within CUDA's limits and with every buffer
    /// holding at least one element, and the host reference's operands of matching sizes.
    pub fn at(&self, n: u64) -> Result<Shape, ShapeError> {
        let value = |what: String, e: &Expr| {
            e.eval(n)
                .map_err(|source| ShapeError::Expr { what, source })
        };
        let limit = |what: String, value: u64, limit: String| ShapeError::Limit {
            what,
            value,
            n,
            limit,
        };
        let mut dims = [[0u32; 3]; 2];
        for (d, (key, exprs, max)) in [
            ("grid", &self.grid, MAX_GRID),
            ("block", &self.block, MAX_BLOCK),
        ]
        .into_iter()
        .enumerate()
        {
            for axis in 0..3 {
                let what = format!("{key}[{axis}] `{}`", exprs[axis]);
                let v = value(what.clone(), &exprs[axis])?;
                if v == 0 || v > max[axis] {
                    return Err(limit(what, v, format!("it must be 1 to {}", max[axis])));
                }
                dims[d][axis] = v as u32;
            }
        }
        let threads: u64 = dims[1].iter().map(|&v| u64::from(v)).product();
        if threads > MAX_THREADS_PER_BLOCK {
            return Err(limit(
                "the block's thread count".into(),
                threads,
                format!("a block holds at most {MAX_THREADS_PER_BLOCK} threads"),
            ));
        }
        let what = format!("shared_mem_bytes `{}`", self.shared_mem_bytes);
        let shared = value(what.clone(), &self.shared_mem_bytes)?;
        if shared > MAX_DYNAMIC_SHARED_BYTES {
            return Err(limit(
                what,
                shared,
                format!("at most {MAX_DYNAMIC_SHARED_BYTES} bytes of dynamic shared memory"),
            ));
        }
        let mut counts = Vec::with_capacity(self.args.len());
        for a in &self.args {
            counts.push(match a {
                KernelArg::Buffer { name, count, .. } => {
                    let what = format!("the count of `{name}` `{count}`");
                    let c = value(what.clone(), count)?;
                    if c == 0 {
                        return Err(limit(what, 0, "a buffer holds at least one element".into()));
                    }
                    c
                }
                KernelArg::Scalar { name, ty, value: v } => {
                    if let ScalarValue::Int(e) = v {
                        let what = format!("`{name}` `{e}`");
                        let x = value(what.clone(), e)?;
                        if x > ty.max_int() {
                            return Err(limit(what, x, format!("it must fit {}", ty.as_str())));
                        }
                    }
                    0
                }
            });
        }
        self.check_host_reference(&counts, n)?;
        for (what, e) in [("bytes", &self.bytes), ("flops", &self.flops)] {
            if let Some(e) = e {
                value(format!("{what} `{e}`"), e)?;
            }
        }
        Ok(Shape {
            grid: (dims[0][0], dims[0][1], dims[0][2]),
            block: (dims[1][0], dims[1][1], dims[1][2]),
            shared_mem_bytes: shared as u32,
            counts,
        })
    }

    /// A host reference's buffers (`x`, `y`, and `out` unless it sums) hold equally many
    /// elements at `n`, given each argument's element count.
    fn check_host_reference(&self, counts: &[u64], n: u64) -> Result<(), ShapeError> {
        if let Reference::Host(h) = &self.reference {
            let count = |name: &str| self.arg(name).map(|(i, _)| counts[i]).unwrap_or(0);
            let x = count(&h.x);
            let mut same = vec![&h.x];
            if h.op != HostOp::Sum {
                same.push(&h.out);
            }
            same.extend(h.y.as_ref());
            for other in same {
                if count(other) != x {
                    return Err(ShapeError::Limit {
                        what: format!("the count of `{other}`"),
                        value: count(other),
                        n,
                        limit: format!(
                            "host reference `{}` needs it equal to the count of `{}` ({x})",
                            h.op.as_str(),
                            h.x
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// The output buffers (checked against the reference), by position.
    pub fn outputs(&self) -> impl Iterator<Item = (usize, &KernelArg)> {
        self.args
            .iter()
            .enumerate()
            .filter(|(_, a)| matches!(a, KernelArg::Buffer { access, .. } if access.is_output()))
    }

    /// Every `.cu` file the kernel and its reference need, the kernel's first.
    pub fn sources(&self) -> Vec<&str> {
        let mut out = vec![self.source.as_str()];
        if let Reference::Kernel {
            source: Some(s), ..
        } = &self.reference
        {
            if s != &self.source {
                out.push(s);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
