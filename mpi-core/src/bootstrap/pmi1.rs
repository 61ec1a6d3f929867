//! PMI-1 wire client: strict request/response over an inherited fd (`PMI_FD`) or a TCP
//! connection (`PMI_PORT` + `PMI_ID`), one line per request and per reply (the stream and
//! its buffering are in [`super::conn`]).

use super::conn::PmiConn;
use super::pmi_wire::{parse_pmi1_line, Message, PMI1_MAX_LINE};
use std::os::fd::RawFd;

/// What the `PMI_PORT` handshake told us (hydra sends no `PMI_RANK`/`PMI_SIZE` in that mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handshake {
    pub rank: usize,
    pub size: usize,
}

/// A PMI-1 connection with a buffered line reader.
pub struct Pmi1Client {
    conn: PmiConn,
}

/// Send one PMI-1 line in a single `write()` (never pipelined).
pub(super) fn send_line(conn: &mut PmiConn, msg: &Message) -> Result<(), String> {
    let line = msg.to_pmi1_line().map_err(|e| e.0)?;
    if line.len() > PMI1_MAX_LINE {
        return Err(format!(
            "PMI-1 request of {} bytes exceeds the {PMI1_MAX_LINE}-byte line limit",
            line.len()
        ));
    }
    conn.write_request(line.as_bytes())
}

/// Read the next complete line and parse it.
pub(super) fn read_line_message(conn: &mut PmiConn) -> Result<Message, String> {
    let line = conn.read_line()?;
    parse_pmi1_line(&line).map_err(|e| e.0)
}

/// Send `msg` and wait for the reply named `expect`; a reply with `rc≠0` is returned
/// as-is (the caller decides), a reply with another command is an error. Stray
/// `cmd=set …` lines left over from hydra's `PMI_PORT` handshake are skipped.
pub(super) fn line_request(
    conn: &mut PmiConn,
    msg: &Message,
    expect: &str,
) -> Result<Message, String> {
    send_line(conn, msg)?;
    loop {
        let reply = read_line_message(conn)?;
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

impl Pmi1Client {
    /// Take ownership of an inherited PMI fd (marked close-on-exec).
    ///
    /// # Safety
    /// `fd` must be an open fd that nothing else in the process owns or closes.
    pub unsafe fn from_fd(fd: RawFd) -> Pmi1Client {
        // SAFETY: forwarded from the caller.
        Pmi1Client {
            conn: unsafe { PmiConn::from_fd(fd) },
        }
    }

    /// Connect to `host:port` (hydra's `PMI_PORT`) and, if `pmi_id` is given, run the
    /// `initack` handshake, which reports our rank and the job size.
    pub fn connect_tcp(
        port: &str,
        pmi_id: Option<i64>,
    ) -> Result<(Pmi1Client, Option<Handshake>), String> {
        let mut client = Pmi1Client {
            conn: PmiConn::connect_tcp(port)?,
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
        send_line(&mut self.conn, msg)
    }

    /// Read the next complete line and parse it.
    pub fn read_message(&mut self) -> Result<Message, String> {
        read_line_message(&mut self.conn)
    }

    /// Send `msg` and wait for the reply named `expect` (see [`line_request`]).
    pub fn request(&mut self, msg: &Message, expect: &str) -> Result<Message, String> {
        line_request(&mut self.conn, msg, expect)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
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
