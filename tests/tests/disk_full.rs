//! A write that fails part-way (a full disk; here the file-size limit `RLIMIT_FSIZE`, which
//! fails writes past it with `EFBIG` just as a full disk fails them with `ENOSPC`) leaves
//! nothing behind: no `*.pitwall-tmp` file beside an output, no empty database with `-wal`
//! and `-shm` files where a store was being created (issue 28, item 7).

use std::os::unix::process::CommandExt;
use std::path::Path;

use pitwall_e2e::{Sandbox, big_export};

/// `pitwall ARGS` in `sb` with writes past `limit_bytes` failing (SIGXFSZ ignored, so the
/// write returns an error instead of killing the process).
fn run_with_file_limit(sb: &Sandbox, args: &[&str], limit_bytes: u64) -> pitwall_e2e::Out {
    let mut cmd = sb.cmd(args);
    // SAFETY: between fork and exec only async-signal-safe calls (signal, setrlimit).
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let lim = libc::rlimit {
                rlim_cur: limit_bytes as libc::rlim_t,
                rlim_max: libc::RLIM_INFINITY,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    pitwall_e2e::Out(cmd.output().expect("spawn pitwall"))
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn an_output_that_cannot_be_written_leaves_no_temporary_file() {
    let sb = Sandbox::new();
    let big = sb.write("big.json", &big_export("b1", 20, 4000));
    sb.run(&["import", big.to_str().unwrap()]).expect(0);
    std::fs::create_dir(sb.path().join("out")).unwrap();
    // The store is read, never written: the limit only stops the export file.
    let out = run_with_file_limit(&sb, &["export", "-o", "out/runs.json"], 64 * 1024);
    assert_ne!(out.code(), 0, "the export cannot fit: {}", out.stderr());
    assert!(out.stderr().starts_with("error: "), "{}", out.stderr());
    assert_eq!(
        names_in(&sb.path().join("out")),
        Vec::<String>::new(),
        "neither the output nor its temporary file is left"
    );
}

#[test]
fn a_store_that_cannot_be_created_leaves_no_files() {
    let sb = Sandbox::new();
    let small = sb.write("small.json", &big_export("s1", 1, 3));
    let out = run_with_file_limit(
        &sb,
        &[
            "import",
            small.to_str().unwrap(),
            "--store",
            "sqlite:db/new.db",
        ],
        1024,
    );
    assert_eq!(
        out.code(),
        3,
        "a full disk is infrastructure: {}",
        out.stderr()
    );
    assert_eq!(out.stderr().lines().count(), 1, "{}", out.stderr());
    let left = names_in(&sb.path().join("db"));
    assert!(
        left.iter().all(|n| !n.starts_with("new.db")),
        "no empty database, -wal or -shm left: {left:?}"
    );
    // With room, the same command creates the store and stores the run.
    sb.run(&[
        "import",
        small.to_str().unwrap(),
        "--store",
        "sqlite:db/new.db",
    ])
    .expect(0);
    assert!(sb.path().join("db/new.db").is_file());
}
