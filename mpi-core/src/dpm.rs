//! Dynamic processes: how this process meets processes of other jobs (`MPI_Comm_connect`
//! and `accept`, `MPI_Comm_join`, `MPI_Comm_spawn`'s parent and children).
//!
//! Every such peer is reached over TCP, even on this host: the shared-memory segments are
//! made per job at start-up, and TCP needs nothing set up in advance. A job whose ranks
//! all share memory starts its TCP transport on the first dynamic-process call
//! (`ensure_tcp`). A process is named by its job (`job_uid`, the same number on every rank
//! of a job) and its rank there; its card (`ProcCard`) adds where it listens and its job's
//! secret, which a hello to it must carry. Cards travel only between processes that
//! already trust each other (through a port name, which holds the accepting job's secret,
//! or a socket the program handed to `MPI_Comm_join`).
//!
//! Processes of another job get engine peer indices after our job's ranks (`register`),
//! so communicators list them like any rank.

use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::runtime::Runtime;
use crate::transport::tcp::{addr, Card, TcpTransport};
use std::net::{Ipv4Addr, SocketAddrV4};

/// Words of an encoded `ProcCard` (exchanged as `u64`s by the collective schedules).
pub const CARD_WORDS: usize = 10;
/// Longest job secret a card carries.
const CARD_SECRET_MAX: usize = (CARD_WORDS - 3) * 8;

/// A number naming a job: FNV-1a over its PMI job id, which differs between jobs (our
/// mpirun's holds its pid and a random part, Slurm's the job and step, a singleton's its
/// pid and a random part), so it needs no exchange.
pub fn job_uid(job_id: &str) -> u64 {
    fnv1a(job_id.bytes())
}

/// FNV-1a over `bytes`.
pub fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// The (job, rank) of engine peer `peer`: how processes name it to each other (peer
/// indices are private to each process).
pub fn ident(rt: &Runtime, peer: usize) -> (u64, u32) {
    let size = rt.bootstrap.size();
    match rt.engine.net.tcp.as_ref().filter(|_| peer >= size) {
        Some(t) => t.foreign_id(peer),
        None => (job_uid(rt.bootstrap.job_id()), peer as u32),
    }
}

/// The engine peer of process (job, rank), if this process knows it.
pub fn peer_of(rt: &Runtime, id: (u64, u32)) -> Option<usize> {
    if id.0 == job_uid(rt.bootstrap.job_id()) {
        return ((id.1 as usize) < rt.bootstrap.size()).then_some(id.1 as usize);
    }
    rt.engine.net.tcp.as_ref().and_then(|t| t.foreign_peer(id))
}

/// One process as another job sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcCard {
    pub job: u64,
    pub rank: u32,
    pub addr: SocketAddrV4,
    pub secret: Vec<u8>,
}

impl ProcCard {
    pub fn encode(&self) -> [u64; CARD_WORDS] {
        let mut w = [0u64; CARD_WORDS];
        w[0] = self.job;
        w[1] = self.rank as u64 | (u32::from(*self.addr.ip()) as u64) << 32;
        w[2] = self.addr.port() as u64 | (self.secret.len() as u64) << 16;
        let mut bytes = [0u8; CARD_SECRET_MAX];
        bytes[..self.secret.len()].copy_from_slice(&self.secret);
        for (i, c) in bytes.chunks(8).enumerate() {
            w[3 + i] = u64::from_le_bytes(c.try_into().unwrap());
        }
        w
    }

    pub fn decode(w: &[u64]) -> Option<ProcCard> {
        if w.len() != CARD_WORDS {
            return None;
        }
        let slen = (w[2] >> 16) as usize;
        if slen > CARD_SECRET_MAX || w[2] >> 32 != 0 {
            return None;
        }
        let bytes: Vec<u8> = w[3..].iter().flat_map(|x| x.to_le_bytes()).collect();
        let ip = Ipv4Addr::from((w[1] >> 32) as u32);
        Some(ProcCard { job: w[0], rank: w[1] as u32, addr: SocketAddrV4::new(ip, w[2] as u16), secret: bytes[..slen].to_vec() })
    }
}

/// A port name (`MPI_Open_port`): where its owner listens, who it is, which of its ports,
/// and its job's secret. `oxmpi:IP:PORT:JOB:RANK:TAG:SECRET` (hex job and secret).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Port {
    pub owner: ProcCard,
    pub tag: u32,
}

const PORT_PREFIX: &str = "oxmpi:";

impl Port {
    pub fn name(&self) -> String {
        let secret: String = self.owner.secret.iter().map(|b| format!("{b:02x}")).collect();
        format!("{PORT_PREFIX}{}:{}:{:016x}:{}:{}:{secret}", self.owner.addr.ip(), self.owner.addr.port(), self.owner.job, self.owner.rank, self.tag)
    }

    pub fn parse(name: &str) -> Option<Port> {
        let rest = name.trim().strip_prefix(PORT_PREFIX)?;
        let f: Vec<&str> = rest.split(':').collect();
        let [ip, port, job, rank, tag, secret] = f[..] else { return None };
        if secret.len() % 2 != 0 || secret.len() / 2 > CARD_SECRET_MAX {
            return None;
        }
        let secret = (0..secret.len()).step_by(2).map(|i| u8::from_str_radix(&secret[i..i + 2], 16).ok()).collect::<Option<Vec<u8>>>()?;
        let addr = SocketAddrV4::new(ip.parse().ok()?, port.parse().ok()?);
        let owner = ProcCard { job: u64::from_str_radix(job, 16).ok()?, rank: rank.parse().ok()?, addr, secret };
        Some(Port { owner, tag: tag.parse().ok()? })
    }
}

/// Tags of port traffic on `DPM_CTX`: a connect request carries its port's number here.
pub const PORT_TAG_BASE: i32 = 0x5000_0000;
/// Port numbers stay below this (the tag is `PORT_TAG_BASE + number`).
pub const PORT_NUMBERS: u32 = 0x0fff_ffff;

/// This process's dynamic-process state (in `Runtime`).
#[derive(Default)]
pub struct Dpm {
    /// Our job's secret and identity, once asked for (`identity`).
    secret: Option<Vec<u8>>,
    job: u64,
    /// Ports opened and not closed (`MPI_Open_port`), by number.
    pub ports: Vec<u32>,
    next_port: u32,
    /// The intercommunicator to the parent job (`MPI_Comm_get_parent`), as a handle of
    /// the C layer, once made.
    pub parent: Option<i32>,
}

impl Dpm {
    /// A fresh port number.
    pub fn next_port(&mut self) -> u32 {
        self.next_port = (self.next_port % PORT_NUMBERS) + 1;
        self.next_port
    }
}

/// The job's secret: the launcher's (`OXMPI_JOB_SECRET`), else the one rank 0 published at
/// start-up (`transport::wireup`).
fn job_secret(rt: &mut Runtime) -> MpiResult<Vec<u8>> {
    if let Some(s) = std::env::var("OXMPI_JOB_SECRET").ok().filter(|s| !s.is_empty()) {
        return Ok(s.into_bytes());
    }
    rt.bootstrap.get("tcp-secret").map_err(|e| MpiError::new(ErrorClass::Other, format!("cannot read the job's secret from PMI: {}", e.0)))
}

/// Our job's (identity, secret), read once.
fn identity(rt: &mut Runtime) -> MpiResult<(u64, Vec<u8>)> {
    if rt.dpm.secret.is_none() {
        let s = job_secret(rt)?;
        if s.len() > CARD_SECRET_MAX {
            return Err(MpiError::new(ErrorClass::Other, format!("OXMPI_JOB_SECRET has {} bytes; dynamic processes take at most {CARD_SECRET_MAX}", s.len())));
        }
        rt.dpm.job = job_uid(rt.bootstrap.job_id());
        rt.dpm.secret = Some(s);
    }
    Ok((rt.dpm.job, rt.dpm.secret.clone().unwrap()))
}

/// Starts the TCP transport if this process has none yet: it listens where
/// `OXMPI_TCP_IF` says, else on the first interface that is up (loopback if none is): not
/// on loopback just because every rank of the job is on this host, since processes of
/// other jobs may be elsewhere (a spawn with the `host` info key, a client on another
/// host). A connection between two processes of one host goes through the kernel's
/// loopback path whatever local address it uses.
pub fn ensure_tcp(rt: &mut Runtime) -> MpiResult<()> {
    let (job, secret) = identity(rt)?;
    if rt.engine.net.tcp.is_some() {
        return Ok(());
    }
    let spec = std::env::var("OXMPI_TCP_IF").ok();
    let fail = |e: String| MpiError::new(ErrorClass::Other, format!("dynamic processes need the TCP transport, which cannot start: {e}"));
    let (ip, _) = addr::choose(spec.as_deref(), false, &addr::interfaces()).map_err(fail)?;
    let mut t = TcpTransport::listen(rt.bootstrap.rank(), rt.bootstrap.size(), ip).map_err(fail)?;
    t.set_secret(&secret);
    t.set_job(job);
    rt.engine.add_tcp(t);
    Ok(())
}

/// A new port of this process (`MPI_Open_port`, or a spawn's private one): listed in
/// `Dpm::ports` when `listed` (only those may be accepted on or closed by name).
pub fn open_port(rt: &mut Runtime, listed: bool) -> MpiResult<Port> {
    let owner = my_card(rt)?;
    let tag = rt.dpm.next_port();
    if listed {
        rt.dpm.ports.push(tag);
    }
    Ok(Port { owner, tag })
}

/// This process's card (starting TCP if needed).
pub fn my_card(rt: &mut Runtime) -> MpiResult<ProcCard> {
    ensure_tcp(rt)?;
    let (job, secret) = identity(rt)?;
    let addr = rt.engine.net.tcp.as_ref().expect("ensure_tcp started it").local_addr();
    Ok(ProcCard { job, rank: rt.bootstrap.rank() as u32, addr, secret })
}

/// The engine peer index of the process `card` names: a rank of our job is its rank;
/// another job's process is added (once) as a TCP peer.
pub fn register(rt: &mut Runtime, card: &ProcCard) -> MpiResult<usize> {
    let (job, _) = identity(rt)?;
    if card.job == job {
        let r = card.rank as usize;
        if r >= rt.bootstrap.size() {
            return Err(MpiError::new(ErrorClass::Other, format!("a process card names rank {r} of our job of {}", rt.bootstrap.size())));
        }
        return Ok(r);
    }
    ensure_tcp(rt)?;
    let host = format!("{}", card.addr.ip());
    let tcp = rt.engine.net.tcp.as_mut().expect("ensure_tcp started it");
    let p = tcp.add_peer(card.job, card.rank, Some(Card { addr: card.addr, host }), &card.secret);
    rt.engine.grow_peers();
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_and_ports_round_trip() {
        let card = ProcCard { job: 0xdead_beef_0123_4567, rank: 7, addr: "10.1.2.3:45678".parse().unwrap(), secret: b"0123456789abcdef0123456789abcdef".to_vec() };
        assert_eq!(ProcCard::decode(&card.encode()), Some(card.clone()));
        let short = ProcCard { secret: vec![0, 255, 7], ..card.clone() };
        assert_eq!(ProcCard::decode(&short.encode()), Some(short.clone()));
        let port = Port { owner: short, tag: 42 };
        let name = port.name();
        assert!(name.len() < 256, "{name}");
        assert_eq!(Port::parse(&name), Some(port));
        assert_eq!(Port::parse("tcp://10.0.0.1:5000"), None);
        assert_eq!(Port::parse("oxmpi:1.2.3.4:5:6:7:8:abc"), None);
        assert_ne!(job_uid("kvs_1"), job_uid("kvs_2"));
        assert_eq!(job_uid("4.0"), job_uid("4.0"));
    }
}
