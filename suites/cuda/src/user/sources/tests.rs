//! Tests of what NVRTC may read: sources and headers inside the checkout only, regular files
//! of at most 4 MiB, every way of writing an `#include` found.

use std::os::unix::fs::symlink;

use super::*;

fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("kernels")).unwrap();
    std::fs::create_dir_all(dir.path().join("include")).unwrap();
    dir
}

#[test]
fn a_source_must_be_a_small_regular_file_inside_the_checkout() {
    let dir = checkout();
    let root = dir.path();
    std::fs::write(root.join("kernels/ok.cu"), "int x;\n").unwrap();
    symlink("ok.cu", root.join("kernels/inside.cu")).unwrap();
    symlink("/proc/self/environ", root.join("kernels/environ.cu")).unwrap();
    symlink("/etc/passwd", root.join("kernels/passwd.cu")).unwrap();
    symlink("/dev/zero", root.join("kernels/zero.cu")).unwrap();
    symlink("../../outside.cu", root.join("kernels/up.cu")).unwrap();
    std::fs::write(
        root.join("kernels/huge.cu"),
        vec![b' '; MAX_SOURCE_BYTES as usize + 1],
    )
    .unwrap();
    assert_eq!(
        read_checked(root, Path::new("kernels/ok.cu")).unwrap(),
        "int x;\n"
    );
    assert_eq!(
        read_checked(root, Path::new("kernels/inside.cu")).unwrap(),
        "int x;\n"
    );
    for (file, says) in [
        ("kernels/environ.cu", "outside the checkout"),
        ("kernels/passwd.cu", "outside the checkout"),
        ("kernels/zero.cu", "outside the checkout"),
        ("kernels/huge.cu", "larger than 4 MiB"),
        ("kernels", "not a regular file"),
    ] {
        let e = read_checked(root, Path::new(file)).unwrap_err().to_string();
        assert!(e.starts_with(file) && e.contains(says), "{file}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
    // A link that leads nowhere is an error like a missing file.
    assert!(read_checked(root, Path::new("kernels/up.cu")).is_err());
    // A device inside the checkout is refused before it is read.
    if Path::new("/dev/zero").exists() {
        let e = read_checked(Path::new("/dev"), Path::new("zero")).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }
}

#[test]
fn every_way_of_writing_an_include_is_found() {
    let text = "#include \"a.cuh\"\n  #  include <b.cuh>\n#/* c */include/**/\"c.cuh\"\n\
                %:include \"d.cuh\"\n#inc\\\nlude \"e.cuh\"\n// #include \"f.cuh\"\n\
                #include_next \"g.cuh\"\n#define H \"/etc/passwd\"\n#include H\n\
                #includes \"no\"\n#pragma once\n";
    assert_eq!(
        includes(text),
        [
            Some("a.cuh".to_string()),
            Some("b.cuh".to_string()),
            Some("c.cuh".to_string()),
            Some("d.cuh".to_string()),
            Some("e.cuh".to_string()),
            Some("f.cuh".to_string()),
            Some("g.cuh".to_string()),
            None,
        ]
    );
}

#[test]
fn headers_come_from_the_checkout_and_nothing_else_reaches_nvrtc() {
    let dir = checkout();
    let root = dir.path();
    std::fs::write(
        root.join("kernels/common.cuh"),
        "#include \"include/deep.cuh\"\n",
    )
    .unwrap();
    std::fs::write(root.join("include/deep.cuh"), "#define DEEP 1\n").unwrap();
    symlink("/etc/passwd", root.join("include/evil.cuh")).unwrap();
    std::fs::write(
        root.join("kernels/k.cu"),
        "#include \"common.cuh\"\n#include \"/proc/self/environ\"\n#include \"../../etc/passwd\"\n\
         #include \"include/evil.cuh\"\n#include <cuda_fp16.h>\n",
    )
    .unwrap();
    let s = load(root, "kernels/k.cu").unwrap();
    let names: Vec<&str> = s.headers.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "common.cuh",
            "/proc/self/environ",
            "../../etc/passwd",
            "include/evil.cuh",
            "cuda_fp16.h",
            "include/deep.cuh",
        ]
    );
    let text = |n: &str| s.headers.iter().find(|(h, _)| h == n).unwrap().1.clone();
    assert_eq!(text("include/deep.cuh"), "#define DEEP 1\n");
    for outside in [
        "/proc/self/environ",
        "../../etc/passwd",
        "include/evil.cuh",
        "cuda_fp16.h",
    ] {
        let t = text(outside);
        assert!(
            t.starts_with("#error \"pitwall: #include"),
            "{outside}: {t}"
        );
        assert!(t.contains("is not a file in the checkout"), "{t}");
    }
    // A computed include cannot be checked: refused, naming the file.
    std::fs::write(
        root.join("kernels/m.cu"),
        "#define F \"/etc/passwd\"\n#include F\n",
    )
    .unwrap();
    let e = load(root, "kernels/m.cu").unwrap_err().to_string();
    assert!(
        e.starts_with("kernels/m.cu: an #include names no file literally"),
        "{e}"
    );
}
