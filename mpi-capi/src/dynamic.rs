//! Dynamic processes in the C API: ports (`MPI_Open_port`, `MPI_Close_port`),
//! `MPI_Comm_accept` / `MPI_Comm_connect`, `MPI_Comm_join`, `MPI_Comm_spawn(_multiple)` and
//! `MPI_Comm_get_parent`, and the name service (`MPI_Publish_name` and relatives). The
//! engine side, how processes of two jobs reach each other, is `mpi_core::dpm`; how a
//! spawned job is started, `mpi_core::spawn`; the design, `docs/dynamic.md`.
//!
//! Connecting two groups, once each side's root knows the other root (`bridge`):
//! 1. every member of each group starts its TCP transport and the group allgathers its
//!    members' cards;
//! 2. the roots swap their groups' sizes and cards on the dynamic-process context;
//! 3. each root broadcasts the other group's cards (or a failure) to its group, whose
//!    members register them as peers;
//! 4. the context agreement of `MPI_Intercomm_create` (local ANDs, the roots combine).
//!
//! How the roots find each other: `MPI_Comm_connect`'s root sends a request, its card and a
//! fresh tag for the roots' traffic, to the port's owner, tagged with the port's number;
//! `MPI_Comm_accept`'s root receives the next request on its port (any sender).
//! `MPI_Comm_join`'s two processes swap their cards over the program's socket and derive
//! the tag from both.

use crate::abi::*;
use crate::comm::{agree, allgather, bcast, index_of, install_derived, local_view, new_comm, sendrecv};
use crate::errors::raise;
use crate::handles::comm_index;
use crate::p2p_args::{comm_of, ArgError};
use crate::requests::{finish, wait_request};
use mpi_core::agreement::{Agreement, LeaderLink};
use mpi_core::coll::{CollComm, Schedule, Slice};
use mpi_core::comm::{slot_ctx, Comm, SESSION_SLOT};
use mpi_core::dpm::{self, Port, ProcCard, CARD_WORDS, PORT_TAG_BASE};
use mpi_core::matching::ANY_SOURCE;
use mpi_core::request::RawBuf;
use mpi_core::runtime;
use mpi_core::spawn as dpm_spawn;
use mpi_core::transport::wireup::hostname as this_host;
use std::ffi::CStr;
use std::io::{Read, Write};
use std::os::raw::{c_char, c_int};
use std::sync::Arc;

/// Context of connect requests (point-to-point, so `MPI_Comm_accept` can take any sender):
/// the sessions' slot's, which nothing else uses.
fn request_ctx() -> u32 {
    slot_ctx(SESSION_SLOT)
}

/// Context of the roots' exchanges (collective schedules): the sessions' slot's, with tags
/// above every tag the sessions' constructors use (`BRIDGE_TAG`).
fn bridge_ctx() -> u32 {
    slot_ctx(SESSION_SLOT) + 1
}

/// The roots' exchanges of one connection use `BRIDGE_TAG | t` (t < 2^28) and its context
/// agreement `BRIDGE_TAG | AGREE_TAG | t`.
const BRIDGE_TAG: i32 = 0x4000_0000;
const AGREE_TAG: i32 = 0x1000_0000;
const BRIDGE_TAG_BITS: u32 = 0x0fff_ffff;

/// Words of a connect request: the connecting root's card and its tag.
const REQUEST_WORDS: usize = CARD_WORDS + 1;
/// Tag (on the requests' context) of the accepting root's answer to a request with tag t:
/// `ACK_TAG | t`, above the port numbers' tags.
const ACK_TAG: i32 = 0x6000_0000;
const _: () = assert!(ACK_TAG > PORT_TAG_BASE + dpm::PORT_NUMBERS as i32);

/// The other root and the tag of the roots' traffic, as a root knows them.
struct Link {
    remote: usize,
    tag: i32,
}

type DpmResult<T> = Result<T, ArgError>;

fn mpi_err(e: mpi_core::error::MpiError) -> ArgError {
    (e.class as c_int, e.msg)
}

/// A fresh tag for the roots of a connection.
fn fresh_tag() -> i32 {
    let mut b = [0u8; 4];
    mpi_core::bootstrap::fill_random(&mut b);
    (u32::from_le_bytes(b) & BRIDGE_TAG_BITS) as i32
}

/// The view of the other root on the roots' context: it is rank 0 of a one-member group.
fn root_view(remote: usize) -> CollComm {
    CollComm::new(bridge_ctx(), 0, Arc::new([remote]))
}

/// How a root reaches the other group's root for the card exchange: over `view` (the
/// other root is rank `peer` there), with tag `tag`.
pub(crate) struct RootLink {
    pub view: CollComm,
    pub peer: usize,
    pub tag: i32,
}

/// Steps 1–3 of the module doc on the local group of communicator `comm` (index `lidx`,
/// root `root`, this process rank `me` of `local`), the root holding `link` or why it has
/// none: the other group's processes as peer indices (registered). Also run by
/// `MPI_Intercomm_create` when its groups span jobs.
pub(crate) fn swap_cards(func: &str, comm: MPI_Comm, lidx: usize, root: usize, link: Option<DpmResult<RootLink>>) -> Result<Vec<usize>, c_int> {
    let err = |(c, m): ArgError| raise(comm, func, c, m);
    let me = runtime::with(|rt| rt.comms.get(lidx).map(|c| c.rank)).ok_or_else(|| err((MPI_ERR_COMM, "communicator freed".into())))?;
    // 1. Our group's cards; a member that cannot start TCP offers a blank one, which fails
    // the whole connection below on every member alike.
    let mine = runtime::with(dpm::my_card);
    let mut first_error = mine.as_ref().err().map(|e| (e.class as c_int, e.msg.clone()));
    let words = mine.map(|c| c.encode()).unwrap_or([0; CARD_WORDS]);
    let (cc, tg) = local_view(lidx).map_err(err)?;
    let nlocal = cc.size();
    let cards = allgather(cc, tg, &words).map_err(err)?;
    let blank = cards.chunks(CARD_WORDS).any(|c| c.iter().all(|&w| w == 0));
    // 2. The roots swap sizes, then cards; a size of 0 says "failed". The root tells its
    // group the size and, on a failure, the error class ([size, class]).
    let mut remote_n = [0u64; 2];
    let mut remote_cards: Vec<u64> = Vec::new();
    if me == root {
        match link.expect("the root has a link") {
            Ok(l) => {
                let mut n = [if blank { 0 } else { nlocal as u64 }];
                sendrecv(l.view.clone(), l.tag, l.peer, &mut n, &mut remote_n[..1]).map_err(err)?;
                if n[0] != 0 && remote_n[0] != 0 {
                    let mut out = cards.clone();
                    remote_cards = vec![0; remote_n[0] as usize * CARD_WORDS];
                    sendrecv(l.view, l.tag, l.peer, &mut out, &mut remote_cards).map_err(err)?;
                } else {
                    remote_n[0] = 0;
                }
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
        if remote_n[0] == 0 {
            remote_n[1] = first_error.as_ref().map_or(MPI_ERR_OTHER, |e| e.0) as u64;
        }
    }
    // 3. The root tells its group.
    let (cc, tg) = local_view(lidx).map_err(err)?;
    bcast(cc, tg, &mut remote_n, root).map_err(err)?;
    if remote_n[0] == 0 {
        let class = remote_n[1] as c_int;
        let (c, m) = first_error.unwrap_or((class, format!("{func} failed at the root of this group or in the other group")));
        return Err(raise(comm, func, c, m));
    }
    remote_cards.resize(remote_n[0] as usize * CARD_WORDS, 0);
    let (cc, tg) = local_view(lidx).map_err(err)?;
    bcast(cc, tg, &mut remote_cards, root).map_err(err)?;
    let mut remote = Vec::with_capacity(remote_n[0] as usize);
    for w in remote_cards.chunks(CARD_WORDS) {
        let card = ProcCard::decode(w).ok_or_else(|| err((MPI_ERR_OTHER, "a malformed process card came from the other group".into())))?;
        remote.push(runtime::with(|rt| dpm::register(rt, &card)).map_err(|e| err(mpi_err(e)))?);
    }
    Ok(remote)
}

/// Runs steps 1–4 of the module doc on communicator `comm` (root `root`), where the root
/// holds `link` (or why it has none): the new intercommunicator.
fn bridge(func: &str, comm: MPI_Comm, root: usize, link: Option<DpmResult<Link>>) -> Result<MPI_Comm, c_int> {
    let err = |(c, m): ArgError| raise(comm, func, c, m);
    let lidx = index_of(comm).map_err(err)?;
    let (local, me, eh, lctx) = runtime::with(|rt| comm_of(rt, comm).map(|c| (c.world_ranks.clone(), c.rank, c.errhandler, c.ctx))).map_err(err)?;
    let leader = link.as_ref().and_then(|l| l.as_ref().ok()).map(|l| (l.remote, l.tag));
    let link = link.map(|l| l.map(|l| RootLink { view: root_view(l.remote), peer: 0, tag: BRIDGE_TAG | l.tag }));
    let remote: Arc<[usize]> = swap_cards(func, comm, lidx, root, link)?.into();
    if remote.iter().any(|w| local.contains(w)) {
        return Err(raise(comm, func, MPI_ERR_COMM, "the two groups overlap (a process connected to itself)"));
    }
    // 4. Context agreement, the roots combining over the roots' context. The local view is
    // rotated so the root is its rank 0.
    let (cc, tg) = local_view(lidx).map_err(err)?;
    let n = cc.size();
    let rotated = CollComm::new(cc.ctx, (cc.rank + n - root) % n, (0..n).map(|i| cc.world_ranks[(i + root) % n]).collect());
    let ag = Agreement::new(Agreement::key_of(lctx, tg), rotated, tg, leader.map(|(remote, tag)| LeaderLink { view: root_view(remote), peer: 0, tag: BRIDGE_TAG | AGREE_TAG | tag }), true);
    let slot = agree(ag).map_err(err)?;
    let mut c = Comm::intra(slot_ctx(slot), me, remote, eh);
    c.local_ranks = Some(local);
    Ok(install_derived(c, lidx))
}

/// Checks the arguments every member checks alike: an intracommunicator, a valid root.
fn check_group(comm: MPI_Comm, root: c_int) -> DpmResult<usize> {
    let (inter, size) = runtime::with(|rt| comm_of(rt, comm).map(|c| (c.is_inter(), c.size())))?;
    if inter {
        return Err((MPI_ERR_COMM, "comm must be an intracommunicator".into()));
    }
    if root < 0 || root as usize >= size {
        return Err((MPI_ERR_ROOT, format!("invalid root {root} (comm has {size} ranks)")));
    }
    Ok(root as usize)
}

/// The port name argument, parsed (at the root only: the standard reads it there).
fn port_arg(port_name: *const c_char) -> DpmResult<Port> {
    if port_name.is_null() {
        return Err((MPI_ERR_ARG, "port_name is NULL".into()));
    }
    // SAFETY: the caller passes a NUL-terminated string (checked non-null).
    let name = unsafe { CStr::from_ptr(port_name) }.to_string_lossy().into_owned();
    Port::parse(&name).ok_or_else(|| (MPI_ERR_PORT, format!("\"{name}\" is not a port name of OxMPI (MPI_Open_port makes them)")))
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Open_port(_info: MPI_Info, port_name: *mut c_char) -> c_int {
    let func = "MPI_Open_port";
    require_init!(func);
    if port_name.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "port_name is NULL");
    }
    let r = runtime::with(|rt| dpm::open_port(rt, true).map(|p| p.name()));
    match r {
        Ok(name) => {
            // SAFETY: the caller passes a buffer of MPI_MAX_PORT_NAME bytes; the name is
            // shorter (about 120 bytes) and NUL-terminated here.
            unsafe { crate::errors::write_c_string(port_name, MPI_MAX_PORT_NAME as usize, &name) };
            MPI_SUCCESS
        }
        Err(e) => raise(MPI_COMM_WORLD, func, e.class as c_int, e.msg),
    }
}

/// The number of port `p` if this process opened it and has not closed it.
fn own_port(p: &Port) -> DpmResult<u32> {
    runtime::with(|rt| {
        let me = dpm::my_card(rt).map_err(mpi_err)?;
        if p.owner.job != me.job || p.owner.rank != me.rank || !rt.dpm.ports.contains(&p.tag) {
            return Err((MPI_ERR_PORT, format!("port {} is not open in this process (MPI_Open_port here, and not closed)", p.name())));
        }
        Ok(p.tag)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Close_port(port_name: *const c_char) -> c_int {
    let func = "MPI_Close_port";
    require_init!(func);
    match port_arg(port_name).and_then(|p| own_port(&p)) {
        Ok(tag) => {
            runtime::with(|rt| rt.dpm.ports.retain(|&t| t != tag));
            MPI_SUCCESS
        }
        Err((c, m)) => raise(MPI_COMM_WORLD, func, c, m),
    }
}

/// `MPI_Comm_accept`'s root: the next connect request on its port.
fn accept_request(port_name: *const c_char) -> DpmResult<Link> {
    let number = own_port(&port_arg(port_name)?)?;
    Ok(take_request(number, || false)?.expect("never given up"))
}

/// The next connect request on port `number`, the sender registered; None if `give_up`
/// became true first (the receive is then withdrawn).
fn take_request(number: u32, give_up: impl Fn() -> bool) -> DpmResult<Option<Link>> {
    let mut req = [0u64; REQUEST_WORDS];
    let Some(st) = recv_unless(&mut req, PORT_TAG_BASE + number as i32, give_up) else { return Ok(None) };
    let malformed = || (MPI_ERR_OTHER, "a malformed connect request arrived on the port".to_string());
    if st.error.is_some() || st.bytes != REQUEST_WORDS * 8 {
        return Err(malformed());
    }
    let card = ProcCard::decode(&req[..CARD_WORDS]).ok_or_else(malformed)?;
    let remote = runtime::with(|rt| dpm::register(rt, &card)).map_err(mpi_err)?;
    let tag = (req[CARD_WORDS] as u32 & BRIDGE_TAG_BITS) as i32;
    // Tell the connecting root its request was taken (it waits for this with a timeout).
    let ack = [1u64];
    let mut s = Schedule::new(CollComm::new(request_ctx(), 0, Arc::new([remote])), ACK_TAG | tag);
    s.send(0, Slice::user(ack.as_ptr() as *const u8, 8));
    crate::comm::run(s)?;
    Ok(Some(Link { remote, tag }))
}

/// Receives into `buf` on the requests' context with `tag`, from any sender; None if
/// `give_up` became true first (the receive is then withdrawn).
fn recv_unless(buf: &mut [u64], tag: i32, give_up: impl Fn() -> bool) -> Option<mpi_core::request::Status> {
    let raw = RawBuf { ptr: buf.as_mut_ptr() as *mut u8, len: buf.len() * 8 };
    let rid = runtime::with(|rt| rt.engine.post_recv(raw, request_ctx(), ANY_SOURCE, tag, MPI_COMM_SELF as i64));
    let done = |rt: &mut mpi_core::runtime::Runtime| rt.engine.reqs.get(rid).is_none_or(|r| r.is_complete());
    runtime::wait_until(|rt| done(rt) || give_up());
    let arrived = runtime::with(|rt| {
        if done(rt) {
            Some(finish(rt, rid))
        } else {
            rt.engine.cancel(rid);
            None
        }
    });
    if arrived.is_none() {
        wait_request(rid);
        runtime::with(|rt| finish(rt, rid));
    }
    arrived
}

/// How long `MPI_Comm_connect` waits for an `MPI_Comm_accept` (MPI 4.1 §11.4.3 lets it
/// time out): `OXMPI_CONNECT_TIMEOUT` seconds, else MPICH's
/// `MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT` / `..._CH3_...` (its test suite sets them), else
/// 180 s (MPICH's default).
fn connect_timeout() -> std::time::Duration {
    let secs = ["OXMPI_CONNECT_TIMEOUT", "MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT", "MPIR_CVAR_CH3_COMM_CONNECT_TIMEOUT"]
        .iter()
        .find_map(|v| std::env::var(v).ok().and_then(|s| s.trim().parse::<u64>().ok()))
        .unwrap_or(180);
    std::time::Duration::from_secs(secs)
}

/// `MPI_Comm_connect`'s root: sends a connect request to the port's owner.
fn connect_request(port_name: *const c_char) -> DpmResult<Link> {
    let port = port_arg(port_name)?;
    let me = runtime::with(dpm::my_card).map_err(mpi_err)?;
    if port.owner.job != me.job {
        // A port of another job: make sure someone listens there before the transport
        // commits to it (it treats a refused connection as a failed peer). MPI 4.1 §11.4.3
        // lets a connect to a port nobody opened fail.
        let to = std::time::Duration::from_secs(10);
        std::net::TcpStream::connect_timeout(&std::net::SocketAddr::V4(port.owner.addr), to).map_err(|e| (MPI_ERR_PORT, format!("nobody listens at port {} ({e})", port.name())))?;
    }
    let remote = runtime::with(|rt| dpm::register(rt, &port.owner)).map_err(mpi_err)?;
    let tag = fresh_tag();
    let mut req = [0u64; REQUEST_WORDS];
    req[..CARD_WORDS].copy_from_slice(&me.encode());
    req[CARD_WORDS] = tag as u64;
    let mut s = Schedule::new(CollComm::new(request_ctx(), 0, Arc::new([remote])), PORT_TAG_BASE + port.tag as i32);
    s.send(0, Slice::user(req.as_ptr() as *const u8, REQUEST_WORDS * 8));
    crate::comm::run(s)?;
    let wait = connect_timeout();
    let deadline = std::time::Instant::now() + wait;
    let mut ack = [0u64; 1];
    if recv_unless(&mut ack, ACK_TAG | tag, || std::time::Instant::now() >= deadline).is_none() {
        return Err((MPI_ERR_PORT, format!("no MPI_Comm_accept took the connection on port {} within {} s (OXMPI_CONNECT_TIMEOUT)", port.name(), wait.as_secs())));
    }
    Ok(Link { remote, tag })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_accept(port_name: *const c_char, _info: MPI_Info, root: c_int, comm: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
    let func = "MPI_Comm_accept";
    require_init!(func);
    new_comm(func, comm, newcomm, || {
        let root = check_group(comm, root).map_err(|(c, m)| raise(comm, func, c, m))?;
        let me = runtime::with(|rt| comm_of(rt, comm).map(|c| c.rank)).unwrap_or(usize::MAX);
        let link = (me == root).then(|| accept_request(port_name));
        bridge(func, comm, root, link)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_connect(port_name: *const c_char, _info: MPI_Info, root: c_int, comm: MPI_Comm, newcomm: *mut MPI_Comm) -> c_int {
    let func = "MPI_Comm_connect";
    require_init!(func);
    new_comm(func, comm, newcomm, || {
        let root = check_group(comm, root).map_err(|(c, m)| raise(comm, func, c, m))?;
        let me = runtime::with(|rt| comm_of(rt, comm).map(|c| c.rank)).unwrap_or(usize::MAX);
        let link = (me == root).then(|| connect_request(port_name));
        bridge(func, comm, root, link)
    })
}

/// `MPI_Comm_join`'s swap: our card out, the other process's in, over the program's socket.
fn join_swap(fd: c_int) -> DpmResult<Link> {
    let me = runtime::with(dpm::my_card).map_err(mpi_err)?;
    // SAFETY: the program hands us a connected socket it owns for the duration of the
    // call; ManuallyDrop keeps it open afterwards.
    let mut sock = std::mem::ManuallyDrop::new(unsafe { <std::net::TcpStream as std::os::fd::FromRawFd>::from_raw_fd(fd) });
    let out: Vec<u8> = me.encode().iter().flat_map(|w| w.to_le_bytes()).collect();
    let io = |e: std::io::Error| (MPI_ERR_ARG, format!("MPI_Comm_join: the socket {fd} failed: {e} (it must be a connected stream socket whose other end calls MPI_Comm_join too)"));
    sock.write_all(&out).map_err(io)?;
    let mut inn = vec![0u8; CARD_WORDS * 8];
    sock.read_exact(&mut inn).map_err(io)?;
    let words: Vec<u64> = inn.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
    let other = ProcCard::decode(&words).ok_or((MPI_ERR_OTHER, "MPI_Comm_join: the other end did not send an OxMPI process card".to_string()))?;
    let remote = runtime::with(|rt| dpm::register(rt, &other)).map_err(mpi_err)?;
    // The same tag on both ends: from both identities, in a fixed order.
    let (a, b) = ((me.job, me.rank), (other.job, other.rank));
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    let h = dpm::fnv1a([lo.0, lo.1 as u64, hi.0, hi.1 as u64].iter().flat_map(|x| x.to_le_bytes()));
    let tag = ((h ^ (h >> 32)) as u32 & BRIDGE_TAG_BITS) as i32;
    Ok(Link { remote, tag })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_join(fd: c_int, intercomm: *mut MPI_Comm) -> c_int {
    let func = "MPI_Comm_join";
    require_init!(func);
    new_comm(func, MPI_COMM_SELF, intercomm, || {
        if fd < 0 {
            return Err(raise(MPI_COMM_SELF, func, MPI_ERR_ARG, format!("invalid socket {fd}")));
        }
        bridge(func, MPI_COMM_SELF, 0, Some(join_swap(fd)))
    })
}

// ------------------------------------------------------------------ spawning

/// One program's arguments as the C caller gave them: `argv` ends with a NULL pointer
/// (`MPI_ARGV_NULL` is NULL itself).
///
/// # Safety
/// `argv` is NULL or a NULL-terminated array of NUL-terminated strings.
unsafe fn c_args(argv: *const *const c_char) -> Vec<String> {
    let mut v = Vec::new();
    if argv.is_null() {
        return v;
    }
    // SAFETY: per the contract, every element up to the NULL one is a C string.
    unsafe {
        let mut p = argv;
        while !(*p).is_null() {
            v.push(CStr::from_ptr(*p).to_string_lossy().into_owned());
            p = p.add(1);
        }
    }
    v
}

/// One program of a spawn from its command, arguments, count and info (the keys of
/// `spawn::SpawnApp`; others are ignored, as the standard allows).
fn spawn_app(command: String, args: Vec<String>, np: c_int, info: MPI_Info) -> DpmResult<dpm_spawn::SpawnApp> {
    if np <= 0 {
        return Err((MPI_ERR_ARG, format!("maxprocs {np}: at least one process must be started")));
    }
    if command.trim().is_empty() {
        return Err((MPI_ERR_SPAWN, "the command is empty".into()));
    }
    let mut a = dpm_spawn::SpawnApp { command, args, np: np as usize, ..Default::default() };
    if info != MPI_INFO_NULL {
        let pairs = crate::info::pairs(info).ok_or((MPI_ERR_INFO, format!("invalid info {info:#x}")))?;
        for (k, v) in pairs {
            match k.as_str() {
                "host" => a.host = Some(v),
                "hostfile" => a.hostfile = Some(v),
                "wdir" => a.wdir = Some(v),
                "path" => a.path = Some(v),
                _ => {}
            }
        }
    }
    Ok(a)
}

/// The spawning root: opens a private port, starts the nested job whose ranks connect to
/// it, and takes their request (or sees the launcher end first: the programs did not
/// start, or ended without connecting).
fn spawn_root(apps: DpmResult<Vec<dpm_spawn::SpawnApp>>) -> DpmResult<(Link, std::sync::Arc<dpm_spawn::Spawned>)> {
    let apps = apps?;
    let port = runtime::with(|rt| dpm::open_port(rt, false)).map_err(mpi_err)?;
    let child = dpm_spawn::start(&apps, &port.name()).map_err(|e| (MPI_ERR_SPAWN, e))?;
    match take_request(port.tag, || child.exit_code().is_some())? {
        Some(link) => Ok((link, child)),
        None => {
            let code = child.exit_code().unwrap_or(-1);
            let cmd = dpm_spawn::command_line(&apps).join(" ");
            Err((MPI_ERR_SPAWN, format!("the spawned processes did not connect: `mpirun {cmd}` exited with status {code} first (see its messages above)")))
        }
    }
}

/// `MPI_Comm_spawn` and `_multiple` after their C arguments: every member runs the
/// bridge with the root's link; `errcodes` (when not `MPI_ERRCODES_IGNORE`) gets one code
/// per process started.
fn spawn_common(func: &str, comm: MPI_Comm, root: c_int, apps: impl FnOnce() -> DpmResult<Vec<dpm_spawn::SpawnApp>>, errcodes: *mut c_int, total: impl Fn() -> usize) -> Result<MPI_Comm, c_int> {
    let root = check_group(comm, root).map_err(|(c, m)| raise(comm, func, c, m))?;
    let me = runtime::with(|rt| comm_of(rt, comm).map(|c| c.rank)).unwrap_or(usize::MAX);
    let mut child = None;
    let link = (me == root).then(|| {
        spawn_root(apps()).map(|(l, c)| {
            child = Some(c);
            l
        })
    });
    let r = bridge(func, comm, root, link);
    if let (Ok(_), Some(c)) = (&r, child) {
        c.connected.store(true, std::sync::atomic::Ordering::Release);
    }
    // Every member learns the outcome (mpi4py checks the codes on every rank): one code per
    // process started; after a failure the root, which alone knows how many were asked
    // for, reports each as failed.
    let codes = match &r {
        Ok(h) => runtime::with(|rt| comm_of(rt, *h).map(|c| c.size()).unwrap_or(0)),
        Err(_) if me == root => total(),
        Err(_) => 0,
    };
    if !errcodes.is_null() {
        let code = if r.is_ok() { MPI_SUCCESS } else { MPI_ERR_SPAWN };
        for i in 0..codes {
            // SAFETY: the caller passes an array of one int per process requested.
            unsafe { *errcodes.add(i) = code };
        }
    }
    r
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_spawn(command: *const c_char, argv: *mut *mut c_char, maxprocs: c_int, info: MPI_Info, root: c_int, comm: MPI_Comm, intercomm: *mut MPI_Comm, array_of_errcodes: *mut c_int) -> c_int {
    let func = "MPI_Comm_spawn";
    require_init!(func);
    new_comm(func, comm, intercomm, || {
        let apps = || {
            if command.is_null() {
                return Err((MPI_ERR_ARG, "command is NULL".into()));
            }
            // SAFETY: a NUL-terminated command and a NULL-terminated argv (C contract).
            let (cmd, args) = unsafe { (CStr::from_ptr(command).to_string_lossy().into_owned(), c_args(argv as *const *const c_char)) };
            Ok(vec![spawn_app(cmd, args, maxprocs, info)?])
        };
        spawn_common(func, comm, root, apps, array_of_errcodes, || maxprocs.max(0) as usize)
    })
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_spawn_multiple(count: c_int, array_of_commands: *mut *mut c_char, array_of_argv: *mut *mut *mut c_char, array_of_maxprocs: *const c_int, array_of_info: *const MPI_Info, root: c_int, comm: MPI_Comm, intercomm: *mut MPI_Comm, array_of_errcodes: *mut c_int) -> c_int {
    let func = "MPI_Comm_spawn_multiple";
    require_init!(func);
    new_comm(func, comm, intercomm, || {
        let apps = || {
            if count <= 0 || array_of_commands.is_null() || array_of_maxprocs.is_null() || array_of_info.is_null() {
                return Err((MPI_ERR_ARG, format!("count {count} or a NULL array of commands, maxprocs or info")));
            }
            let mut v = Vec::new();
            for i in 0..count as usize {
                // SAFETY: the C caller passes `count` commands, maxprocs and infos, and
                // argv arrays (or MPI_ARGVS_NULL, NULL) as MPI 4.1 §11.3.3 describes.
                let (cmd, args, np, info) = unsafe {
                    let c = *array_of_commands.add(i);
                    if c.is_null() {
                        return Err((MPI_ERR_ARG, format!("command {i} is NULL")));
                    }
                    let args = if array_of_argv.is_null() { Vec::new() } else { c_args(*array_of_argv.add(i) as *const *const c_char) };
                    (CStr::from_ptr(c).to_string_lossy().into_owned(), args, *array_of_maxprocs.add(i), *array_of_info.add(i))
                };
                v.push(spawn_app(cmd, args, np, info)?);
            }
            Ok(v)
        };
        let total = || {
            // SAFETY: as above (checked at the root, the only rank that writes errcodes).
            (0..count.max(0) as usize).map(|i| unsafe { *array_of_maxprocs.add(i) }.max(0) as usize).sum()
        };
        spawn_common(func, comm, root, apps, array_of_errcodes, total)
    })
}

/// In a spawned process's `MPI_Init`: connects `MPI_COMM_WORLD` to the parent's port
/// (`OXMPI_PARENT_PORT`, set by `mpi_core::spawn`); the intercommunicator becomes
/// `MPI_Comm_get_parent`'s. A failure is fatal: the parent waits for this connection.
pub fn connect_to_parent() {
    let Some(port) = std::env::var("OXMPI_PARENT_PORT").ok().filter(|p| !p.is_empty()) else { return };
    let Ok(c) = std::ffi::CString::new(port) else { return };
    let me = runtime::with(|rt| rt.comms.get(mpi_core::comm::WORLD).map(|c| c.rank)).unwrap_or(0);
    let link = (me == 0).then(|| connect_request(c.as_ptr()));
    match bridge("MPI_Init", MPI_COMM_WORLD, 0, link) {
        Ok(h) => runtime::with(|rt| {
            // Its name, as MPI 4.1 §11.8.2 gives it.
            if let Some(c) = comm_index(h).and_then(|i| rt.comms.get_mut(i)) {
                c.name = "MPI_COMM_PARENT".into();
            }
            rt.dpm.parent = Some(h);
        }),
        Err(_) => mpi_core::runtime::abort(1, "OxMPI: a spawned process could not connect to its parent"),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Comm_get_parent(parent: *mut MPI_Comm) -> c_int {
    let func = "MPI_Comm_get_parent";
    require_init!(func);
    if parent.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "parent is NULL");
    }
    // A parent communicator freed or disconnected since is MPI_COMM_NULL (MPI 4.1 §11.3.2).
    let h = runtime::with(|rt| rt.dpm.parent.filter(|&h| comm_of(rt, h).is_ok()));
    // SAFETY: checked non-null; the caller passes a pointer to an MPI_Comm.
    unsafe { *parent = h.unwrap_or(MPI_COMM_NULL) };
    MPI_SUCCESS
}

// ------------------------------------------------------------------ name service

/// Where published names live: one file per service name in `OXMPI_NAME_DIR`, default
/// `/tmp/oxmpi-names-UID` (the user's jobs on this host; a directory every host mounts
/// extends it across hosts). A file holds the publisher's host, pid and the port name, so
/// a name left by a process that ended without unpublishing it is taken over.
fn name_dir() -> std::path::PathBuf {
    match std::env::var_os("OXMPI_NAME_DIR").filter(|d| !d.is_empty()) {
        Some(d) => d.into(),
        // SAFETY: getuid cannot fail.
        None => std::env::temp_dir().join(format!("oxmpi-names-{}", unsafe { libc::getuid() })),
    }
}

/// The file of service `name` (hex, so any name is a safe file name).
fn name_file(name: &str) -> std::path::PathBuf {
    name_dir().join(name.bytes().map(|b| format!("{b:02x}")).collect::<String>())
}

/// Names this process published and has not unpublished (removed at `MPI_Finalize`).
static PUBLISHED: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());


/// A published entry: (host, pid, port name).
fn read_entry(path: &std::path::Path) -> Option<(String, i32, String)> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut l = text.lines();
    Some((l.next()?.to_string(), l.next()?.parse().ok()?, l.next()?.to_string()))
}

/// Whether the publisher of an entry still runs (on another host: assumed).
fn publisher_alive(host: &str, pid: i32) -> bool {
    // SAFETY: kill with signal 0 only checks that the process exists.
    host != this_host() || unsafe { libc::kill(pid, 0) } == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Reads the two strings of a name-service call.
///
/// # Safety
/// Both are NULL or NUL-terminated.
unsafe fn name_args(service: *const c_char, port_name: *const c_char) -> DpmResult<(String, String)> {
    if service.is_null() || port_name.is_null() {
        return Err((MPI_ERR_ARG, "service_name or port_name is NULL".into()));
    }
    // SAFETY: checked non-null; NUL-terminated per the contract.
    let (s, p) = unsafe { (CStr::from_ptr(service), CStr::from_ptr(port_name)) };
    Ok((s.to_string_lossy().into_owned(), p.to_string_lossy().into_owned()))
}

fn publish(service: &str, port: &str) -> DpmResult<()> {
    if service.is_empty() {
        return Err((MPI_ERR_SERVICE, "the service name is empty".into()));
    }
    let dir = name_dir();
    let io = |e: std::io::Error| (MPI_ERR_SERVICE, format!("cannot publish \"{service}\" in {}: {e} (OXMPI_NAME_DIR)", dir.display()));
    std::fs::create_dir_all(&dir).map_err(io)?;
    let path = name_file(service);
    if let Some((host, pid, old)) = read_entry(&path) {
        if publisher_alive(&host, pid) {
            return Err((MPI_ERR_SERVICE, format!("service \"{service}\" is published already (port {old}, by pid {pid} on {host})")));
        }
    }
    // Written aside and renamed: a lookup never reads half an entry.
    let tmp = dir.join(format!(".{}.{}", std::process::id(), path.file_name().unwrap().to_string_lossy()));
    std::fs::write(&tmp, format!("{}\n{}\n{port}\n", this_host(), std::process::id())).map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(io)?;
    PUBLISHED.lock().unwrap_or_else(|e| e.into_inner()).push(path);
    Ok(())
}

fn unpublish(service: &str, port: &str) -> DpmResult<()> {
    let path = name_file(service);
    match read_entry(&path) {
        Some((_, _, p)) if p == port => {
            let _ = std::fs::remove_file(&path);
            PUBLISHED.lock().unwrap_or_else(|e| e.into_inner()).retain(|q| q != &path);
            Ok(())
        }
        Some(_) => Err((MPI_ERR_SERVICE, format!("service \"{service}\" is published with another port"))),
        None => Err((MPI_ERR_SERVICE, format!("service \"{service}\" is not published"))),
    }
}

/// Removes the names this process left published (`MPI_Finalize`).
pub fn unpublish_all() {
    for p in PUBLISHED.lock().unwrap_or_else(|e| e.into_inner()).drain(..) {
        if read_entry(&p).is_some_and(|(h, pid, _)| h == this_host() && pid == std::process::id() as i32) {
            let _ = std::fs::remove_file(&p);
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Publish_name(service_name: *const c_char, _info: MPI_Info, port_name: *const c_char) -> c_int {
    let func = "MPI_Publish_name";
    require_init!(func);
    // SAFETY: C strings per the caller's contract (checked for NULL).
    match unsafe { name_args(service_name, port_name) }.and_then(|(s, p)| publish(&s, &p)) {
        Ok(()) => MPI_SUCCESS,
        Err((c, m)) => raise(MPI_COMM_WORLD, func, c, m),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Unpublish_name(service_name: *const c_char, _info: MPI_Info, port_name: *const c_char) -> c_int {
    let func = "MPI_Unpublish_name";
    require_init!(func);
    // SAFETY: as above.
    match unsafe { name_args(service_name, port_name) }.and_then(|(s, p)| unpublish(&s, &p)) {
        Ok(()) => MPI_SUCCESS,
        Err((c, m)) => raise(MPI_COMM_WORLD, func, c, m),
    }
}

#[no_mangle]
pub unsafe extern "C" fn PMPI_Lookup_name(service_name: *const c_char, _info: MPI_Info, port_name: *mut c_char) -> c_int {
    let func = "MPI_Lookup_name";
    require_init!(func);
    if service_name.is_null() || port_name.is_null() {
        return raise(MPI_COMM_WORLD, func, MPI_ERR_ARG, "service_name or port_name is NULL");
    }
    // SAFETY: checked non-null; NUL-terminated per the contract.
    let service = unsafe { CStr::from_ptr(service_name) }.to_string_lossy().into_owned();
    match read_entry(&name_file(&service)).filter(|(h, pid, _)| publisher_alive(h, *pid)) {
        Some((_, _, port)) => {
            // SAFETY: the caller passes MPI_MAX_PORT_NAME bytes.
            unsafe { crate::errors::write_c_string(port_name, MPI_MAX_PORT_NAME as usize, &port) };
            MPI_SUCCESS
        }
        None => raise(MPI_COMM_WORLD, func, MPI_ERR_NAME, format!("service \"{service}\" is not published")),
    }
}
