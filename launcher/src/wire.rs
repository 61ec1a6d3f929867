//! The connection between `mpirun` and its proxies (one per host): length-prefixed frames,
//! each a type byte and fields (integers little-endian, byte strings with a u32 length).
//!
//! A proxy connects to `mpirun` and sends `Hello` (the job secret, its host index); only
//! then does `mpirun` send it the `Start` spec. After that: output, PMI fences and failure
//! reports go up; stdin, fence results and `Kill` come down; a proxy ends with
//! `Done` once every rank of its host is gone.

use crate::job::Failure;
use crate::pmi_server::PmiState;
use crate::sys::ExitStatus;

/// Largest frame either side accepts (a fence of many business cards fits easily).
pub const FRAME_MAX: usize = 64 << 20;
const MAGIC: &[u8; 8] = b"OXMPIPRX";

/// What a proxy needs to start its host's ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProxySpec {
    pub kvsname: String,
    /// Ranks in the job.
    pub np: u32,
    /// This host's node index in `mapping`.
    pub node: u32,
    /// The job's ranks on this host (global ranks).
    pub ranks: Vec<u32>,
    /// The job's programs (one, or one per `:`-separated part of an MPMD command line),
    /// in rank order.
    pub apps: Vec<AppDesc>,
    /// The ranks' environment (without per-rank PMI variables).
    pub env: Vec<(String, String)>,
    pub tag_output: bool,
    /// `PMI_process_mapping` of the whole job.
    pub mapping: String,
}

/// One program of a job: the next `np` ranks run it (MPMD jobs have several).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppDesc {
    /// The program and its arguments as the user gave them (resolved on each host).
    pub argv: Vec<String>,
    pub wdir: Option<String>,
    /// Variables for this program's ranks only (`-env` after a `:`), over the job's.
    pub env: Vec<(String, String)>,
    pub np: u32,
}

/// Proxy → mpirun.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Up {
    Hello { secret: String, host: u32, pid: u32 },
    /// A hello from a proxy that knows its host by name only (all proxies of one `srun`
    /// share a command line; `name` is the Slurm node it runs on).
    HelloNamed { secret: String, name: String, pid: u32 },
    /// Output of `rank` (1 stdout, 2 stderr), whole lines (tagged when asked).
    Output { rank: u32, stream: u8, data: Vec<u8> },
    /// Every rank of the host is in the PMI barrier; the pairs put since the last one.
    Fence { kvs: Vec<(String, String)> },
    /// No rank of the host can enter a barrier any more (all finalized or gone).
    Retired,
    /// A failure on the host (the proxy already ends its ranks).
    Failed(Failure),
    /// A rank of the host exited non-zero after `MPI_Finalize` (the job goes on).
    LateExit(Failure),
    /// Every rank of the host has exited and its output is forwarded.
    Done,
}

/// mpirun → proxy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Down {
    Start(ProxySpec),
    /// The barrier is complete everywhere: the pairs every host put.
    FenceDone { kvs: Vec<(String, String)> },
    /// Bytes for rank 0's stdin; empty = end of input.
    Stdin(Vec<u8>),
    /// The job is over: send this signal to every rank (SIGTERM, or the one mpirun got),
    /// SIGKILL after the grace time.
    Kill(i32),
}

struct Enc(Vec<u8>);

impl Enc {
    fn new(kind: u8) -> Enc {
        let mut v = vec![0u8; 4];
        v.push(kind);
        Enc(v)
    }
    fn u8(&mut self, x: u8) -> &mut Self {
        self.0.push(x);
        self
    }
    fn u32(&mut self, x: u32) -> &mut Self {
        self.0.extend_from_slice(&x.to_le_bytes());
        self
    }
    fn i32(&mut self, x: i32) -> &mut Self {
        self.u32(x as u32)
    }
    fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.u32(b.len() as u32);
        self.0.extend_from_slice(b);
        self
    }
    fn str(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes())
    }
    fn pairs(&mut self, kv: &[(String, String)]) -> &mut Self {
        self.u32(kv.len() as u32);
        for (k, v) in kv {
            self.str(k).str(v);
        }
        self
    }
    fn finish(mut self) -> Vec<u8> {
        let n = (self.0.len() - 4) as u32;
        self.0[..4].copy_from_slice(&n.to_le_bytes());
        self.0
    }
}

struct Dec<'a> {
    b: &'a [u8],
}

impl<'a> Dec<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.b.len() < n {
            return Err("truncated frame".into());
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn i32(&mut self) -> Result<i32, String> {
        Ok(self.u32()? as i32)
    }
    fn bytes(&mut self) -> Result<Vec<u8>, String> {
        let n = self.u32()? as usize;
        Ok(self.take(n)?.to_vec())
    }
    fn str(&mut self) -> Result<String, String> {
        String::from_utf8(self.bytes()?).map_err(|_| "a string that is not UTF-8".to_string())
    }
    fn pairs(&mut self) -> Result<Vec<(String, String)>, String> {
        let n = self.u32()? as usize;
        if n > self.b.len() / 8 {
            return Err("a list longer than its frame".into());
        }
        (0..n).map(|_| Ok((self.str()?, self.str()?))).collect()
    }
    fn end(&self) -> Result<(), String> {
        if self.b.is_empty() {
            Ok(())
        } else {
            Err("trailing bytes in a frame".into())
        }
    }
}

/// Cuts the next frame (type byte, body) out of `buf`: `Ok(None)` while incomplete.
fn split(buf: &[u8]) -> Result<Option<(u8, &[u8], usize)>, String> {
    if buf.len() < 4 {
        return Ok(None);
    }
    let n = u32::from_le_bytes(buf[..4].try_into().unwrap()) as usize;
    if n == 0 || n > FRAME_MAX {
        return Err(format!("a frame of {n} bytes (corrupt stream, or not an OxMPI proxy connection)"));
    }
    if buf.len() < 4 + n {
        return Ok(None);
    }
    Ok(Some((buf[4], &buf[5..4 + n], 4 + n)))
}

fn status_enc(e: &mut Enc, s: ExitStatus) {
    match s {
        ExitStatus::Code(c) => e.u8(0).i32(c),
        ExitStatus::Signal(g) => e.u8(1).i32(g),
    };
}

fn status_dec(d: &mut Dec) -> Result<ExitStatus, String> {
    Ok(match d.u8()? {
        0 => ExitStatus::Code(d.i32()?),
        _ => ExitStatus::Signal(d.i32()?),
    })
}

fn failure_enc(e: &mut Enc, f: &Failure) {
    match f {
        Failure::RankExit { rank, pid, status, state } => {
            e.u8(0).u32(*rank as u32).i32(*pid);
            status_enc(e, *status);
            e.u8(matches!(state, PmiState::Init) as u8);
        }
        Failure::Abort { rank, pid, code } => {
            e.u8(1).u32(*rank as u32).i32(*pid).i32(*code);
        }
        Failure::Protocol { rank, pid, reason } => {
            e.u8(2).u32(*rank as u32).i32(*pid).str(reason);
        }
        Failure::Spawn { rank, reason } => {
            e.u8(3).u32(*rank as u32).str(reason);
        }
        Failure::Signal { sig } => {
            e.u8(4).i32(*sig);
        }
        // Decided by mpirun only.
        Failure::Timeout { .. } | Failure::Host { .. } => {
            e.u8(5).str(&f.message());
        }
    }
}

fn failure_dec(d: &mut Dec) -> Result<Failure, String> {
    Ok(match d.u8()? {
        0 => {
            let (rank, pid) = (d.u32()? as usize, d.i32()?);
            let status = status_dec(d)?;
            let state = if d.u8()? != 0 { PmiState::Init } else { PmiState::Finalized };
            Failure::RankExit { rank, pid, status, state }
        }
        1 => Failure::Abort { rank: d.u32()? as usize, pid: d.i32()?, code: d.i32()? },
        2 => Failure::Protocol { rank: d.u32()? as usize, pid: d.i32()?, reason: d.str()? },
        3 => Failure::Spawn { rank: d.u32()? as usize, reason: d.str()? },
        4 => Failure::Signal { sig: d.i32()? },
        _ => Failure::Host { host: String::new(), reason: d.str()? },
    })
}

impl Up {
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Up::Hello { secret, host, pid } => {
                let mut e = Enc::new(0);
                e.0.extend_from_slice(MAGIC);
                e.str(secret).u32(*host).u32(*pid);
                e.finish()
            }
            Up::Output { rank, stream, data } => {
                let mut e = Enc::new(1);
                e.u32(*rank).u8(*stream).bytes(data);
                e.finish()
            }
            Up::Fence { kvs } => {
                let mut e = Enc::new(2);
                e.pairs(kvs);
                e.finish()
            }
            Up::Retired => Enc::new(3).finish(),
            Up::Failed(f) => {
                let mut e = Enc::new(4);
                failure_enc(&mut e, f);
                e.finish()
            }
            Up::Done => Enc::new(5).finish(),
            Up::LateExit(f) => {
                let mut e = Enc::new(7);
                failure_enc(&mut e, f);
                e.finish()
            }
            Up::HelloNamed { secret, name, pid } => {
                let mut e = Enc::new(6);
                e.0.extend_from_slice(MAGIC);
                e.str(secret).str(name).u32(*pid);
                e.finish()
            }
        }
    }

    /// The next message at the start of `buf` and its length, `Ok(None)` while incomplete.
    pub fn decode(buf: &[u8]) -> Result<Option<(Up, usize)>, String> {
        let Some((kind, body, used)) = split(buf)? else { return Ok(None) };
        let mut d = Dec { b: body };
        let m = match kind {
            0 | 6 => {
                if d.take(8)? != MAGIC {
                    return Err("not an OxMPI proxy (bad magic)".into());
                }
                match kind {
                    0 => Up::Hello { secret: d.str()?, host: d.u32()?, pid: d.u32()? },
                    _ => Up::HelloNamed { secret: d.str()?, name: d.str()?, pid: d.u32()? },
                }
            }
            1 => Up::Output { rank: d.u32()?, stream: d.u8()?, data: d.bytes()? },
            2 => Up::Fence { kvs: d.pairs()? },
            3 => Up::Retired,
            4 => Up::Failed(failure_dec(&mut d)?),
            5 => Up::Done,
            7 => Up::LateExit(failure_dec(&mut d)?),
            k => return Err(format!("unknown proxy message type {k}")),
        };
        d.end()?;
        Ok(Some((m, used)))
    }
}

impl Down {
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Down::Start(s) => {
                let mut e = Enc::new(0);
                e.str(&s.kvsname).u32(s.np).u32(s.node).u32(s.ranks.len() as u32);
                for r in &s.ranks {
                    e.u32(*r);
                }
                e.u32(s.apps.len() as u32);
                for app in &s.apps {
                    e.u32(app.argv.len() as u32);
                    for a in &app.argv {
                        e.str(a);
                    }
                    match &app.wdir {
                        Some(w) => e.u8(1).str(w),
                        None => e.u8(0),
                    };
                    e.pairs(&app.env).u32(app.np);
                }
                e.pairs(&s.env).u8(s.tag_output as u8).str(&s.mapping);
                e.finish()
            }
            Down::FenceDone { kvs } => {
                let mut e = Enc::new(1);
                e.pairs(kvs);
                e.finish()
            }
            Down::Stdin(data) => {
                let mut e = Enc::new(2);
                e.bytes(data);
                e.finish()
            }
            Down::Kill(sig) => {
                let mut e = Enc::new(3);
                e.i32(*sig);
                e.finish()
            }
        }
    }

    pub fn decode(buf: &[u8]) -> Result<Option<(Down, usize)>, String> {
        let Some((kind, body, used)) = split(buf)? else { return Ok(None) };
        let mut d = Dec { b: body };
        let m = match kind {
            0 => {
                let (kvsname, np, node) = (d.str()?, d.u32()?, d.u32()?);
                let n = d.u32()? as usize;
                if n > d.b.len() / 4 {
                    return Err("a rank list longer than its frame".into());
                }
                let ranks = (0..n).map(|_| d.u32()).collect::<Result<Vec<_>, _>>()?;
                let napps = d.u32()? as usize;
                if napps > d.b.len() / 4 {
                    return Err("a program list longer than its frame".into());
                }
                let mut apps = Vec::with_capacity(napps);
                for _ in 0..napps {
                    let n = d.u32()? as usize;
                    if n > d.b.len() / 4 {
                        return Err("an argument list longer than its frame".into());
                    }
                    let argv = (0..n).map(|_| d.str()).collect::<Result<Vec<_>, _>>()?;
                    let wdir = if d.u8()? != 0 { Some(d.str()?) } else { None };
                    let env = d.pairs()?;
                    apps.push(AppDesc { argv, wdir, env, np: d.u32()? });
                }
                let env = d.pairs()?;
                let tag_output = d.u8()? != 0;
                let mapping = d.str()?;
                Down::Start(ProxySpec { kvsname, np, node, ranks, apps, env, tag_output, mapping })
            }
            1 => Down::FenceDone { kvs: d.pairs()? },
            2 => Down::Stdin(d.bytes()?),
            3 => Down::Kill(d.i32()?),
            k => return Err(format!("unknown mpirun message type {k}")),
        };
        d.end()?;
        Ok(Some((m, used)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip_up(m: Up) {
        let b = m.encode();
        for cut in 0..b.len() {
            assert_eq!(Up::decode(&b[..cut]), Ok(None));
        }
        let mut two = b.clone();
        two.extend_from_slice(&b);
        assert_eq!(Up::decode(&two), Ok(Some((m, b.len()))));
    }

    fn round_trip_down(m: Down) {
        let b = m.encode();
        for cut in 0..b.len() {
            assert_eq!(Down::decode(&b[..cut]), Ok(None));
        }
        assert_eq!(Down::decode(&b), Ok(Some((m, b.len()))));
    }

    #[test]
    fn every_message_round_trips() {
        round_trip_up(Up::Hello { secret: "00ff".into(), host: 3, pid: 4242 });
        round_trip_up(Up::HelloNamed { secret: "00ff".into(), name: "n[1]".into(), pid: 7 });
        round_trip_up(Up::Output { rank: 7, stream: 2, data: b"[7] hello\n".to_vec() });
        round_trip_up(Up::Fence { kvs: vec![("tcp-card-0".into(), "10.0.0.1:4000 h1".into()), ("k".into(), String::new())] });
        round_trip_up(Up::Retired);
        round_trip_up(Up::Done);
        round_trip_up(Up::Failed(Failure::RankExit { rank: 3, pid: 99, status: ExitStatus::Signal(9), state: PmiState::Init }));
        round_trip_up(Up::Failed(Failure::Abort { rank: 1, pid: 5, code: 7 }));
        round_trip_up(Up::Failed(Failure::Protocol { rank: 1, pid: 5, reason: "garbage".into() }));
        round_trip_up(Up::Failed(Failure::Spawn { rank: 2, reason: "not found".into() }));
        round_trip_up(Up::Failed(Failure::Signal { sig: 15 }));
        round_trip_up(Up::LateExit(Failure::RankExit { rank: 2, pid: 7, status: ExitStatus::Code(3), state: PmiState::Finalized }));
        round_trip_down(Down::Start(ProxySpec {
            kvsname: "oxmpi_1_ab".into(),
            np: 4,
            node: 1,
            ranks: vec![2, 3],
            apps: vec![
                AppDesc { argv: vec!["./a.out".into(), "x y".into()], wdir: Some("/tmp".into()), env: vec![], np: 3 },
                AppDesc { argv: vec!["./b".into()], wdir: None, env: vec![("B".into(), "1".into())], np: 1 },
            ],
            env: vec![("PATH".into(), "/bin".into())],
            tag_output: true,
            mapping: "(vector,(0,2,2))".into(),
        }));
        round_trip_down(Down::FenceDone { kvs: vec![("a".into(), "b".into())] });
        round_trip_down(Down::Stdin(b"line\n".to_vec()));
        round_trip_down(Down::Stdin(Vec::new()));
        round_trip_down(Down::Kill(2));
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(Up::decode(b"GET / HTTP/1.1\r\n\r\n").is_err());
        assert!(Up::decode(&[0, 0, 0, 0]).is_err());
        let mut hello = Up::Hello { secret: "s".into(), host: 0, pid: 1 }.encode();
        hello[5] = b'X';
        assert!(Up::decode(&hello).unwrap_err().contains("bad magic"));
        let mut lying = Up::Fence { kvs: vec![] }.encode();
        lying[5..9].copy_from_slice(&1000u32.to_le_bytes());
        assert!(Up::decode(&lying).is_err());
        assert!(Down::decode(&[2, 0, 0, 0, 9, 0]).unwrap_err().contains("unknown"));
    }
}
