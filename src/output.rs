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
            let mut lock = std::io::BufWriter::with_capacity(64 * 1024, stdout.lock());
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
            // A temporary file is created 0600; reports and policies are meant to be shared.
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(target)
                    .map(|m| m.permissions().mode() & 0o777)
                    .unwrap_or(0o644);
                let _ = tmp
                    .as_file()
                    .set_permissions(std::fs::Permissions::from_mode(mode));
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn written_files_are_readable_by_others_and_keep_an_existing_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("report.md");
        let ps = p.to_str().unwrap();
        emit(Some(ps), |w| w.write_all(b"x").map_err(io_err)).unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        emit(Some(ps), |w| w.write_all(b"y").map_err(io_err)).unwrap();
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "y");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file left"
        );
    }
}
