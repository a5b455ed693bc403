//! The files of a SQLite store on disk: whether this process may write them, the path as a
//! `file:` URI, the switch to WAL mode, and the removal of a new store that could not be set up
//! (a full disk).

use std::path::Path;
use std::time::Duration;

/// Whether this process may write `path` and create files beside it (a read-only mount, or a
/// file or directory without write permission, says no; root is refused only by the mount).
pub(super) fn writable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let can_write = |p: &Path| {
        let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else {
            return true;
        };
        // SAFETY: `c` is a valid NUL-terminated path for access(2), which only reads it.
        unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    can_write(path) && can_write(dir)
}

/// `path` for a `file:` URI: every byte outside the unreserved set and `/` percent-encoded, so
/// `?`, `#` and `%` in a file name stay part of it.
pub(super) fn percent_encode_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = String::new();
    for &b in abs.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Removes a database file this process created but could not set up, with SQLite's `-wal`,
/// `-shm` and `-journal` files beside it (only regular files).
pub(super) fn remove_new_store_files(path: &Path) {
    let base = path.as_os_str().to_os_string();
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = base.clone();
        p.push(suffix);
        let p = std::path::PathBuf::from(p);
        if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file()) {
            let _ = std::fs::remove_file(&p);
        }
    }
}

/// Puts the file in WAL mode. The switch needs the file to itself, and SQLite answers "database
/// is locked" at once instead of calling the busy handler when another process holds it (two
/// runs creating one new store together), so the busy timeout is applied here by hand.
pub(super) fn switch_to_wal(
    conn: &rusqlite::Connection,
    busy_timeout: Duration,
) -> rusqlite::Result<()> {
    let deadline = std::time::Instant::now() + busy_timeout;
    let mut pause = Duration::from_millis(2);
    loop {
        match conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0)) {
            Err(e)
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            other => return other.map(drop),
        }
    }
}
