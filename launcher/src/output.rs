//! Forwarding of one rank's stdout or stderr, line by line.
//!
//! Whole lines are forwarded so output from different ranks never interleaves mid-line;
//! with `-l` each line gets a `[rank] ` prefix. A partial line (a prompt without newline,
//! or a program that never ends its last line) is flushed after a short idle time, at EOF,
//! or when it grows large, and is tagged only at the start of a line.

use std::time::{Duration, Instant};

/// Partial lines are forwarded after this much silence from the rank.
pub const PARTIAL_FLUSH_AFTER: Duration = Duration::from_millis(100);
/// Partial lines longer than this are forwarded at once.
const MAX_PARTIAL: usize = 64 * 1024;

/// Line buffer for one output stream of one rank.
pub struct LineForwarder {
    tag: Option<String>,
    buf: Vec<u8>,
    at_line_start: bool,
    last_data: Instant,
}

impl LineForwarder {
    /// `tag` is the prefix (e.g. `[3] `) or `None` for untagged output.
    pub fn new(tag: Option<String>) -> LineForwarder {
        LineForwarder {
            tag,
            buf: Vec::new(),
            at_line_start: true,
            last_data: Instant::now(),
        }
    }

    /// Add bytes read from the rank; returns the bytes to write out now.
    pub fn push(&mut self, data: &[u8]) -> Vec<u8> {
        self.buf.extend_from_slice(data);
        self.last_data = Instant::now();
        let mut out = Vec::new();
        if let Some(last_nl) = self.buf.iter().rposition(|&b| b == b'\n') {
            let complete: Vec<u8> = self.buf.drain(..=last_nl).collect();
            for line in complete.split_inclusive(|&b| b == b'\n') {
                self.emit(line, &mut out);
            }
        }
        if self.buf.len() > MAX_PARTIAL {
            out.extend(self.flush());
        }
        out
    }

    /// Forward the partial line, if any (idle timeout or EOF).
    pub fn flush(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            self.emit(&rest, &mut out);
        }
        out
    }

    /// When a partial line is pending, the instant at which it should be flushed.
    pub fn flush_due(&self) -> Option<Instant> {
        (!self.buf.is_empty()).then(|| self.last_data + PARTIAL_FLUSH_AFTER)
    }

    fn emit(&mut self, piece: &[u8], out: &mut Vec<u8>) {
        if self.at_line_start {
            if let Some(t) = &self.tag {
                out.extend_from_slice(t.as_bytes());
            }
        }
        out.extend_from_slice(piece);
        self.at_line_start = piece.last() == Some(&b'\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_whole_lines() {
        let mut f = LineForwarder::new(Some("[2] ".into()));
        assert_eq!(f.push(b"a\nb"), b"[2] a\n");
        assert_eq!(f.push(b"c\nd\n"), b"[2] bc\n[2] d\n");
        assert!(f.flush_due().is_none());
        assert_eq!(f.push(b"prompt: "), b"");
        assert!(f.flush_due().is_some());
        assert_eq!(f.flush(), b"[2] prompt: ");
        // The continuation of a flushed partial line is not tagged again.
        assert_eq!(f.push(b"42\n"), b"42\n");
        assert_eq!(f.flush(), b"");
    }

    #[test]
    fn untagged_passes_bytes_through() {
        let mut f = LineForwarder::new(None);
        assert_eq!(f.push(b"x\ny\nz"), b"x\ny\n");
        assert_eq!(f.flush(), b"z");
    }
}
