//! The subcommands, on top of the pipeline: one file each, which reads its arguments, calls
//! down (targets -> tool list -> assessment -> policy / report) and writes the result. The
//! command modules are private to this one, so nothing below can import a command.

mod catalog;
mod check;
mod completions;
mod lookup;
mod man;
mod policy;
mod rules;
mod scan;
mod serve;

use crate::cli::{Cli, Command};
use crate::error::Result;

/// Runs a parsed command line and returns the exit code: 0 fine, 1 findings at or above
/// `--fail-on` (or drift and policy gaps in `check`), 2 a server that could not be scanned.
pub fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Scan(args) => scan::run(&args),
        Command::Policy(args) => policy::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Lookup(args) => lookup::run(&args),
        Command::Catalog(cmd) => catalog::run(cmd),
        Command::Completions(args) => completions::run(&args),
        Command::Man(args) => man::run(&args),
        Command::Rules(args) => rules::run(&args),
        Command::Serve(args) => serve::run(&args),
    }
}
