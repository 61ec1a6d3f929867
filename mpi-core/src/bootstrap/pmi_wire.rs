//! PMI wire format: parsing and formatting of PMI-1 lines and PMI-2 frames.
//!
//! Shared by the PMI client in this crate and by the PMI server in `mpirun`, so both sides
//! agree on one parser. Real servers differ in details (field order, `rc` present or not,
//! extra `msg=`, left- or right-justified PMI-2 length headers), so parsing is
//! order-independent and lenient where servers differ, and strict where input is simply
//! malformed: malformed input is an error, never a panic.
//!
//! * PMI-1: `cmd=<name> key=value key=value\n` — space separated, no quoting, values may
//!   contain `=` (only the first `=` of a pair separates key from value).
//! * PMI-2: `<6-byte ASCII length><body>`, body `cmd=<name>;key=value;…;`. The length counts
//!   the body only and may be left- or right-justified.

use std::fmt;

/// Maximum PMI-1 line length including the `\n` that Slurm handles correctly.
pub const PMI1_MAX_LINE: usize = 1024;
/// Length of the PMI-2 frame header (ASCII decimal, space padded).
pub const PMI2_HEADER_LEN: usize = 6;
/// Largest PMI-2 body we accept; far above what any server sends, small enough to bound memory.
pub const PMI2_MAX_BODY: usize = 64 * 1024;

/// A malformed PMI message (or a message that cannot be encoded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireError(pub String);

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WireError {}

/// One PMI message: the command plus its key/value pairs in wire order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The value of `cmd=` (e.g. `get_result`, `kvs-fence`).
    pub cmd: String,
    /// All other pairs, in the order they appeared / will be written.
    pub pairs: Vec<(String, String)>,
}

impl Message {
    /// A message with a command and no pairs.
    pub fn new(cmd: &str) -> Message {
        Message {
            cmd: cmd.to_string(),
            pairs: Vec::new(),
        }
    }

    /// Builder: append a `key=value` pair.
    pub fn with(mut self, key: &str, value: impl ToString) -> Message {
        self.pairs.push((key.to_string(), value.to_string()));
        self
    }

    /// The value of the first pair named `key`, if any.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The value of `key` parsed as an integer; an error if absent or not a number.
    pub fn get_int(&self, key: &str) -> Result<i64, WireError> {
        let v = self
            .get(key)
            .ok_or_else(|| WireError(format!("PMI message `{}` has no `{key}`", self.cmd)))?;
        v.trim().parse::<i64>().map_err(|_| {
            WireError(format!(
                "PMI message `{}`: `{key}={v}` is not an integer",
                self.cmd
            ))
        })
    }

    /// The return code: `rc` absent means success (hydra omits it), otherwise its value.
    /// An `rc` that is not a number counts as a failure (-1).
    pub fn rc(&self) -> i64 {
        match self.get("rc") {
            None => 0,
            Some(v) => v.trim().parse::<i64>().unwrap_or(-1),
        }
    }

    /// True when the server reported success (`rc` absent or 0).
    pub fn is_ok(&self) -> bool {
        self.rc() == 0
    }

    /// Encode as one PMI-1 line (with the trailing `\n`).
    ///
    /// Keys must be non-empty and contain no space, `=`, `;` or newline; values no space or
    /// newline (servers split on spaces and never unquote).
    pub fn to_pmi1_line(&self) -> Result<String, WireError> {
        check_token("cmd", &self.cmd, false)?;
        let mut line = format!("cmd={}", self.cmd);
        for (k, v) in &self.pairs {
            check_key(k)?;
            check_token(k, v, true)?;
            line.push(' ');
            line.push_str(k);
            line.push('=');
            line.push_str(v);
        }
        line.push('\n');
        Ok(line)
    }

    /// Encode as one PMI-2 frame: left-justified 6-byte length, then `cmd=x;k=v;…;`.
    ///
    /// Values must not contain `;` (neither Slurm nor hydra unescapes `;;`).
    pub fn to_pmi2_frame(&self) -> Result<Vec<u8>, WireError> {
        check_pmi2_value("cmd", &self.cmd)?;
        let mut body = format!("cmd={};", self.cmd);
        for (k, v) in &self.pairs {
            check_key(k)?;
            check_pmi2_value(k, v)?;
            body.push_str(k);
            body.push('=');
            body.push_str(v);
            body.push(';');
        }
        if body.len() > PMI2_MAX_BODY {
            return Err(WireError(format!(
                "PMI-2 message of {} bytes is too long",
                body.len()
            )));
        }
        let mut frame = format!("{:<width$}", body.len(), width = PMI2_HEADER_LEN).into_bytes();
        frame.extend_from_slice(body.as_bytes());
        Ok(frame)
    }
}

impl fmt::Display for Message {
    /// Human-readable form for error messages (PMI-1 style, without the newline).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cmd={}", self.cmd)?;
        for (k, v) in &self.pairs {
            write!(f, " {k}={v}")?;
        }
        Ok(())
    }
}

fn check_key(key: &str) -> Result<(), WireError> {
    if key.is_empty() || key == "cmd" || key.contains(['=', ';']) {
        return Err(WireError(format!("invalid PMI key `{key}`")));
    }
    check_token("key", key, false)
}

/// Rejects whitespace/control characters that would break PMI-1 framing.
fn check_token(what: &str, s: &str, allow_eq: bool) -> Result<(), WireError> {
    if s.is_empty() && what == "cmd" {
        return Err(WireError("empty PMI command".into()));
    }
    if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(WireError(format!(
            "PMI {what} `{s}` contains whitespace or a control character"
        )));
    }
    if !allow_eq && s.contains('=') {
        return Err(WireError(format!("PMI {what} `{s}` contains `=`")));
    }
    Ok(())
}

fn check_pmi2_value(what: &str, s: &str) -> Result<(), WireError> {
    if s.contains(';') || s.chars().any(|c| c.is_control()) {
        return Err(WireError(format!(
            "PMI-2 {what} `{s}` contains `;` or a control character"
        )));
    }
    if what == "cmd" && (s.is_empty() || s.contains('=')) {
        return Err(WireError(format!("invalid PMI-2 command `{s}`")));
    }
    Ok(())
}

/// Parse one PMI-1 line. A single trailing `\n` (and `\r`) is allowed; pairs may come in any
/// order but exactly one `cmd=` must be present.
pub fn parse_pmi1_line(line: &[u8]) -> Result<Message, WireError> {
    let text =
        std::str::from_utf8(line).map_err(|_| WireError("PMI-1 line is not valid UTF-8".into()))?;
    let text = text.strip_suffix('\n').unwrap_or(text);
    let text = text.strip_suffix('\r').unwrap_or(text);
    if text.contains('\n') {
        return Err(WireError("PMI-1 line contains an embedded newline".into()));
    }
    let mut cmd: Option<String> = None;
    let mut pairs = Vec::new();
    for token in text.split(' ').filter(|t| !t.is_empty()) {
        let (k, v) = token.split_once('=').ok_or_else(|| {
            WireError(format!("PMI-1 token `{token}` has no `=` (line `{text}`)"))
        })?;
        if k.is_empty() {
            return Err(WireError(format!("PMI-1 token `{token}` has an empty key")));
        }
        if k == "cmd" {
            if cmd.is_some() {
                return Err(WireError(format!("PMI-1 line has two `cmd=`: `{text}`")));
            }
            if v.is_empty() {
                return Err(WireError("PMI-1 line has an empty `cmd=`".into()));
            }
            cmd = Some(v.to_string());
        } else {
            pairs.push((k.to_string(), v.to_string()));
        }
    }
    let cmd = cmd.ok_or_else(|| WireError(format!("PMI-1 line has no `cmd=`: `{text}`")))?;
    Ok(Message { cmd, pairs })
}

/// Parse the 6-byte PMI-2 length header (left- or right-justified decimal).
pub fn parse_pmi2_header(header: &[u8]) -> Result<usize, WireError> {
    if header.len() != PMI2_HEADER_LEN {
        return Err(WireError(format!(
            "PMI-2 header must be {PMI2_HEADER_LEN} bytes"
        )));
    }
    let text = std::str::from_utf8(header)
        .map_err(|_| WireError("PMI-2 header is not ASCII".into()))?
        .trim_matches(' ');
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(WireError(format!(
            "PMI-2 header `{}` is not a length",
            text.escape_debug()
        )));
    }
    let len: usize = text
        .parse()
        .map_err(|_| WireError(format!("PMI-2 header `{text}` is not a length")))?;
    if len == 0 || len > PMI2_MAX_BODY {
        return Err(WireError(format!("PMI-2 body length {len} out of range")));
    }
    Ok(len)
}

/// Parse a PMI-2 body `cmd=x;k=v;…;` (the final `;` may be missing). `;;` inside a value is the
/// PMI-2 escape for a literal `;`.
pub fn parse_pmi2_body(body: &[u8]) -> Result<Message, WireError> {
    let text =
        std::str::from_utf8(body).map_err(|_| WireError("PMI-2 body is not valid UTF-8".into()))?;
    let mut segments = Vec::new();
    let mut cur = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ';' {
            if chars.peek() == Some(&';') {
                chars.next();
                cur.push(';');
            } else {
                segments.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        segments.push(cur);
    }
    let mut cmd: Option<String> = None;
    let mut pairs = Vec::new();
    for seg in segments {
        let (k, v) = seg
            .split_once('=')
            .ok_or_else(|| WireError(format!("PMI-2 segment `{seg}` has no `=`")))?;
        if k.is_empty() {
            return Err(WireError(format!("PMI-2 segment `{seg}` has an empty key")));
        }
        if k == "cmd" {
            if cmd.is_some() {
                return Err(WireError("PMI-2 message has two `cmd=`".into()));
            }
            if v.is_empty() {
                return Err(WireError("PMI-2 message has an empty `cmd=`".into()));
            }
            cmd = Some(v.to_string());
        } else {
            pairs.push((k.to_string(), v.to_string()));
        }
    }
    let cmd = cmd.ok_or_else(|| WireError(format!("PMI-2 message has no `cmd=`: `{text}`")))?;
    Ok(Message { cmd, pairs })
}

/// Parse a whole PMI-2 frame (header + body) that is already in memory.
pub fn parse_pmi2_frame(frame: &[u8]) -> Result<Message, WireError> {
    if frame.len() < PMI2_HEADER_LEN {
        return Err(WireError("PMI-2 frame shorter than its header".into()));
    }
    let len = parse_pmi2_header(&frame[..PMI2_HEADER_LEN])?;
    let body = &frame[PMI2_HEADER_LEN..];
    if body.len() != len {
        return Err(WireError(format!(
            "PMI-2 frame says {len} bytes but carries {}",
            body.len()
        )));
    }
    parse_pmi2_body(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p1(s: &str) -> Message {
        parse_pmi1_line(s.as_bytes()).unwrap()
    }

    #[test]
    fn pmi1_round_trip() {
        let m = Message::new("put")
            .with("kvsname", "1.0")
            .with("key", "a-0")
            .with("value", "x=y");
        let line = m.to_pmi1_line().unwrap();
        assert_eq!(line, "cmd=put kvsname=1.0 key=a-0 value=x=y\n");
        assert_eq!(parse_pmi1_line(line.as_bytes()).unwrap(), m);
    }

    #[test]
    fn pmi1_slurm_responses() {
        let m = p1("cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1\n");
        assert_eq!(m.cmd, "response_to_init");
        assert!(m.is_ok());
        assert_eq!(m.get_int("pmi_version").unwrap(), 1);
        let m = p1("cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n");
        assert_eq!(m.get_int("vallen_max").unwrap(), 1024);
        assert_eq!(
            p1("cmd=appnum rc=0 appnum=-1\n").get_int("appnum").unwrap(),
            -1
        );
        assert_eq!(
            p1("cmd=universe_size rc=0 size=2\n")
                .get_int("size")
                .unwrap(),
            2
        );
        assert_eq!(
            p1("cmd=my_kvsname rc=0 kvsname=1.0\n").get("kvsname"),
            Some("1.0")
        );
        let m = p1("cmd=get_result rc=0 value=(vector,(0,1,2))\n");
        assert_eq!(m.get("value"), Some("(vector,(0,1,2))"));
        let m = p1("cmd=get_result rc=1\n");
        assert!(!m.is_ok());
        assert_eq!(m.get("value"), None);
        assert!(p1("cmd=put_result rc=0\n").is_ok());
        assert!(p1("cmd=barrier_out rc=0\n").is_ok());
        assert!(p1("cmd=finalize_ack rc=0\n").is_ok());
        assert_eq!(
            p1("cmd=get_result rc=0 value=a=b\n").get("value"),
            Some("a=b")
        );
    }

    #[test]
    fn pmi1_hydra_responses() {
        let m = p1("cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
        assert_eq!(m.cmd, "response_to_init");
        assert!(m.is_ok());
        let m = p1("cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n");
        assert!(m.is_ok());
        assert_eq!(m.get_int("keylen_max").unwrap(), 64);
        assert_eq!(p1("cmd=appnum appnum=0\n").get_int("appnum").unwrap(), 0);
        assert_eq!(
            p1("cmd=universe_size size=-1\n").get_int("size").unwrap(),
            -1
        );
        let m = p1("cmd=my_kvsname kvsname=kvs_16924_0_1702821438_vm\n");
        assert_eq!(m.get("kvsname"), Some("kvs_16924_0_1702821438_vm"));
        let m = p1("cmd=get_result rc=0 msg=success value=(vector,(0,1,1))\n");
        assert!(m.is_ok());
        assert_eq!(m.get("value"), Some("(vector,(0,1,1))"));
        let m = p1("cmd=get_result rc=-1 msg=key_no-such-key_not_found value=unknown\n");
        assert_eq!(m.rc(), -1);
        assert!(p1("cmd=put_result rc=0 msg=success\n").is_ok());
        assert!(p1("cmd=barrier_out\n").is_ok());
        assert!(p1("cmd=finalize_ack\n").is_ok());
        // PMI_PORT handshake lines.
        assert_eq!(p1("cmd=initack\n").cmd, "initack");
        assert_eq!(p1("cmd=set size=2\n").get_int("size").unwrap(), 2);
    }

    #[test]
    fn pmi1_order_independent() {
        let m = p1("rc=0 value=v cmd=get_result");
        assert_eq!(m.cmd, "get_result");
        assert_eq!(m.get("value"), Some("v"));
    }

    #[test]
    fn pmi1_malformed_rejected() {
        for bad in [
            "",
            "\n",
            "cmd=\n",
            "put key=a\n",
            "cmd=put key\n",
            "cmd=put =v\n",
            "cmd=a cmd=b\n",
            "cmd=a\nb=c\n",
        ] {
            assert!(parse_pmi1_line(bad.as_bytes()).is_err(), "accepted {bad:?}");
        }
        assert!(parse_pmi1_line(&[0xff, 0xfe, b'\n']).is_err());
    }

    #[test]
    fn pmi1_encode_rejects_spaces_and_newlines() {
        assert!(Message::new("put")
            .with("value", "a b")
            .to_pmi1_line()
            .is_err());
        assert!(Message::new("put")
            .with("value", "a\n")
            .to_pmi1_line()
            .is_err());
        assert!(Message::new("put").with("k=x", "v").to_pmi1_line().is_err());
        assert!(Message::new("").to_pmi1_line().is_err());
        assert!(Message::new("put").with("", "v").to_pmi1_line().is_err());
    }

    #[test]
    fn pmi2_round_trip() {
        let m = Message::new("kvs-put")
            .with("key", "addr-0")
            .with("value", "127.0.0.1:55765");
        let f = m.to_pmi2_frame().unwrap();
        assert_eq!(
            &f[..],
            b"45    cmd=kvs-put;key=addr-0;value=127.0.0.1:55765;"
        );
        assert_eq!(parse_pmi2_frame(&f).unwrap(), m);
        assert_eq!(
            Message::new("kvs-fence").to_pmi2_frame().unwrap(),
            b"14    cmd=kvs-fence;"
        );
    }

    #[test]
    fn pmi2_slurm_and_hydra_frames() {
        let slurm = b"114   cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=0;size=2;appnum=-1;debugged=FALSE;pmiverbose=FALSE;";
        let m = parse_pmi2_frame(slurm).unwrap();
        assert_eq!(m.cmd, "fullinit-response");
        assert!(m.is_ok());
        assert_eq!(m.get_int("appnum").unwrap(), -1);
        let hydra = b"   113cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=0;size=2;appnum=0;debugged=FALSE;pmiverbose=FALSE;rc=0;";
        let m = parse_pmi2_frame(hydra).unwrap();
        assert_eq!(m.get_int("size").unwrap(), 2);
        assert!(m.is_ok());
        let m = parse_pmi2_frame(b"    46cmd=info-getjobattr-response;found=FALSE;rc=0;").unwrap();
        assert_eq!(m.get("found"), Some("FALSE"));
        let m = parse_pmi2_frame(b"38    cmd=kvs-get-response;rc=0;found=FALSE;").unwrap();
        assert_eq!(m.get("found"), Some("FALSE"));
        let m = parse_pmi2_body(b"cmd=kvs-put;key=semi-0;value=a;;b=c;").unwrap();
        assert_eq!(m.get("value"), Some("a;b=c"));
    }

    #[test]
    fn pmi2_malformed_rejected() {
        for bad in [
            &b""[..],
            b"12",
            b"abcdefcmd=x;",
            b"000000",
            b"-1    cmd=x;",
            b"99999999",
        ] {
            assert!(parse_pmi2_frame(bad).is_err(), "accepted {bad:?}");
        }
        assert!(parse_pmi2_frame(b"5     cmd=x;").is_err()); // length mismatch
        assert!(parse_pmi2_body(b"key=v;").is_err());
        assert!(parse_pmi2_body(b"cmd=x;novalue;").is_err());
        assert!(parse_pmi2_body(b"cmd=;").is_err());
        assert!(parse_pmi2_body(&[0xff]).is_err());
        assert!(Message::new("kvs-put")
            .with("value", "a;b")
            .to_pmi2_frame()
            .is_err());
    }

    #[test]
    fn rc_parsing() {
        assert_eq!(p1("cmd=x").rc(), 0);
        assert_eq!(p1("cmd=x rc=3").rc(), 3);
        assert_eq!(p1("cmd=x rc=zz").rc(), -1);
        assert!(p1("cmd=x").get_int("nope").is_err());
        assert!(p1("cmd=x a=b").get_int("a").is_err());
    }
}
