//! Collective buffering for collective writes (ROMIO's "two-phase" I/O): the file range
//! all processes write is cut into one domain per process; each process sends every piece
//! of its data to the owner of the domain the piece starts in, and each owner writes its
//! domain in few large writes. Interleaved views (one small block per process in turn)
//! then cost a few `pwrite`s per process instead of one per block.
//!
//! These are the local parts; the C layer exchanges the pieces with `MPI_Alltoallv`.

use super::file::File;
use crate::error::MpiResult;

/// Largest buffer an owner fills before writing, and the largest hole between pieces it
/// fills by reading the file (larger holes start a new write).
const RUN_MAX: usize = 16 << 20;
const HOLE_MAX: u64 = 64 << 10;

/// The owner of file byte `off` among `n` domains of `chunk` bytes from `lo`.
fn owner(off: u64, lo: u64, chunk: u64, n: usize) -> usize {
    (((off - lo) / chunk) as usize).min(n - 1)
}

/// Splits this process's write (`pieces` of the file in stream order, holding `data` in
/// that order) by owner: per owner, the (offset, length) pairs as little-endian u64s and
/// the bytes.
pub fn route(pieces: &[(u64, usize)], data: &[u8], lo: u64, chunk: u64, n: usize) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let mut meta = vec![Vec::new(); n];
    let mut bytes = vec![Vec::new(); n];
    let mut p = 0;
    for &(off, len) in pieces {
        let d = owner(off, lo, chunk, n);
        meta[d].extend_from_slice(&off.to_le_bytes());
        meta[d].extend_from_slice(&(len as u64).to_le_bytes());
        bytes[d].extend_from_slice(&data[p..p + len]);
        p += len;
    }
    (meta, bytes)
}

/// Writes what the owner received: `meta[i]` and `data[i]` from process `i`. Pieces are
/// sorted by offset and written in runs; the holes inside a run are first read from the
/// file, so bytes no process writes keep their content. A file opened `MPI_MODE_WRONLY`
/// cannot be read: its runs stop at every hole.
pub fn write_domain(file: &File, meta: &[&[u8]], data: &[&[u8]]) -> MpiResult<()> {
    // (file offset, length, source, position in that source's data)
    let mut all: Vec<(u64, usize, usize, usize)> = Vec::new();
    for (src, m) in meta.iter().enumerate() {
        let mut pos = 0;
        for pair in m.chunks_exact(16) {
            let off = u64::from_le_bytes(pair[..8].try_into().unwrap());
            let len = u64::from_le_bytes(pair[8..].try_into().unwrap()) as usize;
            all.push((off, len, src, pos));
            pos += len;
        }
    }
    all.sort_by_key(|e| e.0);
    let hole_max = if file.amode.read { HOLE_MAX } else { 0 };
    let mut i = 0;
    while i < all.len() {
        // The run: pieces from i while the holes stay small and the buffer bounded.
        let start = all[i].0;
        let mut end = start + all[i].1 as u64;
        let mut covered = all[i].1 as u64;
        let mut j = i + 1;
        while j < all.len() && all[j].0 <= end + hole_max && (all[j].0 + all[j].1 as u64 - start) as usize <= RUN_MAX {
            let e = all[j].0 + all[j].1 as u64;
            covered += e.saturating_sub(end.max(all[j].0));
            end = end.max(e);
            j += 1;
        }
        let mut buf = vec![0u8; (end - start) as usize];
        if covered < end - start {
            file.read_raw(start, &mut buf)?;
        }
        for &(off, len, src, pos) in &all[i..j] {
            let at = (off - start) as usize;
            buf[at..at + len].copy_from_slice(&data[src][pos..pos + len]);
        }
        file.write_raw(start, &buf)?;
        i = j;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_by_the_domain_a_piece_starts_in() {
        let (meta, bytes) = route(&[(0, 2), (9, 3), (20, 1)], b"abcdef", 0, 10, 3);
        assert_eq!(meta[0].len(), 32);
        assert_eq!(bytes[0], b"abcde");
        assert_eq!(bytes[1], b"");
        assert_eq!(bytes[2], b"f");
        assert_eq!(owner(1000, 0, 10, 3), 2);
    }

    /// Runs with holes on a write-only file: written piece by piece, the holes untouched
    /// (reading them to fill a run failed with EBADF).
    #[test]
    fn write_only_files_are_written_around_holes() {
        use super::super::file::{open_os, Amode};
        use std::io::Write;
        let p = std::env::temp_dir().join(format!("oxmpi-wronly-{}", std::process::id()));
        std::fs::File::create(&p).unwrap().write_all(b"0123456789").unwrap();
        let amode = Amode { write: true, ..Amode::default() };
        let f = File::new(open_os(p.to_str().unwrap(), amode).unwrap(), p.to_string_lossy().into_owned(), amode, super::super::shared_pointer::SharedPointer::new(p.with_extension("shfp"), 0));
        let meta0: Vec<u8> = [0u64, 2, 6, 1].iter().flat_map(|v| v.to_le_bytes()).collect();
        let meta1: Vec<u8> = [2u64, 1, 8, 2].iter().flat_map(|v| v.to_le_bytes()).collect();
        write_domain(&f, &[&meta0, &meta1], &[b"abc", b"xyz"]).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"abx345c7yz");
        std::fs::remove_file(&p).unwrap();
    }
}
