//! The wire header every message starts with: fixed size, little-endian, versioned, and
//! checked field by field on receipt (a malformed header is a fatal, named error).

use crate::error::{ErrorClass, MpiError};

/// Encoded size of a header in bytes.
pub const HEADER_LEN: usize = 48;
/// Wire format version; bumped on any layout change.
pub const VERSION: u8 = 3;

/// What a message is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Payload carried in full; `len` = payload length.
    Eager = 1,
    /// Rendezvous request-to-send: `len` = total length, `sreq` = sender request.
    Rts = 2,
    /// Clear-to-send: receiver matched an RTS; `sreq` echoed, `rreq` = receiver request.
    Cts = 3,
    /// A rendezvous chunk for `rreq` at byte `offset`; payload length = chunk length.
    Data = 4,
    /// Synchronous-send acknowledgement: the eager message for `sreq` was matched.
    SyncAck = 5,
    /// Cooperative rendezvous: the sender wrote `len` bytes straight into receive request
    /// `rreq`'s buffer (see `FLAG_COOP`); `offset` = the sender's buffer address, so the
    /// receiver can read any part the sender could not write.
    PutDone = 6,
    /// Cooperative rendezvous: the receiver has all bytes of send request `sreq`, which may
    /// complete (its buffer is no longer read).
    ReadDone = 7,
}

impl Kind {
    fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            1 => Kind::Eager,
            2 => Kind::Rts,
            3 => Kind::Cts,
            4 => Kind::Data,
            5 => Kind::SyncAck,
            6 => Kind::PutDone,
            7 => Kind::ReadDone,
            _ => return None,
        })
    }
}

/// Flag: the sender waits for a `SyncAck` (MPI_Ssend family).
pub const FLAG_SYNC: u8 = 1;
/// Flag on a `Cts`: the receiver reads bytes [0, len) itself and asks the sender to write
/// the rest straight into its buffer at address `offset`, then send `PutDone`; the sender
/// completes on the receiver's `ReadDone` (with `len` 0, as soon as it wrote everything:
/// the receiver then reads nothing and sends no `ReadDone`).
pub const FLAG_COOP: u8 = 2;
/// Flag on an `Rts` and its `Data` chunks: a pushed message. The sender streams the data
/// right after the `Rts` without waiting for a `Cts`, and completes once it is all in the
/// ring; the receiver puts the chunks wherever the offer matched, or holds them until it
/// matches. Oversubscribed, this spares the sender waiting for its receiver to be scheduled.
pub const FLAG_PUSH: u8 = 4;
/// Flag on an `Rts`: part of a rooted collective (one rank sending to many, or many to
/// one). A receiver bound to the sender's CPU answers with a `FLAG_COOP` `Cts` that leaves
/// the whole message to the sender's `process_vm_writev`, instead of reading it: when
/// several ranks read one process's pages at once they contend for its page-table locks
/// (oversubscribed bcast of 128 KiB spent a quarter of its time spinning there).
pub const FLAG_ROOTED: u8 = 8;
/// Flag on an `Rts`, with `FLAG_ROOTED`: sent toward the root (gather, reduce). Only
/// these take the cooperative copy (`FLAG_COOP`) when oversubscribed: there the senders'
/// half runs on the CPUs the root is not using, while for sends from a root, and for
/// exchanges, the extra hand-overs cost more than the second core gains (4 ranks on 2
/// CPUs, cooperative vs not: bcast 2 MiB 281 vs 197 µs, allgather 1 MiB 840 vs 757,
/// allreduce 4 MiB 1920 vs 1750, but gather 2 MiB 380 vs 425, reduce 4 MiB 760 vs 863).
pub const FLAG_TO_ROOT: u8 = 16;
const KNOWN_FLAGS: u8 = FLAG_SYNC | FLAG_COOP | FLAG_PUSH | FLAG_ROOTED | FLAG_TO_ROOT;

/// Bytes at the end of an encoded `Eager` header that its receiver ignores (the `offset`
/// field, meaningless there): a transport may lay payload over them, as the shared-memory
/// ring does so a 9–16 byte message shares its flag's cache line.
pub const EAGER_SPARE: usize = 8;

/// May the last `EAGER_SPARE` bytes of this encoded header be overwritten?
#[inline]
pub fn has_spare_tail(b: &[u8; HEADER_LEN]) -> bool {
    b[0] == Kind::Eager as u8
}

/// A decoded header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub flags: u8,
    /// Communicator context id.
    pub ctx: u32,
    /// Source rank within the communicator.
    pub src: i32,
    pub tag: i32,
    /// Per-peer sequence number (checks that the transport lost or reordered nothing).
    pub seq: u32,
    pub sreq: u32,
    pub rreq: u32,
    /// Message length (Eager/Rts) in bytes.
    pub len: u64,
    /// Byte offset of a Data chunk.
    pub offset: u64,
}

impl Header {
    pub fn new(kind: Kind) -> Header {
        Header { kind, flags: 0, ctx: 0, src: 0, tag: 0, seq: 0, sreq: 0, rreq: 0, len: 0, offset: 0 }
    }

    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0] = self.kind as u8;
        b[1] = self.flags;
        b[2] = VERSION;
        b[4..8].copy_from_slice(&self.ctx.to_le_bytes());
        b[8..12].copy_from_slice(&self.src.to_le_bytes());
        b[12..16].copy_from_slice(&self.tag.to_le_bytes());
        b[16..20].copy_from_slice(&self.seq.to_le_bytes());
        b[20..24].copy_from_slice(&self.sreq.to_le_bytes());
        b[24..28].copy_from_slice(&self.rreq.to_le_bytes());
        b[32..40].copy_from_slice(&self.len.to_le_bytes());
        b[40..48].copy_from_slice(&self.offset.to_le_bytes());
        b
    }

    /// Decodes and validates; `payload_len` is what the transport delivered with it and
    /// `max_len` bounds any length field. Errors name the fault.
    pub fn decode(b: &[u8; HEADER_LEN], payload_len: usize, max_len: u64) -> Result<Header, MpiError> {
        Self::decode_valid(b, payload_len, max_len).ok_or_else(|| Self::diagnose(b, payload_len, max_len))
    }

    /// `decode` for every arriving message: a few branch-free comparisons, None for a bad
    /// header (then `decode` names the fault). An `Option<Header>` is laid out as a
    /// `Header` (`Kind` has spare values), so the caller takes the header where it lies;
    /// moving it out of a `Result` stalled on store forwarding.
    #[inline]
    pub fn decode_valid(b: &[u8; HEADER_LEN], payload_len: usize, max_len: u64) -> Option<Header> {
        let w0 = u32::from_le_bytes(b[0..4].try_into().unwrap());
        let (kind, flags) = (w0 as u8, (w0 >> 8) as u8);
        let mut h = Self::fields(b, Kind::Eager);
        let eager = kind == Kind::Eager as u8;
        if eager {
            h.offset = 0; // may hold payload (`EAGER_SPARE`)
        }
        // `&`, not `&&`: all of them are cheap, and one branch beats six.
        let common = (w0 & 0xffff_0000 == u32::from(VERSION) << 16)
            & (flags & !KNOWN_FLAGS == 0)
            & (u32::from_le_bytes(b[28..32].try_into().unwrap()) == 0)
            & (h.src >= 0)
            & (h.len <= max_len)
            & (h.offset <= max_len);
        let kind = match kind {
            1 if h.tag >= 0 && h.len == payload_len as u64 => Kind::Eager,
            2 if h.tag >= 0 && payload_len == 0 => Kind::Rts,
            3 if payload_len == 0 => Kind::Cts,
            4 if payload_len != 0 => Kind::Data,
            5 if payload_len == 0 => Kind::SyncAck,
            6 if payload_len == 0 => Kind::PutDone,
            7 if payload_len == 0 => Kind::ReadDone,
            _ => return None,
        };
        common.then_some(Header { kind, ..h })
    }

    /// The fields of an encoded header, unchecked, with `kind` given.
    #[inline]
    fn fields(b: &[u8; HEADER_LEN], kind: Kind) -> Header {
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap());
        Header {
            kind,
            flags: b[1],
            ctx: u32_at(4),
            src: u32_at(8) as i32,
            tag: u32_at(12) as i32,
            seq: u32_at(16),
            sreq: u32_at(20),
            rreq: u32_at(24),
            len: u64_at(32),
            offset: u64_at(40),
        }
    }

    /// The named fault of a header `decode` rejected.
    #[cold]
    fn diagnose(b: &[u8; HEADER_LEN], payload_len: usize, max_len: u64) -> MpiError {
        match Self::decode_checked(b, payload_len, max_len) {
            Err(e) => e,
            Ok(_) => MpiError::new(ErrorClass::Intern, "malformed message header from peer"),
        }
    }

    /// Field-by-field validation with a message per fault.
    fn decode_checked(b: &[u8; HEADER_LEN], payload_len: usize, max_len: u64) -> Result<Header, MpiError> {
        let bad = |what: &str| {
            MpiError::new(ErrorClass::Intern, format!("malformed message header from peer: {what}"))
        };
        let kind = Kind::from_u8(b[0]).ok_or_else(|| bad(&format!("unknown kind {}", b[0])))?;
        if b[2] != VERSION {
            return Err(bad(&format!("wire version {} (expected {VERSION}); mixed OxMPI builds?", b[2])));
        }
        let flags = b[1];
        if flags & !KNOWN_FLAGS != 0 || b[3] != 0 || b[28..32] != [0; 4] {
            return Err(bad("reserved bits set"));
        }
        let mut h = Self::fields(b, kind);
        if kind == Kind::Eager {
            h.offset = 0; // may hold payload (`EAGER_SPARE`)
        }
        if h.src < 0 {
            return Err(bad("negative source rank"));
        }
        if h.len > max_len || h.offset > max_len {
            return Err(bad("length out of range"));
        }
        match kind {
            Kind::Eager if h.tag < 0 || h.len != payload_len as u64 => Err(bad("eager length/tag")),
            Kind::Rts if h.tag < 0 || payload_len != 0 => Err(bad("rts with payload or bad tag")),
            Kind::Cts | Kind::SyncAck | Kind::PutDone | Kind::ReadDone if payload_len != 0 => Err(bad("control message with payload")),
            Kind::Data if payload_len == 0 => Err(bad("empty data chunk")),
            _ => Ok(h),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> Header {
        Header { kind: Kind::Eager, flags: FLAG_SYNC, ctx: 7, src: 3, tag: 99, seq: 12, sreq: 5, rreq: 0, len: 8, offset: 0 }
    }

    #[test]
    fn round_trip() {
        let h = sample();
        assert_eq!(Header::decode(&h.encode(), 8, u64::MAX).unwrap(), h);
    }

    #[test]
    fn rejects_malformed() {
        let good = sample().encode();
        let mut b = good;
        b[0] = 77;
        assert!(Header::decode(&b, 8, u64::MAX).is_err(), "unknown kind");
        let mut b = good;
        b[2] = 9;
        assert!(Header::decode(&b, 8, u64::MAX).is_err(), "version");
        let mut b = good;
        b[1] = 0x80;
        assert!(Header::decode(&b, 8, u64::MAX).is_err(), "flags");
        assert!(Header::decode(&good, 9, u64::MAX).is_err(), "payload length mismatch");
        assert!(Header::decode(&good, 8, 4).is_err(), "length bound");
        let mut b = good;
        b[8..12].copy_from_slice(&(-4i32).to_le_bytes());
        assert!(Header::decode(&b, 8, u64::MAX).is_err(), "negative source");
    }

    proptest! {
        #[test]
        fn fast_and_checked_decode_agree(bytes in proptest::collection::vec(any::<u8>(), HEADER_LEN), plen in 0usize..100, kind in 0u8..9, ver in 0u8..4) {
            let mut b: [u8; HEADER_LEN] = bytes.try_into().unwrap();
            // Mostly plausible headers, so both acceptance and each rejection get exercised.
            b[0] = kind;
            b[2] = ver;
            if plen % 2 == 0 { b[1] &= KNOWN_FLAGS; b[3] = 0; b[28..32].fill(0); b[11] &= 0x7f; b[39] = 0; b[47] = 0; }
            prop_assert_eq!(Header::decode(&b, plen, 1 << 60).ok(), Header::decode_checked(&b, plen, 1 << 60).ok());
        }

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), HEADER_LEN), plen in 0usize..100) {
            let b: [u8; HEADER_LEN] = bytes.try_into().unwrap();
            let _ = Header::decode(&b, plen, 1 << 40);
        }

        #[test]
        fn round_trips(kind in 1u8..=7, ctx: u32, src in 0i32..i32::MAX, tag in 0i32..i32::MAX, seq: u32, sreq: u32, rreq: u32, len in 0u64..1<<40, off in 0u64..1<<40) {
            let kind = Kind::from_u8(kind).unwrap();
            let plen = match kind { Kind::Eager => len as usize % 4096, Kind::Data => 1 + len as usize % 4096, _ => 0 };
            let len = if kind == Kind::Eager { plen as u64 } else { len };
            let h = Header { kind, flags: 0, ctx, src, tag, seq, sreq, rreq, len, offset: off };
            // An eager header's offset is not carried (`EAGER_SPARE`).
            let expect = if kind == Kind::Eager { Header { offset: 0, ..h } } else { h };
            prop_assert_eq!(Header::decode(&h.encode(), plen, 1 << 40).unwrap(), expect);
        }
    }
}
