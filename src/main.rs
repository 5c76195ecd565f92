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
            // Messages carry text from files and servers: shown escaped, whatever made them.
            let text = mcprisk::output::sanitize::message(&err.to_string());
            eprintln!("mcprisk: error: {text}");
            ExitCode::from(err.exit_code() as u8)
        }
    }
}
