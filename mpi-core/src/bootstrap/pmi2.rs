//! PMI-2 wire client: strict request/response over `PMI_FD` (Slurm's `--mpi=pmi2`, hydra,
//! our `mpirun`) or `PMI_PORT` (hydra `-pmi-port`; unlike PMI-1 there is no `initack`: the
//! rank is `PMI_ID`, sent in `fullinit`).
//!
//! A session, as Slurm 22.05 and hydra 4.0 run it (`../shared/notes/pmi-transcripts/`):
//!
//! ```text
//! C>S cmd=init pmi_version=2 pmi_subversion=0\n          a PMI-1 line: picks the protocol
//! S>C cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n
//! C>S 51    cmd=fullinit;pmijobid=2.0;pmirank=0;threaded=FALSE;
//! S>C 114   cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=0;size=2;appnum=-1;debugged=FALSE;pmiverbose=FALSE;
//! C>S 14    cmd=job-getid;
//! S>C 38    cmd=job-getid-response;rc=0;jobid=2.0;
//! C>S 44    cmd=info-getjobattr;key=PMI_process_mapping;
//! C>S 45    cmd=kvs-put;key=addr-0;value=127.0.0.1:55765;
//! C>S 14    cmd=kvs-fence;
//! C>S 42    cmd=kvs-get;jobid=2.0;srcid=-1;key=addr-0;
//! C>S 13    cmd=finalize;
//! ```
//!
//! After the init line every message is a frame: a 6-byte ASCII length (Slurm pads it on
//! the right, hydra on the left; we send it left-justified like MPICH) and a body
//! `cmd=<name>;key=value;…;`. Servers order the pairs differently (Slurm puts `rc` first,
//! hydra last) and add their own (`errmsg`, `spawner-jobid`), so replies are looked up by
//! key. Values must not contain `;`: neither server unescapes `;;` (ours are hex). Slurm
//! answers `abort` by killing the step, hydra does not know the command: we never wait for
//! a reply to it. Node attributes (`info-putnodeattr`/`info-getnodeattr`) are not used:
//! they live in each node's slurmstepd, and a waiting get for another node's key hangs.

use super::conn::PmiConn;
use super::pmi1::line_request;
use super::pmi_wire::{parse_pmi2_body, parse_pmi2_header, Message, PMI2_HEADER_LEN};
use std::os::fd::RawFd;

/// What `fullinit-response` says about this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullInit {
    pub rank: usize,
    pub size: usize,
    /// Slurm -1, hydra and our mpirun 0.
    pub appnum: i32,
    /// The parent job's id when this job was spawned (`MPI_Comm_spawn`), else `None`.
    pub spawner_jobid: Option<String>,
    pub debugged: bool,
    pub pmiverbose: bool,
}

/// A PMI-2 connection.
pub struct Pmi2Client {
    conn: PmiConn,
}

/// `TRUE`/`FALSE` as PMI-2 spells booleans (case-insensitive; absent is false).
fn flag(m: &Message, key: &str) -> bool {
    m.get(key).is_some_and(|v| v.eq_ignore_ascii_case("TRUE"))
}

/// `msg` made safe for a PMI-2 value: no `;` (would end the pair), no control characters,
/// bounded so the frame stays small.
fn sanitize_value(msg: &str) -> String {
    msg.chars()
        .map(|c| {
            if c == ';' {
                ','
            } else if c.is_control() {
                ' '
            } else {
                c
            }
        })
        .take(512)
        .collect()
}

impl Pmi2Client {
    fn new(conn: PmiConn) -> Pmi2Client {
        Pmi2Client { conn }
    }

    /// Take ownership of an inherited PMI fd (marked close-on-exec).
    ///
    /// # Safety
    /// `fd` must be an open fd that nothing else in the process owns or closes.
    pub unsafe fn from_fd(fd: RawFd) -> Pmi2Client {
        // SAFETY: forwarded from the caller.
        Pmi2Client::new(unsafe { PmiConn::from_fd(fd) })
    }

    /// Connect to hydra's `PMI_PORT` (`host:port`).
    pub fn connect_tcp(port: &str) -> Result<Pmi2Client, String> {
        Ok(Pmi2Client::new(PmiConn::connect_tcp(port)?))
    }

    /// The start-up handshake: the PMI-1 `init` line asking for version 2, then `fullinit`
    /// with our rank (`PMI_RANK`, or hydra's `PMI_ID`) and, where the launcher gave one,
    /// `PMI_JOBID` (Slurm sends it back as the job id).
    pub fn init(&mut self, pmirank: i64, pmijobid: Option<&str>) -> Result<FullInit, String> {
        let hello = Message::new("init")
            .with("pmi_version", 2)
            .with("pmi_subversion", 0);
        let reply = line_request(&mut self.conn, &hello, "response_to_init")?;
        let version = reply.get_int("pmi_version").unwrap_or(2);
        if !reply.is_ok() || version != 2 {
            return Err(format!("the PMI server refused PMI-2 (`{reply}`)"));
        }
        let mut req = Message::new("fullinit");
        if let Some(j) = pmijobid.filter(|j| !j.is_empty() && !j.contains(';')) {
            req = req.with("pmijobid", j);
        }
        let req = req.with("pmirank", pmirank).with("threaded", "FALSE");
        let r = self.request(&req, "fullinit-response")?;
        let int = |k: &str| r.get_int(k).map_err(|e| e.0);
        let (rank, size) = (int("rank")?, int("size")?);
        if size < 1 || rank < 0 || rank >= size {
            return Err(format!("fullinit-response gave rank {rank} of size {size}"));
        }
        Ok(FullInit {
            rank: rank as usize,
            size: size as usize,
            appnum: r.get_int("appnum").unwrap_or(0) as i32,
            spawner_jobid: r
                .get("spawner-jobid")
                .filter(|s| !s.is_empty())
                .map(str::to_string),
            debugged: flag(&r, "debugged"),
            pmiverbose: flag(&r, "pmiverbose"),
        })
    }

    /// Send one frame in a single `write()` (never pipelined).
    pub fn send(&mut self, msg: &Message) -> Result<(), String> {
        let frame = msg.to_pmi2_frame().map_err(|e| e.0)?;
        self.conn.write_request(&frame)
    }

    /// Read the next frame and parse it (either justification of the length header).
    pub fn read_message(&mut self) -> Result<Message, String> {
        let header = self.conn.read_exact(PMI2_HEADER_LEN)?;
        let len = parse_pmi2_header(&header)
            .map_err(|e| format!("the PMI server sent a broken frame: {e}"))?;
        let body = self.conn.read_exact(len)?;
        parse_pmi2_body(&body).map_err(|e| format!("the PMI server sent a broken frame: {e}"))
    }

    /// Send `msg`, wait for the reply named `expect` and require `rc` 0 (absent counts as 0).
    pub fn request(&mut self, msg: &Message, expect: &str) -> Result<Message, String> {
        self.send(msg)?;
        let reply = self.read_message()?;
        if reply.cmd != expect {
            return Err(format!(
                "PMI server answered `{reply}` to `{msg}` (expected cmd={expect})"
            ));
        }
        if !reply.is_ok() {
            let why = reply
                .get("errmsg")
                .or(reply.get("msg"))
                .unwrap_or("no reason given");
            return Err(format!(
                "the PMI server failed `{}` with rc={}: {why}",
                msg.cmd,
                reply.rc()
            ));
        }
        Ok(reply)
    }

    /// The job id (`<jobid>.<stepid>` under Slurm, the kvsname elsewhere).
    pub fn job_id(&mut self) -> Result<String, String> {
        let r = self.request(&Message::new("job-getid"), "job-getid-response")?;
        match r.get("jobid") {
            Some(j) if !j.is_empty() => Ok(j.to_string()),
            _ => Err(format!("job-getid-response carries no job id (`{r}`)")),
        }
    }

    /// A job attribute (`PMI_process_mapping`, `universeSize`), `None` if the server has none.
    pub fn job_attr(&mut self, key: &str) -> Result<Option<String>, String> {
        let r = self.request(
            &Message::new("info-getjobattr").with("key", key),
            "info-getjobattr-response",
        )?;
        Ok(if flag(&r, "found") {
            r.get("value").map(str::to_string)
        } else {
            None
        })
    }

    /// Put a pair into the job's KVS; visible to everyone after the next fence.
    pub fn put(&mut self, key: &str, value: &str) -> Result<(), String> {
        self.request(
            &Message::new("kvs-put")
                .with("key", key)
                .with("value", value),
            "kvs-put-response",
        )?;
        Ok(())
    }

    /// Collective: returns when every rank entered it, with all earlier puts visible.
    pub fn fence(&mut self) -> Result<(), String> {
        self.request(&Message::new("kvs-fence"), "kvs-fence-response")?;
        Ok(())
    }

    /// Get a pair of job `jobid` (any source rank); `None` if nobody put it.
    pub fn get(&mut self, jobid: &str, key: &str) -> Result<Option<String>, String> {
        let msg = Message::new("kvs-get")
            .with("jobid", jobid)
            .with("srcid", -1)
            .with("key", key);
        let r = self.request(&msg, "kvs-get-response")?;
        Ok(if flag(&r, "found") {
            r.get("value").map(str::to_string)
        } else {
            None
        })
    }

    /// Ask for the whole job to be killed. No reply is awaited: Slurm kills the step
    /// instead of answering, hydra does not know the command (and tears the job down when
    /// the rank exits).
    pub fn abort(&mut self, msg: &str) -> Result<(), String> {
        self.send(
            &Message::new("abort")
                .with("isworld", "TRUE")
                .with("msg", sanitize_value(msg)),
        )
    }

    /// Leave the job; the server closes the connection afterwards.
    pub fn finalize(&mut self) -> Result<(), String> {
        self.request(&Message::new("finalize"), "finalize-response")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::IntoRawFd;
    use std::os::unix::net::UnixStream;
    use std::thread;

    const INIT_OK: &[u8] = b"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n";

    /// `rest` after a successful init and fullinit (rank 0 of 2).
    fn started(rest: Vec<(&'static str, Vec<u8>)>) -> Vec<(&'static str, Vec<u8>)> {
        let mut script = vec![
            ("cmd=init", INIT_OK.to_vec()),
            (
                "cmd=fullinit",
                frame("cmd=fullinit-response;rc=0;rank=0;size=2;"),
            ),
        ];
        script.extend(rest);
        script
    }

    /// A frame with hydra's right-justified header.
    fn frame(body: &str) -> Vec<u8> {
        format!("{:>6}{body}", body.len()).into_bytes()
    }

    /// A fake server: reads each request (a line first, then frames), checks it against
    /// the script and answers with the scripted bytes exactly as a real server wrote them;
    /// an empty reply, or the end of the script, closes the connection. Returns what the
    /// client sent, request by request.
    fn serve(
        script: Vec<(&'static str, Vec<u8>)>,
    ) -> (Pmi2Client, thread::JoinHandle<Vec<String>>) {
        let (a, mut b) = UnixStream::pair().unwrap();
        // SAFETY: `a` is a fresh socket whose ownership moves into the client.
        let client = unsafe { Pmi2Client::from_fd(a.into_raw_fd()) };
        let h = thread::spawn(move || {
            let mut seen = Vec::new();
            let mut first = true;
            for (want, reply) in script {
                let req = if first {
                    let mut line = Vec::new();
                    let mut byte = [0u8; 1];
                    while byte[0] != b'\n' {
                        if b.read(&mut byte).unwrap() == 0 {
                            return seen;
                        }
                        line.push(byte[0]);
                    }
                    first = false;
                    String::from_utf8(line).unwrap()
                } else {
                    let mut hdr = [0u8; 6];
                    if b.read_exact(&mut hdr).is_err() {
                        return seen;
                    }
                    let n = parse_pmi2_header(&hdr).unwrap();
                    let mut body = vec![0u8; n];
                    b.read_exact(&mut body).unwrap();
                    format!(
                        "{}{}",
                        String::from_utf8(hdr.to_vec()).unwrap(),
                        String::from_utf8(body).unwrap()
                    )
                };
                assert!(
                    req.contains(want),
                    "expected a request with `{want}`, got `{req}`"
                );
                seen.push(req);
                if reply.is_empty() {
                    break; // hang up
                }
                b.write_all(&reply).unwrap();
            }
            seen
        });
        (client, h)
    }

    /// Slurm 22.05, `srun -N2 -n4 --mpi=pmi2`, rank 2 (replies byte for byte).
    #[test]
    fn slurm_session() {
        let (mut c, h) = serve(vec![
            ("cmd=init pmi_version=2 pmi_subversion=0\n", b"cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n".to_vec()),
            ("cmd=fullinit;pmijobid=4.0;pmirank=2;threaded=FALSE;", b"114   cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=2;size=4;appnum=-1;debugged=FALSE;pmiverbose=FALSE;".to_vec()),
            ("cmd=job-getid;", b"38    cmd=job-getid-response;rc=0;jobid=4.0;".to_vec()),
            ("cmd=info-getjobattr;key=PMI_process_mapping;", b"68    cmd=info-getjobattr-response;rc=0;found=TRUE;value=(vector,(0,2,2));".to_vec()),
            ("key=universeSize;", b"53    cmd=info-getjobattr-response;rc=0;found=TRUE;value=4;".to_vec()),
            ("45    cmd=kvs-put;key=addr-2;value=127.0.0.1:60339;", b"26    cmd=kvs-put-response;rc=0;".to_vec()),
            ("14    cmd=kvs-fence;", b"28    cmd=kvs-fence-response;rc=0;".to_vec()),
            ("42    cmd=kvs-get;jobid=4.0;srcid=-1;key=addr-0;", b"59    cmd=kvs-get-response;rc=0;found=TRUE;value=127.0.0.1:54851;".to_vec()),
            ("key=no-such-key;", b"38    cmd=kvs-get-response;rc=0;found=FALSE;".to_vec()),
            ("13    cmd=finalize;", b"27    cmd=finalize-response;rc=0;".to_vec()),
        ]);
        let fi = FullInit {
            rank: 2,
            size: 4,
            appnum: -1,
            spawner_jobid: None,
            debugged: false,
            pmiverbose: false,
        };
        let want = Session {
            pmijobid: Some("4.0"),
            job: "4.0",
            map: "(vector,(0,2,2))",
            universe: Some("4"),
            put: ("addr-2", "127.0.0.1:60339"),
            addr0: "127.0.0.1:54851",
        };
        run_session(&mut c, fi, &want);
        assert_eq!(h.join().unwrap().len(), 10);
    }

    /// What a transcript's session must yield.
    struct Session {
        pmijobid: Option<&'static str>,
        job: &'static str,
        map: &'static str,
        universe: Option<&'static str>,
        put: (&'static str, &'static str),
        addr0: &'static str,
    }

    /// The probe's session: start-up, job id, attributes, put, fence, a found and a missing
    /// key, finalize.
    fn run_session(c: &mut Pmi2Client, fi: FullInit, want: &Session) {
        assert_eq!(c.init(fi.rank as i64, want.pmijobid).unwrap(), fi);
        assert_eq!(c.job_id().unwrap(), want.job);
        assert_eq!(
            c.job_attr("PMI_process_mapping").unwrap().as_deref(),
            Some(want.map)
        );
        assert_eq!(
            c.job_attr("universeSize").unwrap().as_deref(),
            want.universe
        );
        c.put(want.put.0, want.put.1).unwrap();
        c.fence().unwrap();
        assert_eq!(
            c.get(want.job, "addr-0").unwrap().as_deref(),
            Some(want.addr0)
        );
        assert_eq!(c.get(want.job, "no-such-key").unwrap(), None);
        c.finalize().unwrap();
    }

    /// hydra (MPICH 4.0.2 `mpiexec`): rc last, right-justified length header, no universe
    /// size, no `pmijobid` sent (hydra sets no PMI_JOBID).
    #[test]
    fn hydra_session() {
        let (mut c, h) = serve(vec![
            ("cmd=init pmi_version=2", b"cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n".to_vec()),
            ("38    cmd=fullinit;pmirank=1;threaded=FALSE;", b"   113cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=1;size=2;appnum=0;debugged=FALSE;pmiverbose=FALSE;rc=0;".to_vec()),
            ("cmd=job-getid;", b"    58cmd=job-getid-response;jobid=kvs_17009_0_47930458_vm;rc=0;".to_vec()),
            ("key=PMI_process_mapping;", b"    68cmd=info-getjobattr-response;found=TRUE;value=(vector,(0,1,1));rc=0;".to_vec()),
            ("key=universeSize;", b"    46cmd=info-getjobattr-response;found=FALSE;rc=0;".to_vec()),
            ("cmd=kvs-put;", frame("cmd=kvs-put-response;rc=0;")),
            ("cmd=kvs-fence;", b"    28cmd=kvs-fence-response;rc=0;".to_vec()),
            ("62    cmd=kvs-get;jobid=kvs_17009_0_47930458_vm;srcid=-1;key=addr-0;", b"    59cmd=kvs-get-response;found=TRUE;value=127.0.0.1:54801;rc=0;".to_vec()),
            ("key=no-such-key;", b"    38cmd=kvs-get-response;found=FALSE;rc=0;".to_vec()),
            ("cmd=finalize;", b"    27cmd=finalize-response;rc=0;".to_vec()),
        ]);
        let fi = FullInit {
            rank: 1,
            size: 2,
            appnum: 0,
            spawner_jobid: None,
            debugged: false,
            pmiverbose: false,
        };
        let want = Session {
            pmijobid: None,
            job: "kvs_17009_0_47930458_vm",
            map: "(vector,(0,1,1))",
            universe: None,
            put: ("addr-1", "127.0.0.1:36123"),
            addr0: "127.0.0.1:54801",
        };
        run_session(&mut c, fi, &want);
        assert_eq!(h.join().unwrap().len(), 10);
    }

    /// The init reply and the first frame in one read (a fast server): the frame must stay
    /// buffered. Extra and reordered fields, a spawned job, flags set.
    #[test]
    fn coalesced_replies_and_extra_fields() {
        let (mut c, h) = serve(vec![(
            "cmd=init",
            [
                INIT_OK,
                &frame("cmd=fullinit-response;size=3;extra=1;rank=0;spawner-jobid=7.0;appnum=2;debugged=TRUE;pmiverbose=true;pmi-version=2;pmi-subversion=0;rc=0;"),
            ]
            .concat(),
        ), ("cmd=fullinit", Vec::new())]);
        let fi = c.init(0, None).unwrap();
        assert_eq!(
            fi,
            FullInit {
                rank: 0,
                size: 3,
                appnum: 2,
                spawner_jobid: Some("7.0".into()),
                debugged: true,
                pmiverbose: true
            }
        );
        h.join().unwrap();
    }

    #[test]
    fn errors_are_reported() {
        // rc≠0 with hydra's errmsg.
        let (mut c, h) = serve(vec![
            ("cmd=init", INIT_OK.to_vec()),
            ("cmd=fullinit", frame("cmd=fullinit-response;rank=0;size=1;appnum=0;rc=0;debugged=FALSE;pmiverbose=FALSE;")),
            ("cmd=kvs-put", frame("cmd=kvs-put-response;rc=1;errmsg=duplicate_key;")),
            ("cmd=kvs-fence", frame("cmd=kvs-put-response;rc=0;")),
        ]);
        c.init(0, None).unwrap();
        let e = c.put("a", "b").unwrap_err();
        assert!(e.contains("rc=1") && e.contains("duplicate_key"), "{e}");
        let e = c.fence().unwrap_err();
        assert!(e.contains("expected cmd=kvs-fence-response"), "{e}");
        h.join().unwrap();

        // A server that only speaks PMI-1.
        let (mut c, h) = serve(vec![(
            "cmd=init",
            b"cmd=response_to_init rc=-1 pmi_version=1 pmi_subversion=1\n".to_vec(),
        )]);
        assert!(c.init(0, None).unwrap_err().contains("refused PMI-2"));
        h.join().unwrap();

        // Impossible rank, broken length header.
        let (mut c, h) = serve(vec![
            ("cmd=init", INIT_OK.to_vec()),
            (
                "cmd=fullinit",
                frame("cmd=fullinit-response;rc=0;rank=5;size=2;"),
            ),
        ]);
        assert!(c.init(0, None).unwrap_err().contains("rank 5 of size 2"));
        h.join().unwrap();
        let (mut c, h) = serve(vec![
            ("cmd=init", INIT_OK.to_vec()),
            (
                "cmd=fullinit",
                b"4x    cmd=fullinit-response;rc=0;".to_vec(),
            ),
        ]);
        assert!(c.init(0, None).unwrap_err().contains("broken frame"));
        h.join().unwrap();
    }

    #[test]
    fn server_that_closes() {
        // Before answering init.
        let (mut c, h) = serve(vec![("cmd=init", b"".to_vec())]);
        assert!(c
            .init(0, None)
            .unwrap_err()
            .contains("closed the connection"));
        h.join().unwrap();
        // In the middle of a frame (header promises more than arrives).
        let (mut c, h) = serve(vec![
            ("cmd=init", INIT_OK.to_vec()),
            (
                "cmd=fullinit",
                b"114   cmd=fullinit-response;rc=0;".to_vec(),
            ),
        ]);
        assert!(c
            .init(0, None)
            .unwrap_err()
            .contains("closed the connection"));
        h.join().unwrap();
        // During a fence (the launcher died).
        let (mut c, h) = serve(started(vec![("cmd=kvs-fence", b"".to_vec())]));
        c.init(0, None).unwrap();
        assert!(c.fence().unwrap_err().contains("closed the connection"));
        h.join().unwrap();
    }

    #[test]
    fn abort_sends_one_frame_without_waiting() {
        let (mut c, h) = serve(started(vec![(
            "cmd=abort;isworld=TRUE;msg=rank 0: bad, input file;",
            b"".to_vec(),
        )]));
        c.init(0, None).unwrap();
        c.abort("rank 0: bad; input\tfile").unwrap();
        assert_eq!(h.join().unwrap().len(), 3);
        assert_eq!(sanitize_value(&"x".repeat(600)).len(), 512);
    }
}
