//! `mcprisk man`: the manual page (roff) of the whole command line.

use crate::cli::Cli;
use crate::error::Result;
use crate::output::{emit, io_err};

/// Runs `man`.
pub fn run() -> Result<u8> {
    emit(None, |out| {
        let cmd = <Cli as clap::CommandFactory>::command();
        clap_mangen::Man::new(cmd).render(out).map_err(io_err)
    })?;
    Ok(0)
}
