//! `kind = "cuda-kernels"` manifests: the documented example loads into the manifest the CUDA
//! backend runs, and every mistake is one line naming file:line, the suite, the kernel and the
//! key.

use super::*;
use pitwall_schema::SuiteKind;
use pitwall_schema::manifest::{Access, HostOp, Init, KernelArg, Reference, ScalarValue};

/// The example of docs/SUITES.md (`docs/examples/cuda-kernels`).
pub(crate) const EXAMPLE: &str =
    include_str!("../../../../docs/examples/cuda-kernels/pitwall.toml");

fn parse(text: &str) -> Result<Config, ConfigError> {
    parse_str(text, "pitwall.toml", "dirname")
}

/// The error of the example with `old` replaced by `new`.
fn err_with(old: &str, new: &str) -> String {
    assert!(EXAMPLE.contains(old), "{old}");
    parse(&EXAMPLE.replacen(old, new, 1))
        .unwrap_err()
        .to_string()
}

/// The 1-based line of the example holding `needle`.
fn line_of(needle: &str) -> usize {
    EXAMPLE.lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn the_documented_manifest_loads() {
    let c = parse(EXAMPLE).unwrap();
    let SuiteSpec::Builtin {
        kind,
        options,
        kernels,
        ..
    } = &c.suites[0].spec
    else {
        panic!("built-in");
    };
    assert_eq!(*kind, SuiteKind::CudaKernels);
    assert_eq!(c.suites[0].name, "my-kernels");
    assert_eq!(options.max_bytes, Some(1 << 30));
    let manifest = kernels.as_ref().unwrap();
    assert_eq!(options.kernels.as_ref(), Some(manifest));
    let [saxpy, row_sum] = &manifest.kernels[..] else {
        panic!("two kernels");
    };
    assert_eq!(saxpy.entry, "saxpy");
    assert_eq!(saxpy.sizes, vec![1 << 20, 1 << 24]);
    let shape = saxpy.at(1 << 20).unwrap();
    assert_eq!((shape.grid, shape.block), ((4096, 1, 1), (256, 1, 1)));
    assert!(matches!(
        &saxpy.args[0],
        KernelArg::Scalar { value: ScalarValue::Int(e), .. } if e.eval(7).unwrap() == 7
    ));
    assert!(matches!(
        &saxpy.args[3],
        KernelArg::Buffer {
            access: Access::InOut,
            init: Init::Random,
            ..
        }
    ));
    assert!(matches!(&saxpy.reference, Reference::Host(h) if h.op == HostOp::Axpy));
    assert_eq!(saxpy.bytes.as_ref().unwrap().eval(10).unwrap(), 120);
    // An output buffer starts zeroed unless told otherwise.
    assert!(matches!(
        &row_sum.args[1],
        KernelArg::Buffer {
            init: Init::Zeros,
            ..
        }
    ));
    assert!(matches!(
        &row_sum.reference,
        Reference::Kernel { entry, source: None, terms } if entry == "row_sum_simple" && terms.eval(0).unwrap() == 1024
    ));
    assert_eq!(row_sum.at(4096).unwrap().shared_mem_bytes, 1024);
}

#[test]
fn the_manifest_is_part_of_the_hash() {
    let base = parse(EXAMPLE).unwrap().hash();
    let other = parse(&EXAMPLE.replacen("sizes = [4096]", "sizes = [8192]", 1)).unwrap();
    assert_ne!(base, other.hash());
}

#[test]
fn missing_keys_name_the_suite_and_the_kernel() {
    let e = err_with("entry = \"saxpy\"\n", "");
    assert_eq!(
        e,
        format!(
            "pitwall.toml:{}:1: suite `my-kernels`: kernel `saxpy`: no `entry`; hint: add entry = \"…\", the extern \"C\" __global__ function",
            line_of("[[suite.kernel]]")
        )
    );
    let e = err_with(
        "reference = { kernel = \"row_sum_simple\", terms = 1024 }\n",
        "",
    );
    assert!(
        e.contains("suite `my-kernels`: kernel `row_sum`: no `reference`; hint:"),
        "{e}"
    );
    let e = err_with("name = \"saxpy\"\n", "");
    assert!(
        e.contains("suite `my-kernels`: a [[suite.kernel]] has no `name`"),
        "{e}"
    );
}

#[test]
fn a_value_of_the_wrong_type_names_its_key_and_what_is_accepted() {
    for (bad, shown) in [
        ("grid = -1", "-1"),
        ("grid = 1.5", "1.5"),
        ("grid = [\"n\", -2]", "-2"),
        ("grid = true", "true"),
    ] {
        let e = err_with("grid = \"cdiv(n, 256)\"", bad);
        assert!(!e.contains("untagged"), "{e}");
        assert!(
            e.contains(&format!(
                "kernel `saxpy`: key `grid`: `{shown}` is not a size (accepted: a whole number"
            )),
            "{bad}: {e}"
        );
    }
    let e = err_with(
        "{ name = \"x\", buffer = \"f32\", count = \"n\" }",
        "{ name = \"x\", buffer = \"f32\", count = \"n\", init = true }",
    );
    assert!(
        e.contains("init must be \"random\", \"zeros\" or a finite number"),
        "{e}"
    );
}

#[test]
fn bad_expressions_and_shapes_point_at_their_key() {
    let e = err_with("grid = \"cdiv(n, 256)\"", "grid = \"cdiv(n 256)\"");
    assert!(
        e.starts_with(&format!("pitwall.toml:{}:", line_of("grid = \"cdiv"))),
        "{e}"
    );
    assert!(
        e.contains("suite `my-kernels`: kernel `saxpy`: key `grid`: cannot parse `cdiv(n 256)` at column 8: expected `,`; hint: write an expression of the size n"),
        "{e}"
    );
    // n / 256 is zero blocks below n = 256: reported at `sizes`, naming the size.
    let text = EXAMPLE
        .replacen("grid = \"n\"", "grid = \"n / 256\"", 1)
        .replacen("sizes = [4096]", "sizes = [4096, 100]", 1);
    let e = parse(&text).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "pitwall.toml:{}:9: suite `my-kernels`: kernel `row_sum`: grid[0] `n / 256` is 0 at n = 100; it must be 1 to 2147483647",
            line_of("sizes = [4096]")
        )
    );
    let e = err_with("block = 256", "block = 2048");
    assert!(
        e.contains("kernel `saxpy`: block[0] `2048` is 2048 at n = 1048576; it must be 1 to 1024"),
        "{e}"
    );
    assert!(
        e.starts_with(&format!("pitwall.toml:{}:", line_of("sizes = [1048576"))),
        "{e}"
    );
    let e = err_with("block = [256]", "block = [16, 16, 16, 16]");
    assert!(
        e.contains("key `block`: give 1 to 3 dimensions (x, y, z), not 4"),
        "{e}"
    );
    let e = err_with("count = \"n * 1024\"", "count = \"n * m\"");
    assert!(
        e.contains("kernel `row_sum`: key `args.x.count`: cannot parse `n * m` at column 5: unknown name `m`"),
        "{e}"
    );
}

#[test]
fn unknown_keys_and_misplaced_tables_are_named() {
    let e = err_with("entry = \"saxpy\"", "entri = \"saxpy\"");
    assert!(
        e.starts_with(&format!("pitwall.toml:{}:", line_of("entry = \"saxpy\""))),
        "{e}"
    );
    assert!(
        e.contains("unknown key `entri` in [[suite.kernel]]; hint: valid keys in [[suite.kernel]] are name, source, entry"),
        "{e}"
    );
    let e = err_with("kind = \"cuda-kernels\"", "kind = \"kernel\"");
    assert!(
        e.contains("suite `my-kernels`: [[suite.kernel]] applies only to kind = \"cuda-kernels\""),
        "{e}"
    );
    let e = parse("[[suite]]\nname = \"k\"\nkind = \"cuda-kernels\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("pitwall.toml:1:1: suite `k`: kind = \"cuda-kernels\" needs at least one [[suite.kernel]]"),
        "{e}"
    );
    let e = err_with("max_bytes = 1073741824", "ranks = 2");
    assert!(
        e.contains("ranks does not apply to kind = \"cuda-kernels\""),
        "{e}"
    );
}

#[test]
fn arguments_sources_and_references_are_checked() {
    let e = err_with(
        "source = \"kernels/saxpy.cu\"",
        "source = \"../other/saxpy.cu\"",
    );
    assert!(
        e.contains(
            "kernel `saxpy`: key `source` `../other/saxpy.cu` must stay inside the repository"
        ),
        "{e}"
    );
    let e = err_with(
        "{ name = \"x\", buffer = \"f32\", count = \"n\" }",
        "{ name = \"x\", buffer = \"f32\", scalar = \"f32\", count = \"n\" }",
    );
    assert!(
        e.contains("kernel `saxpy`: argument `x` needs exactly one of `buffer` and `scalar`"),
        "{e}"
    );
    let e = err_with(
        "buffer = \"f32\", count = \"n\" }",
        "buffer = \"f8\", count = \"n\" }",
    );
    assert!(
        e.contains("argument `x`: buffer type `f8` is not known"),
        "{e}"
    );
    let e = err_with(
        "{ name = \"a\", scalar = \"f32\", value = 2.0 }",
        "{ name = \"a\", scalar = \"f32\", value = \"two\" }",
    );
    assert!(
        e.contains("argument `a`: value must be a finite number for f32"),
        "{e}"
    );
    let e = err_with(
        "{ name = \"y\", buffer = \"f32\", count = \"n\", access = \"inout\" }",
        "{ name = \"x\", buffer = \"f32\", count = \"n\", access = \"inout\" }",
    );
    assert!(e.contains("argument `x` is listed twice"), "{e}");
    let e = err_with("access = \"inout\"", "access = \"in\"");
    assert!(
        e.contains("kernel `saxpy`: no output buffer to check"),
        "{e}"
    );
    let e = err_with("a = \"a\", x = \"x\"", "x = \"x\"");
    assert!(
        e.contains("kernel `saxpy`: reference: `axpy` needs `a`"),
        "{e}"
    );
    let e = err_with("out = \"y\" }", "out = \"x\" }");
    assert!(
        e.contains("reference: `out` = `x` is not written by the kernel"),
        "{e}"
    );
    let e = err_with("{ host = \"axpy\"", "{ host = \"gemm\"");
    assert!(
        e.contains("host reference `gemm` is not known (use copy, scale, axpy, add or sum)"),
        "{e}"
    );
    let e = err_with(
        "{ kernel = \"row_sum_simple\", terms = 1024 }",
        "{ kernel = \"row_sum_simple\", host = \"sum\" }",
    );
    assert!(
        e.contains("kernel `row_sum`: reference needs exactly one of `kernel` and `host`"),
        "{e}"
    );
    let e = err_with("name = \"row_sum\"", "name = \"saxpy\"");
    assert!(
        e.contains("suite `my-kernels`: kernel `saxpy` is listed twice"),
        "{e}"
    );
    // A host reference's operands must have one size.
    let e = err_with(
        "{ name = \"y\", buffer = \"f32\", count = \"n\"",
        "{ name = \"y\", buffer = \"f32\", count = \"n / 2\"",
    );
    assert!(
        e.contains("the count of `y` is 524288 at n = 1048576; host reference `axpy` needs it equal to the count of `x` (1048576)"),
        "{e}"
    );
}
