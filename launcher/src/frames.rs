//! A nonblocking socket carrying the frames of `wire.rs`: bytes read are kept until a whole
//! frame is in, bytes to send wait in a queue until the socket takes them.

use crate::sys;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

pub struct FrameConn {
    fd: OwnedFd,
    pub rx: Vec<u8>,
    tx: Vec<u8>,
    /// The peer closed its end (or the connection failed).
    pub eof: bool,
}

impl FrameConn {
    /// Wraps a connected socket (made nonblocking here).
    pub fn new(fd: OwnedFd) -> std::io::Result<FrameConn> {
        sys::set_nonblocking(fd.as_raw_fd())?;
        Ok(FrameConn { fd, rx: Vec::new(), tx: Vec::new(), eof: false })
    }

    pub fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Queues an encoded frame and sends what the socket takes now.
    pub fn send(&mut self, frame: Vec<u8>) {
        if self.tx.is_empty() {
            self.tx = frame;
        } else {
            self.tx.extend_from_slice(&frame);
        }
        self.flush();
    }

    pub fn wants_write(&self) -> bool {
        !self.tx.is_empty() && !self.eof
    }

    /// Sends queued bytes until the socket would block.
    pub fn flush(&mut self) {
        while !self.tx.is_empty() && !self.eof {
            match sys::send(self.fd.as_raw_fd(), &self.tx) {
                Ok(n) => {
                    self.tx.drain(..n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(_) => {
                    self.eof = true;
                    self.tx.clear();
                }
            }
        }
    }

    /// Sends everything queued, waiting at most `limit` (at the end of a proxy's life).
    pub fn flush_blocking(&mut self, limit: std::time::Duration) {
        let end = std::time::Instant::now() + limit;
        while self.wants_write() && std::time::Instant::now() < end {
            let mut p = [libc::pollfd { fd: self.raw(), events: libc::POLLOUT, revents: 0 }];
            let _ = sys::poll(&mut p, 50);
            self.flush();
        }
    }

    /// Reads what the socket has (until it would block); sets `eof` at the end of the stream.
    pub fn fill(&mut self) {
        let mut buf = [0u8; 64 * 1024];
        loop {
            match sys::read(self.fd.as_raw_fd(), &mut buf) {
                Ok(0) => {
                    self.eof = true;
                    return;
                }
                Ok(n) => self.rx.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(_) => {
                    self.eof = true;
                    return;
                }
            }
        }
    }

    /// Takes the next whole frame out of `rx` with `decode`; `Err` on a corrupt stream.
    pub fn next<M>(&mut self, decode: fn(&[u8]) -> Result<Option<(M, usize)>, String>) -> Result<Option<M>, String> {
        match decode(&self.rx)? {
            Some((m, used)) => {
                self.rx.drain(..used);
                Ok(Some(m))
            }
            None => Ok(None),
        }
    }
}
