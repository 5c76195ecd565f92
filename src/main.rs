//! The `mcprisk` binary: parse the command line, run it, map the outcome to an exit code.

use clap::Parser;

/// mimalloc: the pipeline allocates many small strings and maps per tool, where the system
/// allocator was a fifth of a scan's time.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = mcprisk::cli::Cli::parse();
    let outcome = mcprisk::commands::run(cli);
    mcprisk::targets::package::cleanup();
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("mcprisk: error: {err}");
            ExitCode::from(err.exit_code() as u8)
        }
    }
}
