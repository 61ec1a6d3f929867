//! Every transport of this process behind one dispatch, so the protocol talks to a `Link`
//! and never to a particular transport. Dispatch is a `match` on a small enum (no trait
//! objects): the shared-memory fast path pays one predictable branch.

use super::shm::ShmTransport;
use super::tcp::TcpTransport;
use super::verbs::VerbsTransport;
use super::{Incoming, SleepToken, Transport};
use crate::header::HEADER_LEN;

/// Which transport carries a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    Shm,
    Tcp,
    Verbs,
}

/// How one peer is reached: a transport and the peer's index in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    pub via: Via,
    pub peer: usize,
}

/// The transports of this process and, per transport, its peers' world ranks.
pub struct Transports {
    pub shm: Option<ShmTransport>,
    /// Boxed: the TCP transport is large and rarely touched on shm-only paths; inline it
    /// would push the engine's hot fields apart.
    pub tcp: Option<Box<TcpTransport>>,
    /// Boxed for the same reason.
    pub verbs: Option<Box<VerbsTransport>>,
    /// Shared-memory local index → world rank.
    shm_world: Vec<usize>,
    /// Which network transport is polled first on the next pass, relative to shm
    /// (rotates, so none starves the others).
    turn: u8,
    /// Eager limits per transport, read once (they are on every send's path).
    shm_eager: usize,
    tcp_eager: usize,
    verbs_eager: usize,
}

/// Calls `$f` on the transport of `$link` (a `&mut dyn`-free dispatch).
macro_rules! on {
    ($self:ident, $link:expr, $t:ident => $e:expr) => {
        match $link.via {
            Via::Shm => {
                let $t = $self.shm.as_mut().expect("a shared-memory link without the shm transport");
                $e
            }
            Via::Tcp => {
                let $t = $self.tcp.as_deref_mut().expect("a TCP link without the TCP transport");
                $e
            }
            Via::Verbs => {
                let $t = $self.verbs.as_deref_mut().expect("a verbs link without the verbs transport");
                $e
            }
        }
    };
}

/// As `on!`, for `&self` queries: `$d` when the link's transport is absent.
macro_rules! on_ref {
    ($self:ident, $link:expr, $t:ident => $e:expr, $d:expr) => {
        match $link.via {
            Via::Shm => $self.shm.as_ref().map_or($d, |$t| $e),
            Via::Tcp => $self.tcp.as_ref().map_or($d, |$t| $e),
            Via::Verbs => $self.verbs.as_ref().map_or($d, |$t| $e),
        }
    };
}

impl Transports {
    pub fn new(shm: Option<ShmTransport>, shm_world: Vec<usize>, tcp: Option<TcpTransport>, verbs: Option<VerbsTransport>) -> Transports {
        let tcp = tcp.map(Box::new);
        let verbs = verbs.map(Box::new);
        let shm_eager = shm.as_ref().map_or(0, |s| s.eager_max().min(s.max_payload()));
        let tcp_eager = tcp.as_ref().map_or(0, |t| t.eager_max().min(t.max_payload()));
        let verbs_eager = verbs.as_ref().map_or(0, |t| t.eager_max().min(t.max_payload()));
        Transports { shm, tcp, verbs, shm_world, turn: 0, shm_eager, tcp_eager, verbs_eager }
    }

    /// The world rank behind `link`'s peer (network peers are indexed by world rank).
    #[inline]
    pub fn world_of(&self, via: Via, peer: usize) -> usize {
        match via {
            Via::Shm => self.shm_world[peer],
            Via::Tcp | Via::Verbs => peer,
        }
    }

    #[inline]
    pub fn eager_max(&self, link: Link) -> usize {
        match link.via {
            Via::Shm => self.shm_eager,
            Via::Tcp => self.tcp_eager,
            Via::Verbs => self.verbs_eager,
        }
    }

    /// The largest eager limit of any transport (a receive does not know its sender yet).
    pub fn any_eager_max(&self) -> usize {
        self.shm_eager.max(self.tcp_eager).max(self.verbs_eager)
    }

    /// Rendezvous chunk size toward `link`.
    #[inline]
    pub fn max_payload(&self, link: Link) -> usize {
        on_ref!(self, link, t => t.chunk(link.peer), 0)
    }

    #[inline]
    pub fn streams(&self, link: Link) -> bool {
        on_ref!(self, link, t => t.streams(), false)
    }

    /// # Safety
    /// `payload` must be valid for reads of `len` bytes.
    #[inline]
    pub unsafe fn try_send(&mut self, link: Link, header: &[u8; HEADER_LEN], payload: *const u8, len: usize) -> bool {
        // SAFETY: forwarded caller contract.
        on!(self, link, t => unsafe { t.try_send(link.peer, header, payload, len) })
    }

    /// # Safety
    /// As `Transport::try_send_lent`.
    #[inline]
    pub unsafe fn try_send_lent(&mut self, link: Link, header: &[u8; HEADER_LEN], payload: *const u8, len: usize) -> bool {
        // SAFETY: forwarded caller contract.
        on!(self, link, t => unsafe { t.try_send_lent(link.peer, header, payload, len) })
    }

    #[inline]
    pub fn holds_lent(&self, link: Link) -> bool {
        on_ref!(self, link, t => t.holds_lent(link.peer), false)
    }

    pub fn try_send_with(&mut self, link: Link, header: &[u8; HEADER_LEN], len: usize, fill: &mut dyn FnMut(&mut [u8])) -> bool {
        on!(self, link, t => t.try_send_with(link.peer, header, len, fill))
    }

    #[inline]
    pub fn wake(&mut self, link: Link) {
        on!(self, link, t => t.wake(link.peer))
    }

    /// Wakes this process's own sleeping waits, whatever they sleep on.
    pub fn wake_self(&mut self) {
        if let Some(s) = self.shm.as_mut() {
            s.wake_self();
        }
        if let Some(t) = self.tcp.as_mut() {
            t.wake_self();
        }
        if let Some(t) = self.verbs.as_mut() {
            t.wake_self();
        }
    }

    #[inline]
    pub fn has_zcopy(&self, link: Link) -> bool {
        on_ref!(self, link, t => t.has_zcopy(), false)
    }

    pub fn zcopy_ready(&mut self, link: Link) -> bool {
        on!(self, link, t => t.zcopy_ready(link.peer))
    }

    /// As `Transport::offer`.
    pub fn offer(&mut self, link: Link, ptr: *const u8, len: usize) -> Option<u32> {
        on!(self, link, t => t.offer(ptr, len))
    }

    /// As `Transport::withdraw`.
    pub fn withdraw(&mut self, link: Link, ptr: *const u8, len: usize) {
        on!(self, link, t => t.withdraw(ptr, len))
    }

    /// As `Transport::coop`.
    #[inline]
    pub fn coop(&self, link: Link) -> bool {
        on_ref!(self, link, t => t.coop(), false)
    }

    /// # Safety
    /// As `Transport::get`.
    pub unsafe fn get(&mut self, link: Link, dst: *mut u8, remote: u64, key: u32, len: usize) -> usize {
        // SAFETY: forwarded caller contract.
        on!(self, link, t => unsafe { t.get(link.peer, dst, remote, key, len) })
    }

    /// # Safety
    /// As `Transport::put`.
    pub unsafe fn put(&mut self, link: Link, remote: u64, key: u32, src: *const u8, len: usize) -> usize {
        // SAFETY: forwarded caller contract.
        on!(self, link, t => unsafe { Transport::put(t, link.peer, remote, key, src, len) })
    }

    /// Transports' own work, once per progress pass before receiving. True when the TCP
    /// transport met processes of another job (their hellos came first): the engine then
    /// adds their routes.
    #[inline]
    pub fn progress(&mut self) -> bool {
        let mut grown = false;
        if let Some(t) = self.tcp.as_mut() {
            t.progress();
            grown = t.take_grown();
        }
        if let Some(t) = self.verbs.as_mut() {
            t.progress();
        }
        grown
    }

    /// Adds the TCP transport after start-up (the first dynamic-process call of a job
    /// whose ranks all share memory).
    pub fn add_tcp(&mut self, t: TcpTransport) {
        self.tcp_eager = t.eager_max().min(t.max_payload());
        self.tcp = Some(Box::new(t));
    }

    /// The next received message of any transport; `release` it before the next call.
    /// `place` as in `Transport::recv_placed`.
    #[inline]
    pub fn recv_next(&mut self, place: &mut dyn FnMut(&[u8; HEADER_LEN], usize) -> Option<*mut u8>) -> Option<Incoming> {
        if self.tcp.is_none() && self.verbs.is_none() {
            return self.shm.as_mut()?.recv_next();
        }
        // Rotate the order: shm, tcp, verbs; then tcp, verbs, shm; then verbs, shm, tcp.
        self.turn = (self.turn + 1) % 3;
        for i in 0..3 {
            let m = match (self.turn + i) % 3 {
                0 => self.shm.as_mut().and_then(|s| s.recv_next()),
                1 => self.tcp.as_mut().and_then(|t| t.recv_placed(place)),
                _ => self.verbs.as_mut().and_then(|v| v.recv_next()),
            };
            if m.is_some() {
                return m;
            }
        }
        None
    }

    #[inline]
    pub fn release(&mut self, m: &Incoming) {
        on!(self, m, t => t.release(m.peer))
    }

    pub fn has_pending_output(&self) -> bool {
        self.tcp.as_ref().is_some_and(|t| t.has_pending_output()) || self.verbs.as_ref().is_some_and(|t| t.has_pending_output())
    }

    /// Permission to sleep when exactly one transport can wake us: shm alone sleeps on its
    /// doorbell, TCP alone in epoll, verbs alone on its completion channel; with several,
    /// a wait polls (yields) instead, as no one wake-up covers the others' arrivals.
    pub fn prepare_sleep(&mut self) -> Option<SleepToken> {
        match (self.shm.as_mut(), self.tcp.as_mut(), self.verbs.as_mut()) {
            (Some(s), None, None) => s.prepare_sleep(),
            (None, Some(t), None) => t.prepare_sleep(),
            (None, None, Some(v)) => v.prepare_sleep(),
            _ => None,
        }
    }

    /// A sleep just ended (before the next progress pass).
    pub fn after_sleep(&mut self) {
        if let Some(t) = self.tcp.as_mut() {
            t.after_sleep();
        }
        if let Some(t) = self.verbs.as_mut() {
            t.after_sleep();
        }
    }

    pub fn end_sleep(&mut self) {
        if let Some(s) = self.shm.as_mut() {
            s.end_sleep();
        }
        if let Some(t) = self.tcp.as_mut() {
            t.end_sleep();
        }
        if let Some(t) = self.verbs.as_mut() {
            t.end_sleep();
        }
    }
}
