//! The shared file pointer: one 8-byte counter (in etypes) in a hidden file next to the
//! data file, read and advanced under an exclusive `fcntl` lock. Every process of the file
//! reaches it through the shared file system, on any host, with no help from the others:
//! no process has to make MPI calls for another's shared access to progress (a counter in
//! an RMA window would need the target to progress, or an async progress thread).

use super::lock::RangeLock;
use super::os_error;
use crate::error::MpiResult;
use std::fs::{File, OpenOptions};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub struct SharedPointer {
    file: File,
    pub path: PathBuf,
    /// fcntl locks belong to the process: threads take this first.
    local: Mutex<()>,
}

/// The hidden file of data file `data` for the open numbered `tag` (rank 0 draws it at
/// open, so files opened twice at once get separate pointers).
pub fn path_for(data: &Path, tag: u64) -> PathBuf {
    let name = data.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    data.with_file_name(format!(".{name}.oxmpi-shfp.{tag:016x}"))
}

impl SharedPointer {
    /// Creates the counter (rank 0, before the others open it), set to `start`.
    pub fn create(path: PathBuf, start: u64) -> MpiResult<SharedPointer> {
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(true).mode(0o600).open(&path).map_err(|e| os_error::error(&e, "cannot create the shared file pointer", &path.to_string_lossy()))?;
        let sp = SharedPointer { file, path, local: Mutex::new(()) };
        sp.store(start)?;
        Ok(sp)
    }

    /// Opens the counter rank 0 created.
    pub fn open(path: PathBuf) -> MpiResult<SharedPointer> {
        let file = OpenOptions::new().read(true).write(true).open(&path).map_err(|e| os_error::error(&e, "cannot open the shared file pointer", &path.to_string_lossy()))?;
        Ok(SharedPointer { file, path, local: Mutex::new(()) })
    }

    fn load(&self) -> MpiResult<u64> {
        let mut b = [0u8; 8];
        let n = self.file.read_at(&mut b, 0).map_err(|e| self.err(e))?;
        Ok(if n == 8 { u64::from_le_bytes(b) } else { 0 })
    }

    fn store(&self, v: u64) -> MpiResult<()> {
        self.file.write_all_at(&v.to_le_bytes(), 0).map_err(|e| self.err(e))
    }

    fn err(&self, e: std::io::Error) -> crate::error::MpiError {
        os_error::error(&e, "cannot access the shared file pointer", &self.path.to_string_lossy())
    }

    /// Runs `f` on the counter's value under the lock; stores what it returns.
    fn update(&self, f: impl FnOnce(u64) -> u64) -> MpiResult<u64> {
        let _g = self.local.lock().unwrap_or_else(|p| p.into_inner());
        let _l = RangeLock::acquire(self.file.as_fd(), 0, 8, true, &self.path.to_string_lossy())?;
        let old = self.load()?;
        let new = f(old);
        if new != old {
            self.store(new)?;
        }
        Ok(old)
    }

    /// Advances the pointer by `n` etypes; returns where it was.
    pub fn fetch_add(&self, n: u64) -> MpiResult<u64> {
        self.update(|v| v + n)
    }

    pub fn get(&self) -> MpiResult<u64> {
        self.update(|v| v)
    }

    pub fn set(&self, v: u64) -> MpiResult<()> {
        self.update(|_| v).map(|_| ())
    }

    /// Removes the hidden file (rank 0 at close, after everyone is done with it).
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_across_handles() {
        let dir = std::env::temp_dir().join(format!("oxmpi-shfp-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = path_for(&dir.join("data"), 7);
        assert!(p.file_name().unwrap().to_string_lossy().starts_with(".data.oxmpi-shfp."));
        let a = SharedPointer::create(p.clone(), 5).unwrap();
        let b = SharedPointer::open(p).unwrap();
        assert_eq!(a.fetch_add(3).unwrap(), 5);
        assert_eq!(b.fetch_add(2).unwrap(), 8);
        assert_eq!(a.get().unwrap(), 10);
        b.set(1).unwrap();
        assert_eq!(a.get().unwrap(), 1);
        a.remove();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
