//! Where output goes: standard output, or a file written atomically (a temporary file in the
//! same directory, renamed into place), so a failure never leaves a half-written file.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Runs `write` against standard output or, atomically, against the file at `path`.
pub fn emit(path: Option<&str>, write: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    match path {
        None | Some("-") => {
            let stdout = std::io::stdout();
            let mut lock = std::io::BufWriter::new(stdout.lock());
            write(&mut lock)?;
            match lock.flush() {
                Ok(()) => Ok(()),
                // A closed pipe (`| head`) is the reader's choice, not an error.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                Err(e) => Err(Error::new(format!("cannot write to standard output: {e}"))),
            }
        }
        Some(p) => {
            let target = Path::new(p);
            let dir = match target.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| {
                Error::new(format!(
                    "{p}: cannot create a file in {}: {e}",
                    dir.display()
                ))
            })?;
            {
                let mut buf = std::io::BufWriter::new(tmp.as_file_mut());
                write(&mut buf)?;
                buf.flush()
                    .map_err(|e| Error::new(format!("{p}: cannot write: {e}")))?;
            }
            tmp.persist(target)
                .map_err(|e| Error::new(format!("{p}: cannot write: {}", e.error)))?;
            Ok(())
        }
    }
}

/// Maps an I/O error while writing a report to an [`Error`].
pub fn io_err(e: std::io::Error) -> Error {
    Error::new(format!("cannot write output: {e}"))
}
