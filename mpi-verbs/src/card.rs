//! The business card: what a peer needs to connect its queue pair to ours.
//!
//! Binary, little-endian, `HEADER` bytes of addressing followed by one u32 QP number per
//! world rank (0 for ranks that are not verbs peers), so every peer finds the QP created
//! for it at index = its own rank, and one card serves all peers (the engine exchanges it
//! once through PMI). Size: 56 + 4 x world size bytes.
//!
//! ```text
//!  0 magic u32 "OXVB"     4 version u16        6 link layer u8    7 path MTU (ibv_mtu) u8
//!  8 LID u16             10 max_rd_atomic u8  11 max_dest_rd_atomic u8
//! 12 PSN u32             16 GID [16]          32 world size u32  36 flush rkey u32
//! 40 flush address u64   48 flags u32         52 reserved u32    56 QPNs [size] u32
//! ```

use crate::error::{Error, Result};

pub const MAGIC: u32 = u32::from_le_bytes(*b"OXVB");
pub const VERSION: u16 = 1;
pub const HEADER: usize = 56;

/// The card's addressing part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addr {
    /// `IBV_LINK_LAYER_*` (1 InfiniBand, 2 Ethernet).
    pub link_layer: u8,
    /// The port's active MTU (`ibv_mtu`: 1 = 256 ... 5 = 4096).
    pub mtu: u8,
    pub lid: u16,
    /// RDMA READs this side may have outstanding as initiator, and accepts as responder.
    pub rd_atomic: u8,
    pub dest_rd_atomic: u8,
    /// First packet sequence number of our send queues.
    pub psn: u32,
    pub gid: [u8; 16],
    /// A small remotely writable buffer: zero-byte signalled RDMA WRITEs to it flush
    /// unsignalled sends (see `eager::Eager::flush`).
    pub flush_rkey: u32,
    pub flush_addr: u64,
    pub flags: u32,
}

/// `flags`: this side addresses with a GRH (RoCE, or InfiniBand with a GID index set).
pub const FLAG_GLOBAL: u32 = 1;

/// Writes the card into `buf` if it fits; returns its length either way.
pub fn encode(a: &Addr, qpns: &[u32], buf: &mut [u8]) -> usize {
    let n = HEADER + 4 * qpns.len();
    if buf.len() < n {
        return n;
    }
    buf[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    buf[4..6].copy_from_slice(&VERSION.to_le_bytes());
    buf[6] = a.link_layer;
    buf[7] = a.mtu;
    buf[8..10].copy_from_slice(&a.lid.to_le_bytes());
    buf[10] = a.rd_atomic;
    buf[11] = a.dest_rd_atomic;
    buf[12..16].copy_from_slice(&a.psn.to_le_bytes());
    buf[16..32].copy_from_slice(&a.gid);
    buf[32..36].copy_from_slice(&(qpns.len() as u32).to_le_bytes());
    buf[36..40].copy_from_slice(&a.flush_rkey.to_le_bytes());
    buf[40..48].copy_from_slice(&a.flush_addr.to_le_bytes());
    buf[48..52].copy_from_slice(&a.flags.to_le_bytes());
    buf[52..56].copy_from_slice(&0u32.to_le_bytes());
    for (i, q) in qpns.iter().enumerate() {
        buf[HEADER + 4 * i..HEADER + 4 * i + 4].copy_from_slice(&q.to_le_bytes());
    }
    n
}

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

/// Reads a peer's card: its addressing and the QP number it created for `my_rank`.
pub fn decode(card: &[u8], my_rank: u32) -> Result<(Addr, u32)> {
    if card.len() < HEADER || u32_at(card, 0) != MAGIC {
        return Err(Error::new(format!(
            "not a verbs card ({} bytes, bad magic or too short)",
            card.len()
        )));
    }
    let version = u16_at(card, 4);
    if version != VERSION {
        return Err(Error::new(format!(
            "verbs card version {version}, this plugin speaks {VERSION} (mixed OxMPI installs?)"
        )));
    }
    let size = u32_at(card, 32) as usize;
    if card.len() != HEADER + 4 * size {
        return Err(Error::new(format!(
            "verbs card of {} bytes, its header says {}",
            card.len(),
            HEADER + 4 * size
        )));
    }
    if my_rank as usize >= size {
        return Err(Error::new(format!(
            "verbs card covers {size} ranks, not rank {my_rank}"
        )));
    }
    let mut gid = [0u8; 16];
    gid.copy_from_slice(&card[16..32]);
    let a = Addr {
        link_layer: card[6],
        mtu: card[7],
        lid: u16_at(card, 8),
        rd_atomic: card[10],
        dest_rd_atomic: card[11],
        psn: u32_at(card, 12),
        gid,
        flush_rkey: u32_at(card, 36),
        flush_addr: u64::from_le_bytes(card[40..48].try_into().unwrap_or([0; 8])),
        flags: u32_at(card, 48),
    };
    let qpn = u32_at(card, HEADER + 4 * my_rank as usize);
    if qpn == 0 {
        return Err(Error::new(format!("the peer created no queue pair for rank {my_rank} (it does not count this rank as a verbs peer)")));
    }
    Ok((a, qpn))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr() -> Addr {
        Addr {
            link_layer: 2,
            mtu: 3,
            lid: 0x1234,
            rd_atomic: 16,
            dest_rd_atomic: 8,
            psn: 0xabcdef,
            gid: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 2, 15],
            flush_rkey: 0xdead_beef,
            flush_addr: 0x7fff_0000_1000,
            flags: FLAG_GLOBAL,
        }
    }

    #[test]
    fn roundtrip() {
        let qpns = [0u32, 17, 0, 42];
        let mut buf = vec![0u8; 200];
        let n = encode(&addr(), &qpns, &mut buf);
        assert_eq!(n, HEADER + 16);
        let (a, q) = decode(&buf[..n], 1).unwrap();
        assert_eq!(a, addr());
        assert_eq!(q, 17);
        assert_eq!(decode(&buf[..n], 3).unwrap().1, 42);
    }

    #[test]
    fn too_small_buffer_reports_size_and_writes_nothing() {
        let mut buf = vec![0xaau8; 10];
        assert_eq!(encode(&addr(), &[1, 2], &mut buf), HEADER + 8);
        assert!(buf.iter().all(|&b| b == 0xaa));
    }

    #[test]
    fn rejects_bad_cards() {
        let qpns = [5u32, 0];
        let mut buf = vec![0u8; HEADER + 8];
        encode(&addr(), &qpns, &mut buf);
        assert!(decode(&buf[..HEADER + 4], 0)
            .unwrap_err()
            .0
            .contains("header says"));
        assert!(decode(&buf, 1).unwrap_err().0.contains("no queue pair"));
        assert!(decode(&buf, 2).unwrap_err().0.contains("covers 2 ranks"));
        let mut bad = buf.clone();
        bad[0] ^= 1;
        assert!(decode(&bad, 0).unwrap_err().0.contains("magic"));
        let mut v2 = buf.clone();
        v2[4] = 9;
        assert!(decode(&v2, 0).unwrap_err().0.contains("version 9"));
        assert!(decode(&[], 0).is_err());
    }
}
