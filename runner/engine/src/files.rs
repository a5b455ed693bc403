//! Reading the files pitwall is given (`pitwall.toml`, results, exports) with a bound on
//! their size, shared by the configuration and the use cases.

use std::path::Path;

/// A text file of at most `max` bytes; a longer (or endless) one is an error saying so,
/// after reading no more than `max + 1` bytes. Devices (`/dev/zero`, a terminal) are refused
/// before reading: a file or a pipe is what holds results.
pub fn read_capped(path: &Path, max: u64) -> std::io::Result<String> {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let kind = std::fs::metadata(path)?.file_type();
    if kind.is_char_device() || kind.is_block_device() {
        return Err(std::io::Error::other(
            "is a device, not a file (hint: name a file, or pipe the output through `cat`)",
        ));
    }
    let mut buf = Vec::new();
    std::fs::File::open(path)?
        .take(max + 1)
        .read_to_end(&mut buf)?;
    if buf.len() as u64 > max {
        return Err(std::io::Error::other(format!(
            "larger than {} MiB, the most pitwall reads",
            max >> 20
        )));
    }
    String::from_utf8(buf)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text"))
}
