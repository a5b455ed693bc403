//! The manifest's shapes at a size: launch limits, buffer counts and the host reference's
//! operand sizes, and its round trip through the worker protocol's JSON.

use super::*;

fn e(s: &str) -> Expr {
    Expr::parse(s).unwrap()
}

fn buffer(name: &str, count: &str, access: Access) -> KernelArg {
    KernelArg::Buffer {
        name: name.into(),
        elem: ElemType::F32,
        count: e(count),
        init: Init::Random,
        access,
    }
}

pub(crate) fn saxpy() -> KernelSpec {
    KernelSpec {
        name: "saxpy".into(),
        source: "kernels/saxpy.cu".into(),
        entry: "saxpy".into(),
        sizes: vec![1 << 20],
        grid: [e("cdiv(n, 256)"), e("1"), e("1")],
        block: [e("256"), e("1"), e("1")],
        shared_mem_bytes: Expr::constant(0),
        args: vec![
            KernelArg::Scalar {
                name: "n".into(),
                ty: ScalarType::I32,
                value: ScalarValue::Int(e("n")),
            },
            KernelArg::Scalar {
                name: "a".into(),
                ty: ScalarType::F32,
                value: ScalarValue::Float(2.0),
            },
            buffer("x", "n", Access::In),
            buffer("y", "n", Access::InOut),
        ],
        reference: Reference::Host(HostRef {
            op: HostOp::Axpy,
            a: Some("a".into()),
            x: "x".into(),
            y: Some("y".into()),
            out: "y".into(),
        }),
        bytes: Some(e("3 * n * 4")),
        flops: Some(e("2 * n")),
    }
}

#[test]
fn a_shape_is_the_expressions_at_n() {
    let spec = saxpy();
    let shape = spec.at(1000).unwrap();
    assert_eq!(shape.grid, (4, 1, 1));
    assert_eq!(shape.block, (256, 1, 1));
    assert_eq!(shape.shared_mem_bytes, 0);
    assert_eq!(shape.counts, vec![0, 0, 1000, 1000]);
    assert_eq!(shape.buffer_bytes(&spec), 8000);
    assert_eq!(
        spec.outputs()
            .map(|(i, a)| (i, a.name()))
            .collect::<Vec<_>>(),
        vec![(3, "y")]
    );
    assert_eq!(spec.sources(), vec!["kernels/saxpy.cu"]);
}

#[test]
fn launch_limits_are_cudas() {
    let mut spec = saxpy();
    spec.block[0] = e("2048");
    let err = spec.at(10).unwrap_err().to_string();
    assert_eq!(
        err,
        "block[0] `2048` is 2048 at n = 10; it must be 1 to 1024"
    );

    spec.block = [e("64"), e("32"), e("1")];
    let err = spec.at(10).unwrap_err().to_string();
    assert!(err.starts_with("the block's thread count is 2048"), "{err}");

    let mut spec = saxpy();
    spec.grid[0] = e("n / 256");
    let err = spec.at(100).unwrap_err().to_string();
    assert_eq!(
        err,
        "grid[0] `n / 256` is 0 at n = 100; it must be 1 to 2147483647"
    );

    let mut spec = saxpy();
    spec.grid[1] = e("n");
    assert!(spec.at(70_000).is_err());
    assert!(spec.at(65_535).is_ok());

    let mut spec = saxpy();
    spec.shared_mem_bytes = e("n * 4");
    assert!(spec.at(12_288).is_ok());
    assert!(spec.at(12_289).is_err());
}

#[test]
fn counts_and_scalars_must_fit() {
    let mut spec = saxpy();
    spec.args[2] = buffer("x", "n - 8", Access::In);
    let err = spec.at(4).unwrap_err().to_string();
    assert_eq!(
        err,
        "the count of `x` `n - 8`: `n - 8` at n = 4: is negative"
    );
    // n does not fit the i32 parameter.
    let err = saxpy().at(1 << 31).unwrap_err().to_string();
    assert!(err.starts_with("`n` `n` is 2147483648"), "{err}");
    assert!(err.ends_with("it must fit i32"), "{err}");
}

#[test]
fn a_host_reference_needs_operands_of_one_size() {
    let mut spec = saxpy();
    spec.args[3] = buffer("y", "n / 2", Access::InOut);
    let err = spec.at(64).unwrap_err().to_string();
    assert_eq!(
        err,
        "the count of `y` is 32 at n = 64; host reference `axpy` needs it equal to the count of `x` (64)"
    );
    // A sum writes one element, whatever the size of its input.
    let mut spec = saxpy();
    spec.args[3] = buffer("total", "1", Access::Out);
    spec.reference = Reference::Host(HostRef {
        op: HostOp::Sum,
        a: None,
        x: "x".into(),
        y: None,
        out: "total".into(),
    });
    assert!(spec.at(64).is_ok());
}

#[test]
fn the_manifest_round_trips_through_json() {
    let mut other = saxpy();
    other.name = "saxpy_vs_ref".into();
    other.reference = Reference::Kernel {
        entry: "saxpy_ref".into(),
        source: Some("kernels/ref.cu".into()),
        terms: Expr::constant(1),
    };
    let manifest = KernelManifest {
        kernels: vec![saxpy(), other],
    };
    let json = serde_json::to_string(&manifest).unwrap();
    let back: KernelManifest = serde_json::from_str(&json).unwrap();
    assert_eq!(back, manifest);
    assert_eq!(
        back.kernels[1].sources(),
        vec!["kernels/saxpy.cu", "kernels/ref.cu"]
    );
    assert_eq!(ElemType::parse("bf16"), Some(ElemType::Bf16));
    assert_eq!(ScalarType::parse("u64"), Some(ScalarType::U64));
    assert_eq!(HostOp::parse("axpy"), Some(HostOp::Axpy));
    assert_eq!(Access::parse("inout"), Some(Access::InOut));
}
