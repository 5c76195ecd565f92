//! The stdio transport: one JSON-RPC message per line on standard input, one answer per line
//! on standard output, logs on standard error. Lines are read at most
//! [`MAX_MESSAGE_BYTES`](super::protocol::MAX_MESSAGE_BYTES) into memory: the rest of a longer
//! line is skipped up to its newline and answered with an error, so a flood neither grows
//! memory nor ends the session. End of input ends the server; so does a closed output.

use super::protocol::{self, Session, MAX_MESSAGE_BYTES};
use super::Service;
use std::io::{self, BufRead, Write};

/// Serves one client on `input` and `output` until the input ends.
pub fn serve(service: &Service, mut input: impl BufRead, mut output: impl Write) -> io::Result<()> {
    let mut session = Session::default();
    let mut line = Vec::new();
    loop {
        line.clear();
        let (seen, complete) = read_line(&mut input, &mut line)?;
        if seen == 0 && !complete {
            return Ok(());
        }
        let reply = if seen > MAX_MESSAGE_BYTES {
            Some(protocol::too_large(seen))
        } else {
            let msg = line.strip_suffix(b"\r").unwrap_or(&line);
            if msg.iter().all(u8::is_ascii_whitespace) {
                None
            } else {
                protocol::handle_bytes(service, &mut session, msg)
            }
        };
        if let Some(reply) = reply {
            let mut text = protocol::encode(&reply);
            text.push('\n');
            match output
                .write_all(text.as_bytes())
                .and_then(|()| output.flush())
            {
                Ok(()) => {}
                // The client went away: nothing more to do.
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        if !complete {
            return Ok(());
        }
    }
}

/// Reads one line into `line` (without its newline), keeping at most [`MAX_MESSAGE_BYTES`] of
/// it. Returns how many bytes the line had and whether a newline ended it (false at the end of
/// input).
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<(usize, bool)> {
    let mut seen = 0usize;
    loop {
        let buf = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok((seen, false));
        }
        let (take, done) = match memchr::memchr(b'\n', buf) {
            Some(pos) => (pos, true),
            None => (buf.len(), false),
        };
        if seen + take <= MAX_MESSAGE_BYTES {
            line.extend_from_slice(&buf[..take]);
        } else {
            line.clear();
        }
        seen = seen.saturating_add(take);
        input.consume(take + usize::from(done));
        if done {
            return Ok((seen, true));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::read_line;

    #[test]
    fn lines_are_split_and_an_overlong_one_is_counted_not_kept() {
        let big = vec![b'x'; super::MAX_MESSAGE_BYTES + 10];
        let mut input = Vec::new();
        input.extend_from_slice(b"{\"a\":1}\r\n");
        input.extend_from_slice(&big);
        input.extend_from_slice(b"\nlast");
        let mut r = std::io::BufReader::with_capacity(1024, input.as_slice());
        let mut line = Vec::new();
        assert_eq!(read_line(&mut r, &mut line).unwrap(), (8, true));
        assert_eq!(line, b"{\"a\":1}\r");
        line.clear();
        let (n, done) = read_line(&mut r, &mut line).unwrap();
        assert_eq!((n, done), (big.len(), true));
        assert!(line.is_empty(), "an overlong line is not kept");
        line.clear();
        assert_eq!(read_line(&mut r, &mut line).unwrap(), (4, false));
        assert_eq!(line, b"last");
        line.clear();
        assert_eq!(read_line(&mut r, &mut line).unwrap(), (0, false));
    }
}
