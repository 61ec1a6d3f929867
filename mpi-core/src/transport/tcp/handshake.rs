//! The first bytes on every TCP connection between ranks. The connecting rank sends a
//! hello (magic, wire version, its rank, its job's size and identity, and the secret of the
//! job it connects to); the accepting rank checks all of it and answers with an ack saying
//! whether this connection is the one the pair keeps. Anything else — a port scanner, a
//! stray client, a rank of another job that does not know our secret — fails the check and
//! the connection is closed (and counted), never trusted.
//!
//! A process of another job (connected through `MPI_Comm_connect`/`accept`, `MPI_Comm_join`
//! or `MPI_Comm_spawn`) learnt our secret in that exchange; its hello names its own job
//! (`job`, a number every rank of a job computes alike, `dpm::job_uid`), so it is told
//! apart from our own ranks.

/// Longest secret carried (the launcher's is 32 hex digits).
pub const SECRET_MAX: usize = 64;
const HELLO_MAGIC: &[u8; 8] = b"OXMPITCP";
const ACK_MAGIC: &[u8; 8] = b"OXMPIACK";
pub const WIRE_VERSION: u16 = 2;
/// Fixed part of a hello: magic, version, secret length, rank, size, job.
const HELLO_FIXED: usize = 8 + 2 + 2 + 4 + 4 + 8;
pub const ACK_LEN: usize = 12;

/// The ack's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// This connection carries the pair's traffic.
    Accepted,
    /// Both ranks connected at once and the lower rank's connection wins: drop this one and
    /// wait for the other.
    Duplicate,
}

#[derive(Debug, PartialEq, Eq)]
pub struct Hello {
    pub rank: u32,
    pub size: u32,
    /// The sender's job (`dpm::job_uid`).
    pub job: u64,
    /// The secret of the job the sender connects to.
    pub secret: Vec<u8>,
}

/// Who a checked hello comes from.
#[derive(Debug, PartialEq, Eq)]
pub enum Caller {
    /// A rank of our own job.
    Ours(usize),
    /// Rank `rank` of another job that knows our secret.
    Foreign { job: u64, rank: u32 },
}

/// Why a hello was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    BadMagic,
    BadVersion(u16),
    SecretTooLong(usize),
    WrongSecret,
    WrongJob { size: u32 },
    BadRank(u32),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::BadMagic => write!(f, "not an OxMPI connection (bad magic)"),
            Refusal::BadVersion(v) => write!(f, "OxMPI TCP wire version {v}, expected {WIRE_VERSION}"),
            Refusal::SecretTooLong(n) => write!(f, "secret of {n} bytes (at most {SECRET_MAX})"),
            Refusal::WrongSecret => write!(f, "wrong job secret"),
            Refusal::WrongJob { size } => write!(f, "a job of {size} ranks, not ours"),
            Refusal::BadRank(r) => write!(f, "rank {r} out of range"),
        }
    }
}

pub fn encode_hello(h: &Hello) -> Vec<u8> {
    let secret = &h.secret[..h.secret.len().min(SECRET_MAX)];
    let mut v = Vec::with_capacity(HELLO_FIXED + secret.len());
    v.extend_from_slice(HELLO_MAGIC);
    v.extend_from_slice(&WIRE_VERSION.to_le_bytes());
    v.extend_from_slice(&(secret.len() as u16).to_le_bytes());
    v.extend_from_slice(&h.rank.to_le_bytes());
    v.extend_from_slice(&h.size.to_le_bytes());
    v.extend_from_slice(&h.job.to_le_bytes());
    v.extend_from_slice(secret);
    v
}

/// Parses a hello at the start of `buf`: `Ok(None)` while incomplete, else the hello and
/// its length, or why it is refused. Checks the magic as soon as 8 bytes are in, so
/// garbage is refused without waiting for more.
pub fn decode_hello(buf: &[u8]) -> Result<Option<(Hello, usize)>, Refusal> {
    let n = buf.len().min(8);
    if buf[..n] != HELLO_MAGIC[..n] {
        return Err(Refusal::BadMagic);
    }
    if buf.len() < HELLO_FIXED {
        return Ok(None);
    }
    let u16_at = |i: usize| u16::from_le_bytes([buf[i], buf[i + 1]]);
    let u32_at = |i: usize| u32::from_le_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
    let version = u16_at(8);
    if version != WIRE_VERSION {
        return Err(Refusal::BadVersion(version));
    }
    let slen = u16_at(10) as usize;
    if slen > SECRET_MAX {
        return Err(Refusal::SecretTooLong(slen));
    }
    let total = HELLO_FIXED + slen;
    if buf.len() < total {
        return Ok(None);
    }
    let job = u64::from_le_bytes(buf[20..28].try_into().unwrap());
    Ok(Some((Hello { rank: u32_at(12), size: u32_at(16), job, secret: buf[HELLO_FIXED..total].to_vec() }, total)))
}

/// Checks a hello against this job (`job`, `size`, our rank `me`): its secret (compared in
/// constant time), then, from our own job, its size and rank.
pub fn check_hello(h: &Hello, secret: &[u8], job: u64, size: usize, me: usize) -> Result<Caller, Refusal> {
    let secret = &secret[..secret.len().min(SECRET_MAX)];
    let differ = h.secret.len() != secret.len() || h.secret.iter().zip(secret).fold(0u8, |acc, (a, b)| acc | (a ^ b)) != 0;
    if differ {
        return Err(Refusal::WrongSecret);
    }
    if h.job != job {
        return Ok(Caller::Foreign { job: h.job, rank: h.rank });
    }
    if h.size as usize != size {
        return Err(Refusal::WrongJob { size: h.size });
    }
    if h.rank as usize >= size || h.rank as usize == me {
        return Err(Refusal::BadRank(h.rank));
    }
    Ok(Caller::Ours(h.rank as usize))
}

pub fn encode_ack(v: Verdict) -> [u8; ACK_LEN] {
    let mut a = [0u8; ACK_LEN];
    a[..8].copy_from_slice(ACK_MAGIC);
    a[8..].copy_from_slice(&(v as u32).to_le_bytes());
    a
}

/// Parses an ack (exactly `ACK_LEN` bytes); None when it is not one.
pub fn decode_ack(buf: &[u8; ACK_LEN]) -> Option<Verdict> {
    if &buf[..8] != ACK_MAGIC {
        return None;
    }
    match u32::from_le_bytes([buf[8], buf[9], buf[10], buf[11]]) {
        0 => Some(Verdict::Accepted),
        1 => Some(Verdict::Duplicate),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_round_trip_and_checks() {
        let h = Hello { rank: 3, size: 8, job: 77, secret: b"0123456789abcdef".to_vec() };
        let bytes = encode_hello(&h);
        for cut in 0..bytes.len() {
            assert_eq!(decode_hello(&bytes[..cut]), Ok(None));
        }
        let (got, n) = decode_hello(&bytes).unwrap().unwrap();
        assert_eq!((&got, n), (&h, bytes.len()));
        assert_eq!(check_hello(&got, b"0123456789abcdef", 77, 8, 0), Ok(Caller::Ours(3)));
        assert_eq!(check_hello(&got, b"0123456789abcdeX", 77, 8, 0), Err(Refusal::WrongSecret));
        assert_eq!(check_hello(&got, b"0123456789abcde", 77, 8, 0), Err(Refusal::WrongSecret));
        assert_eq!(check_hello(&got, b"0123456789abcdef", 77, 4, 0), Err(Refusal::WrongJob { size: 8 }));
        assert_eq!(check_hello(&got, b"0123456789abcdef", 77, 8, 3), Err(Refusal::BadRank(3)));
        // Another job that knows our secret: any size and rank; without it: refused.
        assert_eq!(check_hello(&got, b"0123456789abcdef", 78, 4, 3), Ok(Caller::Foreign { job: 77, rank: 3 }));
        assert_eq!(check_hello(&got, b"0123456789abcdeX", 78, 4, 3), Err(Refusal::WrongSecret));
        assert_eq!(decode_hello(b"GET / HTTP/1.1\r\n"), Err(Refusal::BadMagic));
        assert_eq!(decode_hello(b"OXMQ"), Err(Refusal::BadMagic));
        for v in [Verdict::Accepted, Verdict::Duplicate] {
            assert_eq!(decode_ack(&encode_ack(v)), Some(v));
        }
    }
}
