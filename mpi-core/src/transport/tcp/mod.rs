//! TCP transport (mio, no async runtime): one listening socket per rank, a connection per
//! peer opened on first use, frames of `frame.rs` on it. The protocol above sends
//! rendezvous data only after the receiver's clear-to-send and in chunks of `max_payload`,
//! so a receiver buffers at most one frame per connection: a large unexpected message never
//! sits whole in its memory.
//!
//! Connections: the connecting rank sends a hello (`handshake.rs`) and sends nothing else
//! until the ack. When two ranks connect to each other at once, the lower rank's
//! connection is kept: the acceptor answers `Duplicate` on the higher rank's, and the
//! higher rank, seeing the lower rank's hello, drops its own attempt.
//!
//! Peers `0..size` are the ranks of our job; processes of other jobs (dynamic processes:
//! `dpm.rs`) get the next indices, on `add_peer` or when their hello arrives first, and are
//! ordered by (job, rank) wherever ranks are compared. Such a process may end while we go
//! on (after `MPI_Comm_disconnect`, or its job finished): its connection closing is not a
//! failure, only a later send to it is.
//!
//! Readiness is edge-triggered (mio): a socket is read until it would block, and a flag per
//! connection remembers that it may hold more. A sleeping wait blocks outside the engine
//! lock in `poll(2)` on the epoll instance (which reports ready events without taking
//! them) and on an eventfd: a thread whose progress pass took events while another one
//! sleeps writes the eventfd, which stays readable until no wait sleeps any more, so a
//! wake-up given just before the sleeper blocks is not lost.

pub mod addr;
pub mod frame;
pub mod handshake;

use super::{Incoming, SleepToken, Transport, Via};
use crate::error::fatal;
use crate::header::HEADER_LEN;
use frame::PREFIX_LEN;
use handshake::{Caller, Hello, Verdict};
use std::collections::HashMap;
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};
use std::io::Read;
use std::net::{SocketAddr, SocketAddrV4};
use std::os::fd::AsRawFd;
use std::time::Duration;

const LISTENER: Token = Token(0);
/// Tokens of peer connections: `PEER_BASE + world rank`.
const PEER_BASE: usize = 2;
/// Tokens of accepted connections before their hello: `ACCEPT_BASE + slot`.
const ACCEPT_BASE: usize = 1 << 40;

/// Where a peer listens, from its business card.
#[derive(Clone, Debug)]
pub struct Card {
    pub addr: SocketAddrV4,
    pub host: String,
}

impl Card {
    /// The card's KVS form: `ip:port host`.
    pub fn encode(&self) -> String {
        format!("{} {}", self.addr, self.host)
    }

    pub fn decode(s: &str) -> Option<Card> {
        let (a, host) = s.split_once(' ')?;
        Some(Card { addr: a.parse().ok()?, host: host.to_string() })
    }
}

/// One connection's buffers.
struct Conn {
    stream: TcpStream,
    /// Received bytes in `rx[start..end]`; a frame handed out by `recv_next` is `held`
    /// bytes long and stays in place until `release`.
    rx: Vec<u8>,
    start: usize,
    end: usize,
    held: usize,
    /// Bytes accepted by `try_send` that the socket has not taken yet: `tx[tx_off..]`.
    tx: Vec<u8>,
    tx_off: usize,
    /// After `tx`: the rest of a rendezvous chunk still in the sender's buffer
    /// (`try_send_lent`; the protocol keeps the send open until it is out).
    lent: *const u8,
    lent_len: usize,
    /// The socket may have bytes to read (an edge was seen and no read has blocked since).
    readable: bool,
    /// The peer closed its end (or the connection failed: `error`); bytes already read are
    /// still delivered first.
    eof: bool,
    error: Option<std::io::Error>,
    /// epoll said the peer closed (or the socket failed): read until EOF, never stop at a
    /// short read (no further edge would come).
    hup: bool,
    /// A frame whose payload is being read straight into its destination.
    direct: Option<Direct>,
}

/// A frame received in place (`Transport::recv_placed`): its header, kept here for the
/// protocol, and how much of its payload has reached `dst`.
struct Direct {
    header: [u8; HEADER_LEN],
    dst: *mut u8,
    len: usize,
    got: usize,
}


impl Conn {
    fn new(stream: TcpStream) -> Conn {
        Conn { stream, rx: Vec::new(), start: 0, end: 0, held: 0, tx: Vec::new(), tx_off: 0, lent: std::ptr::null(), lent_len: 0, readable: true, eof: false, error: None, hup: false, direct: None }
    }

    fn tx_pending(&self) -> bool {
        self.tx_off < self.tx.len() || self.lent_len > 0
    }

    /// Writes pending output until the socket would block.
    fn flush(&mut self) -> std::io::Result<()> {
        let fd = self.stream.as_raw_fd();
        while self.tx_pending() {
            let own = self.tx_off < self.tx.len();
            let (ptr, len) = if own { (self.tx[self.tx_off..].as_ptr(), self.tx.len() - self.tx_off) } else { (self.lent, self.lent_len) };
            // SAFETY: sending from a live buffer on our own socket (`tx`, or the lent rest of
            // a send buffer, valid until `lent_len` is 0: see `try_send_lent`); MSG_NOSIGNAL
            // turns a closed peer into EPIPE instead of SIGPIPE (we are a library inside a C
            // program).
            let n = unsafe { libc::send(fd, ptr as *const libc::c_void, len, libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT) };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                return match e.raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::ENOTCONN) => Ok(()),
                    Some(libc::EINTR) => continue,
                    _ => Err(e),
                };
            }
            let n = n as usize;
            if own {
                self.tx_off += n;
                if self.tx_off == self.tx.len() {
                    self.tx.clear();
                    self.tx_off = 0;
                }
            } else {
                // SAFETY: n ≤ lent_len, within the lent buffer.
                self.lent = unsafe { self.lent.add(n) };
                self.lent_len -= n;
            }
        }
        Ok(())
    }

    /// Reads the rest of the in-place frame's payload until the socket would block.
    fn fill_direct(&mut self) {
        while let Some(d) = self.direct.as_mut().filter(|d| d.got < d.len) {
            // SAFETY: `dst` is the pending receive buffer the protocol named for this
            // payload (`placement`), valid for `len` bytes until the frame is released.
            let dst = unsafe { std::slice::from_raw_parts_mut(d.dst.add(d.got), d.len - d.got) };
            let r = read_once(&self.stream, dst, self.hup);
            let (n, more) = self.took(r);
            self.direct.as_mut().unwrap().got += n;
            if !more {
                return;
            }
        }
    }

    /// Reads more of the in-place frame if the socket may hold some; once complete, its
    /// header, payload and length (the frame stays until `release`).
    fn advance_direct(&mut self) -> Option<(*const [u8; HEADER_LEN], *mut u8, usize)> {
        if self.readable {
            self.fill_direct();
        }
        let d = self.direct.as_ref()?;
        (d.got == d.len).then_some((&d.header as *const [u8; HEADER_LEN], d.dst, d.len))
    }

    /// Applies a read's outcome to the flags: the bytes it gave, and whether to read again.
    fn took(&mut self, r: ReadOutcome) -> (usize, bool) {
        match r {
            Got { n, drained } => {
                if drained {
                    self.readable = false;
                }
                (n, !drained)
            }
            Blocked => {
                self.readable = false;
                (0, false)
            }
            End(e) => {
                self.ended(e);
                (0, false)
            }
        }
    }

    /// The stream ended (EOF, or the error `e`): deliver what is buffered, then report it.
    fn ended(&mut self, e: Option<std::io::Error>) {
        self.eof = true;
        self.readable = false;
        self.error = e;
    }

    /// Turns the incomplete frame at the head of the buffer into an in-place one if its
    /// payload is large and `place` knows where it goes: the bytes already buffered are
    /// copied there, the rest will be read there.
    fn try_direct(&mut self, min: usize, place: &mut dyn FnMut(&[u8; HEADER_LEN], usize) -> Option<*mut u8>) -> bool {
        let buffered = self.end - self.start;
        if buffered < PREFIX_LEN {
            return false;
        }
        let head = &self.rx[self.start..self.end];
        let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
        if len < min {
            return false;
        }
        let header = *frame::header_of(head);
        let Some(dst) = place(&header, len) else { return false };
        let have = buffered - PREFIX_LEN;
        // SAFETY: `dst` is valid for `len` ≥ `have` bytes (see `fill_direct`); the frame is
        // incomplete, so every buffered byte after the prefix is its payload.
        unsafe { std::ptr::copy_nonoverlapping(head[PREFIX_LEN..].as_ptr(), dst, have) };
        self.start = 0;
        self.end = 0;
        self.direct = Some(Direct { header, dst, len, got: have });
        true
    }

    /// Reads until the socket would block, the buffer is full, or the stream ends (`eof`).
    fn fill(&mut self, cap: usize) {
        debug_assert_eq!(self.held, 0, "no read while a frame is handed out");
        if self.rx.len() < cap {
            self.rx.resize(cap, 0);
        }
        loop {
            if self.start == self.end {
                self.start = 0;
                self.end = 0;
            }
            if self.end == self.rx.len() {
                if self.start == 0 {
                    return;
                }
                self.rx.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            let r = read_once(&self.stream, &mut self.rx[self.end..], self.hup);
            let (n, more) = self.took(r);
            self.end += n;
            if !more {
                return;
            }
        }
    }
}

/// TCP_NODELAY (a small message must not wait for Nagle), the congestion control the job
/// chose (`congestion`), and socket buffers of `bytes` each way when set
/// (`OXMPI_TCP_SOCKBUF`; 0 leaves the kernel's autotuning).
fn tune_socket(stream: &TcpStream, bytes: usize, congestion: Option<&str>) {
    let _ = stream.set_nodelay(true);
    if let Some(name) = congestion {
        // A failure keeps the system's default (the name was accepted on a probe socket).
        set_congestion(stream.as_raw_fd(), name);
    }
    if bytes == 0 {
        return;
    }
    let v = bytes.min(i32::MAX as usize) as libc::c_int;
    for opt in [libc::SO_SNDBUF, libc::SO_RCVBUF] {
        // SAFETY: setsockopt on our own socket with a live c_int of the right size.
        unsafe { libc::setsockopt(stream.as_raw_fd(), libc::SOL_SOCKET, opt, &v as *const libc::c_int as *const libc::c_void, std::mem::size_of::<libc::c_int>() as libc::socklen_t) };
    }
}

/// The congestion control for connections between ranks: the first name of
/// `OXMPI_TCP_CONGESTION` (comma-separated; default `reno`) that this process may set on
/// a socket, or None to keep the system's (`system`, or none usable). Why not the
/// system's: BBR, the default on some distributions and clouds, paces every connection
/// and sizes its segments by the pacing rate, which on loopback cost a quarter of the
/// 1 MiB bandwidth; why reno rather than cubic (Linux's usual default): the same bulk
/// bandwidth, less work per acknowledgement (8 B loopback latency 4.87 µs against cubic's
/// 5.03 and BBR's 4.62, docs/performance.md), and on a cluster's low-latency links cubic
/// runs in its reno-like region anyway. Unprivileged processes may set only the names in
/// `net.ipv4.tcp_allowed_congestion_control`, which always include reno.
fn pick_congestion(spec: &str) -> Option<String> {
    if spec.is_empty() || spec == "system" {
        return None;
    }
    // SAFETY: a fresh socket we own and close below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return None;
    }
    let picked = spec.split(',').map(str::trim).filter(|n| !n.is_empty()).find(|name| set_congestion(fd, name));
    // SAFETY: closing the probe socket opened above.
    unsafe { libc::close(fd) };
    picked.map(str::to_string)
}

/// Sets TCP socket `fd`'s congestion control to `name`; false if the kernel refused it.
fn set_congestion(fd: std::os::fd::RawFd, name: &str) -> bool {
    // SAFETY: setsockopt on a socket the caller owns, with a live byte string and its length.
    unsafe { libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, name.as_ptr() as *const libc::c_void, name.len() as libc::socklen_t) == 0 }
}

/// What one read from a socket gave.
enum ReadOutcome {
    /// `n` bytes; `drained`: a short read, so the socket is empty and the next arrival is
    /// a new readiness edge (no read needed to see EAGAIN first). Not trusted once the
    /// peer closed (`hup`): the end would then come without an edge.
    Got { n: usize, drained: bool },
    Blocked,
    /// EOF (None) or an error.
    End(Option<std::io::Error>),
}
use ReadOutcome::{Blocked, End, Got};

fn read_once(stream: &TcpStream, buf: &mut [u8], hup: bool) -> ReadOutcome {
    loop {
        match (&*stream).read(buf) {
            Ok(0) => return End(None),
            Ok(n) => return Got { n, drained: n < buf.len() && !hup },
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Blocked,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return End(Some(e)),
        }
    }
}

/// How this rank stands with one peer.
enum Peer {
    /// No connection; the first send opens one.
    Idle,
    /// Our connection is open and its hello sent or queued; waiting for the ack.
    Connecting(Conn),
    /// The peer's connection wins (it has the lower rank): wait for its hello.
    Awaiting,
    /// Carrying traffic.
    Up(Conn),
    /// A process of another job that closed its connection (it ended).
    Gone,
}

/// An accepted connection that has not said who it is yet.
struct Accepting {
    stream: TcpStream,
    from: SocketAddr,
    buf: Vec<u8>,
    /// May have bytes to read (as `Conn::readable`).
    ready: bool,
}

pub struct TcpTransport {
    me: usize,
    size: usize,
    secret: Vec<u8>,
    /// Our job (`dpm::job_uid`), sent in every hello.
    job: u64,
    /// Peers of other jobs: (job, rank) → peer index (≥ `size`), and back.
    foreign: HashMap<(u64, u32), usize>,
    foreign_ids: Vec<(u64, u32)>,
    /// The secret each peer of another job expects in our hello.
    foreign_secrets: Vec<Vec<u8>>,
    /// Peers were added since the engine last asked (`take_grown`).
    grown: bool,
    poll: Poll,
    events: Events,
    /// Level-triggered eventfd that wakes sleeping waits of this process (not in `poll`).
    wake_fd: std::os::fd::OwnedFd,
    listener: TcpListener,
    local: SocketAddrV4,
    cards: Vec<Option<Card>>,
    peers: Vec<Peer>,
    /// Ranks whose connection is `Up`, for receiving in turn.
    up: Vec<usize>,
    cursor: usize,
    /// Ranks whose connection is `Connecting`.
    connecting: Vec<usize>,
    accepting: Vec<Option<Accepting>>,
    listener_ready: bool,
    eager_max: usize,
    max_payload: usize,
    /// Rendezvous chunk: `max_payload` on loopback, `OXMPI_TCP_NET_CHUNK` over a network.
    chunk: usize,
    /// Payloads from this size are received in place when the protocol knows where they
    /// go (`OXMPI_TCP_DIRECT_MIN`; usize::MAX = never).
    direct_min: usize,
    /// Connections refused at the handshake (wrong secret, garbage, …).
    refused: usize,
    verbose: bool,
    /// Waits of this process sleeping in `poll(2)` right now (several at
    /// MPI_THREAD_MULTIPLE).
    sleepers: usize,
    /// Progress passes so far, and up to how many connections a pass reads every socket
    /// instead of asking epoll (`OXMPI_TCP_POLL_PEERS`).
    passes: usize,
    poll_peers: usize,
    /// `OXMPI_TCP_SOCKBUF` (0 = kernel autotuning).
    sockbuf: usize,
    /// Congestion control set on every connection (`pick_congestion`); None: the system's.
    congestion: Option<String>,
}

/// Frames up to this size (prefix and payload) are sent from one stack buffer.
const SMALL_FRAME: usize = 512;

/// With few connections, epoll is still asked every this many passes (new connections,
/// writable sockets).
const POLL_EVERY: usize = 64;

// SAFETY: used only under the engine lock.
unsafe impl Send for TcpTransport {}

impl TcpTransport {
    /// Binds the listening socket on `ip` (any free port). Peers are known later (`connect_to`).
    pub fn listen(me: usize, size: usize, ip: std::net::Ipv4Addr) -> Result<TcpTransport, String> {
        let poll = Poll::new().map_err(|e| format!("cannot create an epoll instance: {e}"))?;
        let mut listener = TcpListener::bind(SocketAddr::from((ip, 0))).map_err(|e| format!("cannot listen on {ip} (TCP): {e}; pick another interface with OXMPI_TCP_IF"))?;
        let local = match listener.local_addr() {
            Ok(SocketAddr::V4(a)) => a,
            other => return Err(format!("unexpected listening address {other:?}")),
        };
        poll.registry().register(&mut listener, LISTENER, Interest::READABLE).map_err(|e| format!("epoll registration failed: {e}"))?;
        // SAFETY: eventfd(2) returns a new descriptor or -1; we own it from here on.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(format!("cannot create an eventfd: {}", std::io::Error::last_os_error()));
        }
        // SAFETY: `fd` is a fresh descriptor nobody else owns.
        let wake_fd = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        let cfg = crate::config::config();
        let max_payload = cfg.get("TCP_CHUNK").clamp(4096, 64 << 20);
        Ok(TcpTransport {
            me,
            size,
            secret: Vec::new(),
            job: 0,
            foreign: HashMap::new(),
            foreign_ids: Vec::new(),
            foreign_secrets: Vec::new(),
            grown: false,
            poll,
            events: Events::with_capacity(256),
            wake_fd,
            listener,
            local,
            cards: vec![None; size],
            peers: (0..size).map(|_| Peer::Idle).collect(),
            up: Vec::new(),
            cursor: 0,
            connecting: Vec::new(),
            accepting: Vec::new(),
            listener_ready: true,
            eager_max: cfg.get("TCP_EAGER_MAX").min(max_payload),
            max_payload,
            chunk: if ip.is_loopback() { max_payload } else { cfg.get("TCP_NET_CHUNK").clamp(4096, max_payload) },
            direct_min: match cfg.get("TCP_DIRECT_MIN") {
                0 => usize::MAX,
                n => n,
            },
            refused: 0,
            verbose: cfg.get("VERBOSE") != 0,
            sleepers: 0,
            passes: 0,
            poll_peers: cfg.get("TCP_POLL_PEERS"),
            sockbuf: cfg.get("TCP_SOCKBUF"),
            congestion: pick_congestion(&std::env::var("OXMPI_TCP_CONGESTION").unwrap_or_else(|_| "reno".into())),
        })
    }

    /// Where this rank listens.
    pub fn local_addr(&self) -> SocketAddrV4 {
        self.local
    }

    /// The congestion control of this rank's connections, for the verbose report.
    pub fn congestion(&self) -> &str {
        self.congestion.as_deref().unwrap_or("the system's")
    }

    /// The job's secret, checked in every handshake.
    pub fn set_secret(&mut self, secret: &[u8]) {
        self.secret = secret.to_vec();
    }

    /// Our job's identity (`dpm::job_uid`).
    pub fn set_job(&mut self, job: u64) {
        self.job = job;
    }

    /// Rank `peer` is reached over TCP at `card`.
    pub fn set_card(&mut self, peer: usize, card: Card) {
        self.cards[peer] = Some(card);
    }

    /// Peers known so far (our job's ranks, then other jobs' processes).
    pub fn peer_count(&self) -> usize {
        self.peers.len()
    }

    /// Whether peers were added since the last call.
    #[inline]
    pub fn take_grown(&mut self) -> bool {
        std::mem::take(&mut self.grown)
    }

    /// The peer index of rank `rank` of job `job` (another job's process), added if new:
    /// reached at `card` with `secret` in our hello. A process whose hello came first is
    /// known without a card until now.
    pub fn add_peer(&mut self, job: u64, rank: u32, card: Option<Card>, secret: &[u8]) -> usize {
        if let Some(&p) = self.foreign.get(&(job, rank)) {
            let i = p - self.size;
            if card.is_some() {
                self.cards[p] = card;
            }
            if self.foreign_secrets[i].is_empty() {
                self.foreign_secrets[i] = secret.to_vec();
            }
            return p;
        }
        let p = self.peers.len();
        self.peers.push(Peer::Idle);
        self.cards.push(card);
        self.foreign.insert((job, rank), p);
        self.foreign_ids.push((job, rank));
        self.foreign_secrets.push(secret.to_vec());
        self.grown = true;
        p
    }

    /// The (job, rank) of peer `peer` of another job.
    pub fn foreign_id(&self, peer: usize) -> (u64, u32) {
        self.foreign_ids[peer - self.size]
    }

    /// The peer index of process (job, rank) of another job, if known.
    pub fn foreign_peer(&self, id: (u64, u32)) -> Option<usize> {
        self.foreign.get(&id).copied()
    }

    /// A peer's (job, rank), which orders the two ends of a pair.
    fn id_of(&self, peer: usize) -> (u64, u32) {
        if peer < self.size {
            (self.job, peer as u32)
        } else {
            self.foreign_ids[peer - self.size]
        }
    }

    /// How a peer is named in messages.
    fn name_of(&self, peer: usize) -> String {
        if peer < self.size {
            format!("rank {peer}")
        } else {
            let (job, rank) = self.foreign_ids[peer - self.size];
            format!("rank {rank} of job {job:016x} (another job, connected dynamically)")
        }
    }

    fn host_of(&self, peer: usize) -> String {
        self.cards[peer].as_ref().map_or_else(|| "?".into(), |c| format!("{} ({})", c.host, c.addr))
    }

    /// The stream from `peer` ended: fatal for a rank of our job; a process of another job
    /// just ended (its connection is dropped; sending to it later is the failure).
    fn closed_by(&mut self, peer: usize, e: Option<&std::io::Error>) {
        if peer < self.size {
            self.lost(peer, e)
        }
        if let Peer::Up(mut c) = std::mem::replace(&mut self.peers[peer], Peer::Gone) {
            let _ = self.poll.registry().deregister(&mut c.stream);
        }
        self.up.retain(|&p| p != peer);
    }

    fn lost(&self, peer: usize, e: Option<&std::io::Error>) -> ! {
        let why = match e {
            None => "closed its connection".to_string(),
            Some(e) => format!("connection failed: {e}"),
        };
        crate::say!("OxMPI fatal error: {} on {}: TCP {why}; that process exited or crashed, or the network failed", self.name_of(peer), self.host_of(peer));
        // The launcher is about to end the job for the rank that died (it saw the death
        // first): give it a moment to report the real cause before this rank's own abort
        // adds a second one.
        std::thread::sleep(Duration::from_millis(300));
        std::process::abort()
    }

    fn start_connect(&mut self, peer: usize) {
        let Some(card) = self.cards[peer].clone() else { fatal(&format!("no TCP address for {}", self.name_of(peer))) };
        let mut stream = TcpStream::connect(SocketAddr::V4(card.addr)).unwrap_or_else(|e| fatal(&format!("cannot connect to {} at {}: {e}", self.name_of(peer), self.host_of(peer))));
        tune_socket(&stream, self.sockbuf, self.congestion.as_deref());
        if let Err(e) = self.poll.registry().register(&mut stream, Token(PEER_BASE + peer), Interest::READABLE | Interest::WRITABLE) {
            fatal(&format!("epoll registration failed: {e}"));
        }
        let mut c = Conn::new(stream);
        let secret = if peer < self.size { self.secret.clone() } else { self.foreign_secrets[peer - self.size].clone() };
        c.tx = handshake::encode_hello(&Hello { rank: self.me as u32, size: self.size as u32, job: self.job, secret });
        self.peers[peer] = Peer::Connecting(c);
        self.connecting.push(peer);
    }

    fn rx_cap(&self) -> usize {
        PREFIX_LEN + self.max_payload + 64 * 1024
    }

    /// A connecting peer's progress: send the hello, read the ack.
    fn step_connecting(&mut self, peer: usize) {
        let cap = self.rx_cap();
        let Peer::Connecting(c) = &mut self.peers[peer] else { return };
        if let Err(e) = c.flush() {
            fatal(&format!("cannot connect to rank {peer} at {}: {e}", self.host_of(peer)));
        }
        if !c.readable {
            return;
        }
        c.fill(cap);
        if c.end - c.start < handshake::ACK_LEN {
            if c.eof {
                let why = c.error.as_ref().map_or_else(|| "connection closed".to_string(), |e| e.to_string());
                fatal(&format!("rank {peer} at {} dropped our TCP connection during the handshake: {why}", self.host_of(peer)));
            }
            return;
        }
        let ack: [u8; handshake::ACK_LEN] = c.rx[c.start..c.start + handshake::ACK_LEN].try_into().unwrap();
        c.start += handshake::ACK_LEN;
        self.connecting.retain(|&p| p != peer);
        match handshake::decode_ack(&ack) {
            Some(Verdict::Accepted) => {
                let Peer::Connecting(c) = std::mem::replace(&mut self.peers[peer], Peer::Idle) else { unreachable!() };
                self.peers[peer] = Peer::Up(c);
                self.up.push(peer);
            }
            Some(Verdict::Duplicate) => {
                if let Peer::Connecting(mut c) = std::mem::replace(&mut self.peers[peer], Peer::Awaiting) {
                    let _ = self.poll.registry().deregister(&mut c.stream);
                }
            }
            None => fatal(&format!("rank {peer}'s address {} answered our TCP handshake with something that is not OxMPI", self.host_of(peer))),
        }
    }

    fn accept_all(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((mut stream, from)) => {
                    let slot = self.accepting.iter().position(Option::is_none).unwrap_or_else(|| {
                        self.accepting.push(None);
                        self.accepting.len() - 1
                    });
                    if self.poll.registry().register(&mut stream, Token(ACCEPT_BASE + slot), Interest::READABLE).is_err() {
                        continue;
                    }
                    tune_socket(&stream, self.sockbuf, self.congestion.as_deref());
                    self.accepting[slot] = Some(Accepting { stream, from, buf: Vec::new(), ready: true });
                    self.step_accepting(slot);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    self.listener_ready = false;
                    return;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // Out of descriptors and the like: try again on the next pass.
                Err(_) => return,
            }
        }
    }

    fn refuse(&mut self, slot: usize, why: &str) {
        if let Some(mut a) = self.accepting[slot].take() {
            let _ = self.poll.registry().deregister(&mut a.stream);
            self.refused += 1;
            if self.verbose {
                crate::say!("OxMPI rank {}: refused a TCP connection from {}: {why}", self.me, a.from);
            }
        }
    }

    /// An accepted connection's progress: read its hello, check it, keep or refuse it.
    fn step_accepting(&mut self, slot: usize) {
        let Some(a) = self.accepting[slot].as_mut() else { return };
        let mut chunk = [0u8; 128];
        let mut closed = false;
        loop {
            match (&a.stream).read(&mut chunk) {
                Ok(0) => {
                    closed = true;
                    break;
                }
                Ok(n) => a.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    a.ready = false;
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return self.refuse(slot, &e.to_string()),
            }
            if a.buf.len() > 256 {
                break;
            }
        }
        let (hello, used) = match handshake::decode_hello(&a.buf) {
            Ok(Some(h)) => h,
            // Also what a rank's connection attempt looks like when it dropped it on
            // accepting ours before its connect completed (simultaneous connects).
            Ok(None) if closed => return self.refuse(slot, "closed before its handshake (as an attempt dropped in a simultaneous connect also is)"),
            Ok(None) => return,
            Err(r) => return self.refuse(slot, &r.to_string()),
        };
        if closed {
            // A rank that connected to us at the same time as we to it, and dropped its
            // attempt on seeing ours (see the module doc): nothing to answer.
            if let Some(mut a) = self.accepting[slot].take() {
                let _ = self.poll.registry().deregister(&mut a.stream);
            }
            return;
        }
        let caller = match handshake::check_hello(&hello, &self.secret, self.job, self.size, self.me) {
            Ok(c) => c,
            Err(r) => return self.refuse(slot, &r.to_string()),
        };
        if a.buf.len() > used {
            return self.refuse(slot, "sent data before the handshake's answer");
        }
        let peer = match caller {
            Caller::Ours(rank) => rank,
            Caller::Foreign { job, rank } => self.add_peer(job, rank, None, &[]),
        };
        let lower = self.id_of(peer) < (self.job, self.me as u32);
        let verdict = match &self.peers[peer] {
            Peer::Idle | Peer::Awaiting => Verdict::Accepted,
            Peer::Connecting(_) if lower => Verdict::Accepted,
            Peer::Connecting(_) => Verdict::Duplicate,
            Peer::Up(_) | Peer::Gone => return self.refuse(slot, &format!("{} is connected already or has ended", self.name_of(peer))),
        };
        let Accepting { mut stream, .. } = self.accepting[slot].take().unwrap();
        if verdict == Verdict::Duplicate {
            // Our own connection to the lower rank wins; it will drop its attempt when it
            // sees our hello. Best effort: the ack fits any fresh socket buffer.
            // SAFETY: a 12-byte send from a live array on our socket.
            unsafe {
                let ack = handshake::encode_ack(Verdict::Duplicate);
                libc::send(stream.as_raw_fd(), ack.as_ptr() as *const libc::c_void, ack.len(), libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT);
            }
            let _ = self.poll.registry().deregister(&mut stream);
            return;
        }
        if let Err(e) = self.poll.registry().reregister(&mut stream, Token(PEER_BASE + peer), Interest::READABLE | Interest::WRITABLE) {
            fatal(&format!("epoll registration failed: {e}"));
        }
        if let Peer::Connecting(mut ours) = std::mem::replace(&mut self.peers[peer], Peer::Idle) {
            let _ = self.poll.registry().deregister(&mut ours.stream);
            self.connecting.retain(|&p| p != peer);
        }
        let mut c = Conn::new(stream);
        c.tx.extend_from_slice(&handshake::encode_ack(Verdict::Accepted));
        if let Err(e) = c.flush() {
            self.lost(peer, Some(&e));
        }
        self.peers[peer] = Peer::Up(c);
        self.up.push(peer);
    }

    /// The connection to `peer` if it takes a frame now: connected (the first send opens
    /// it) and no earlier frame still waiting for socket room.
    fn sendable(&mut self, peer: usize) -> Option<&mut Conn> {
        match &mut self.peers[peer] {
            Peer::Idle => {
                self.start_connect(peer);
                return None;
            }
            Peer::Gone => fatal(&format!("cannot send to {}: it has ended (closed its connection)", self.name_of(peer))),
            Peer::Up(c) if c.tx_pending() => {
                if let Err(e) = c.flush() {
                    self.lost(peer, Some(&e));
                }
            }
            _ => {}
        }
        match &mut self.peers[peer] {
            Peer::Up(c) if !c.tx_pending() => Some(c),
            _ => None,
        }
    }

    /// The next complete frame of any connection, in turn (see `recv_placed`).
    fn next_frame(&mut self, place: &mut dyn FnMut(&[u8; HEADER_LEN], usize) -> Option<*mut u8>) -> Option<Incoming> {
        let n = self.up.len();
        let cap = self.rx_cap();
        if self.cursor >= n {
            // (`up` shrank: a process of another job ended.)
            self.cursor = 0;
        }
        for i in 0..n {
            let idx = if self.cursor + i >= n { self.cursor + i - n } else { self.cursor + i };
            let p = self.up[idx];
            let Peer::Up(c) = &mut self.peers[p] else { continue };
            if c.direct.is_some() {
                if let Some((header, payload, len)) = c.advance_direct() {
                    self.cursor = if idx + 1 == n { 0 } else { idx + 1 };
                    return Some(Incoming { via: Via::Tcp, peer: p, header, payload, len });
                }
                if c.eof {
                    let e = c.error.take();
                    self.closed_by(p, e.as_ref());
                    return None;
                }
                continue;
            }
            loop {
                match frame::decode(&c.rx[c.start..c.end], self.max_payload) {
                    Err(e) => fatal(&format!("from rank {p} on {}: {e}", self.host_of(p))),
                    Ok(Some(f)) => {
                        c.held = f.total();
                        self.cursor = if idx + 1 == n { 0 } else { idx + 1 };
                        let base = c.rx[c.start..].as_ptr();
                        // SAFETY: the frame lies in rx[start..end] (decode checked its length).
                        let payload = unsafe { base.add(PREFIX_LEN) };
                        let header = frame::header_of(&c.rx[c.start..]) as *const [u8; HEADER_LEN];
                        return Some(Incoming { via: Via::Tcp, peer: p, header, payload, len: f.payload_len });
                    }
                    Ok(None) if c.try_direct(self.direct_min, place) => {
                        if let Some((header, payload, len)) = c.advance_direct() {
                            self.cursor = if idx + 1 == n { 0 } else { idx + 1 };
                            return Some(Incoming { via: Via::Tcp, peer: p, header, payload, len });
                        }
                        break;
                    }
                    Ok(None) if c.readable => {
                        let before = c.end - c.start;
                        c.fill(cap);
                        if c.end - c.start == before && !c.eof {
                            break;
                        }
                    }
                    Ok(None) if c.eof => {
                        let e = c.error.take();
                        self.closed_by(p, e.as_ref());
                        return None;
                    }
                    Ok(None) => break,
                }
            }
        }
        None
    }

    /// Takes epoll's ready events and marks what they concern.
    fn poll_events(&mut self) {
        if let Err(e) = self.poll.poll(&mut self.events, Some(Duration::ZERO)) {
            if e.kind() != std::io::ErrorKind::Interrupted {
                fatal(&format!("epoll_wait failed: {e}"));
            }
        }
        let mut any = false;
        for ev in self.events.iter() {
            any = true;
            match ev.token() {
                LISTENER => self.listener_ready = true,
                Token(t) if t >= ACCEPT_BASE => {
                    if let Some(Some(a)) = self.accepting.get_mut(t - ACCEPT_BASE) {
                        a.ready = true;
                    }
                }
                Token(t) => {
                    if let Some(Peer::Up(c) | Peer::Connecting(c)) = self.peers.get_mut(t - PEER_BASE) {
                        if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                            c.readable = true;
                        }
                        if ev.is_read_closed() || ev.is_error() {
                            c.hup = true;
                        }
                    }
                }
            }
        }
        if any && self.sleepers > 0 {
            // Another thread sleeps; the events we took may be its news.
            self.wake_sleepers();
        }
    }

    /// Accepts, handshakes and flushes: the connection work of a progress pass.
    fn step_connections(&mut self) {
        if self.listener_ready {
            self.accept_all();
        }
        for slot in 0..self.accepting.len() {
            if self.accepting[slot].as_ref().is_some_and(|a| a.ready) {
                self.step_accepting(slot);
            }
        }
        let mut i = 0;
        while i < self.connecting.len() {
            let before = self.connecting.len();
            self.step_connecting(self.connecting[i]);
            if self.connecting.len() == before {
                i += 1;
            }
        }
        let mut k = 0;
        while k < self.up.len() {
            let p = self.up[k];
            k += 1;
            if let Peer::Up(c) = &mut self.peers[p] {
                if c.tx_pending() {
                    if let Err(e) = c.flush() {
                        // (A process of another job that ended: dropped, `k` stays right.)
                        self.closed_by(p, Some(&e));
                        k -= 1;
                    }
                }
            }
        }
    }

    /// Called (under the engine lock) when a wait that slept returns.
    pub fn after_sleep(&mut self) {
        self.sleepers = self.sleepers.saturating_sub(1);
        if self.sleepers == 0 {
            let mut v = 0u64;
            // SAFETY: an 8-byte read from our nonblocking eventfd into a live u64 (clears it).
            unsafe { libc::read(self.wake_fd.as_raw_fd(), &mut v as *mut u64 as *mut libc::c_void, 8) };
        }
    }

    /// One frame with one `sendmsg` (header and payload together); what the socket does
    /// not take now is copied to the connection's buffer, or with `lend` only its prefix
    /// is, and the rest of the payload is sent later from the caller's buffer.
    ///
    /// # Safety
    /// `payload` must be valid for reads of `len` bytes (with `lend`: until the connection
    /// holds none of it, `holds_lent`).
    unsafe fn send_frame(&mut self, peer: usize, header: &[u8; HEADER_LEN], payload: *const u8, len: usize, lend: bool) -> bool {
        debug_assert!(len <= self.max_payload);
        let Some(c) = self.sendable(peer) else { return false };
        let prefix = frame::encode_prefix(header, len);
        let iov = [
            libc::iovec { iov_base: prefix.as_ptr() as *mut libc::c_void, iov_len: PREFIX_LEN },
            libc::iovec { iov_base: payload as *mut libc::c_void, iov_len: len },
        ];
        // SAFETY: a zeroed msghdr is valid; it points at the two live iovecs above.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = iov.as_ptr() as *mut libc::iovec;
        msg.msg_iovlen = if len == 0 { 1 } else { 2 };
        let total = PREFIX_LEN + len;
        // A small frame goes out of one stack buffer with send(2): the kernel then walks one
        // segment instead of two.
        // (Not zeroed: only its first `total` bytes are written and sent.)
        let mut small = std::mem::MaybeUninit::<[u8; SMALL_FRAME]>::uninit();
        let small_ptr = small.as_mut_ptr() as *mut u8;
        if total <= SMALL_FRAME {
            // SAFETY: both copies land in `small` (total ≤ SMALL_FRAME); the payload is valid
            // for `len` bytes (trait contract).
            unsafe {
                std::ptr::copy_nonoverlapping(prefix.as_ptr(), small_ptr, PREFIX_LEN);
                if len > 0 {
                    // (A payload of 0 bytes may be a null pointer.)
                    std::ptr::copy_nonoverlapping(payload, small_ptr.add(PREFIX_LEN), len);
                }
            }
        }
        let sent = loop {
            // SAFETY: the iovecs cover the prefix and the caller's payload (valid for `len`
            // bytes per the trait contract), or `small` holds both; MSG_NOSIGNAL as in
            // `Conn::flush`.
            let n = unsafe {
                if total <= SMALL_FRAME {
                    libc::send(c.stream.as_raw_fd(), small_ptr as *const libc::c_void, total, libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT)
                } else {
                    libc::sendmsg(c.stream.as_raw_fd(), &msg, libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT)
                }
            };
            if n >= 0 {
                break n as usize;
            }
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EAGAIN) => break 0,
                Some(libc::EINTR) => continue,
                _ => self.lost(peer, Some(&e)),
            }
        };
        if sent < total {
            if lend {
                // The rest goes from the caller's buffer, which outlives it (see above).
                let from = sent.saturating_sub(PREFIX_LEN);
                c.tx.extend_from_slice(&prefix[sent.min(PREFIX_LEN)..]);
                // SAFETY: from < len when sent < total.
                c.lent = unsafe { payload.add(from) };
                c.lent_len = len - from;
            // Keep the rest of this frame: the caller's buffer may be reused once we return.
            } else if sent < PREFIX_LEN {
                c.tx.extend_from_slice(&prefix[sent..]);
                // A frame without payload may pass a null pointer, which no slice may hold.
                if len > 0 {
                    // SAFETY: the payload is valid for `len` bytes (trait contract).
                    c.tx.extend_from_slice(unsafe { std::slice::from_raw_parts(payload, len) });
                }
            } else {
                // SAFETY: as above; sent - PREFIX_LEN < len.
                c.tx.extend_from_slice(unsafe { std::slice::from_raw_parts(payload.add(sent - PREFIX_LEN), total - sent) });
            }
        }
        true
    }

    /// Wakes the waits of this process that sleep (other threads).
    fn wake_sleepers(&self) {
        let one = 1u64;
        // SAFETY: an 8-byte write of a live u64 to our eventfd.
        unsafe { libc::write(self.wake_fd.as_raw_fd(), &one as *const u64 as *const libc::c_void, 8) };
    }
}

impl Transport for TcpTransport {
    fn max_payload(&self) -> usize {
        self.max_payload
    }

    fn eager_max(&self) -> usize {
        self.eager_max
    }

    fn chunk(&self, _peer: usize) -> usize {
        self.chunk
    }

    unsafe fn try_send(&mut self, peer: usize, header: &[u8; HEADER_LEN], payload: *const u8, len: usize) -> bool {
        // SAFETY: forwarded caller contract.
        unsafe { self.send_frame(peer, header, payload, len, false) }
    }

    unsafe fn try_send_lent(&mut self, peer: usize, header: &[u8; HEADER_LEN], payload: *const u8, len: usize) -> bool {
        // SAFETY: forwarded caller contract.
        unsafe { self.send_frame(peer, header, payload, len, true) }
    }

    fn holds_lent(&self, peer: usize) -> bool {
        matches!(&self.peers[peer], Peer::Up(c) if c.lent_len > 0)
    }

    fn try_send_with(&mut self, peer: usize, header: &[u8; HEADER_LEN], len: usize, fill: &mut dyn FnMut(&mut [u8])) -> bool {
        let Some(c) = self.sendable(peer) else { return false };
        c.tx.extend_from_slice(&frame::encode_prefix(header, len));
        let at = c.tx.len();
        c.tx.resize(at + len, 0);
        fill(&mut c.tx[at..]);
        if let Err(e) = c.flush() {
            self.lost(peer, Some(&e));
        }
        true
    }

    fn progress(&mut self) {
        // With few connections and nothing being set up, reading each socket is cheaper
        // than asking epoll first (one syscall per pass instead of two when a message is
        // there): epoll is then asked only every POLL_EVERY passes (and before a sleep).
        self.passes = self.passes.wrapping_add(1);
        // Not during bulk transfers (output pending, a frame half in): there the reads
        // come from epoll's edges, which measured faster (bw 1 MiB 3.4-4.3 vs 5.3-7.8 GB/s).
        let bulk = |c: &Conn| c.tx_pending() || c.direct.is_some() || c.end > c.start;
        let direct = self.up.len() <= self.poll_peers
            && self.connecting.is_empty()
            && !self.accepting.iter().any(Option::is_some)
            && self.up.iter().all(|&p| !matches!(&self.peers[p], Peer::Up(c) if bulk(c)));
        if direct {
            for &p in &self.up {
                if let Peer::Up(c) = &mut self.peers[p] {
                    c.readable = true;
                }
            }
        }
        if !direct || self.passes.is_multiple_of(POLL_EVERY) {
            self.poll_events();
        }
        self.step_connections();
    }

    fn recv_next(&mut self) -> Option<Incoming> {
        self.recv_placed(&mut |_, _| None)
    }

    fn recv_placed(&mut self, place: &mut dyn FnMut(&[u8; HEADER_LEN], usize) -> Option<*mut u8>) -> Option<Incoming> {
        let m = self.next_frame(place);
        if m.is_some() && self.sleepers > 0 {
            // Another thread sleeps: this message may complete its request.
            self.wake_sleepers();
        }
        m
    }

    fn release(&mut self, peer: usize) {
        if let Peer::Up(c) = &mut self.peers[peer] {
            if c.direct.take().is_some() {
                return;
            }
            c.start += c.held;
            c.held = 0;
            if c.start == c.end {
                c.start = 0;
                c.end = 0;
            }
        }
    }

    fn wake(&mut self, _peer: usize) {
        // The peer's kernel wakes it: a socket became readable.
    }

    fn wake_self(&mut self) {
        if self.sleepers > 0 {
            self.wake_sleepers();
        }
    }

    fn streams(&self) -> bool {
        true
    }

    fn has_pending_output(&self) -> bool {
        !self.connecting.is_empty() || self.up.iter().any(|&p| matches!(&self.peers[p], Peer::Up(c) if c.tx_pending()))
    }

    fn prepare_sleep(&mut self) -> Option<SleepToken> {
        // Events left in epoll (a pass may skip it) would end the sleep at once.
        self.poll_events();
        let busy = self.listener_ready
            || self.accepting.iter().flatten().any(|a| a.ready)
            || self.peers.iter().any(|p| match p {
                Peer::Up(c) => c.readable || c.direct.as_ref().is_some_and(|d| d.got == d.len) || frame::decode(&c.rx[c.start..c.end], self.max_payload).map_or(true, |f| f.is_some()),
                Peer::Connecting(c) => c.readable,
                _ => false,
            });
        if busy {
            return None;
        }
        self.sleepers += 1;
        Some(SleepToken::Epoll { epoll: self.poll.as_raw_fd(), wake: self.wake_fd.as_raw_fd() })
    }

    fn end_sleep(&mut self) {}
}

impl Drop for TcpTransport {
    fn drop(&mut self) {
        if self.verbose && self.refused > 0 {
            crate::say!("OxMPI rank {}: refused {} TCP connection(s) at the handshake", self.me, self.refused);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The congestion control a socket runs, as the kernel reports it.
    fn congestion_of(stream: &TcpStream) -> String {
        let mut name = [0u8; 16];
        let mut len = name.len() as libc::socklen_t;
        // SAFETY: getsockopt on a live socket into a buffer of `len` bytes.
        let rc = unsafe { libc::getsockopt(stream.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_CONGESTION, name.as_mut_ptr() as *mut libc::c_void, &mut len) };
        assert_eq!(rc, 0, "getsockopt(TCP_CONGESTION): {}", std::io::Error::last_os_error());
        String::from_utf8_lossy(&name[..len as usize]).trim_end_matches('\0').to_string()
    }

    /// `OXMPI_TCP_CONGESTION`: the first usable name of the list is picked and set on the
    /// connection; `system`, an empty list or only unknown names keep the default. Reno is
    /// always allowed to every process (the kernel's built-in fallback).
    #[test]
    fn congestion_control_is_chosen_and_set() {
        assert_eq!(pick_congestion("no-such-algorithm,reno,cubic").as_deref(), Some("reno"));
        assert_eq!(pick_congestion(" reno ").as_deref(), Some("reno"));
        assert_eq!(pick_congestion("system"), None);
        assert_eq!(pick_congestion(""), None);
        assert_eq!(pick_congestion("no-such-algorithm"), None);

        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_server, _) = listener.accept().unwrap();
        let default = congestion_of(&client);
        tune_socket(&client, 0, None);
        assert_eq!(congestion_of(&client), default);
        tune_socket(&client, 0, Some("reno"));
        assert_eq!(congestion_of(&client), "reno");
        assert!(client.nodelay().unwrap());
    }
}
