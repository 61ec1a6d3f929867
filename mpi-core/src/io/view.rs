//! A file view (MPI 3.1 §13.3): the displacement, the etype and the filetype through which
//! a process sees a file. The filetype is flattened once into its data blocks; tiling it
//! from the displacement gives the file bytes that hold the process's data stream, in order.
//! A position in the view is a byte of that stream (etype offsets times the etype size);
//! the holes of the filetype are skipped, so each process sees only its own blocks.

use crate::datatype::Datatype;
use crate::error::{ErrorClass, MpiError, MpiResult};

#[derive(Clone, Debug)]
pub struct View {
    /// Byte where the first tile starts.
    pub disp: u64,
    pub etype_size: usize,
    /// Data blocks of one filetype item: (offset from the tile's start, length), in
    /// type-map order (the standard requires it to be monotonically non-decreasing).
    blocks: Vec<(i64, usize)>,
    /// Stream position of each block's first byte within a tile.
    starts: Vec<usize>,
    /// Data bytes per tile.
    size: usize,
    /// Bytes between consecutive tiles.
    extent: i64,
}

impl View {
    /// The default view: displacement 0, etype and filetype `MPI_BYTE`.
    pub fn bytes() -> View {
        View { disp: 0, etype_size: 1, blocks: vec![(0, 1)], starts: vec![0], size: 1, extent: 1 }
    }

    /// The view of `filetype` tiled from `disp`, with etypes of `etype`, for a file opened
    /// for writing or not (`writable`).
    pub fn new(disp: u64, etype: &Datatype, filetype: &Datatype, writable: bool) -> MpiResult<View> {
        check_type_map(etype, "etype", writable)?;
        check_type_map(filetype, "filetype", writable)?;
        let etype_size = etype.size();
        if etype_size == 0 {
            return Err(MpiError::new(ErrorClass::Type, "the etype has no data (size 0)"));
        }
        let size = filetype.size();
        if size == 0 {
            // A process with nothing to access (HDF5 gives its ranks without data an empty
            // filetype): its stream is empty; the other processes' views are unaffected.
            return Ok(View { disp, etype_size, blocks: Vec::new(), starts: Vec::new(), size: 0, extent: 1 });
        }
        if size % etype_size != 0 {
            return Err(MpiError::new(ErrorClass::Type, format!("the filetype's size ({size} bytes) is not a multiple of the etype's ({etype_size} bytes)")));
        }
        let extent = filetype.extent() as i64;
        if extent <= 0 {
            return Err(MpiError::new(ErrorClass::Type, format!("the filetype's extent ({extent}) is not positive")));
        }
        let blocks: Vec<(i64, usize)> = filetype.blocks(1).map(|(o, l)| (o as i64, l)).collect();
        let mut starts = Vec::with_capacity(blocks.len());
        let mut pos = 0;
        for &(_, l) in &blocks {
            starts.push(pos);
            pos += l;
        }
        Ok(View { disp, etype_size, blocks, starts, size, extent })
    }

    /// Whether the filetype holds no data: nothing can be read or written through the view.
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// Whether the stream is the file itself from `disp` (one pwrite per access).
    pub fn is_contiguous(&self) -> bool {
        self.blocks.len() == 1 && self.blocks[0].0 == 0 && self.size as i64 == self.extent
    }

    /// Calls `f(file offset, position in the range, length)` for the file pieces holding
    /// stream bytes `[pos, pos + len)`, in stream order, until `f` returns false.
    /// An empty view (a filetype of size 0) has no pieces: the caller checks `is_empty`.
    pub fn pieces(&self, pos: u64, len: usize, mut f: impl FnMut(u64, usize, usize) -> bool) {
        if len == 0 || self.size == 0 {
            return;
        }
        if self.is_contiguous() {
            f(self.disp + pos, 0, len);
            return;
        }
        let mut tile = pos / self.size as u64;
        let mut in_tile = (pos % self.size as u64) as usize;
        let mut b = self.starts.partition_point(|&s| s <= in_tile) - 1;
        let mut done = 0;
        while done < len {
            let (off, blen) = self.blocks[b];
            let skip = in_tile - self.starts[b];
            let n = (blen - skip).min(len - done);
            let at = self.disp as i64 + tile as i64 * self.extent + off + skip as i64;
            if !f(at as u64, done, n) {
                return;
            }
            done += n;
            in_tile += n;
            if skip + n == blen {
                b += 1;
                if b == self.blocks.len() {
                    b = 0;
                    tile += 1;
                    in_tile = 0;
                }
            }
        }
    }

    /// The file byte holding stream byte `pos` (`MPI_File_get_byte_offset`).
    pub fn byte_offset(&self, pos: u64) -> u64 {
        let mut at = self.disp;
        self.pieces(pos, 1, |o, _, _| {
            at = o;
            false
        });
        at
    }

    /// How many stream bytes lie in the first `file_size` bytes of the file: the stream
    /// position of the end of file.
    pub fn stream_end(&self, file_size: u64) -> u64 {
        if file_size <= self.disp || self.size == 0 {
            return 0;
        }
        let rel = (file_size - self.disp) as i64;
        let tiles = rel / self.extent;
        let rem = rel % self.extent;
        let mut data = tiles as u64 * self.size as u64;
        for &(off, len) in &self.blocks {
            data += (rem - off).clamp(0, len as i64) as u64;
        }
        data
    }

    /// The first and one-past-last file bytes of stream range `[pos, pos + len)` (for
    /// atomic mode's lock).
    pub fn span(&self, pos: u64, len: usize) -> (u64, u64) {
        let (mut lo, mut hi) = (u64::MAX, 0);
        self.pieces(pos, len, |o, _, n| {
            lo = lo.min(o);
            hi = hi.max(o + n as u64);
            true
        });
        (lo.min(hi), hi)
    }
}

/// The standard's rule for etypes and filetypes (MPI 3.1 §13.3): non-negative,
/// monotonically non-decreasing displacements; for files that may be written, no byte
/// reached twice either. Breaking it is `MPI_ERR_IO`, as in ROMIO (MPICH's
/// io/tst_fileview lets read-only files have overlapping blocks).
fn check_type_map(t: &Datatype, what: &str, writable: bool) -> MpiResult<()> {
    let (mut start, mut end) = (0i64, 0i64);
    for (off, len) in t.blocks(1) {
        let off = off as i64;
        if off < 0 {
            return Err(MpiError::new(ErrorClass::Io, format!("the {what} has a negative displacement ({off})")));
        }
        if off < start {
            return Err(MpiError::new(ErrorClass::Io, format!("the {what}'s displacements decrease (a block at byte {off} after one at byte {start})")));
        }
        if writable && off < end {
            return Err(MpiError::new(ErrorClass::Io, format!("the {what}'s blocks overlap (a block at byte {off} before the end of the previous one, {end}), which a writable file may not have")));
        }
        (start, end) = (off, end.max(off + len as i64));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::{Basic, Datatype};

    fn collect(v: &View, pos: u64, len: usize) -> Vec<(u64, usize, usize)> {
        let mut out = Vec::new();
        v.pieces(pos, len, |o, p, n| {
            out.push((o, p, n));
            true
        });
        out
    }

    #[test]
    fn contiguous_view_is_the_file() {
        let v = View::bytes();
        assert!(v.is_contiguous());
        assert_eq!(collect(&v, 10, 5), vec![(10, 0, 5)]);
        assert_eq!(v.stream_end(100), 100);
    }

    #[test]
    fn vector_filetype_skips_holes() {
        // 2 blocks of 4 bytes, stride 12 bytes: data at [0,4) and [12,16), extent 16.
        let int = Datatype::basic(Basic::I32);
        let t = Datatype::vector(2, 1, 3, &int).unwrap();
        t.commit();
        let v = View::new(100, &int, &t, true).unwrap();
        assert_eq!(collect(&v, 0, 8), vec![(100, 0, 4), (112, 4, 4)]);
        // Second tile starts at extent 16 (the vector's extent is 16).
        assert_eq!(collect(&v, 6, 6), vec![(114, 0, 2), (116, 2, 4)]);
        assert_eq!(v.byte_offset(8), 116);
        assert_eq!(v.stream_end(100), 0);
        assert_eq!(v.stream_end(114), 6);
        assert_eq!(v.stream_end(132), 16);
        assert_eq!(v.span(0, 8), (100, 116));
    }

    #[test]
    fn type_maps_must_increase() {
        let int = Datatype::basic(Basic::I32);
        let down = Datatype::indexed(vec![1, 1], vec![3, 0], &int).unwrap();
        down.commit();
        assert_eq!(View::new(0, &int, &down, false).unwrap_err().class, ErrorClass::Io);
        let neg = Datatype::indexed(vec![1, 1], vec![-2, 2], &int).unwrap();
        neg.commit();
        assert_eq!(View::new(0, &neg, &neg, false).unwrap_err().class, ErrorClass::Io);
        let overlap = Datatype::indexed(vec![3, 1], vec![0, 1], &int).unwrap();
        overlap.commit();
        assert_eq!(View::new(0, &int, &overlap, true).unwrap_err().class, ErrorClass::Io);
        assert!(View::new(0, &int, &overlap, false).is_ok());
    }
}
