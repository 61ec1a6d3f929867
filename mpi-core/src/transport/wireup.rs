//! Wire-up, once at `MPI_Init`: how each peer is reached, decided from the node map PMI
//! gives (`PMI_process_mapping`), never from host names. Same node: shared memory; another
//! node: RDMA verbs when both ranks have a usable device (the plugin loads and opens one),
//! else TCP. `OXMPI_TRANSPORT=tcp|verbs` or `OXMPI_SHM=0` (TCP) put same-node peers on a
//! network transport as well, so every path runs on one machine; `OXMPI_PROCESS_MAPPING`
//! (tests) replaces the node map, so one machine can play several nodes and one job mixes
//! shm and network peers.
//!
//! Business cards, published before the first start-up fence: `tcp-card-<rank>` =
//! `ip:port host` from every rank with off-node peers (TCP is the fallback), and
//! `verbs-card-<rank>` = the plugin's card (QP numbers, LID/GID), or empty when this rank
//! cannot use verbs. A pair uses verbs only when both cards are real, so both ends agree.
//! Queue pairs are connected between the two start-up fences, so every QP is ready to
//! receive before anyone sends. The job's secret, which every TCP handshake carries, comes
//! from the launcher (`OXMPI_JOB_SECRET`); under a launcher that has none (Hydra, Slurm)
//! rank 0 draws one and publishes it in the job's KVS.

use super::shm::{ShmShape, ShmTransport};
use super::tcp::{addr, Card, TcpTransport};
use super::verbs::{Settings, VerbsTransport};
use super::{Link, Transports, Via};
use crate::bootstrap::Bootstrap;
use crate::config::config;
use crate::protocol::Route;

/// What wire-up produced.
pub struct Wiring {
    pub routes: Vec<Route>,
    pub transports: Transports,
    /// World ranks on this host (the launcher's node map, even when a test map splits
    /// it): what oversubscription and CPU binding are judged on.
    pub host_ranks: Vec<usize>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Auto,
    Shm,
    Tcp,
    Verbs,
}

fn mode() -> Result<Mode, String> {
    match std::env::var("OXMPI_TRANSPORT").unwrap_or_default().trim().to_ascii_lowercase().as_str() {
        "" | "auto" => Ok(Mode::Auto),
        "shm" => Ok(Mode::Shm),
        "tcp" => Ok(Mode::Tcp),
        "verbs" | "ib" | "rdma" => Ok(Mode::Verbs),
        other => Err(format!("OXMPI_TRANSPORT={other} is not a transport (auto, shm, tcp or verbs)")),
    }
}

/// `1,3-5` style list of ranks, for the verbose report.
fn ranges(ranks: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j + 1] == ranks[j] + 1 {
            j += 1;
        }
        out.push(if j == i { ranks[i].to_string() } else { format!("{}-{}", ranks[i], ranks[j]) });
        i = j + 1;
    }
    out.join(",")
}

/// This host's name (spaces replaced: it is a field of space-separated records).
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into our buffer.
    if unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) } != 0 {
        return "localhost".into();
    }
    let n = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..n]).replace(' ', "_")
}

/// Runs the start-up fences and builds every transport this rank needs.
pub fn wire_up(bs: &mut Bootstrap) -> Result<Wiring, String> {
    let rank = bs.rank();
    let size = bs.size();
    let mode = mode()?;
    let host_nodes = bs.node_of_ranks().to_vec();
    let nodes = match std::env::var("OXMPI_PROCESS_MAPPING") {
        Ok(m) if !m.trim().is_empty() => crate::bootstrap::parse_process_mapping(&m, size).map_err(|e| format!("OXMPI_PROCESS_MAPPING={m}: {e}"))?,
        _ => host_nodes.clone(),
    };
    let host_ranks: Vec<usize> = (0..size).filter(|&r| host_nodes[r] == host_nodes[rank]).collect();
    let shm_on = !matches!(mode, Mode::Tcp | Mode::Verbs) && config().get("SHM") != 0;
    let my_node = nodes[rank];
    let node_ranks: Vec<usize> = (0..size).filter(|&r| nodes[r] == my_node).collect();
    let shm_group: Vec<usize> = if shm_on { node_ranks.clone() } else { vec![rank] };
    let off_group: Vec<usize> = (0..size).filter(|r| !shm_group.contains(r)).collect();
    // Peers verbs is tried for: other nodes (auto), or everyone but us (forced).
    let verbs_peers: Vec<usize> = match mode {
        Mode::Verbs => off_group.clone(),
        Mode::Auto if config().get("IB") != 0 => off_group.iter().copied().filter(|&r| nodes[r] != my_node).collect(),
        _ => Vec::new(),
    };
    let tcp_peers: Vec<usize> = if matches!(mode, Mode::Shm | Mode::Verbs) { Vec::new() } else { off_group.clone() };
    // Whether any rank of the job uses TCP (every rank computes the same answer).
    let multi_node = nodes.iter().any(|&n| n != nodes[0]);
    let launcher_secret = std::env::var("OXMPI_JOB_SECRET").ok().filter(|s| !s.is_empty());

    let mut tcp = None;
    if !tcp_peers.is_empty() {
        let spec = std::env::var("OXMPI_TCP_IF").ok();
        let (ip, why) = addr::choose(spec.as_deref(), !multi_node, &addr::interfaces())?;
        let t = TcpTransport::listen(rank, size, ip)?;
        let card = Card { addr: t.local_addr(), host: hostname() };
        bs.put(&format!("tcp-card-{rank}"), card.encode().as_bytes()).map_err(|e| e.0)?;
        tcp = Some((t, why));
    }
    // Published even when no rank of the job uses TCP now: a dynamic-process call may add
    // the TCP transport later (`dpm.rs`).
    if rank == 0 && launcher_secret.is_none() {
        let mut s = [0u8; 16];
        crate::bootstrap::fill_random(&mut s);
        bs.put("tcp-secret", &s).map_err(|e| e.0)?;
    }
    // Verbs: open the device (queue pairs for every candidate peer) and publish the card;
    // an empty card says "not me" (the reason goes to the verbose report).
    let mut verbs = None;
    // What the plugin chose, or why this rank cannot use verbs.
    let mut verbs_desc = String::new();
    let mut verbs_err: Option<String> = None;
    if !verbs_peers.is_empty() {
        match Settings::from_env().and_then(|s| VerbsTransport::open(rank, size, &verbs_peers, &s)) {
            Ok(v) => {
                bs.put(&format!("verbs-card-{rank}"), &v.card()).map_err(|e| e.0)?;
                verbs_desc = v.describe();
                verbs = Some(v);
            }
            Err(e) if mode == Mode::Verbs => return Err(format!("OXMPI_TRANSPORT=verbs, but rank {rank} cannot use RDMA verbs: {e}")),
            Err(e) => {
                bs.put(&format!("verbs-card-{rank}"), b"").map_err(|e| e.0)?;
                verbs_err = Some(e);
            }
        }
    }

    // Shared memory: fence 1, the segment exists; fence 2, everyone attached, so it can be
    // unlinked (a crash never leaks /dev/shm entries).
    let me = shm_group.iter().position(|&r| r == rank).unwrap();
    let cfg = config();
    let cell = cfg.get("SHM_CELL_SIZE").max(64);
    let shape = ShmShape { nlocal: shm_group.len(), cells: cfg.get("SHM_CELLS").max(2), cell_payload: cell, eager_max: cfg.get("SHM_EAGER_MAX").min(cell) };
    let name = shm_name(bs.job_id(), my_node);
    let mut shm = None;
    let mut err = None;
    if shm_group.len() > 1 && me == 0 {
        match create_segment(&name, shape) {
            Ok(s) => shm = Some(s),
            Err(e) => err = Some(e),
        }
    }
    bs.fence().map_err(|e| e.0)?;
    if shm_group.len() > 1 && me != 0 {
        match ShmTransport::attach(&name, shape, me) {
            Ok(s) => shm = Some(s),
            Err(e) => err = Some(format!("cannot attach shared memory /dev/shm/{name}: {e}")),
        }
    }
    // Verbs peers: those whose card is real too; connected before the second fence.
    let mut on_verbs = vec![false; size];
    let mut no_verbs: Vec<usize> = Vec::new();
    for &p in &verbs_peers {
        let card = bs.get(&format!("verbs-card-{p}")).map_err(|e| e.0)?;
        match verbs.as_mut() {
            Some(v) if !card.is_empty() => {
                v.connect(p, &card).map_err(|e| format!("cannot connect the RDMA queue pair of rank {rank} to rank {p}: {e}"))?;
                on_verbs[p] = true;
            }
            _ => no_verbs.push(p),
        }
    }
    if mode == Mode::Verbs && !no_verbs.is_empty() && verbs.is_some() {
        return Err(format!("OXMPI_TRANSPORT=verbs, but rank(s) {} cannot use RDMA verbs (OXMPI_VERBOSE=1 says why)", ranges(&no_verbs)));
    }
    if !on_verbs.iter().any(|&b| b) {
        verbs = None;
    }
    bs.fence().map_err(|e| e.0)?;
    if let Some(s) = shm.as_mut() {
        s.unlink();
        s.settle_wake();
    }
    if let Some(e) = err {
        return Err(e);
    }

    let mut tcp_why = String::new();
    let tcp = match tcp {
        Some((mut t, why)) => {
            let secret = match &launcher_secret {
                Some(s) => s.as_bytes().to_vec(),
                None => bs.get("tcp-secret").map_err(|e| e.0)?,
            };
            t.set_secret(&secret);
            t.set_job(crate::dpm::job_uid(bs.job_id()));
            for &p in &tcp_peers {
                let raw = bs.get(&format!("tcp-card-{p}")).map_err(|e| e.0)?;
                let card = std::str::from_utf8(&raw).ok().and_then(Card::decode).ok_or_else(|| format!("rank {p}'s TCP business card is malformed"))?;
                t.set_card(p, card);
            }
            tcp_why = format!("listening on {} ({why}), congestion control {}", t.local_addr(), t.congestion());
            Some(t)
        }
        None => None,
    };

    let routes: Vec<Route> = (0..size)
        .map(|r| {
            if r == rank {
                Route::Local
            } else if let Some(i) = shm_group.iter().position(|&l| l == r) {
                Route::Peer(Link { via: Via::Shm, peer: i })
            } else if on_verbs[r] {
                Route::Peer(Link { via: Via::Verbs, peer: r })
            } else if tcp.is_some() {
                Route::Peer(Link { via: Via::Tcp, peer: r })
            } else {
                Route::Unreachable
            }
        })
        .collect();

    if config().get("VERBOSE") != 0 {
        let peers_of = |want: fn(&Route) -> bool| -> Vec<usize> { (0..size).filter(|&r| want(&routes[r])).collect() };
        let shm_peers = peers_of(|r| matches!(r, Route::Peer(Link { via: Via::Shm, .. })));
        let tcp_list = peers_of(|r| matches!(r, Route::Peer(Link { via: Via::Tcp, .. })));
        let verbs_list = peers_of(|r| matches!(r, Route::Peer(Link { via: Via::Verbs, .. })));
        let unreachable = peers_of(|r| matches!(r, Route::Unreachable));
        let mut parts = vec![format!("OxMPI rank {rank}/{size} on node {my_node} ({})", hostname())];
        if !shm_peers.is_empty() {
            parts.push(format!("shm to {} (same node)", ranges(&shm_peers)));
        }
        if !verbs_list.is_empty() {
            let same = verbs_list.iter().any(|r| nodes[*r] == my_node);
            let why = if same { "OXMPI_TRANSPORT=verbs" } else { "other nodes" };
            parts.push(format!("verbs to {} ({why}; {verbs_desc})", ranges(&verbs_list)));
        }
        if !tcp_list.is_empty() {
            let same: Vec<usize> = tcp_list.iter().copied().filter(|r| nodes[*r] == my_node).collect();
            let no_rdma = match &verbs_err {
                Some(e) => format!("; verbs not used: {e}"),
                None if !no_verbs.is_empty() => format!("; verbs not used with {}: no usable RDMA device there", ranges(&no_verbs)),
                None => String::new(),
            };
            let why = if same.is_empty() {
                format!("other nodes{no_rdma}")
            } else if mode == Mode::Tcp {
                "OXMPI_TRANSPORT=tcp".to_string()
            } else {
                "OXMPI_SHM=0".to_string()
            };
            parts.push(format!("tcp to {} ({why}; {tcp_why})", ranges(&tcp_list)));
        }
        if !unreachable.is_empty() {
            parts.push(format!("no route to {} (other nodes and OXMPI_TRANSPORT=shm)", ranges(&unreachable)));
        }
        parts.push(match bs.pmi_version() {
            Some(v) => format!("bootstrap {v} (job {})", bs.job_id()),
            None => "bootstrap singleton".to_string(),
        });
        crate::say!("{}", parts.join("; "));
    }
    let tcp = tcp.filter(|_| routes.iter().any(|r| matches!(r, Route::Peer(Link { via: Via::Tcp, .. }))));
    Ok(Wiring { routes, transports: Transports::new(shm, shm_group, tcp, verbs), host_ranks })
}

fn create_segment(name: &str, shape: ShmShape) -> Result<ShmTransport, String> {
    match ShmTransport::create(name, shape, 0) {
        Ok(s) => Ok(s),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            // A stale segment of a crashed job with the same id: replace it.
            let c = std::ffi::CString::new(format!("/{name}")).unwrap();
            // SAFETY: FFI call with a valid NUL-terminated name.
            unsafe { libc::shm_unlink(c.as_ptr()) };
            ShmTransport::create(name, shape, 0).map_err(|e| format!("cannot create shared memory /dev/shm/{name}: {e}"))
        }
        Err(e) => Err(format!("cannot create shared memory /dev/shm/{name} ({} bytes): {e}; check free space in /dev/shm or lower OXMPI_SHM_CELLS", shape.segment_len())),
    }
}

/// The node's segment: `oxmpi-<job>-n<node>`. The job id is unique per job and, under
/// Slurm, per step (`<jobid>.<stepid>`), and the node index comes from the node map, so
/// concurrent steps and fake nodes sharing one /dev/shm never meet.
pub fn shm_name(job_id: &str, node: usize) -> String {
    format!("oxmpi-{}-n{node}", sanitize(job_id))
}

/// Job ids become file names: keep them to a safe alphabet.
pub fn sanitize(job: &str) -> String {
    job.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn shm_names_per_step_and_node() {
        use super::shm_name;
        // Two steps of Slurm job 4 on fake nodes n1, n2; our mpirun's kvsname.
        let names = [shm_name("4.0", 0), shm_name("4.0", 1), shm_name("4.1", 0), shm_name("4.1", 1), shm_name("oxmpi_123_ab12", 0)];
        for (i, a) in names.iter().enumerate() {
            assert!(names[i + 1..].iter().all(|b| a != b), "{names:?}");
        }
        assert_eq!(names[0], "oxmpi-4_0-n0");
        assert_eq!(shm_name("kvs_1/x y", 2), "oxmpi-kvs_1_x_y-n2");
    }

    #[test]
    fn rank_ranges() {
        assert_eq!(super::ranges(&[0, 1, 2, 4, 6, 7]), "0-2,4,6-7");
        assert_eq!(super::ranges(&[3]), "3");
    }
}
