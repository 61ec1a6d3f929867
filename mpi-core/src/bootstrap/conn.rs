//! The byte stream to a PMI server, shared by the PMI-1 and PMI-2 clients: an inherited fd
//! (`PMI_FD`) or a TCP connection (`PMI_PORT`), with an input buffer.
//!
//! Every request goes out in one `write()` call (Slurm reads one request per `read()` and
//! drops pipelined ones); the caller waits for the reply before sending the next. Replies
//! are read through the buffer: hydra's `PMI_PORT` handshake sends several lines in one
//! read, and a PMI-2 connection starts with a PMI-1 line whose read may already hold the
//! start of the first frame.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::fd::{FromRawFd, RawFd};

/// Longest line the server may send before we call it broken.
const MAX_LINE: usize = 64 * 1024;

enum Stream {
    Fd(File),
    Tcp(TcpStream),
}

/// `write` that reports a closed peer as EPIPE instead of raising SIGPIPE, which would kill
/// the rank without a word (PMI fds are sockets; anything else gets a plain `write`).
fn send_nosignal(f: &mut File, buf: &[u8]) -> std::io::Result<usize> {
    use std::os::fd::AsRawFd;
    // SAFETY: send reads at most buf.len() bytes from a valid buffer on an fd we own.
    let n = unsafe {
        libc::send(
            f.as_raw_fd(),
            buf.as_ptr().cast(),
            buf.len(),
            libc::MSG_NOSIGNAL,
        )
    };
    if n >= 0 {
        return Ok(n as usize);
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::ENOTSOCK) {
        return f.write(buf);
    }
    Err(e)
}

/// A connection to the PMI server.
pub struct PmiConn {
    stream: Stream,
    /// Bytes read but not yet consumed.
    inbuf: Vec<u8>,
}

impl PmiConn {
    /// Take ownership of an inherited PMI fd. The fd is marked close-on-exec so programs
    /// the rank starts (e.g. via `system()`) do not inherit the PMI connection.
    ///
    /// # Safety
    /// `fd` must be an open fd that nothing else in the process owns or closes.
    pub unsafe fn from_fd(fd: RawFd) -> PmiConn {
        // SAFETY: F_SETFD on an fd we are about to own has no memory-safety implications.
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
        // SAFETY: the caller guarantees exclusive ownership of `fd`.
        let file = unsafe { File::from_raw_fd(fd) };
        PmiConn {
            stream: Stream::Fd(file),
            inbuf: Vec::new(),
        }
    }

    /// Connect to `host:port` (hydra's `PMI_PORT`).
    pub fn connect_tcp(port: &str) -> Result<PmiConn, String> {
        let stream = TcpStream::connect(port)
            .map_err(|e| format!("cannot connect to the PMI server at PMI_PORT={port}: {e}"))?;
        let _ = stream.set_nodelay(true);
        Ok(PmiConn {
            stream: Stream::Tcp(stream),
            inbuf: Vec::new(),
        })
    }

    /// Write one whole request (a single `write()` unless the kernel takes less).
    pub fn write_request(&mut self, bytes: &[u8]) -> Result<(), String> {
        let mut off = 0;
        while off < bytes.len() {
            let r = match &mut self.stream {
                Stream::Fd(f) => send_nosignal(f, &bytes[off..]),
                // std sends with MSG_NOSIGNAL on TCP sockets.
                Stream::Tcp(s) => s.write(&bytes[off..]),
            };
            match r {
                Ok(0) => return Err("the PMI server closed the connection".into()),
                Ok(n) => off += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("write to the PMI server failed: {e}")),
            }
        }
        Ok(())
    }

    /// Read more bytes into the buffer; an error at end of stream.
    fn fill(&mut self) -> Result<(), String> {
        let mut chunk = [0u8; 4096];
        loop {
            let r = match &mut self.stream {
                Stream::Fd(f) => f.read(&mut chunk),
                Stream::Tcp(s) => s.read(&mut chunk),
            };
            match r {
                Ok(0) => {
                    return Err(
                        "the PMI server closed the connection (did the launcher exit?)".into(),
                    )
                }
                Ok(n) => {
                    self.inbuf.extend_from_slice(&chunk[..n]);
                    return Ok(());
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("read from the PMI server failed: {e}")),
            }
        }
    }

    /// The next line, including its `\n`.
    pub fn read_line(&mut self) -> Result<Vec<u8>, String> {
        loop {
            if let Some(pos) = self.inbuf.iter().position(|&b| b == b'\n') {
                return Ok(self.inbuf.drain(..=pos).collect());
            }
            if self.inbuf.len() > MAX_LINE {
                return Err("the PMI server sent a line longer than 64 KiB".into());
            }
            self.fill()?;
        }
    }

    /// Exactly `n` bytes.
    pub fn read_exact(&mut self, n: usize) -> Result<Vec<u8>, String> {
        while self.inbuf.len() < n {
            self.fill()?;
        }
        Ok(self.inbuf.drain(..n).collect())
    }
}
