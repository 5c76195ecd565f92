//! A small, blocking Server-Sent Events parser.
//!
//! Written by hand on purpose: the maintained SSE crates (eventsource-stream, reqwest-eventsource,
//! sse-stream) parse async `Stream`s and would pull an async runtime into this blocking wire layer,
//! and none caps the size of an event. The format we need (WHATWG "event stream interpretation":
//! `event:`, `data:`, `id:`, comments, blank line dispatches) is a few dozen lines. Lines ending in
//! `\n` or `\r\n` are understood; a lone `\r` as line end (allowed by the spec, unused by MCP
//! servers) is not.

use std::io::{self, BufRead};

use super::lines::{read_capped_line, Line};

/// One dispatched event. `event` is "message" when the server named none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    pub event: String,
    pub data: String,
}

#[derive(Debug)]
pub(crate) enum SseError {
    Io(io::Error),
    /// One event (or one line of it) is larger than the cap.
    TooLarge,
}

pub(crate) struct SseReader<R> {
    inner: R,
    cap: usize,
    line: Vec<u8>,
}

impl<R: BufRead> SseReader<R> {
    pub(crate) fn new(inner: R, cap: usize) -> Self {
        SseReader {
            inner,
            cap,
            line: Vec::new(),
        }
    }

    pub(crate) fn inner_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// The next event, or `None` at the end of the stream (an unfinished last event is dropped, as
    /// the spec says).
    pub(crate) fn next_event(&mut self) -> Result<Option<SseEvent>, SseError> {
        let mut event = String::new();
        let mut data = String::new();
        let mut has_data = false;
        loop {
            match read_capped_line(&mut self.inner, &mut self.line, self.cap)
                .map_err(SseError::Io)?
            {
                Line::TooLong => return Err(SseError::TooLarge),
                Line::Eof => return Ok(None),
                Line::Complete => {}
            }
            if self.line.is_empty() {
                if has_data {
                    if data.ends_with('\n') {
                        data.pop();
                    }
                    let event = if event.is_empty() {
                        "message".to_string()
                    } else {
                        event
                    };
                    return Ok(Some(SseEvent { event, data }));
                }
                event.clear();
                continue;
            }
            let line = String::from_utf8_lossy(&self.line);
            if line.starts_with(':') {
                continue; // comment / keep-alive
            }
            let (field, value) = match line.find(':') {
                Some(i) => {
                    let v = &line[i + 1..];
                    (&line[..i], v.strip_prefix(' ').unwrap_or(v))
                }
                None => (&line[..], ""),
            };
            match field {
                "event" => event = value.to_string(),
                "data" => {
                    data.push_str(value);
                    data.push('\n');
                    has_data = true;
                    if data.len() > self.cap {
                        return Err(SseError::TooLarge);
                    }
                }
                _ => {} // id, retry and unknown fields do not matter for MCP
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(s: &str) -> Vec<SseEvent> {
        let mut r = SseReader::new(io::BufReader::new(s.as_bytes()), 1 << 20);
        let mut out = Vec::new();
        while let Some(e) = r.next_event().unwrap() {
            out.push(e);
        }
        out
    }

    #[test]
    fn parses_named_default_multiline_and_comments() {
        let got = events(
            ": keep-alive\r\nevent: endpoint\r\ndata: /messages?sessionId=1\r\n\r\n\
             id: 7\ndata: {\"a\":\ndata: 1}\n\nevent: x\n\ndata:nospace\n\n",
        );
        assert_eq!(
            got,
            vec![
                SseEvent {
                    event: "endpoint".into(),
                    data: "/messages?sessionId=1".into()
                },
                SseEvent {
                    event: "message".into(),
                    data: "{\"a\":\n1}".into()
                },
                SseEvent {
                    event: "message".into(),
                    data: "nospace".into()
                },
            ]
        );
    }

    #[test]
    fn unfinished_last_event_is_dropped_and_cap_is_enforced() {
        assert!(events("data: half").is_empty());
        let mut r = SseReader::new(io::BufReader::new("data: 0123456789\n\n".as_bytes()), 8);
        assert!(matches!(r.next_event(), Err(SseError::TooLarge)));
    }
}
