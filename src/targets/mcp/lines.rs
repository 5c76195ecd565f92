//! Reading newline-terminated lines with a hard cap on their length, so a server that sends 50 MB
//! without a newline fails clearly instead of growing a buffer without bound.

use std::io::{self, BufRead};

/// What one call of [`read_capped_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A whole line is in the buffer, without its `\n` (and without a `\r` before it).
    Complete,
    /// End of input; the buffer holds whatever came after the last newline (possibly nothing).
    Eof,
    /// The line grew past the cap before its newline came; the buffer holds the first bytes.
    TooLong,
}

/// Reads one line into `buf` (cleared first). Never holds more than `cap` bytes plus one read chunk.
pub(crate) fn read_capped_line<R: BufRead>(
    r: &mut R,
    buf: &mut Vec<u8>,
    cap: usize,
) -> io::Result<Line> {
    buf.clear();
    loop {
        let avail = match r.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok(Line::Eof);
        }
        match memchr::memchr(b'\n', avail) {
            Some(i) => {
                buf.extend_from_slice(&avail[..i]);
                r.consume(i + 1);
                if buf.last() == Some(&b'\r') {
                    buf.pop();
                }
                if buf.len() > cap {
                    return Ok(Line::TooLong);
                }
                return Ok(Line::Complete);
            }
            None => {
                let n = avail.len();
                buf.extend_from_slice(avail);
                r.consume(n);
                if buf.len() > cap {
                    return Ok(Line::TooLong);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lines_and_caps_them() {
        let mut r = io::BufReader::with_capacity(4, &b"ab\r\ncdef\n0123456789\nlast"[..]);
        let mut buf = Vec::new();
        assert_eq!(
            read_capped_line(&mut r, &mut buf, 8).unwrap(),
            Line::Complete
        );
        assert_eq!(buf, b"ab");
        assert_eq!(
            read_capped_line(&mut r, &mut buf, 8).unwrap(),
            Line::Complete
        );
        assert_eq!(buf, b"cdef");
        assert_eq!(
            read_capped_line(&mut r, &mut buf, 8).unwrap(),
            Line::TooLong
        );
        assert!(buf.len() <= 8 + 4);
    }

    #[test]
    fn eof_returns_the_unterminated_rest() {
        let mut r = io::BufReader::new(&b"x\nrest"[..]);
        let mut buf = Vec::new();
        read_capped_line(&mut r, &mut buf, 100).unwrap();
        assert_eq!(read_capped_line(&mut r, &mut buf, 100).unwrap(), Line::Eof);
        assert_eq!(buf, b"rest");
    }
}
