//! An open file of one process: the OS file, the access mode, the view, the individual file
//! pointer and the shared one, and the local parts of every operation (the C layer adds
//! the collective steps). Data moves with `pread`/`pwrite`, one call per contiguous piece of
//! the view, so no seek state is shared between threads or processes.

use super::lock::RangeLock;
use super::os_error;
use super::shared_pointer::SharedPointer;
use super::view::View;
use crate::error::{ErrorClass, MpiError, MpiResult};
use std::fs::OpenOptions;
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;

/// The access mode bits that change what the engine does (the C layer checks the rest).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Amode {
    pub read: bool,
    pub write: bool,
    pub create: bool,
    pub excl: bool,
}

pub struct File {
    pub os: std::fs::File,
    pub path: String,
    pub amode: Amode,
    /// `MPI_File_set_atomicity(true)`: each access holds a byte-range lock.
    pub atomic: bool,
    pub view: View,
    /// The individual file pointer, in etypes of the view.
    pub pos: u64,
    /// The shared file pointer, or why it could not be made (then only the shared-pointer
    /// calls fail).
    pub shared: Result<SharedPointer, MpiError>,
}

/// Opens `path` with `amode` (`create`/`excl` only on the process that creates it).
pub fn open_os(path: &str, amode: Amode) -> MpiResult<std::fs::File> {
    let mut o = OpenOptions::new();
    o.read(amode.read).write(amode.write);
    if amode.create && amode.excl {
        o.create_new(true);
    } else if amode.create {
        o.create(true);
    }
    o.open(path).map_err(|e| os_error::error(&e, "cannot open", path))
}

impl File {
    pub fn new(os: std::fs::File, path: String, amode: Amode, shared: Result<SharedPointer, MpiError>) -> File {
        File { os, path, amode, atomic: false, view: View::bytes(), pos: 0, shared }
    }

    fn err(&self, e: std::io::Error, what: &str) -> MpiError {
        os_error::error(&e, what, &self.path)
    }

    /// Locks the file bytes under stream range `[pos, pos + len)` in atomic mode.
    fn atomic_lock(&self, pos: u64, len: usize, exclusive: bool) -> MpiResult<Option<RangeLock<'_>>> {
        if !self.atomic || len == 0 {
            return Ok(None);
        }
        let (lo, hi) = self.view.span(pos, len);
        RangeLock::acquire(self.os.as_fd(), lo, hi - lo, exclusive, &self.path).map(Some)
    }

    /// Reads stream bytes `[pos, pos + out.len())` of the view into `out`; returns how many
    /// were read (fewer at the end of the file: the first short piece ends the read).
    pub fn read_stream(&self, pos: u64, out: &mut [u8]) -> MpiResult<usize> {
        let _lock = self.atomic_lock(pos, out.len(), false)?;
        let mut done = 0;
        let mut err = None;
        self.view.pieces(pos, out.len(), |at, p, n| {
            let mut got = 0;
            while got < n {
                match self.os.read_at(&mut out[p + got..p + n], at + got as u64) {
                    Ok(0) => break,
                    Ok(k) => got += k,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        err = Some(self.err(e, "cannot read"));
                        return false;
                    }
                }
            }
            done = p + got;
            got == n
        });
        err.map_or(Ok(done), Err)
    }

    /// Writes `data` at stream bytes `[pos, pos + data.len())` of the view.
    pub fn write_stream(&self, pos: u64, data: &[u8]) -> MpiResult<()> {
        let _lock = self.atomic_lock(pos, data.len(), true)?;
        let mut err = None;
        self.view.pieces(pos, data.len(), |at, p, n| match self.os.write_all_at(&data[p..p + n], at) {
            Ok(()) => true,
            Err(e) => {
                err = Some(self.err(e, "cannot write"));
                false
            }
        });
        err.map_or(Ok(()), Err)
    }

    /// Stream byte of etype offset `off`.
    pub fn stream_pos(&self, off: u64) -> u64 {
        off * self.view.etype_size as u64
    }

    pub fn size(&self) -> MpiResult<u64> {
        self.os.metadata().map(|m| m.len()).map_err(|e| self.err(e, "cannot get the size of"))
    }

    pub fn set_size(&self, size: u64) -> MpiResult<()> {
        self.os.set_len(size).map_err(|e| self.err(e, "cannot resize"))
    }

    /// Makes sure the first `size` bytes have storage (the file grows to `size` if
    /// shorter; its data does not change). File systems without `posix_fallocate` get
    /// the size only.
    pub fn preallocate(&self, size: u64) -> MpiResult<()> {
        if size == 0 {
            return Ok(());
        }
        use std::os::fd::AsRawFd;
        // SAFETY: the fd is open for the call.
        let rc = unsafe { libc::posix_fallocate(self.os.as_raw_fd(), 0, size as libc::off_t) };
        match rc {
            0 => Ok(()),
            libc::EOPNOTSUPP | libc::EINVAL => {
                if self.size()? < size {
                    self.set_size(size)?;
                }
                Ok(())
            }
            e => Err(self.err(std::io::Error::from_raw_os_error(e), "cannot preallocate")),
        }
    }

    pub fn sync(&self) -> MpiResult<()> {
        if !self.amode.write {
            return Ok(());
        }
        self.os.sync_all().map_err(|e| self.err(e, "cannot sync"))
    }

    /// The etype offset of the end of file in the view (for `MPI_SEEK_END` and
    /// `MPI_MODE_APPEND`): a partial etype at the end counts as a whole one.
    pub fn end_offset(&self) -> MpiResult<u64> {
        let bytes = self.view.stream_end(self.size()?);
        Ok(bytes.div_ceil(self.view.etype_size as u64))
    }

    /// The shared file pointer, or the error of its creation.
    pub fn shared(&self) -> MpiResult<&SharedPointer> {
        self.shared.as_ref().map_err(|e| MpiError::new(e.class, format!("the shared file pointer is not available: {}", e.msg)))
    }

    /// The read access check of MPI: `MPI_ERR_ACCESS` when opened write-only.
    pub fn check_readable(&self) -> MpiResult<()> {
        if self.amode.read {
            return Ok(());
        }
        Err(MpiError::new(ErrorClass::Access, format!("{} was opened MPI_MODE_WRONLY: it cannot be read", self.path)))
    }

    /// The write access check: `MPI_ERR_READ_ONLY` when opened read-only.
    pub fn check_writable(&self) -> MpiResult<()> {
        if self.amode.write {
            return Ok(());
        }
        Err(MpiError::new(ErrorClass::ReadOnly, format!("{} was opened MPI_MODE_RDONLY: it cannot be written", self.path)))
    }
}
