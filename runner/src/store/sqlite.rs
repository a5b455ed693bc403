//! Placeholder: the SQLite store (being written).

use std::path::Path;

use pitwall_suites::Run;

use super::{InsertOutcome, RunSummary, Store, StoreError};

/// The embedded SQLite store.
#[derive(Debug)]
pub struct SqliteStore {
    path: std::path::PathBuf,
}

impl SqliteStore {
    pub fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        Ok(SqliteStore {
            path: path.to_path_buf(),
        })
    }
}

impl Store for SqliteStore {
    fn describe(&self) -> String {
        format!("sqlite:{}", self.path.display())
    }
    fn insert_run(&mut self, _run: &Run) -> Result<InsertOutcome, StoreError> {
        unimplemented!("sqlite store")
    }
    fn list_runs(&self, _limit: Option<usize>) -> Result<Vec<RunSummary>, StoreError> {
        unimplemented!("sqlite store")
    }
    fn get_run(&self, _id: &str) -> Result<Run, StoreError> {
        unimplemented!("sqlite store")
    }
    fn all_runs(&self) -> Result<Vec<Run>, StoreError> {
        unimplemented!("sqlite store")
    }
}
