//! Files that a tool's output names beside itself (nvbench's `--jsonbin` sample files): a
//! reader asks for them through [`SideFiles`], so the readers stay free of where the output
//! came from (a command's workdir, a file given to `pitwall import`) and are tested without a
//! file system ([`MemFiles`]).

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Largest side file read (256 MiB, 64 Mi float32 samples): far above what a benchmark state
/// writes, and a bound on the memory a damaged or endless file can take.
pub const SIDE_FILE_MAX_BYTES: u64 = 256 << 20;

/// The files beside one output. Names are as the output wrote them: relative to the output's
/// directory, or absolute.
pub trait SideFiles: fmt::Debug {
    /// Whether `name` is a file.
    fn exists(&self, name: &Path) -> bool;
    /// The bytes of `name`; an error for a file over [`SIDE_FILE_MAX_BYTES`] or that is not a
    /// regular file.
    fn read(&self, name: &Path) -> io::Result<Vec<u8>>;
    /// Where `name` is, for messages (the path it resolves to).
    fn locate(&self, name: &Path) -> String;
}

/// The side files of an output in the directory `dir` (the output file's directory, or the
/// working directory of the command that printed it).
#[derive(Debug, Clone)]
pub struct DirFiles {
    dir: PathBuf,
}

impl DirFiles {
    pub fn new(dir: impl Into<PathBuf>) -> DirFiles {
        DirFiles { dir: dir.into() }
    }

    /// The side files of the output file `file`: its directory.
    pub fn beside(file: &Path) -> DirFiles {
        DirFiles::new(file.parent().unwrap_or(Path::new("")))
    }

    fn path(&self, name: &Path) -> PathBuf {
        // An absolute name replaces the directory (`Path::join`).
        self.dir.join(name)
    }
}

impl SideFiles for DirFiles {
    fn exists(&self, name: &Path) -> bool {
        self.path(name).is_file()
    }

    fn read(&self, name: &Path) -> io::Result<Vec<u8>> {
        let path = self.path(name);
        let meta = std::fs::metadata(&path)?;
        if !meta.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        let mut bytes = Vec::new();
        std::fs::File::open(&path)?
            .take(SIDE_FILE_MAX_BYTES + 1)
            .read_to_end(&mut bytes)?;
        if bytes.len() as u64 > SIDE_FILE_MAX_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("larger than {} MiB", SIDE_FILE_MAX_BYTES >> 20),
            ));
        }
        Ok(bytes)
    }

    fn locate(&self, name: &Path) -> String {
        self.path(name).display().to_string()
    }
}

/// Side files held in memory, by name: for tests, and for callers that have the files already.
#[derive(Debug, Clone, Default)]
pub struct MemFiles {
    pub files: BTreeMap<PathBuf, Vec<u8>>,
}

impl MemFiles {
    pub fn with(mut self, name: impl Into<PathBuf>, bytes: Vec<u8>) -> MemFiles {
        self.files.insert(name.into(), bytes);
        self
    }
}

impl SideFiles for MemFiles {
    fn exists(&self, name: &Path) -> bool {
        self.files.contains_key(name)
    }

    fn read(&self, name: &Path) -> io::Result<Vec<u8>> {
        self.files
            .get(name)
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "No such file or directory"))
    }

    fn locate(&self, name: &Path) -> String {
        name.display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dir_files_resolve_relative_names_in_their_directory_and_absolute_ones_as_they_are() {
        let dir = std::env::temp_dir().join(format!("pitwall-side-files-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("out.json-bin")).unwrap();
        std::fs::write(dir.join("out.json-bin/0.bin"), [1u8, 2, 3, 4]).unwrap();
        let files = DirFiles::beside(&dir.join("out.json"));
        let rel = Path::new("out.json-bin/0.bin");
        assert!(files.exists(rel));
        assert_eq!(files.read(rel).unwrap(), vec![1, 2, 3, 4]);
        let abs = dir.join("out.json-bin/0.bin");
        assert_eq!(DirFiles::new("/nowhere").read(&abs).unwrap().len(), 4);
        assert!(!files.exists(Path::new("out.json-bin/1.bin")));
        let e = files.read(Path::new("out.json-bin/1.bin")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        // A directory is not a side file.
        assert!(!files.exists(Path::new("out.json-bin")));
        assert!(files.read(Path::new("out.json-bin")).is_err());
        assert_eq!(files.locate(rel), dir.join(rel).display().to_string());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
