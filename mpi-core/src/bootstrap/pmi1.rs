//! PMI-1 wire client: strict request/response over an inherited fd (`PMI_FD`) or a TCP
//! connection (`PMI_PORT` + `PMI_ID`).
//!
//! Slurm's server reads one request per `read()` and silently drops pipelined requests, so
//! every request goes out in one `write()` and we wait for its reply before sending the
//! next. Replies are read through a line buffer because hydra's `PMI_PORT` handshake sends
//! several lines that may arrive in one read.

use super::pmi_wire::{parse_pmi1_line, Message, WireError, PMI1_MAX_LINE};
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::fd::{FromRawFd, RawFd};

/// The byte stream to the PMI server.
enum Stream {
    Fd(File),
    Tcp(TcpStream),
}

impl Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Fd(f) => f.read(buf),
            Stream::Tcp(s) => s.read(buf),
        }
    }

    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Fd(f) => f.write(buf),
            Stream::Tcp(s) => s.write(buf),
        }
    }
}

/// What the `PMI_PORT` handshake told us (hydra sends no `PMI_RANK`/`PMI_SIZE` in that mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handshake {
    pub rank: usize,
    pub size: usize,
}

/// A PMI-1 connection with a buffered line reader.
pub struct Pmi1Client {
    stream: Stream,
    /// Bytes read but not yet consumed as a line.
    inbuf: Vec<u8>,
}

impl Pmi1Client {
    /// Take ownership of an inherited PMI fd. The fd is marked close-on-exec so programs
    /// the rank starts (e.g. via `system()`) do not inherit the PMI connection.
    ///
    /// # Safety
    /// `fd` must be an open fd that nothing else in the process owns or closes.
    pub unsafe fn from_fd(fd: RawFd) -> Pmi1Client {
        // SAFETY: F_SETFD on an fd we are about to own has no memory-safety implications.
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
        // SAFETY: the caller guarantees exclusive ownership of `fd`.
        let file = unsafe { File::from_raw_fd(fd) };
        Pmi1Client {
            stream: Stream::Fd(file),
            inbuf: Vec::new(),
        }
    }

    /// Connect to `host:port` (hydra's `PMI_PORT`) and, if `pmi_id` is given, run the
    /// `initack` handshake, which reports our rank and the job size.
    pub fn connect_tcp(
        port: &str,
        pmi_id: Option<i64>,
    ) -> Result<(Pmi1Client, Option<Handshake>), String> {
        let stream = TcpStream::connect(port)
            .map_err(|e| format!("cannot connect to the PMI server at PMI_PORT={port}: {e}"))?;
        let _ = stream.set_nodelay(true);
        let mut client = Pmi1Client {
            stream: Stream::Tcp(stream),
            inbuf: Vec::new(),
        };
        let Some(id) = pmi_id else {
            return Ok((client, None));
        };
        let ack = client.request(&Message::new("initack").with("pmiid", id), "initack")?;
        drop(ack);
        let mut rank = None;
        let mut size = None;
        // hydra sends `cmd=set size=N`, `cmd=set rank=R`, `cmd=set debug=D` after the ack.
        while rank.is_none() || size.is_none() {
            let m = client.read_message()?;
            if m.cmd != "set" {
                return Err(format!("unexpected PMI handshake line `{m}`"));
            }
            if m.get("size").is_some() {
                size = Some(m.get_int("size").map_err(|e| e.0)?);
            }
            if m.get("rank").is_some() {
                rank = Some(m.get_int("rank").map_err(|e| e.0)?);
            }
        }
        let (rank, size) = (rank.unwrap_or(0), size.unwrap_or(1));
        if size < 1 || rank < 0 || rank >= size {
            return Err(format!("PMI handshake gave rank {rank} of size {size}"));
        }
        // `cmd=set debug=D` follows; it is consumed lazily by `request` (skipped there).
        Ok((
            client,
            Some(Handshake {
                rank: rank as usize,
                size: size as usize,
            }),
        ))
    }

    /// Send one message in a single `write()` (never pipelined).
    pub fn send(&mut self, msg: &Message) -> Result<(), String> {
        let line = msg.to_pmi1_line().map_err(|e| e.0)?;
        if line.len() > PMI1_MAX_LINE {
            return Err(format!(
                "PMI-1 request of {} bytes exceeds the {PMI1_MAX_LINE}-byte line limit",
                line.len()
            ));
        }
        let bytes = line.as_bytes();
        let mut off = 0;
        while off < bytes.len() {
            match self.stream.write(&bytes[off..]) {
                Ok(0) => return Err("the PMI server closed the connection".into()),
                Ok(n) => off += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("write to the PMI server failed: {e}")),
            }
        }
        Ok(())
    }

    /// Read the next complete line and parse it.
    pub fn read_message(&mut self) -> Result<Message, String> {
        loop {
            if let Some(pos) = self.inbuf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.inbuf.drain(..=pos).collect();
                return parse_pmi1_line(&line).map_err(|e: WireError| e.0);
            }
            if self.inbuf.len() > 64 * 1024 {
                return Err("the PMI server sent a line longer than 64 KiB".into());
            }
            let mut chunk = [0u8; 4096];
            match self.stream.read(&mut chunk) {
                Ok(0) => {
                    return Err(
                        "the PMI server closed the connection (did the launcher exit?)".into(),
                    )
                }
                Ok(n) => self.inbuf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("read from the PMI server failed: {e}")),
            }
        }
    }

    /// Send `msg` and wait for the reply named `expect`; a reply with `rc≠0` is returned
    /// as-is (the caller decides), a reply with another command is an error. Stray
    /// `cmd=set …` lines left over from the handshake are skipped.
    pub fn request(&mut self, msg: &Message, expect: &str) -> Result<Message, String> {
        self.send(msg)?;
        loop {
            let reply = self.read_message()?;
            if reply.cmd == expect {
                return Ok(reply);
            }
            if reply.cmd == "set" {
                continue;
            }
            return Err(format!(
                "PMI server answered `{reply}` to `{msg}` (expected cmd={expect})"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::IntoRawFd;
    use std::os::unix::net::UnixStream;

    fn pair() -> (Pmi1Client, UnixStream) {
        let (a, b) = UnixStream::pair().unwrap();
        // SAFETY: `a` is a fresh socket whose ownership moves into the client.
        let client = unsafe { Pmi1Client::from_fd(a.into_raw_fd()) };
        (client, b)
    }

    #[test]
    fn request_reads_buffered_lines() {
        let (mut c, mut server) = pair();
        // Two replies in one write: the second must stay buffered for the next request.
        server
            .write_all(b"cmd=maxes rc=0 vallen_max=1024\ncmd=appnum appnum=0\n")
            .unwrap();
        let m = c.request(&Message::new("get_maxes"), "maxes").unwrap();
        assert_eq!(m.get_int("vallen_max").unwrap(), 1024);
        let m = c.request(&Message::new("get_appnum"), "appnum").unwrap();
        assert_eq!(m.get_int("appnum").unwrap(), 0);
        let mut got = vec![0u8; 64];
        let n = server.read(&mut got).unwrap();
        assert!(std::str::from_utf8(&got[..n])
            .unwrap()
            .starts_with("cmd=get_maxes\n"));
    }

    #[test]
    fn wrong_reply_and_eof_are_errors() {
        let (mut c, mut server) = pair();
        server.write_all(b"cmd=bogus\n").unwrap();
        assert!(c.request(&Message::new("get_maxes"), "maxes").is_err());
        drop(server);
        assert!(c.request(&Message::new("get_maxes"), "maxes").is_err());
    }

    #[test]
    fn too_long_request_rejected() {
        let (mut c, _server) = pair();
        let m = Message::new("put").with("value", "x".repeat(2000));
        assert!(c.send(&m).is_err());
    }
}
