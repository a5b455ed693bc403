use super::*;

fn checkout(name: &str) -> PathBuf {
    let root =
        std::env::temp_dir().join(format!("pitwall-artifacts-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("build")).unwrap();
    std::fs::create_dir_all(root.join("lib")).unwrap();
    std::fs::write(root.join("build/bench"), b"\x7fELF bench").unwrap();
    std::fs::write(root.join("lib/liba.so"), b"a").unwrap();
    std::fs::write(root.join("lib/libb.so"), b"b").unwrap();
    std::fs::write(root.join("lib/notes.txt"), b"not hashed").unwrap();
    root
}

fn patterns() -> Vec<String> {
    vec!["build/bench".into(), "lib/*.so".into()]
}

#[test]
fn the_same_files_in_two_directories_hash_the_same() {
    let (a, b) = (checkout("same-a"), checkout("same-b"));
    let ha = hash_artifacts(&a, "bench", &patterns()).unwrap();
    assert_eq!(ha, hash_artifacts(&b, "bench", &patterns()).unwrap());
    // A file the patterns do not name changes nothing; one they name changes the hash.
    std::fs::write(b.join("lib/notes.txt"), b"other").unwrap();
    assert_eq!(ha, hash_artifacts(&b, "bench", &patterns()).unwrap());
    std::fs::write(b.join("lib/libb.so"), b"B").unwrap();
    assert_ne!(ha, hash_artifacts(&b, "bench", &patterns()).unwrap());
    for d in [a, b] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

#[test]
fn patterns_outside_the_checkout_are_refused_by_shape() {
    assert!(check_pattern("build/bench").is_ok());
    assert!(check_pattern("lib/*.so").is_ok());
    for bad in [
        "/usr/bin/true",
        "../other/bench",
        "build/../../x",
        "",
        "~/x",
        "**/*.so",
    ] {
        assert!(check_pattern(bad).is_err(), "{bad}");
    }
}

#[test]
fn each_refusal_names_the_suite_and_the_pattern() {
    let root = checkout("refused");
    let err = |p: &str| {
        hash_artifacts(&root, "bench", &[p.to_string()])
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        err("build/missing*"),
        "suite `bench`: artifact `build/missing*` matches no file in the checkout; hint: check that the build writes it, or fix the pattern"
    );
    assert_eq!(
        err("../x"),
        "suite `bench`: artifact `../x` leaves the checkout (`..`)"
    );
    std::os::unix::fs::symlink("/etc/passwd", root.join("build/passwd")).unwrap();
    assert_eq!(
        err("build/passwd"),
        "suite `bench`: artifact `build/passwd`: build/passwd is a link leading outside the checkout"
    );
    assert_eq!(
        err("lib"),
        "suite `bench`: artifact `lib`: lib is not a regular file"
    );
    // A link to a file inside the checkout is that file.
    std::os::unix::fs::symlink(root.join("build/bench"), root.join("build/alias")).unwrap();
    assert!(hash_artifacts(&root, "bench", &["build/alias".to_string()]).is_ok());
    std::fs::remove_dir_all(root).unwrap();
}

#[test]
fn a_star_matches_within_one_segment() {
    let m = |p: &str, n: &str| {
        matches(
            &p.chars().collect::<Vec<_>>(),
            &n.chars().collect::<Vec<_>>(),
        )
    };
    assert!(m("*.so", "liba.so"));
    assert!(m("lib?.so", "liba.so"));
    assert!(!m("*.so", "liba.so.1"));
    assert!(m("*", ""));
}
