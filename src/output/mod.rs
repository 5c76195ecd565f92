//! The edge where text leaves mcprisk, used by every stage: [`sanitize`] makes server- and
//! file-provided text safe to show, [`terminal`] says what the terminal can show, and [`emit`]
//! decides where output goes.
//!
//! Output goes to standard output, or to a file written atomically (a temporary file in the
//! same directory, renamed into place), so a failure never leaves a half-written file. A device
//! or FIFO (`-o /dev/stdout`, `-o /dev/null`) is written in place, never replaced, and a symbolic
//! link is followed, never replaced.

pub mod deceptive;
pub mod inert;
pub mod sanitize;
pub mod terminal;

use crate::error::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Runs `write` against standard output or, atomically, against the file at `path`.
pub fn emit(path: Option<&str>, write: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    match path {
        None | Some("-") => {
            let stdout = std::io::stdout();
            let mut out = PipeWatch {
                inner: std::io::BufWriter::with_capacity(64 * 1024, stdout.lock()),
                closed: false,
            };
            let written = write(&mut out);
            let flushed = out.flush();
            // A closed pipe (`| head -1`) is the reader's choice, not an error: what was
            // written is all the reader wanted.
            if out.closed {
                return Ok(());
            }
            written?;
            flushed.map_err(|e| Error::new(format!("cannot write to standard output: {e}")))
        }
        Some(p) => {
            let target = follow_symlinks(Path::new(p));
            if is_special_file(&target) {
                return write_in_place(p, &target, write);
            }
            write_atomically(p, &target, write)
        }
    }
}

/// A writer that notes when its reader has gone (EPIPE), and then accepts and drops the rest,
/// so the command ends as it would have.
struct PipeWatch<W: Write> {
    inner: W,
    closed: bool,
}

impl<W: Write> Write for PipeWatch<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed {
            return Ok(buf.len());
        }
        match self.inner.write(buf) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(buf.len())
            }
            other => other,
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.closed {
            return Ok(());
        }
        match self.inner.flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            other => other,
        }
    }
}

/// Writes the file at `path` atomically without following a symbolic link there: a link is
/// replaced by the file, so the content lands in the directory `path` names and nowhere else.
pub fn replace_file(path: &Path, write: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    write_atomically(&path.display().to_string(), path, write)
}

/// The file a path names once symbolic links are followed, so a link to a report stays a link
/// and the file it points to gets the new content. A dangling link names its would-be target.
fn follow_symlinks(path: &Path) -> PathBuf {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return path.to_path_buf();
    }
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    match std::fs::read_link(path) {
        Ok(dest) if dest.is_absolute() => dest,
        Ok(dest) => path.parent().unwrap_or(Path::new(".")).join(dest),
        Err(_) => path.to_path_buf(),
    }
}

/// An existing path that is not a regular file or a directory: a device such as `/dev/null`
/// or `/dev/stdout`, a FIFO, a socket. Renaming a temporary file over one of these would
/// replace the device with a plain file (as root, for every program on the machine).
fn is_special_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Writes straight into a device or FIFO: there is nothing to rename, and no half-written
/// file can be left behind.
fn write_in_place(
    p: &str,
    target: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(target)
        .map_err(|e| Error::new(format!("{p}: cannot open for writing: {e}")))?;
    write_buffered(p, file, write)
}

/// Runs `write` against `out` through a buffer, and flushes it.
fn write_buffered(
    p: &str,
    out: impl Write,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    let mut buf = std::io::BufWriter::new(out);
    write(&mut buf)?;
    buf.flush()
        .map_err(|e| Error::new(format!("{p}: cannot write: {e}")))
}

/// Writes a temporary file beside `target` and renames it into place.
fn write_atomically(
    p: &str,
    target: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| {
        // The error names the temporary file (`.tmpXXXX`), which the user never asked for:
        // say what went wrong with the path they gave instead.
        if !dir.is_dir() {
            return Error::new(format!(
                "{p}: cannot write: the directory {} does not exist",
                dir.display()
            ));
        }
        let plain = match e.raw_os_error() {
            Some(code) => std::io::Error::from_raw_os_error(code),
            None => std::io::Error::from(e.kind()),
        };
        Error::new(format!(
            "{p}: cannot write in the directory {}: {plain}",
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
    write_buffered(p, tmp.as_file_mut(), write)?;
    tmp.persist(target)
        .map_err(|e| Error::new(format!("{p}: cannot write: {}", e.error)))?;
    Ok(())
}

/// Maps an I/O error while writing a report to an [`Error`].
pub fn io_err(e: std::io::Error) -> Error {
    Error::new(format!("cannot write output: {e}"))
}

/// Says on standard error that the file at `path` was written (not for standard output, and not
/// when `quiet`).
pub fn note_written(path: Option<&str>, quiet: bool) {
    if let (Some(path), false) = (path, quiet) {
        if path != "-" {
            eprintln!("mcprisk: wrote {path}");
        }
    }
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

    /// Issue 12, item 18: `-o /missing/dir/x` named the temporary file, not the path asked for.
    #[test]
    fn a_missing_directory_is_named_with_the_path_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("missing/dir/x.md");
        let ps = p.to_str().unwrap();
        let err = emit(Some(ps), |w| w.write_all(b"x").map_err(io_err))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with(ps), "{err}");
        assert!(err.contains("does not exist"), "{err}");
        assert!(!err.contains("dir/.tmp"), "no temporary file named: {err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_written_in_place_and_stays_a_fifo() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("out.pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        emit(Some(fifo.to_str().unwrap()), |w| {
            w.write_all(b"report").map_err(io_err)
        })
        .unwrap();
        assert_eq!(reader.join().unwrap(), "report");
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "the FIFO was replaced by {kind:?}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_followed_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.md");
        std::fs::write(&real, "old").unwrap();
        let link = dir.path().join("link.md");
        std::os::unix::fs::symlink("real.md", &link).unwrap();
        emit(Some(link.to_str().unwrap()), |w| {
            w.write_all(b"new").map_err(io_err)
        })
        .unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");

        let dangling = dir.path().join("dangling.md");
        std::os::unix::fs::symlink("made.md", &dangling).unwrap();
        emit(Some(dangling.to_str().unwrap()), |w| {
            w.write_all(b"made").map_err(io_err)
        })
        .unwrap();
        assert!(std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("made.md")).unwrap(),
            "made"
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            4,
            "no temporary file left"
        );
    }
}
