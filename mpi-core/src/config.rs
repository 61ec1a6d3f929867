//! The one table of tunables. Each is read once from `OXMPI_<NAME>` in the environment and
//! documented here; `mpirun --help-tuning` prints this table.

use std::sync::OnceLock;

/// One tunable: name (without the `OXMPI_` prefix), default, and what it controls.
pub struct Tunable {
    pub name: &'static str,
    pub default: usize,
    pub doc: &'static str,
}

/// Every tunable, in one place.
pub const TUNABLES: &[Tunable] = &[
    Tunable {
        name: "SHM_EAGER_MAX",
        default: 8192,
        doc: "largest message (bytes) sent eagerly over shared memory; larger ones use rendezvous",
    },
    Tunable {
        name: "SHM_CELL_SIZE",
        default: 8192,
        doc: "payload bytes per shared-memory ring cell (also the rendezvous pipeline chunk)",
    },
    Tunable {
        name: "SHM_CELLS",
        default: 64,
        doc: "cells per directed shared-memory ring (one ring per pair of local ranks)",
    },
    Tunable {
        name: "SHM_CMA_MIN",
        default: 8192,
        doc: "rendezvous messages from this many bytes are read in one copy with process_vm_readv (CMA) when the kernel allows it; 0 = never (always the two-copy ring)",
    },
    Tunable {
        name: "SHM_COOP_MIN",
        default: 1048576,
        doc: "single-copy messages from this many bytes are copied by both sides at once: the receiver reads the first half while the sender writes the second (process_vm_writev); 0 = never",
    },
    Tunable {
        name: "SHM_CMA_REVERSE_MIN",
        default: 524288,
        doc: "single copies (one side's part of a cooperative one) of at least this many bytes alternate direction: every other one runs back to front in SHM_CMA_REVERSE_CHUNK pieces, starting where the last copy of a reused buffer ended, still in cache; 0 = never",
    },
    Tunable {
        name: "SHM_CMA_REVERSE_CHUNK",
        default: 262144,
        doc: "piece size (bytes) of a back-to-front single copy (see SHM_CMA_REVERSE_MIN); each piece is copied front to back",
    },
    Tunable {
        name: "SHM_MEMBARRIER",
        default: 1,
        doc: "1 = a rank about to sleep forces a memory barrier on the node's running ranks with membarrier(2) (when the kernel offers it), so senders skip a fence per message (bw 16 B-1 KiB up to 2x); 0 = a fence per message",
    },
    Tunable {
        name: "SHM",
        default: 1,
        doc: "0 = no shared memory: ranks of one node talk over the network transport (tests; as OXMPI_TRANSPORT=tcp)",
    },
    Tunable {
        name: "TCP_EAGER_MAX",
        default: 65536,
        doc: "largest message (bytes) sent eagerly over TCP; larger ones use rendezvous (the receiver's clear-to-send, then chunks of TCP_CHUNK)",
    },
    Tunable {
        name: "TCP_CHUNK",
        default: 262144,
        doc: "largest TCP frame payload (bytes): the rendezvous chunk size, and so what a receiver buffers per connection at most",
    },
    Tunable {
        name: "TCP_NET_CHUNK",
        default: 32768,
        doc: "rendezvous chunk (bytes) on TCP connections over a network interface (TCP_CHUNK is for loopback): between two network-namespace hosts, bw of 1 MiB measured 4.4-5.4 GB/s with 32 KiB chunks, 2.0-5.8 with 64 KiB, 1.7-1.9 with 256 KiB; on loopback 256 KiB is best (6.1-7.5 against 5.7-6.0 with 32 KiB)",
    },
    Tunable {
        name: "TCP_DIRECT_MIN",
        default: 16384,
        doc: "rendezvous chunks over TCP from this many bytes are read from the socket straight into a contiguous receive buffer instead of through the connection's buffer; 0 = never",
    },
    Tunable {
        name: "TCP_POLL_PEERS",
        default: 2,
        doc: "a rank with at most this many TCP connections reads each socket on every progress pass instead of asking epoll first (one syscall less per message); 0 = always epoll",
    },
    Tunable {
        name: "TCP_SOCKBUF",
        default: 0,
        doc: "SO_SNDBUF and SO_RCVBUF (bytes) of every TCP connection between ranks; 0 = the kernel's autotuning",
    },
    Tunable {
        name: "IB",
        default: 1,
        doc: "0 = never use RDMA verbs (peers on other nodes use TCP); 1 = use verbs toward other nodes when both ranks have a usable device (OXMPI_IB_DEVICE, OXMPI_IB_PORT, OXMPI_IB_GID_INDEX choose one; default: the first ACTIVE port, RoCE v2 IPv4-mapped GID)",
    },
    Tunable {
        name: "IB_EAGER_MAX",
        default: 8192,
        doc: "largest message (bytes) sent eagerly over verbs (at most IB_BUF_SIZE - 48); larger ones use rendezvous: the receiver reads the sender's buffer with RDMA READ",
    },
    Tunable {
        name: "IB_BUF_SIZE",
        default: 8240,
        doc: "bytes of each pre-posted verbs receive buffer (48-byte header + payload): the eager and streamed-chunk size",
    },
    Tunable {
        name: "IB_BUFS",
        default: 32,
        doc: "receive buffers posted per verbs peer: the credit window of eager sends to it",
    },
    Tunable {
        name: "IB_REG_CACHE",
        default: 1073741824,
        doc: "bytes of user memory the verbs registration cache keeps registered at most (least recently used registrations not in use are dropped beyond it)",
    },
    Tunable {
        name: "VERBOSE",
        default: 0,
        doc: "1 = each rank prints at start-up which transport reaches each peer and why (for verbs: device, port, GID, MTU, or why verbs was not used), and TCP connections refused at the handshake",
    },
    Tunable {
        name: "SHM_PUSH_MAX",
        default: 0,
        doc: "messages above the eager limit and up to this many bytes are pushed: streamed through the ring right behind their envelope, without waiting for the receiver to match (the send completes once all is in the ring); 0 = never. Oversubscribed runs use OSUB_PUSH_MAX instead",
    },
    Tunable {
        name: "OSUB_PUSH_MAX",
        default: 16384,
        doc: "SHM_PUSH_MAX for oversubscribed runs (more local ranks than CPUs), where a rendezvous sender waits for its receiver to be scheduled (4 ranks on 2 CPUs: gather and reduce of 16 KiB 2-3x faster; at 32 KiB scatter, bcast and alltoall were slower); 0 = never",
    },
    Tunable {
        name: "OSUB_PUSH_ROOT_MAX",
        default: 524288,
        doc: "OSUB_PUSH_MAX for the sends of gathers and reduces toward their root: many senders, one receiver that is often not running (4 ranks on 2 CPUs: gather of 256-512 KiB 1.5x faster; above the ring's capacity, 512 KiB by default, no gain); 0 = never",
    },
    Tunable {
        name: "BIND",
        default: 1,
        doc: "bind local rank i to the i-th CPU the job may use (as Open MPI does); with more local ranks than CPUs, in blocks of neighbouring ranks per CPU; 0 = leave placement to the scheduler (e.g. several jobs sharing a node)",
    },
    Tunable {
        name: "ASYNC_PROGRESS",
        default: 0,
        doc: "1: a progress thread polls every ASYNC_PROGRESS_US microseconds, so one-sided operations on targets reached over the network complete while the target computes",
    },
    Tunable {
        name: "ASYNC_PROGRESS_US",
        default: 50,
        doc: "interval of the progress thread's polls (OXMPI_ASYNC_PROGRESS=1)",
    },
    Tunable {
        name: "RMA_STREAM_AFTER",
        default: 32 << 20,
        doc: "bytes one-sided puts and gets to a mapped window move between synchronisations before copies of 64 KiB and more use non-temporal stores (bypassing the cache)",
    },
    Tunable {
        name: "SPIN_COUNT",
        default: 2000,
        doc: "progress polls a blocked wait spins before it starts yielding the CPU",
    },
    Tunable {
        name: "SPIN_YIELD_EVERY",
        default: 32,
        doc: "while spinning, a blocked wait yields the CPU once every this many polls, so a peer sharing our CPU runs soon (0 = never)",
    },
    Tunable {
        name: "YIELD_COUNT",
        default: 2000,
        doc: "yields a blocked wait makes before it sleeps (bounded sleeps of SLEEP_MAX_US)",
    },
    Tunable {
        name: "SLEEP_MAX_US",
        default: 1000,
        doc: "longest a sleeping wait sleeps before it polls again, in microseconds: a safety net, since senders wake sleepers (tests raise it so a missed wake-up hangs)",
    },
    Tunable {
        name: "BCAST_SHORT_MSG",
        default: 12288,
        doc: "bcast: messages below this many bytes use a binomial tree; larger ones scatter + ring allgather",
    },
    Tunable {
        name: "BCAST_MIN_PROCS",
        default: 8,
        doc: "bcast: communicators with fewer ranks always use the binomial tree",
    },
    Tunable {
        name: "ALLREDUCE_SHORT_MSG",
        default: 8192,
        doc: "allreduce: vectors up to this many bytes use recursive doubling (one eager exchange per round beats the ring's 2(p-1) half-size steps up to the eager limit, measured on 2 ranks); larger ones a ring reduce-scatter + allgather",
    },
    Tunable {
        name: "ALLGATHER_SHORT_MSG",
        default: 81920,
        doc: "allgather: total bytes below which non-power-of-two rank counts use Bruck",
    },
    Tunable {
        name: "ALLGATHER_LONG_MSG",
        default: 524288,
        doc: "allgather: total bytes from which the ring is used (below: recursive doubling for powers of two)",
    },
    Tunable {
        name: "OSUB_ALLGATHER_LONG_MSG",
        default: 131072,
        doc: "ALLGATHER_LONG_MSG for oversubscribed runs with flat collectives (4 ranks on 2 CPUs: 64 KiB blocks 47-56 us by ring, 54-63 by recursive doubling; 16 KiB blocks faster by recursive doubling)",
    },
    Tunable {
        name: "ALLTOALL_SHORT_MSG",
        default: 256,
        doc: "alltoall: blocks up to this many bytes use Bruck (with at least ALLTOALL_MIN_PROCS ranks)",
    },
    Tunable {
        name: "ALLTOALL_MIN_PROCS",
        default: 8,
        doc: "alltoall: fewest ranks for which Bruck is used for short blocks",
    },
    Tunable {
        name: "ALLTOALL_MEDIUM_MSG",
        default: 32768,
        doc: "alltoall: blocks up to this many bytes are all exchanged at once; larger ones pairwise, one peer per step",
    },
    Tunable {
        name: "GATHER_SHORT_MSG",
        default: 32768,
        doc: "gather/scatter: blocks up to this many bytes use a binomial tree; larger ones go directly to/from the root",
    },
    Tunable {
        name: "REDUCE_SCATTER_SHORT_MSG",
        default: 65536,
        doc: "reduce_scatter: vectors below this many bytes reduce to rank 0 and scatter; larger ones (commutative ops) use a ring",
    },
    Tunable {
        name: "COLL_DIRECT_MAX",
        default: 1024,
        doc: "blocking barrier, bcast, reduce (up to 1024 bytes) and allreduce/allgather (power-of-two rank counts) up to this many bytes run without a schedule: one eager exchange per round (at most 2048; 0 = always build a schedule)",
    },
    Tunable {
        name: "COLL_SPARE_SCHEDULES",
        default: 4,
        doc: "finished collective schedules kept for reuse (a repeated collective then allocates nothing); 0 = build each from scratch",
    },
    Tunable {
        name: "COLL_KEEP_TEMP",
        default: 4194304,
        doc: "largest temporary buffer (bytes) a reused collective schedule keeps; larger ones are freed when the collective ends",
    },
    Tunable {
        name: "SHM_BARRIER_MAX",
        default: 64,
        doc: "blocking barriers on communicators of up to this many ranks, all on one node, use shared-memory flags (each rank signals rank 0, which releases them all) instead of messages; not when oversubscribed or at MPI_THREAD_MULTIPLE (0 = never)",
    },
    Tunable {
        name: "OSUB_POLL_YIELD_US",
        default: 50,
        doc: "oversubscribed: a rank whose nonblocking tests and probes (MPI_Test, MPI_Iprobe, ...) keep finding nothing yields the CPU at most this often, in microseconds, so the rank sharing its CPU runs (0 = on every such poll)",
    },
    Tunable {
        name: "OSUB_FLAT_PROCS",
        default: 8,
        doc: "oversubscribed (more local ranks than CPUs): communicators of up to this many ranks (at most 17) use flat collectives: barrier through rank 0, bcast/scatter straight from the root, reduce/gather straight to it, so no rank waits for another non-root rank to be scheduled (0 = never)",
    },
];

/// Resolved values of `TUNABLES`, in the same order.
pub struct Config {
    values: Vec<usize>,
}

impl Config {
    fn from_env() -> Self {
        let values = TUNABLES
            .iter()
            .map(|t| {
                std::env::var(format!("OXMPI_{}", t.name))
                    .ok()
                    .and_then(|v| parse_size(&v))
                    .unwrap_or(t.default)
            })
            .collect();
        Config { values }
    }

    /// The value of tunable `name`; panics on an unknown name (a programming error).
    pub fn get(&self, name: &str) -> usize {
        let i = TUNABLES
            .iter()
            .position(|t| t.name == name)
            .unwrap_or_else(|| panic!("unknown tunable {name}"));
        self.values[i]
    }
}

/// Accepts plain numbers and `k`/`m` suffixes (binary), e.g. `16k`.
pub fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'k' | 'K' => (&s[..s.len() - 1], 1024),
        'm' | 'M' => (&s[..s.len() - 1], 1024 * 1024),
        _ => (s, 1),
    };
    num.parse::<usize>().ok().map(|n| n * mult)
}

/// The process-wide configuration, read on first use.
pub fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(Config::from_env)
}

/// The tunables table as text, for `mpirun --help-tuning`.
pub fn describe() -> String {
    let mut out = String::new();
    for t in TUNABLES {
        out.push_str(&format!("OXMPI_{:<16} default {:<8} {}\n", t.name, t.default, t.doc));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("16k"), Some(16384));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("12"), Some(12));
        assert_eq!(parse_size("x"), None);
    }
}
