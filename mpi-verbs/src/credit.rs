//! Credit-based flow control of the eager path (pure bookkeeping; `eager.rs` posts).
//!
//! Why credits: a SEND needs a receive buffer posted at the peer. Without one the peer's
//! device answers RNR NAK and the sender's device retries (rnr_retry 7 = forever), which
//! stalls the whole queue pair and wastes the wire. With credits a sender only sends when
//! it knows a buffer is posted, so RNR never happens in a correct run (rnr_retry 7 stays
//! as a safety net).
//!
//! # The protocol
//! Each side posts `W` = `bufs_per_peer` receive buffers per peer. They are split, by
//! count only (any buffer can take any message), into a data window `D = W - R` and a
//! reserve of `R` buffers that only explicit credit messages use.
//!
//! * A sender holds `data` credits (initially `D`) and `ctrl` credits (initially `R`).
//!   A data message (an engine header + payload) costs one data credit; an explicit
//!   credit-only message costs one ctrl credit.
//! * A receiver counts a credit as returnable only once the buffer is posted again
//!   (`ret_data`, `ret_ctrl`). Data buffers are reposted in batches after the engine
//!   `release`s them; a credit-only message never reaches the engine, its buffer is
//!   reposted at once.
//! * Every message carries all returnable credits in its immediate data (see
//!   [`encode_imm`]): bits 0-15 data credits, bits 16-23 ctrl credits, bit 31 set for a
//!   credit-only message.
//! * A credit-only message is sent when `ret_data >= T`, `T = ceil(D/2)` (one-way traffic:
//!   nothing else carries the credits back) and a ctrl credit is held. Before that check
//!   the batch of released buffers is reposted once `unposted + ret_data >= T`.
//!
//! # No buffer overrun
//! Credits held by a sender plus messages in flight plus buffers not yet reposted at the
//! receiver never exceed `D` (data) and `R` (ctrl), because a credit goes back only after
//! its buffer was reposted. So when a message arrives at most `W - 1` of the other buffers
//! are consumed: one is posted for it.
//!
//! # No deadlock when both sides run out of credits
//! Consider a quiescent state (both engines keep calling progress and recv_next and
//! release every message they get, nothing is in flight) in which sender A waits for a
//! data credit toward B. Then all `D` of A's data messages sit at B uncredited, all were
//! released, so B has `unposted + ret_data = D >= T`: B reposted them and
//! `ret_data = D >= T`, and B sends a credit-only message if it holds a ctrl credit. It
//! does:
//!
//! * Suppose B held none. Then `R >= 2` credit-only messages of B are unacknowledged; let
//!   `m1` be the oldest. A processed them all (quiescent) and sent nothing to B after
//!   processing `m1`, because every message A sends carries back every ctrl credit it owes.
//!   Each credit-only message returns at least `T` data credits for distinct messages, so
//!   `m1` and the next one return at least `2T >= D` of them. All of A's uncredited data
//!   messages were sent before A processed `m1` (A sent nothing since) and number at most
//!   `D`, so those two messages credited every one of them: B owes nothing, A holds `D`
//!   credits and is not waiting. Contradiction.
//! * The ctrl credits themselves never need an explicit message: B only needs one when A
//!   sends data, and that data carries the ctrl credits A owes. Explicit messages are
//!   sent only for data credits, so credit messages never ping-pong.
//!
//! The same holds with the roles swapped, so two ranks flooding each other both recover.
//! A full send queue or no free send slot is not a credit problem: those free up from
//! local completions, which the device produces without the peer's software.

/// Buffers of the per-peer window kept for explicit credit messages (the argument above
/// needs at least 2).
pub const RESERVE: u32 = 2;

/// Largest number of data credits one message returns (16 bits of the immediate data).
pub const MAX_DATA_RETURN: u32 = 0xffff;
/// Largest number of ctrl credits one message returns (8 bits).
pub const MAX_CTRL_RETURN: u32 = 0xff;
/// Bit 31 of the immediate data: a credit-only message (no engine header, not delivered).
pub const IMM_CREDIT_ONLY: u32 = 1 << 31;

/// The immediate data of a message returning `data` and `ctrl` credits (host order; the
/// caller converts to network order for the wire).
#[inline]
pub fn encode_imm(data: u32, ctrl: u32, credit_only: bool) -> u32 {
    debug_assert!(data <= MAX_DATA_RETURN && ctrl <= MAX_CTRL_RETURN);
    data | (ctrl << 16) | if credit_only { IMM_CREDIT_ONLY } else { 0 }
}

/// `(data credits, ctrl credits, credit-only)` carried by an immediate value.
#[inline]
pub fn decode_imm(imm: u32) -> (u32, u32, bool) {
    (imm & 0xffff, (imm >> 16) & 0xff, imm & IMM_CREDIT_ONLY != 0)
}

/// Credit state of one peer, both directions.
#[derive(Debug, Clone)]
pub struct Credits {
    /// Data window `D`.
    window: u32,
    /// Explicit credit message threshold `T = ceil(D/2)`.
    threshold: u32,
    /// Reposting batch (fewer `ibv_post_recv` calls).
    batch: u32,
    /// Sender side: data and ctrl credits held.
    data: u32,
    ctrl: u32,
    /// Receiver side: data buffers released but not yet reposted.
    unposted: u32,
    /// Receiver side: reposted buffers whose credits are not yet returned.
    ret_data: u32,
    ret_ctrl: u32,
}

impl Credits {
    /// `bufs` receive buffers per peer (at least `RESERVE + 1`).
    pub fn new(bufs: u32) -> Credits {
        let bufs = bufs.clamp(RESERVE + 1, MAX_DATA_RETURN);
        let window = bufs - RESERVE;
        Credits {
            window,
            threshold: window.div_ceil(2),
            batch: (window / 4).clamp(1, 32),
            data: window,
            ctrl: RESERVE,
            unposted: 0,
            ret_data: 0,
            ret_ctrl: 0,
        }
    }

    pub fn window(&self) -> u32 {
        self.window
    }

    pub fn batch(&self) -> u32 {
        self.batch
    }

    /// Data credits held toward the peer.
    #[inline]
    pub fn data(&self) -> u32 {
        self.data
    }

    #[inline]
    pub fn ctrl(&self) -> u32 {
        self.ctrl
    }

    #[inline]
    pub fn take_data(&mut self) {
        debug_assert!(self.data > 0);
        self.data -= 1;
    }

    #[inline]
    pub fn take_ctrl(&mut self) {
        debug_assert!(self.ctrl > 0);
        self.ctrl -= 1;
    }

    /// Everything returnable, for the message about to be posted: `(data, ctrl)`.
    #[inline]
    pub fn take_returns(&mut self) -> (u32, u32) {
        let d = self.ret_data.min(MAX_DATA_RETURN);
        let c = self.ret_ctrl.min(MAX_CTRL_RETURN);
        self.ret_data -= d;
        self.ret_ctrl -= c;
        (d, c)
    }

    /// Gives back what `take_returns` took when the post failed.
    pub fn untake_returns(&mut self, d: u32, c: u32) {
        self.ret_data += d;
        self.ret_ctrl += c;
    }

    /// Credits the peer returned to us.
    #[inline]
    pub fn returned(&mut self, data: u32, ctrl: u32) {
        self.data += data;
        self.ctrl += ctrl;
        debug_assert!(
            self.data <= self.window && self.ctrl <= RESERVE,
            "peer returned more credits than lent"
        );
    }

    /// The engine released a data message's buffer. True: repost the batch now.
    #[inline]
    pub fn released(&mut self) -> bool {
        self.unposted += 1;
        self.repost_due()
    }

    /// Released buffers should be posted again (a full batch, or enough owed that a
    /// credit message may be due).
    #[inline]
    pub fn repost_due(&self) -> bool {
        self.unposted > 0
            && (self.unposted >= self.batch || self.unposted + self.ret_data >= self.threshold)
    }

    #[inline]
    pub fn unposted(&self) -> u32 {
        self.unposted
    }

    /// `n` released data buffers were posted again: their credits may go back.
    #[inline]
    pub fn reposted(&mut self, n: u32) {
        debug_assert!(n <= self.unposted);
        self.unposted -= n;
        self.ret_data += n;
    }

    /// A credit-only message arrived and its buffer was posted again.
    #[inline]
    pub fn ctrl_reposted(&mut self) {
        self.ret_ctrl += 1;
    }

    /// An explicit credit message should go out (no traffic carried the credits back).
    #[inline]
    pub fn explicit_due(&self) -> bool {
        self.ret_data >= self.threshold
    }

    /// Returnable data credits (for `has_pending_output` and tests).
    pub fn owed(&self) -> u32 {
        self.ret_data
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn imm_roundtrip() {
        for &(d, c, o) in &[
            (0, 0, false),
            (1, 0, true),
            (0xffff, 0xff, true),
            (37, 2, false),
        ] {
            assert_eq!(decode_imm(encode_imm(d, c, o)), (d, c, o));
        }
        assert_eq!(encode_imm(3, 1, true), 0x8001_0003);
    }

    #[test]
    fn window_and_threshold() {
        let c = Credits::new(64);
        assert_eq!(c.window(), 62);
        assert_eq!(c.data(), 62);
        assert_eq!(c.ctrl(), RESERVE);
        assert_eq!(c.threshold, 31);
        assert_eq!(c.batch(), 15);
        let small = Credits::new(1);
        assert_eq!(small.window(), 1);
        assert_eq!(small.threshold, 1);
        assert_eq!(small.batch(), 1);
    }

    #[test]
    fn returns_only_after_repost() {
        let mut c = Credits::new(10); // D = 8, T = 4, batch 2
        assert!(!c.released());
        assert_eq!(c.take_returns(), (0, 0), "nothing reposted yet");
        assert!(c.released());
        c.reposted(2);
        c.ctrl_reposted();
        assert_eq!(c.take_returns(), (2, 1));
        assert_eq!(c.take_returns(), (0, 0));
        for _ in 0..3 {
            c.released();
        }
        c.reposted(3);
        assert!(!c.explicit_due());
        c.released();
        c.reposted(1);
        assert!(c.explicit_due());
    }

    /// One direction of a simulated link: messages in flight, as (data returned, ctrl
    /// returned, credit-only).
    struct Side {
        c: Credits,
        posted: u32,
        /// Data messages still to send.
        to_send: u32,
        /// Delivered data messages the engine has not released yet.
        held: u32,
        got: u32,
    }

    fn step(
        rng: &mut u64,
        a: &mut Side,
        b: &mut Side,
        a_to_b: &mut VecDeque<(u32, u32, bool)>,
        action: u64,
    ) {
        let _ = rng;
        match action {
            // A sends data if it can.
            0 => {
                if a.to_send > 0 && a.c.data() > 0 {
                    a.c.take_data();
                    let (d, c) = a.c.take_returns();
                    a_to_b.push_back((d, c, false));
                    a.to_send -= 1;
                }
            }
            // One message from A arrives at B.
            1 => {
                if let Some((d, c, only)) = a_to_b.pop_front() {
                    assert!(b.posted > 0, "a message arrived with no posted buffer");
                    b.posted -= 1;
                    b.c.returned(d, c);
                    if only {
                        b.posted += 1;
                        b.c.ctrl_reposted();
                    } else {
                        b.held += 1;
                        b.got += 1;
                    }
                }
            }
            // B's engine releases one message.
            2 => {
                if b.held > 0 {
                    b.held -= 1;
                    if b.c.released() {
                        let n = b.c.unposted();
                        b.posted += n;
                        b.c.reposted(n);
                    }
                }
            }
            // A's progress: explicit credits toward B if due.
            _ => {
                if a.c.explicit_due() && a.c.ctrl() > 0 {
                    a.c.take_ctrl();
                    let (d, c) = a.c.take_returns();
                    a_to_b.push_back((d, c, true));
                }
            }
        }
    }

    fn xorshift(s: &mut u64) -> u64 {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        *s
    }

    /// Two sides exchange messages in random interleavings (one-way and both ways, small
    /// and larger windows); every run must deliver everything without ever finding no
    /// posted buffer, and credits must come back to full when idle.
    #[test]
    fn simulated_links_never_overrun_or_deadlock() {
        for seed in 1..=300u64 {
            let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            let bufs = [3u32, 4, 5, 8, 9, 16, 64][(seed % 7) as usize];
            let (na, nb) = match seed % 3 {
                0 => (2000, 0),
                1 => (0, 1500),
                _ => (1200, 1300),
            };
            let mut a = Side {
                c: Credits::new(bufs),
                posted: bufs,
                to_send: na,
                held: 0,
                got: 0,
            };
            let mut b = Side {
                c: Credits::new(bufs),
                posted: bufs,
                to_send: nb,
                held: 0,
                got: 0,
            };
            let (mut ab, mut ba) = (VecDeque::new(), VecDeque::new());
            let mut steps = 0u64;
            while a.to_send > 0
                || b.to_send > 0
                || !ab.is_empty()
                || !ba.is_empty()
                || a.held > 0
                || b.held > 0
            {
                steps += 1;
                assert!(steps < 2_000_000, "seed {seed}: no progress (deadlock)");
                let r = xorshift(&mut rng);
                let action = r % 4;
                if r & 16 == 0 {
                    step(&mut rng, &mut a, &mut b, &mut ab, action);
                } else {
                    step(&mut rng, &mut b, &mut a, &mut ba, action);
                }
            }
            assert_eq!(b.got, na, "seed {seed}");
            assert_eq!(a.got, nb, "seed {seed}");
            // Idle: run progress and deliveries until quiet; nobody may stay owed >= T
            // without a way to send it (that would hang a finalize drain).
            for _ in 0..100 {
                step(&mut rng, &mut a, &mut b, &mut ab, 3);
                step(&mut rng, &mut b, &mut a, &mut ba, 3);
                while !ab.is_empty() {
                    step(&mut rng, &mut a, &mut b, &mut ab, 1);
                }
                while !ba.is_empty() {
                    step(&mut rng, &mut b, &mut a, &mut ba, 1);
                }
            }
            assert!(
                !a.c.explicit_due() && !b.c.explicit_due(),
                "seed {seed}: credit message owed forever"
            );
            assert!(
                a.c.data() > 0 && b.c.data() > 0,
                "seed {seed}: a side idles with no credit"
            );
        }
    }
}
