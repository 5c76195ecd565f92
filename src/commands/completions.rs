//! `mcprisk completions SHELL`: a shell completion script for the whole command line.

use crate::cli::{Cli, CompletionsArgs};
use crate::error::Result;
use crate::output::emit;

/// Runs `completions`.
pub fn run(args: &CompletionsArgs) -> Result<u8> {
    emit(None, |out| {
        let mut cmd = <Cli as clap::CommandFactory>::command();
        clap_complete::generate(args.shell, &mut cmd, "mcprisk", out);
        Ok(())
    })?;
    Ok(0)
}
