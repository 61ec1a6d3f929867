//! The shared file pointer: one 8-byte counter (in etypes) in a hidden file next to the
//! data file, read and advanced under an exclusive `fcntl` lock. Every process of the file
//! reaches it through the shared file system, on any host, with no help from the others:
//! no process has to make MPI calls for another's shared access to progress (a counter in
//! an RMA window would need the target to progress, or an async progress thread).
//!
//! The hidden file is made by the first access that moves the pointer, not at open: most
//! programs never use the shared pointer, and a program that ends without `MPI_File_close`
//! (or is killed) should not leave one behind in its directory for nothing.

use super::lock::RangeLock;
use super::os_error;
use crate::error::MpiResult;
use std::fs::{File, OpenOptions};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub struct SharedPointer {
    pub path: PathBuf,
    /// The pointer at open (the file's size in bytes with `MPI_MODE_APPEND`, else 0). The
    /// hidden file holds the distance from it, so while there is none the pointer is here.
    start: u64,
    /// The hidden file once this process opened it. fcntl locks belong to the process:
    /// threads take this mutex first.
    file: Mutex<Option<File>>,
}

/// The hidden file of data file `data` for the open numbered `tag` (rank 0 draws it at
/// open, so files opened twice at once get separate pointers).
pub fn path_for(data: &Path, tag: u64) -> PathBuf {
    let name = data.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    data.with_file_name(format!(".{name}.oxmpi-shfp.{tag:016x}"))
}

impl SharedPointer {
    /// The pointer of one open of a file, at `start`; every process of the open makes its
    /// own with the same `path` and `start` (no file system access yet).
    pub fn new(path: PathBuf, start: u64) -> SharedPointer {
        SharedPointer { path, start, file: Mutex::new(None) }
    }

    fn load(&self, file: &File) -> MpiResult<u64> {
        let mut b = [0u8; 8];
        let n = file.read_at(&mut b, 0).map_err(|e| self.err(e))?;
        Ok(self.start.wrapping_add(if n == 8 { u64::from_le_bytes(b) } else { 0 }))
    }

    fn store(&self, file: &File, v: u64) -> MpiResult<()> {
        file.write_all_at(&v.wrapping_sub(self.start).to_le_bytes(), 0).map_err(|e| self.err(e))
    }

    fn err(&self, e: std::io::Error) -> crate::error::MpiError {
        os_error::error(&e, "cannot access the shared file pointer", &self.path.to_string_lossy())
    }

    /// Runs `f` on the counter's value under the lock; stores what it returns. `create`:
    /// make the hidden file if no process has; without it, a missing file is the pointer
    /// at `start`, which `f` must then leave as it is.
    fn update(&self, create: bool, f: impl FnOnce(u64) -> u64) -> MpiResult<u64> {
        let mut slot = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            match OpenOptions::new().read(true).write(true).create(create).mode(0o600).open(&self.path) {
                Ok(file) => *slot = Some(file),
                Err(e) if !create && e.kind() == std::io::ErrorKind::NotFound => return Ok(self.start),
                Err(e) => return Err(os_error::error(&e, "cannot create the shared file pointer", &self.path.to_string_lossy())),
            }
        }
        let file = slot.as_ref().expect("opened above");
        let _l = RangeLock::acquire(file.as_fd(), 0, 8, true, &self.path.to_string_lossy())?;
        let old = self.load(file)?;
        let new = f(old);
        if new != old {
            self.store(file, new)?;
        }
        Ok(old)
    }

    /// Advances the pointer by `n` etypes; returns where it was.
    pub fn fetch_add(&self, n: u64) -> MpiResult<u64> {
        self.update(n != 0, |v| v + n)
    }

    pub fn get(&self) -> MpiResult<u64> {
        self.update(false, |v| v)
    }

    pub fn set(&self, v: u64) -> MpiResult<()> {
        self.update(v != self.start, |_| v).map(|_| ())
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
        let a = SharedPointer::new(p.clone(), 5);
        let b = SharedPointer::new(p.clone(), 5);
        // Reading and setting it where it is make no file; moving it does.
        assert_eq!(a.get().unwrap(), 5);
        b.set(5).unwrap();
        assert_eq!(b.fetch_add(0).unwrap(), 5);
        assert!(!p.exists());
        assert_eq!(a.fetch_add(3).unwrap(), 5);
        assert!(p.exists());
        assert_eq!(b.fetch_add(2).unwrap(), 8);
        assert_eq!(a.get().unwrap(), 10);
        b.set(1).unwrap();
        assert_eq!(a.get().unwrap(), 1);
        std::fs::remove_file(&p).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
