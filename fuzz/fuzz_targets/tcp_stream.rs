//! Fuzzes what a TCP peer (or an intruder) controls: the handshake hello an accepting
//! rank parses and checks, then the stream of frames (length word, protocol header,
//! payload) it decodes, delivered in pieces of arbitrary sizes as partial reads would.
//! The decoders must never panic, never read out of bounds, and never accept a frame
//! longer than the bound; every header is then validated as the engine does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mpi_core::header::{Header, HEADER_LEN};
use mpi_core::transport::tcp::{frame, handshake};

const MAX_PAYLOAD: usize = 1 << 16;

fuzz_target!(|data: &[u8]| {
    let Some((&split, data)) = data.split_first() else { return };
    // The hello, fed byte range by byte range as the socket delivers it.
    let mut at = 0;
    let mut step = usize::from(split % 7) + 1;
    let mut buf = Vec::new();
    let body = loop {
        let end = (at + step).min(data.len());
        buf.extend_from_slice(&data[at..end]);
        at = end;
        match handshake::decode_hello(&buf) {
            Ok(Some((hello, used))) => {
                let _ = handshake::check_hello(&hello, b"0123456789abcdef0123456789abcdef", 1, 8, 0);
                assert!(used <= buf.len());
                break &buf[used..];
            }
            Ok(None) if at < data.len() => step = step % 13 + 1,
            // Refused, or the stream ended mid-hello: the frames below still get fuzzed.
            _ => break &data[..],
        }
    };
    let _ = handshake::decode_ack(&body.get(..handshake::ACK_LEN).and_then(|b| b.try_into().ok()).unwrap_or([0; handshake::ACK_LEN]));
    // Frames, with the receive buffer filled in pieces and consumed frame by frame.
    let stream = body.to_vec();
    let mut rx: Vec<u8> = Vec::new();
    let mut fed = 0;
    let mut piece = usize::from(split) * 31 + 1;
    loop {
        match frame::decode(&rx, MAX_PAYLOAD) {
            Err(e) => {
                assert!(e.payload_len as usize > MAX_PAYLOAD);
                return;
            }
            Ok(Some(f)) => {
                assert!(f.payload_len <= MAX_PAYLOAD && f.total() <= rx.len());
                let hdr: &[u8; HEADER_LEN] = frame::header_of(&rx);
                if let Some(h) = Header::decode_valid(hdr, f.payload_len, 1 << 60) {
                    let _ = h.encode();
                } else {
                    let _ = Header::decode(hdr, f.payload_len, 1 << 60);
                }
                rx.drain(..f.total());
            }
            Ok(None) => {
                if fed == stream.len() {
                    return;
                }
                let end = (fed + piece).min(stream.len());
                rx.extend_from_slice(&stream[fed..end]);
                fed = end;
                piece = piece % 977 + 1;
            }
        }
    }
});
