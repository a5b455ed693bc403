//! The `[[suite.kernel]]` entries of a `kind = "cuda-kernels"` suite (as written: `raw`)
//! validated into `pitwall_schema::manifest`: every mistake one line naming the file, line,
//! suite, kernel and key, and every size of the sweep evaluated once here (launch limits,
//! buffer counts), so a manifest that loads can launch.

use std::ops::Range;

use pitwall_schema::expr::Expr;
use pitwall_schema::manifest::{
    Access, ElemType, HostOp, HostRef, Init, KernelArg, KernelManifest, KernelSpec, Reference,
    ScalarType, ScalarValue,
};
use toml::Spanned;

use super::error::{ConfigError, Ctx};
use super::raw::{RawArg, RawDims, RawExpr, RawKernel, RawReference, RawValue};

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A `source` path: relative, `/`-separated, never leaving the checkout.
fn source_problem(path: &str) -> Option<&'static str> {
    if path.trim().is_empty() {
        Some("is empty")
    } else if path.starts_with('/') || path.contains('\\') || path.contains(':') {
        Some("must be a relative path with `/` separators")
    } else if path.split('/').any(|c| c == ".." || c.is_empty()) {
        Some("must stay inside the repository (no `..`, no empty component)")
    } else {
        None
    }
}

/// Messages of one kernel: `suite `s`: kernel `k`: …` at a span of the file.
struct At<'c, 'a> {
    ctx: &'c Ctx<'a>,
    prefix: String,
}

impl At<'_, '_> {
    fn err(&self, span: Range<usize>, message: impl std::fmt::Display) -> ConfigError {
        self.ctx
            .at(span, format!("{}: {message}", self.prefix), None)
    }

    fn hint(&self, span: Range<usize>, message: impl std::fmt::Display, hint: &str) -> ConfigError {
        self.ctx.at(
            span,
            format!("{}: {message}", self.prefix),
            Some(hint.into()),
        )
    }

    fn expr(&self, span: Range<usize>, key: &str, raw: &RawExpr) -> Result<Expr, ConfigError> {
        match raw {
            RawExpr::Int(v) => Ok(Expr::constant(*v)),
            RawExpr::Other(v) => Err(self.hint(
                span,
                format!(
                    "key `{key}`: `{}` is not a size (accepted: a whole number ≥ 0, or an expression of n in quotes)",
                    shown_value(v)
                ),
                "for example \"cdiv(n, 256)\" or 4",
            )),
            RawExpr::Text(t) => Expr::parse(t).map_err(|e| {
                self.hint(
                    span,
                    format!("key `{key}`: {e}"),
                    "write an expression of the size n: numbers, n, + - * / % ( ), cdiv(a, b), min(a, b), max(a, b)",
                )
            }),
        }
    }

    fn dims(&self, key: &str, raw: &Spanned<RawDims>) -> Result<[Expr; 3], ConfigError> {
        let span = raw.span();
        let list = match raw.get_ref() {
            RawDims::One(e) => vec![e.clone()],
            RawDims::Many(v) => v.clone(),
        };
        if list.is_empty() || list.len() > 3 {
            return Err(self.err(
                span,
                format!(
                    "key `{key}`: give 1 to 3 dimensions (x, y, z), not {}",
                    list.len()
                ),
            ));
        }
        let mut out = [Expr::constant(1), Expr::constant(1), Expr::constant(1)];
        for (i, e) in list.iter().enumerate() {
            out[i] = self.expr(span.clone(), key, e)?;
        }
        Ok(out)
    }
}

/// A TOML value as a user wrote it, for an error (short; tables and arrays by their kind).
fn shown_value(v: &toml::Value) -> String {
    match v {
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::String(s) => format!("{s:?}"),
        toml::Value::Datetime(d) => d.to_string(),
        toml::Value::Array(_) => "an array".into(),
        toml::Value::Table(_) => "a table".into(),
    }
}

impl Ctx<'_> {
    /// The `[[suite.kernel]]` entries of the suite `label` names, as a manifest.
    pub(super) fn kernels(
        &self,
        label: &str,
        suite_span: Range<usize>,
        raw: &[Spanned<RawKernel>],
    ) -> Result<KernelManifest, ConfigError> {
        if raw.is_empty() {
            return Err(self.at(
                suite_span,
                format!("{label}: kind = \"cuda-kernels\" needs at least one [[suite.kernel]]"),
                Some("add [[suite.kernel]] entries (docs/SUITES.md has an example)".into()),
            ));
        }
        let mut kernels: Vec<KernelSpec> = Vec::with_capacity(raw.len());
        for k in raw {
            let spec = self.kernel(label, k)?;
            if kernels.iter().any(|o| o.name == spec.name) {
                return Err(self.at(
                    k.span(),
                    format!("{label}: kernel `{}` is listed twice", spec.name),
                    Some("give each [[suite.kernel]] its own name".into()),
                ));
            }
            kernels.push(spec);
        }
        Ok(KernelManifest { kernels })
    }

    fn kernel(&self, label: &str, raw: &Spanned<RawKernel>) -> Result<KernelSpec, ConfigError> {
        let span = raw.span();
        let k = raw.get_ref();
        let name = self.kernel_name(label, span.clone(), k)?;
        let at = At {
            ctx: self,
            prefix: format!("{label}: kernel `{name}`"),
        };
        let missing = |key: &str, hint: &str| at.hint(span.clone(), format!("no `{key}`"), hint);
        let source = k
            .source
            .as_ref()
            .ok_or_else(|| missing("source", "add source = \"kernels/file.cu\""))?;
        if let Some(p) = source_problem(source.get_ref()) {
            return Err(at.err(
                source.span(),
                format!("key `source` `{}` {p}", source.get_ref()),
            ));
        }
        let entry = k.entry.as_ref().ok_or_else(|| {
            missing(
                "entry",
                "add entry = \"…\", the extern \"C\" __global__ function",
            )
        })?;
        if !is_identifier(entry.get_ref()) {
            return Err(at.err(
                entry.span(),
                format!("key `entry` `{}` is not a C identifier", entry.get_ref()),
            ));
        }
        let sizes = k
            .sizes
            .as_ref()
            .ok_or_else(|| missing("sizes", "add sizes = [1048576], the values of n"))?;
        if sizes.get_ref().is_empty() || sizes.get_ref().contains(&0) {
            return Err(at.err(sizes.span(), "key `sizes` must list sizes of at least 1"));
        }
        let grid = k
            .grid
            .as_ref()
            .ok_or_else(|| missing("grid", "add grid = \"cdiv(n, 256)\""))?;
        let block = k
            .block
            .as_ref()
            .ok_or_else(|| missing("block", "add block = 256"))?;
        let shared_mem_bytes = match &k.shared_mem_bytes {
            None => Expr::constant(0),
            Some(s) => at.expr(s.span(), "shared_mem_bytes", s.get_ref())?,
        };
        let args = self.kernel_args(&at, span.clone(), &k.args)?;
        let reference = k.reference.as_ref().ok_or_else(|| {
            missing(
                "reference",
                "add reference = { kernel = \"…\" } or reference = { host = \"copy\", x = \"…\", out = \"…\" }",
            )
        })?;
        let reference = self.reference(&at, reference, &args)?;
        let opt = |key: &str, e: &Option<Spanned<RawExpr>>| {
            e.as_ref()
                .map(|e| at.expr(e.span(), key, e.get_ref()))
                .transpose()
        };
        let spec = KernelSpec {
            name,
            source: source.get_ref().clone(),
            entry: entry.get_ref().clone(),
            sizes: sizes.get_ref().clone(),
            grid: at.dims("grid", grid)?,
            block: at.dims("block", block)?,
            shared_mem_bytes,
            args,
            reference,
            bytes: opt("bytes", &k.bytes)?,
            flops: opt("flops", &k.flops)?,
        };
        for &n in &spec.sizes {
            spec.at(n).map_err(|e| at.err(sizes.span(), e))?;
        }
        Ok(spec)
    }

    /// A kernel's `name`: given, and letters, digits, `_`, `-` and `.` only.
    fn kernel_name(
        &self,
        label: &str,
        span: Range<usize>,
        k: &RawKernel,
    ) -> Result<String, ConfigError> {
        Ok(match &k.name {
            Some(n) if valid_name(n.get_ref()) => n.get_ref().trim().to_string(),
            Some(n) => {
                return Err(self.at(
                    n.span(),
                    format!("{label}: kernel name `{}` is not valid", n.get_ref()),
                    Some("use letters, digits, `_`, `-` and `.`".into()),
                ));
            }
            None => {
                return Err(self.at(
                    span,
                    format!("{label}: a [[suite.kernel]] has no `name`"),
                    Some("add name = \"…\" (the benchmark's name)".into()),
                ));
            }
        })
    }

    /// A kernel's `args`, each named once, at least one of them a buffer it writes.
    fn kernel_args(
        &self,
        at: &At<'_, '_>,
        span: Range<usize>,
        raw: &[Spanned<RawArg>],
    ) -> Result<Vec<KernelArg>, ConfigError> {
        let mut args: Vec<KernelArg> = Vec::with_capacity(raw.len());
        for a in raw {
            let arg = self.arg(at, a)?;
            if args.iter().any(|o| o.name() == arg.name()) {
                return Err(at.err(
                    a.span(),
                    format!("argument `{}` is listed twice", arg.name()),
                ));
            }
            args.push(arg);
        }
        if !args
            .iter()
            .any(|a| matches!(a, KernelArg::Buffer { access, .. } if access.is_output()))
        {
            return Err(at.hint(
                span,
                "no output buffer to check",
                "give the buffer the kernel writes access = \"out\" or \"inout\"",
            ));
        }
        Ok(args)
    }

    fn arg(&self, at: &At<'_, '_>, raw: &Spanned<RawArg>) -> Result<KernelArg, ConfigError> {
        let span = raw.span();
        let a = raw.get_ref();
        let Some(name) = a.name.as_deref().filter(|n| is_identifier(n)) else {
            return Err(at.hint(
                span,
                "an argument has no valid `name`",
                "name every entry of args with a C identifier",
            ));
        };
        match (&a.buffer, &a.scalar) {
            (Some(ty), None) => buffer_arg(at, span, name, a, ty),
            (None, Some(ty)) => scalar_arg(at, span, name, a, ty),
            _ => Err(at.hint(
                span,
                format!("argument `{name}` needs exactly one of `buffer` and `scalar`"),
                "buffer = \"f32\" (a device array) or scalar = \"f32\" (a value)",
            )),
        }
    }

    fn reference(
        &self,
        at: &At<'_, '_>,
        raw: &Spanned<RawReference>,
        args: &[KernelArg],
    ) -> Result<Reference, ConfigError> {
        let span = raw.span();
        let r = raw.get_ref();
        let err = |m: String| at.err(span.clone(), format!("reference: {m}"));
        match (&r.kernel, &r.host) {
            (Some(entry), None) => {
                for (key, set) in [("a", &r.a), ("x", &r.x), ("y", &r.y), ("out", &r.out)] {
                    if set.is_some() {
                        return Err(err(format!("`{key}` applies to host references")));
                    }
                }
                if !is_identifier(entry) {
                    return Err(err(format!("kernel `{entry}` is not a C identifier")));
                }
                if let Some(p) = r.source.as_deref().and_then(source_problem) {
                    return Err(err(format!("source {p}")));
                }
                let terms = match &r.terms {
                    None => Expr::constant(1),
                    Some(t) => at.expr(span.clone(), "reference.terms", t)?,
                };
                Ok(Reference::Kernel {
                    entry: entry.clone(),
                    source: r.source.clone(),
                    terms,
                })
            }
            (None, Some(op)) => {
                if r.source.is_some() || r.terms.is_some() {
                    return Err(err("`source` and `terms` apply to kernel references".into()));
                }
                let op = HostOp::parse(op).ok_or_else(|| {
                    err(format!("host reference `{op}` is not known (use copy, scale, axpy, add or sum)"))
                })?;
                let buffer = |role: &str, name: &Option<String>, output: bool| {
                    let Some(name) = name else {
                        return Err(err(format!("`{}` needs `{role}`", op.as_str())));
                    };
                    match args.iter().find(|a| a.name() == name) {
                        Some(KernelArg::Buffer { access, .. }) if !output || access.is_output() => {
                            Ok(name.clone())
                        }
                        Some(KernelArg::Buffer { .. }) => Err(err(format!(
                            "`{role}` = `{name}` is not written by the kernel (access = \"out\" or \"inout\")"
                        ))),
                        _ => Err(err(format!("`{role}` = `{name}` is not a buffer argument"))),
                    }
                };
                let x = buffer("x", &r.x, false)?;
                let out = buffer("out", &r.out, true)?;
                let y = match (op.needs_y(), &r.y) {
                    (true, _) => Some(buffer("y", &r.y, false)?),
                    (false, Some(_)) => return Err(err(format!("`{}` takes no `y`", op.as_str()))),
                    (false, None) => None,
                };
                let a = match (op.needs_a(), &r.a) {
                    (true, Some(a)) => match args.iter().find(|arg| arg.name() == a) {
                        Some(KernelArg::Scalar { ty, .. }) if ty.is_float() => Some(a.clone()),
                        _ => return Err(err(format!("`a` = `{a}` is not an f32 or f64 scalar argument"))),
                    },
                    (true, None) => return Err(err(format!("`{}` needs `a`", op.as_str()))),
                    (false, Some(_)) => return Err(err(format!("`{}` takes no `a`", op.as_str()))),
                    (false, None) => None,
                };
                Ok(Reference::Host(HostRef { op, a, x, y, out }))
            }
            _ => Err(at.hint(
                span,
                "reference needs exactly one of `kernel` and `host`",
                "reference = { kernel = \"my_kernel_ref\" } or { host = \"copy\", x = \"in\", out = \"out\" }",
            )),
        }
    }
}

/// A benchmark name pitwall can show as `name[n=…]`.
fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// A `buffer = "…"` argument: its element type, access, count and initial values.
fn buffer_arg(
    at: &At<'_, '_>,
    span: Range<usize>,
    name: &str,
    a: &RawArg,
    ty: &str,
) -> Result<KernelArg, ConfigError> {
    let arg_err = |message: String| at.err(span.clone(), format!("argument `{name}`: {message}"));
    if a.value.is_some() {
        return Err(arg_err(
            "`value` applies to scalars; a buffer has `init`".into(),
        ));
    }
    let elem = ElemType::parse(ty).ok_or_else(|| {
        arg_err(format!(
            "buffer type `{ty}` is not known (use f64, f32, f16 or bf16)"
        ))
    })?;
    let access = match &a.access {
        None => Access::In,
        Some(s) => Access::parse(s)
            .ok_or_else(|| arg_err(format!("access `{s}` is not known (use in, out or inout)")))?,
    };
    let count = a
        .count
        .as_ref()
        .ok_or_else(|| arg_err("no `count` (elements, an expression of n)".into()))?;
    let count = at.expr(span.clone(), &format!("args.{name}.count"), count)?;
    let init = match &a.init {
        None if access == Access::Out => Init::Zeros,
        None => Init::Random,
        Some(RawValue::Text(t)) if t == "random" => Init::Random,
        Some(RawValue::Text(t)) if t == "zeros" => Init::Zeros,
        Some(RawValue::Int(v)) => Init::Const(*v as f64),
        Some(RawValue::Float(v)) if v.is_finite() => Init::Const(*v),
        Some(_) => {
            return Err(arg_err(
                "init must be \"random\", \"zeros\" or a finite number".into(),
            ));
        }
    };
    Ok(KernelArg::Buffer {
        name: name.into(),
        elem,
        count,
        init,
        access,
    })
}

/// A `scalar = "…"` argument: its type and value (a number, or an expression of n).
fn scalar_arg(
    at: &At<'_, '_>,
    span: Range<usize>,
    name: &str,
    a: &RawArg,
    ty: &str,
) -> Result<KernelArg, ConfigError> {
    let arg_err = |message: String| at.err(span.clone(), format!("argument `{name}`: {message}"));
    for (key, set) in [
        ("count", a.count.is_some()),
        ("init", a.init.is_some()),
        ("access", a.access.is_some()),
    ] {
        if set {
            return Err(arg_err(format!(
                "`{key}` applies to buffers; a scalar has `value`"
            )));
        }
    }
    let ty = ScalarType::parse(ty).ok_or_else(|| {
        arg_err(format!(
            "scalar type `{ty}` is not known (use f32, f64, i32, u32, i64 or u64)"
        ))
    })?;
    let value = match (&a.value, ty.is_float()) {
        (None, _) => return Err(arg_err("no `value`".into())),
        (Some(RawValue::Float(v)), true) if v.is_finite() => ScalarValue::Float(*v),
        (Some(RawValue::Int(v)), true) => ScalarValue::Float(*v as f64),
        (Some(RawValue::Int(v)), false) if *v >= 0 => ScalarValue::Int(Expr::constant(*v as u64)),
        (Some(RawValue::Text(t)), false) => ScalarValue::Int(at.expr(
            span.clone(),
            &format!("args.{name}.value"),
            &RawExpr::Text(t.clone()),
        )?),
        (Some(_), true) => {
            return Err(arg_err(format!(
                "value must be a finite number for {}",
                ty.as_str()
            )));
        }
        (Some(_), false) => {
            return Err(arg_err(format!(
                "value must be a non-negative integer or an expression of n for {}",
                ty.as_str()
            )));
        }
    };
    Ok(KernelArg::Scalar {
        name: name.into(),
        ty,
        value,
    })
}
