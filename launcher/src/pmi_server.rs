//! The PMI server state machine: one key-value space and barrier for the job, one
//! connection state per rank. Pure logic without I/O: the event loop feeds the bytes a rank
//! sent into [`PmiServer::on_bytes`] and writes out whatever [`PmiServer::take_output`]
//! returns, so the protocol can be unit-tested without processes.
//!
//! A server serves the ranks of one host (`ranks`, global rank numbers; connections are
//! indexed by position in that list). With several hosts (`relay`), a barrier that every
//! local rank entered is not released here: the pairs put since the last one wait in
//! [`PmiServer::take_fence`] for the launcher to exchange with the other hosts, and
//! [`PmiServer::fence_done`] releases it with what they put.
//!
//! Each connection starts with a PMI-1 `init` line; `pmi_version=1` keeps it in PMI-1 line
//! framing, `pmi_version=2` switches it to PMI-2 length-prefixed frames (as Slurm and hydra
//! do). Replies follow Slurm's format (`rc` right after `cmd`), which MPICH's client accepts.

use mpi_core::bootstrap::pmi_wire::{
    parse_pmi1_line, parse_pmi2_body, parse_pmi2_header, Message, PMI2_HEADER_LEN,
};
use std::collections::HashMap;

/// Limits announced by `get_maxes` (the values Slurm and hydra use).
const KVSNAME_MAX: usize = 256;
const KEYLEN_MAX: usize = 64;
const VALLEN_MAX: usize = 1024;
/// A PMI-1 line longer than this without a newline is a protocol error.
const MAX_PENDING_INPUT: usize = 64 * 1024;

/// Framing of one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Proto {
    V1,
    V2,
}

/// How far a rank got in the PMI life cycle (decides whether its exit is an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PmiState {
    /// Never sent `init`: a plain program (e.g. `hostname`), exit 0 is fine.
    NotInit,
    /// Sent `init` but not `finalize`: exiting now is a failure.
    Init,
    /// Sent `finalize`: the connection is finished.
    Finalized,
}

/// Something the launcher must act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The rank asked for the job to be killed with this exit code.
    Abort { rank: usize, code: i32 },
    /// The rank sent something that is not PMI (the connection is closed).
    ProtocolError { rank: usize, reason: String },
}

struct Conn {
    /// Global rank.
    rank: usize,
    proto: Proto,
    state: PmiState,
    inbuf: Vec<u8>,
    outbuf: Vec<u8>,
    in_barrier: bool,
    /// Exited, or its connection closed: not waited for in barriers.
    gone: bool,
    /// Set after a protocol error: further input is ignored.
    broken: bool,
    /// PMI-2 `info-getnodeattr wait=TRUE` waiting for this key.
    waiting_nodeattr: Option<String>,
    /// Its `MPI_APPNUM`.
    appnum: i32,
}

/// The PMI server of one host.
pub struct PmiServer {
    kvsname: String,
    /// Ranks in the job.
    size: usize,
    mapping: String,
    kvs: HashMap<String, String>,
    nodeattrs: HashMap<String, String>,
    conns: Vec<Conn>,
    /// Barriers go through the launcher (several hosts).
    relay: bool,
    /// Pairs put since the last barrier (relay mode), and a barrier ready to relay.
    delta: Vec<(String, String)>,
    fence_ready: bool,
    /// A relayed barrier is waiting for `fence_done`.
    fence_out: bool,
}

/// `(vector,(0,1,N))`: all ranks on node 0 (single-host launcher).
pub fn process_mapping(size: usize) -> String {
    format!("(vector,(0,1,{size}))")
}

impl PmiServer {
    /// A server for all `size` ranks of a single-host job.
    #[cfg(test)]
    pub fn new(kvsname: &str, size: usize) -> PmiServer {
        PmiServer::for_host(kvsname, size, &process_mapping(size), (0..size).collect(), false)
    }

    /// Each rank's `MPI_APPNUM` (the part of an MPMD command line it runs), by local index.
    pub fn with_appnums(mut self, appnums: Vec<i32>) -> PmiServer {
        for (c, a) in self.conns.iter_mut().zip(appnums) {
            c.appnum = a;
        }
        self
    }

    /// A server for the ranks `ranks` of a job of `size` ranks laid out as `mapping`;
    /// `relay`: barriers complete through the launcher (see the module doc).
    pub fn for_host(kvsname: &str, size: usize, mapping: &str, ranks: Vec<usize>, relay: bool) -> PmiServer {
        let mut kvs = HashMap::new();
        kvs.insert("PMI_process_mapping".to_string(), mapping.to_string());
        let conns = ranks
            .into_iter()
            .map(|rank| Conn {
                rank,
                proto: Proto::V1,
                state: PmiState::NotInit,
                inbuf: Vec::new(),
                outbuf: Vec::new(),
                in_barrier: false,
                gone: false,
                broken: false,
                waiting_nodeattr: None,
                appnum: 0,
            })
            .collect();
        PmiServer {
            kvsname: kvsname.to_string(),
            size,
            mapping: mapping.to_string(),
            kvs,
            nodeattrs: HashMap::new(),
            conns,
            relay,
            delta: Vec::new(),
            fence_ready: false,
            fence_out: false,
        }
    }

    /// A barrier every local rank entered, to relay (once): the pairs put since the last.
    pub fn take_fence(&mut self) -> Option<Vec<(String, String)>> {
        if !std::mem::take(&mut self.fence_ready) {
            return None;
        }
        self.fence_out = true;
        Some(std::mem::take(&mut self.delta))
    }

    /// The relayed barrier completed on every host, which put `kvs`: release it.
    pub fn fence_done(&mut self, kvs: Vec<(String, String)>) {
        self.kvs.extend(kvs);
        self.fence_out = false;
        self.release_barrier();
    }

    /// No local rank can enter a barrier any more (each finalized or gone).
    pub fn retired(&self) -> bool {
        self.conns.iter().all(|c| c.gone || c.state == PmiState::Finalized)
    }

    fn put(&mut self, key: &str, value: &str) {
        self.kvs.insert(key.to_string(), value.to_string());
        if self.relay {
            self.delta.push((key.to_string(), value.to_string()));
        }
    }

    /// Where the rank is in the PMI life cycle.
    pub fn state(&self, rank: usize) -> PmiState {
        self.conns[rank].state
    }

    /// Bytes queued for `rank`; the caller writes them and drains what was written.
    pub fn take_output(&mut self, rank: usize) -> &mut Vec<u8> {
        &mut self.conns[rank].outbuf
    }

    /// True if replies for `rank` are waiting to be written.
    pub fn has_output(&self, rank: usize) -> bool {
        !self.conns[rank].outbuf.is_empty()
    }

    /// True once the rank finalized (or broke the protocol) and all replies are out: the
    /// launcher then closes the connection, as both real servers do.
    pub fn should_close(&self, rank: usize) -> bool {
        let c = &self.conns[rank];
        (c.state == PmiState::Finalized || c.broken) && c.outbuf.is_empty()
    }

    /// The rank exited or closed its connection: stop waiting for it in barriers.
    pub fn rank_gone(&mut self, rank: usize) {
        self.conns[rank].gone = true;
        self.conns[rank].in_barrier = false;
        self.check_barrier();
    }

    /// Feed bytes received from `rank`; returns events for the launcher.
    pub fn on_bytes(&mut self, rank: usize, data: &[u8]) -> Vec<Event> {
        let mut events = Vec::new();
        if self.conns[rank].broken {
            return events;
        }
        self.conns[rank].inbuf.extend_from_slice(data);
        loop {
            let msg = match self.next_message(rank) {
                Ok(Some(m)) => m,
                Ok(None) => break,
                Err(reason) => {
                    let c = &mut self.conns[rank];
                    c.broken = true;
                    c.inbuf.clear();
                    events.push(Event::ProtocolError { rank: c.rank, reason });
                    self.rank_gone(rank);
                    break;
                }
            };
            let proto = self.conns[rank].proto;
            let ev = match proto {
                Proto::V1 => self.handle_v1(rank, &msg),
                Proto::V2 => self.handle_v2(rank, &msg),
            };
            events.extend(ev);
        }
        events
    }

    /// Cut the next complete message out of the rank's input buffer.
    fn next_message(&mut self, rank: usize) -> Result<Option<Message>, String> {
        let c = &mut self.conns[rank];
        // Until `init` the connection speaks lines; PMI-2 connections switch to frames.
        if c.proto == Proto::V2 && c.state != PmiState::NotInit {
            if c.inbuf.len() < PMI2_HEADER_LEN {
                return Ok(None);
            }
            let len = parse_pmi2_header(&c.inbuf[..PMI2_HEADER_LEN]).map_err(|e| e.0)?;
            if c.inbuf.len() < PMI2_HEADER_LEN + len {
                return Ok(None);
            }
            let frame: Vec<u8> = c.inbuf.drain(..PMI2_HEADER_LEN + len).collect();
            return parse_pmi2_body(&frame[PMI2_HEADER_LEN..])
                .map(Some)
                .map_err(|e| e.0);
        }
        match c.inbuf.iter().position(|&b| b == b'\n') {
            Some(pos) => {
                let line: Vec<u8> = c.inbuf.drain(..=pos).collect();
                parse_pmi1_line(&line).map(Some).map_err(|e| e.0)
            }
            None if c.inbuf.len() > MAX_PENDING_INPUT => {
                Err("a PMI-1 line longer than 64 KiB".to_string())
            }
            None => Ok(None),
        }
    }

    fn reply_v1(&mut self, rank: usize, msg: Message) {
        match msg.to_pmi1_line() {
            Ok(line) => self.conns[rank].outbuf.extend_from_slice(line.as_bytes()),
            Err(_) => self.conns[rank]
                .outbuf
                .extend_from_slice(b"cmd=error rc=-1\n"),
        }
    }

    fn reply_v2(&mut self, rank: usize, msg: Message) {
        let cmd = msg.cmd.clone();
        let frame = msg.to_pmi2_frame().unwrap_or_else(|_| {
            Message::new(&cmd)
                .with("rc", -1)
                .with("errmsg", "value_not_encodable")
                .to_pmi2_frame()
                .unwrap_or_default()
        });
        self.conns[rank].outbuf.extend_from_slice(&frame);
    }

    fn handle_v1(&mut self, rank: usize, m: &Message) -> Vec<Event> {
        let ok = |cmd: &str| Message::new(cmd).with("rc", 0);
        match m.cmd.as_str() {
            "init" => {
                let version = m.get_int("pmi_version").unwrap_or(-1);
                if self.conns[rank].state != PmiState::NotInit {
                    self.reply_v1(rank, Message::new("response_to_init").with("rc", -1));
                } else if version == 1 {
                    self.conns[rank].state = PmiState::Init;
                    self.reply_v1(
                        rank,
                        ok("response_to_init")
                            .with("pmi_version", 1)
                            .with("pmi_subversion", 1),
                    );
                } else if version == 2 {
                    // The reply is still a line; everything after it is PMI-2 frames.
                    self.reply_v1(
                        rank,
                        ok("response_to_init")
                            .with("pmi_version", 2)
                            .with("pmi_subversion", 0),
                    );
                    self.conns[rank].proto = Proto::V2;
                    self.conns[rank].state = PmiState::Init;
                } else {
                    self.reply_v1(
                        rank,
                        Message::new("response_to_init")
                            .with("rc", -1)
                            .with("pmi_version", 1)
                            .with("pmi_subversion", 1),
                    );
                }
            }
            "get_maxes" => self.reply_v1(
                rank,
                ok("maxes")
                    .with("kvsname_max", KVSNAME_MAX)
                    .with("keylen_max", KEYLEN_MAX)
                    .with("vallen_max", VALLEN_MAX),
            ),
            "get_appnum" => {
                let a = self.conns[rank].appnum;
                self.reply_v1(rank, ok("appnum").with("appnum", a))
            }
            // Unknown, as Hydra without -usize: MPI_UNIVERSE_SIZE is then not set (programs
            // and MPICH's tests read "at most the job" into a set value and do not spawn).
            // `-usize N` reaches the ranks as OXMPI_UNIVERSE_SIZE instead.
            "get_universe_size" => self.reply_v1(rank, ok("universe_size").with("size", -1)),
            "get_my_kvsname" => {
                let k = self.kvsname.clone();
                self.reply_v1(rank, ok("my_kvsname").with("kvsname", k))
            }
            "put" => {
                let reply = match (m.get("kvsname"), m.get("key"), m.get("value")) {
                    (Some(k), _, _) if k != self.kvsname => Message::new("put_result")
                        .with("rc", -1)
                        .with("msg", "unknown_kvsname"),
                    (_, Some(key), Some(value)) if key.len() <= KEYLEN_MAX => {
                        self.put(key, value);
                        ok("put_result")
                    }
                    _ => Message::new("put_result")
                        .with("rc", -1)
                        .with("msg", "bad_put"),
                };
                self.reply_v1(rank, reply);
            }
            "get" => {
                let found = match (m.get("kvsname"), m.get("key")) {
                    (Some(k), _) if k != self.kvsname => None,
                    (_, Some(key)) => self.kvs.get(key).cloned(),
                    _ => None,
                };
                let reply = match found {
                    Some(v) => ok("get_result").with("value", v),
                    None => Message::new("get_result")
                        .with("rc", -1)
                        .with("msg", "key_not_found"),
                };
                self.reply_v1(rank, reply);
            }
            "barrier_in" => self.enter_barrier(rank),
            "finalize" => {
                self.reply_v1(rank, ok("finalize_ack"));
                self.finalize(rank);
            }
            "abort" => {
                let code = m.get_int("exitcode").unwrap_or(1) as i32;
                return vec![Event::Abort { rank: self.conns[rank].rank, code }];
            }
            other => {
                let reply = Message::new("error")
                    .with("rc", -1)
                    .with("msg", format!("unknown_command_{other}"));
                self.reply_v1(rank, reply);
            }
        }
        Vec::new()
    }

    fn handle_v2(&mut self, rank: usize, m: &Message) -> Vec<Event> {
        let ok = |cmd: &str| Message::new(cmd).with("rc", 0);
        match m.cmd.as_str() {
            "fullinit" => {
                let reply = ok("fullinit-response")
                    .with("pmi-version", 2)
                    .with("pmi-subversion", 0)
                    .with("rank", self.conns[rank].rank)
                    .with("size", self.size)
                    .with("appnum", self.conns[rank].appnum)
                    .with("debugged", "FALSE")
                    .with("pmiverbose", "FALSE");
                self.reply_v2(rank, reply);
            }
            "job-getid" => {
                let k = self.kvsname.clone();
                self.reply_v2(rank, ok("job-getid-response").with("jobid", k));
            }
            "info-getjobattr" => {
                let value = match m.get("key") {
                    Some("PMI_process_mapping") => Some(self.mapping.clone()),
                    Some("universeSize") => Some("-1".to_string()),
                    _ => None,
                };
                let reply = match value {
                    Some(v) => ok("info-getjobattr-response")
                        .with("found", "TRUE")
                        .with("value", v),
                    None => ok("info-getjobattr-response").with("found", "FALSE"),
                };
                self.reply_v2(rank, reply);
            }
            "info-putnodeattr" => {
                if let (Some(k), Some(v)) = (m.get("key"), m.get("value")) {
                    self.nodeattrs.insert(k.to_string(), v.to_string());
                    self.wake_nodeattr_waiters(k);
                }
                self.reply_v2(rank, ok("info-putnodeattr-response"));
            }
            "info-getnodeattr" => {
                let key = m.get("key").unwrap_or("").to_string();
                match self.nodeattrs.get(&key).cloned() {
                    Some(v) => self.reply_v2(
                        rank,
                        ok("info-getnodeattr-response")
                            .with("found", "TRUE")
                            .with("value", v),
                    ),
                    // All ranks share our one node, so the put will come: wait for it.
                    None if m.get("wait") == Some("TRUE") => {
                        self.conns[rank].waiting_nodeattr = Some(key)
                    }
                    None => {
                        self.reply_v2(rank, ok("info-getnodeattr-response").with("found", "FALSE"))
                    }
                }
            }
            "kvs-put" => {
                if let (Some(k), Some(v)) = (m.get("key"), m.get("value")) {
                    self.put(k, v);
                }
                self.reply_v2(rank, ok("kvs-put-response"));
            }
            "kvs-get" => {
                let reply = match m.get("key").and_then(|k| self.kvs.get(k)).cloned() {
                    Some(v) => ok("kvs-get-response")
                        .with("found", "TRUE")
                        .with("value", v),
                    None => ok("kvs-get-response").with("found", "FALSE"),
                };
                self.reply_v2(rank, reply);
            }
            "kvs-fence" => self.enter_barrier(rank),
            "finalize" => {
                self.reply_v2(rank, ok("finalize-response"));
                self.finalize(rank);
            }
            "abort" => return vec![Event::Abort { rank: self.conns[rank].rank, code: 1 }],
            other => {
                let reply = Message::new(&format!("{other}-response"))
                    .with("rc", -1)
                    .with("errmsg", "unknown_command");
                self.reply_v2(rank, reply);
            }
        }
        Vec::new()
    }

    fn wake_nodeattr_waiters(&mut self, key: &str) {
        let value = self.nodeattrs[key].clone();
        for r in 0..self.conns.len() {
            if self.conns[r].waiting_nodeattr.as_deref() == Some(key) {
                self.conns[r].waiting_nodeattr = None;
                let reply = Message::new("info-getnodeattr-response")
                    .with("rc", 0)
                    .with("found", "TRUE")
                    .with("value", value.clone());
                self.reply_v2(r, reply);
            }
        }
    }

    fn finalize(&mut self, rank: usize) {
        self.conns[rank].state = PmiState::Finalized;
        self.conns[rank].in_barrier = false;
        self.check_barrier();
    }

    fn enter_barrier(&mut self, rank: usize) {
        self.conns[rank].in_barrier = true;
        self.check_barrier();
    }

    /// Release the barrier once every rank that can still enter it has entered.
    fn check_barrier(&mut self) {
        let any_waiting = self.conns.iter().any(|c| c.in_barrier);
        let all_in = self
            .conns
            .iter()
            .all(|c| c.in_barrier || c.gone || c.state == PmiState::Finalized);
        if !(any_waiting && all_in) || self.fence_out || self.fence_ready {
            return;
        }
        if self.relay {
            self.fence_ready = true;
            return;
        }
        self.release_barrier();
    }

    fn release_barrier(&mut self) {
        for r in 0..self.conns.len() {
            if !self.conns[r].in_barrier {
                continue;
            }
            self.conns[r].in_barrier = false;
            match self.conns[r].proto {
                Proto::V1 => self.reply_v1(r, Message::new("barrier_out").with("rc", 0)),
                Proto::V2 => self.reply_v2(r, Message::new("kvs-fence-response").with("rc", 0)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mpi_core::bootstrap::pmi_wire::parse_pmi2_frame;

    fn out(s: &mut PmiServer, r: usize) -> String {
        String::from_utf8(std::mem::take(s.take_output(r))).unwrap()
    }

    #[test]
    fn pmi1_startup_and_exchange() {
        let mut s = PmiServer::new("oxmpi_1_ab", 2);
        for r in 0..2 {
            s.on_bytes(r, b"cmd=init pmi_version=1 pmi_subversion=1\n");
            assert_eq!(
                out(&mut s, r),
                "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n"
            );
            assert_eq!(s.state(r), PmiState::Init);
        }
        s.on_bytes(0, b"cmd=get_maxes\n");
        assert_eq!(
            out(&mut s, 0),
            "cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n"
        );
        s.on_bytes(0, b"cmd=get_my_kvsname\n");
        assert_eq!(out(&mut s, 0), "cmd=my_kvsname rc=0 kvsname=oxmpi_1_ab\n");
        s.on_bytes(0, b"cmd=get kvsname=oxmpi_1_ab key=PMI_process_mapping\n");
        assert_eq!(
            out(&mut s, 0),
            "cmd=get_result rc=0 value=(vector,(0,1,2))\n"
        );
        s.on_bytes(0, b"cmd=put kvsname=oxmpi_1_ab key=a value=x=y\n");
        assert_eq!(out(&mut s, 0), "cmd=put_result rc=0\n");
        // Barrier: rank 0 waits until rank 1 enters.
        s.on_bytes(0, b"cmd=barrier_in\n");
        assert_eq!(out(&mut s, 0), "");
        s.on_bytes(1, b"cmd=barrier_in\n");
        assert_eq!(out(&mut s, 0), "cmd=barrier_out rc=0\n");
        assert_eq!(out(&mut s, 1), "cmd=barrier_out rc=0\n");
        s.on_bytes(1, b"cmd=get kvsname=oxmpi_1_ab key=a\n");
        assert_eq!(out(&mut s, 1), "cmd=get_result rc=0 value=x=y\n");
        s.on_bytes(1, b"cmd=get kvsname=oxmpi_1_ab key=missing\n");
        assert!(out(&mut s, 1).starts_with("cmd=get_result rc=-1"));
        s.on_bytes(1, b"cmd=finalize\n");
        assert_eq!(out(&mut s, 1), "cmd=finalize_ack rc=0\n");
        assert!(s.should_close(1));
    }

    #[test]
    fn split_and_pipelined_input() {
        let mut s = PmiServer::new("k", 1);
        s.on_bytes(0, b"cmd=init pmi_vers");
        assert_eq!(out(&mut s, 0), "");
        s.on_bytes(
            0,
            b"ion=1 pmi_subversion=1\ncmd=get_appnum\ncmd=get_universe_size\n",
        );
        assert_eq!(
            out(&mut s, 0),
            "cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n\
             cmd=appnum rc=0 appnum=0\ncmd=universe_size rc=0 size=-1\n"
        );
    }

    #[test]
    fn barrier_ignores_finalized_and_gone_ranks() {
        let mut s = PmiServer::new("k", 3);
        s.on_bytes(0, b"cmd=barrier_in\n");
        s.rank_gone(1);
        assert_eq!(out(&mut s, 0), "");
        s.on_bytes(
            2,
            b"cmd=init pmi_version=1 pmi_subversion=1\ncmd=finalize\n",
        );
        assert_eq!(out(&mut s, 0), "cmd=barrier_out rc=0\n");
    }

    #[test]
    fn abort_unknown_and_garbage() {
        let mut s = PmiServer::new("k", 2);
        assert_eq!(
            s.on_bytes(0, b"cmd=abort exitcode=7\n"),
            vec![Event::Abort { rank: 0, code: 7 }]
        );
        s.on_bytes(0, b"cmd=frobnicate\n");
        assert!(out(&mut s, 0).starts_with("cmd=error rc=-1"));
        let ev = s.on_bytes(1, b"hello world\n");
        assert!(matches!(ev[0], Event::ProtocolError { rank: 1, .. }));
        assert!(s.should_close(1));
        assert!(s.on_bytes(1, b"cmd=get_maxes\n").is_empty());
    }

    #[test]
    fn pmi2_session() {
        let mut s = PmiServer::new("kv", 2);
        s.on_bytes(0, b"cmd=init pmi_version=2 pmi_subversion=0\n");
        assert_eq!(
            out(&mut s, 0),
            "cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n"
        );
        s.on_bytes(
            0,
            &Message::new("fullinit")
                .with("pmirank", 0)
                .with("threaded", "FALSE")
                .to_pmi2_frame()
                .unwrap(),
        );
        let m = parse_pmi2_frame(out(&mut s, 0).as_bytes()).unwrap();
        assert_eq!(
            (m.cmd.as_str(), m.get_int("size").unwrap()),
            ("fullinit-response", 2)
        );
        s.on_bytes(0, b"45    cmd=kvs-put;key=addr-0;value=127.0.0.1:55765;");
        assert_eq!(out(&mut s, 0), "26    cmd=kvs-put-response;rc=0;");
        s.on_bytes(0, b"14    cmd=kvs-fence;");
        assert_eq!(out(&mut s, 0), "");
        s.rank_gone(1);
        assert_eq!(out(&mut s, 0), "28    cmd=kvs-fence-response;rc=0;");
        s.on_bytes(
            0,
            &Message::new("kvs-get")
                .with("key", "addr-0")
                .to_pmi2_frame()
                .unwrap(),
        );
        let m = parse_pmi2_frame(out(&mut s, 0).as_bytes()).unwrap();
        assert_eq!(m.get("value"), Some("127.0.0.1:55765"));
        s.on_bytes(
            0,
            &Message::new("info-getjobattr")
                .with("key", "PMI_process_mapping")
                .to_pmi2_frame()
                .unwrap(),
        );
        let m = parse_pmi2_frame(out(&mut s, 0).as_bytes()).unwrap();
        assert_eq!(m.get("value"), Some("(vector,(0,1,2))"));
        s.on_bytes(0, b"13    cmd=finalize;");
        assert_eq!(out(&mut s, 0), "27    cmd=finalize-response;rc=0;");
    }
}
