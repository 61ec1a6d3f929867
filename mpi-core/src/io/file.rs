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
use std::sync::atomic::{AtomicBool, Ordering};

/// Bytes of one data-sieving window, and the holes a sieved read may read beyond 3 times
/// its data (sparser reads go piece by piece).
const SIEVE_MAX: usize = 4 << 20;
const SIEVE_SLACK: usize = 64 << 10;

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
    /// The shared file pointer.
    pub shared: SharedPointer,
    /// This process changed the file since its last `sync`: `MPI_File_sync` only needs
    /// `fsync` then (MPI 4.1 §14.6.1: it transfers the calling process's writes), so the
    /// sync-barrier-sync of readers that wrote nothing costs no system call, as in MPICH.
    dirty: AtomicBool,
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
    pub fn new(os: std::fs::File, path: String, amode: Amode, shared: SharedPointer) -> File {
        File { os, path, amode, atomic: false, view: View::bytes(), pos: 0, shared, dirty: AtomicBool::new(false) }
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

    /// Reads into `buf` from file byte `at` until it is full or the file ends; returns the
    /// bytes read.
    fn pread_full(&self, buf: &mut [u8], at: u64) -> MpiResult<usize> {
        let mut got = 0;
        while got < buf.len() {
            match self.os.read_at(&mut buf[got..], at + got as u64) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.err(e, "cannot read")),
            }
        }
        Ok(got)
    }

    /// Reads stream bytes `[pos, pos + out.len())` of the view into `out`; returns how many
    /// were read (fewer at the end of the file: the first short piece ends the read).
    pub fn read_stream(&self, pos: u64, out: &mut [u8]) -> MpiResult<usize> {
        let _lock = self.atomic_lock(pos, out.len(), false)?;
        if !self.view.is_contiguous() {
            let (lo, hi) = self.view.span(pos, out.len());
            if (hi - lo) as usize <= 4 * out.len() + SIEVE_SLACK {
                return self.read_sieved(pos, out, hi);
            }
        }
        let mut done = 0;
        let mut err = None;
        self.view.pieces(pos, out.len(), |at, p, n| self.read_piece(out, at, p, n, &mut done, &mut err));
        err.map_or(Ok(done), Err)
    }

    /// Reads piece `[p, p + n)` of `out` from file byte `at`; records in `done` where the
    /// data read ends, or the error in `err`. Returns whether to go on (the piece is whole).
    fn read_piece(&self, out: &mut [u8], at: u64, p: usize, n: usize, done: &mut usize, err: &mut Option<MpiError>) -> bool {
        match self.pread_full(&mut out[p..p + n], at) {
            Ok(got) => {
                *done = p + got;
                got == n
            }
            Err(e) => {
                *err = Some(e);
                false
            }
        }
    }

    /// Data sieving (ROMIO's term): the file span of the pieces (which ends at `hi`) is
    /// read in windows of up to `SIEVE_MAX` bytes and the pieces are copied out of them. A
    /// view of many small blocks with small holes costs one system call per window instead
    /// of one per block.
    fn read_sieved(&self, pos: u64, out: &mut [u8], hi: u64) -> MpiResult<usize> {
        let mut window = Vec::new();
        let (mut wlo, mut avail) = (0u64, 0usize);
        let mut done = 0;
        let mut err = None;
        self.view.pieces(pos, out.len(), |at, p, n| {
            if at < wlo || at + n as u64 > wlo + window.len() as u64 {
                if n > SIEVE_MAX {
                    // A piece larger than a window goes straight to the program's buffer.
                    return self.read_piece(out, at, p, n, &mut done, &mut err);
                }
                wlo = at;
                window.resize(SIEVE_MAX.min((hi - at) as usize), 0);
                match self.pread_full(&mut window, wlo) {
                    Ok(got) => avail = got,
                    Err(e) => {
                        err = Some(e);
                        return false;
                    }
                }
            }
            let s = (at - wlo) as usize;
            let k = n.min(avail.saturating_sub(s));
            out[p..p + k].copy_from_slice(&window[s..s + k]);
            done = p + k;
            k == n
        });
        err.map_or(Ok(done), Err)
    }

    /// Fails when `len` bytes (more than none) go through a view without data.
    pub fn check_room(&self, len: usize) -> MpiResult<()> {
        if len > 0 && self.view.is_empty() {
            return Err(MpiError::new(ErrorClass::Io, format!("{}: the file view's filetype holds no data (size 0), so {len} bytes cannot be written through it", self.path)));
        }
        Ok(())
    }

    /// Writes `data` at stream bytes `[pos, pos + data.len())` of the view.
    pub fn write_stream(&self, pos: u64, data: &[u8]) -> MpiResult<()> {
        self.check_room(data.len())?;
        let _lock = self.atomic_lock(pos, data.len(), true)?;
        let mut err = None;
        self.dirty.store(true, Ordering::Relaxed);
        self.view.pieces(pos, data.len(), |at, p, n| match self.os.write_all_at(&data[p..p + n], at) {
            Ok(()) => true,
            Err(e) => {
                err = Some(self.err(e, "cannot write"));
                false
            }
        });
        err.map_or(Ok(()), Err)
    }

    /// Reads file bytes from `at` into `buf`, zeros past the end of file (collective
    /// buffering fills the holes of a run with them).
    pub fn read_raw(&self, at: u64, buf: &mut [u8]) -> MpiResult<()> {
        let got = self.pread_full(buf, at)?;
        buf[got..].fill(0);
        Ok(())
    }

    /// Writes `data` at file byte `at`.
    pub fn write_raw(&self, at: u64, data: &[u8]) -> MpiResult<()> {
        self.dirty.store(true, Ordering::Relaxed);
        self.os.write_all_at(data, at).map_err(|e| self.err(e, "cannot write"))
    }

    /// The file pieces of stream bytes `[pos, pos + len)`, in stream order.
    pub fn pieces(&self, pos: u64, len: usize) -> Vec<(u64, usize)> {
        let mut v = Vec::new();
        self.view.pieces(pos, len, |at, _, n| {
            v.push((at, n));
            true
        });
        v
    }

    /// Stream byte of etype offset `off`.
    pub fn stream_pos(&self, off: u64) -> u64 {
        off * self.view.etype_size as u64
    }

    pub fn size(&self) -> MpiResult<u64> {
        self.os.metadata().map(|m| m.len()).map_err(|e| self.err(e, "cannot get the size of"))
    }

    pub fn set_size(&self, size: u64) -> MpiResult<()> {
        self.dirty.store(true, Ordering::Relaxed);
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
        self.dirty.store(true, Ordering::Relaxed);
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
        if !self.amode.write || !self.dirty.swap(false, Ordering::Relaxed) {
            return Ok(());
        }
        self.os.sync_all().map_err(|e| {
            self.dirty.store(true, Ordering::Relaxed);
            self.err(e, "cannot sync")
        })
    }

    /// The etype offset of the end of file in the view (for `MPI_SEEK_END` and
    /// `MPI_MODE_APPEND`): a partial etype at the end counts as a whole one.
    pub fn end_offset(&self) -> MpiResult<u64> {
        let bytes = self.view.stream_end(self.size()?);
        Ok(bytes.div_ceil(self.view.etype_size as u64))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::{Basic, Datatype};

    /// A file of bytes 0..len (mod 256) with a view of 2-byte blocks every 5 bytes.
    fn strided(name: &str, len: usize) -> (File, std::path::PathBuf) {
        let p = std::env::temp_dir().join(format!("oxmpi-io-file-{name}-{}", std::process::id()));
        std::fs::write(&p, (0..len).map(|i| i as u8).collect::<Vec<_>>()).unwrap();
        let os = open_os(p.to_str().unwrap(), Amode { read: true, write: true, ..Amode::default() }).unwrap();
        let mut f = File::new(os, p.to_string_lossy().into_owned(), Amode { read: true, write: true, ..Amode::default() }, SharedPointer::new(p.with_extension("shfp"), 0));
        let byte = Datatype::basic(Basic::U8);
        let t = Datatype::resized(&Datatype::contiguous(2, &byte).unwrap(), 0, 5).unwrap();
        t.commit();
        f.view = View::new(1, &byte, &t, true).unwrap();
        (f, p)
    }

    /// `sync` calls fsync only after this process changed the file.
    #[test]
    fn sync_after_changes_only() {
        let (f, p) = strided("dirty", 10);
        assert!(!f.dirty.load(Ordering::Relaxed), "nothing written yet");
        f.sync().unwrap();
        f.write_stream(0, b"xy").unwrap();
        assert!(f.dirty.load(Ordering::Relaxed));
        f.sync().unwrap();
        assert!(!f.dirty.load(Ordering::Relaxed));
        f.set_size(20).unwrap();
        assert!(f.dirty.load(Ordering::Relaxed));
        std::fs::remove_file(p).unwrap();
    }

    #[test]
    fn sieved_and_piecewise_reads_agree_and_stop_at_eof() {
        let (f, p) = strided("read", 23);
        // Blocks at 1,2 / 6,7 / 11,12 / 16,17 / 21,22: the file ends inside none of them.
        let mut out = [0u8; 12];
        assert_eq!(f.read_stream(0, &mut out).unwrap(), 10);
        assert_eq!(&out[..10], &[1, 2, 6, 7, 11, 12, 16, 17, 21, 22]);
        let mut one = [0u8; 3];
        assert_eq!(f.read_stream(3, &mut one).unwrap(), 3);
        assert_eq!(one, [7, 11, 12]);
        let mut big = vec![0u8; SIEVE_MAX];
        assert_eq!(f.read_stream(0, &mut big).unwrap(), 10);
        assert_eq!(&big[..10], &[1, 2, 6, 7, 11, 12, 16, 17, 21, 22]);
        // Sparse (one byte per MiB): read piece by piece.
        let (mut g, gp) = strided("sparse", 3);
        let byte = Datatype::basic(Basic::U8);
        let far = Datatype::resized(&byte, 0, 1 << 20).unwrap();
        far.commit();
        g.view = View::new(0, &byte, &far, true).unwrap();
        let mut two = [9u8; 2];
        assert_eq!(g.read_stream(0, &mut two).unwrap(), 1);
        assert_eq!(two[0], 0);
        std::fs::remove_file(gp).unwrap();
        f.write_stream(10, &[200, 201, 202]).unwrap();
        let mut back = [0u8; 3];
        assert_eq!(f.read_stream(10, &mut back).unwrap(), 3);
        assert_eq!(back, [200, 201, 202]);
        assert_eq!(f.size().unwrap(), 32);
        std::fs::remove_file(p).unwrap();
    }
}
