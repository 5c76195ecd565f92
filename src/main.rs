//! The `mcprisk` binary: parse the command line, run it, map the outcome to an exit code.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = mcprisk::cli::Cli::parse();
    match mcprisk::app::run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("mcprisk: error: {err}");
            ExitCode::from(err.exit_code() as u8)
        }
    }
}
