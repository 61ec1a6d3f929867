//! The TCP stream framing: every message is a 4-byte little-endian payload length, the
//! 48-byte protocol header, then the payload. The length comes first because the header's
//! own `len` is the *message* length (a rendezvous offer has none of its payload behind
//! it). The decoder bounds the length before trusting it, so a corrupt or hostile stream
//! is a named error, never a huge allocation.

use crate::header::HEADER_LEN;

/// Bytes before the payload: the length word and the header.
pub const PREFIX_LEN: usize = 4 + HEADER_LEN;

/// A complete frame at the start of a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Payload bytes after the prefix.
    pub payload_len: usize,
}

impl Frame {
    /// Whole frame length (prefix and payload).
    pub fn total(&self) -> usize {
        PREFIX_LEN + self.payload_len
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameError {
    pub payload_len: u64,
    pub max: usize,
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a TCP frame announces {} payload bytes, more than the {} a frame may carry (corrupt stream?)", self.payload_len, self.max)
    }
}

/// Encodes the prefix of a frame carrying `payload_len` bytes.
pub fn encode_prefix(header: &[u8; HEADER_LEN], payload_len: usize) -> [u8; PREFIX_LEN] {
    let mut p = [0u8; PREFIX_LEN];
    p[..4].copy_from_slice(&(payload_len as u32).to_le_bytes());
    p[4..].copy_from_slice(header);
    p
}

/// The frame at the start of `buf`: `Ok(None)` while it is incomplete (read more), an error
/// when its length exceeds `max_payload`.
pub fn decode(buf: &[u8], max_payload: usize) -> Result<Option<Frame>, FrameError> {
    if buf.len() < 4 {
        return Ok(None);
    }
    let n = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
    if n > max_payload {
        return Err(FrameError { payload_len: n as u64, max: max_payload });
    }
    let f = Frame { payload_len: n };
    Ok((buf.len() >= f.total()).then_some(f))
}

/// The header bytes of a decoded frame at the start of `buf`.
pub fn header_of(buf: &[u8]) -> &[u8; HEADER_LEN] {
    buf[4..PREFIX_LEN].try_into().expect("a decoded frame holds its header")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_split_anywhere() {
        let hdr = [7u8; HEADER_LEN];
        let mut stream = Vec::new();
        for len in [0usize, 1, 5, 300] {
            stream.extend_from_slice(&encode_prefix(&hdr, len));
            stream.extend((0..len).map(|i| i as u8));
        }
        // Every cut point: the decoder never reads past what it was given.
        for cut in 0..stream.len() {
            let _ = decode(&stream[..cut], 1000).unwrap();
        }
        let mut at = 0;
        let mut lens = Vec::new();
        while at < stream.len() {
            let f = decode(&stream[at..], 1000).unwrap().unwrap();
            assert_eq!(header_of(&stream[at..]), &hdr);
            lens.push(f.payload_len);
            at += f.total();
        }
        assert_eq!(lens, [0, 1, 5, 300]);
        assert!(decode(&encode_prefix(&hdr, 1001), 1000).is_err());
    }
}
