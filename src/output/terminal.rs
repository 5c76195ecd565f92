//! What the terminal on standard output can show: whether to colour (`--color`, `NO_COLOR`)
//! and how wide a table may be.

use std::io::IsTerminal;

/// When to use colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Whether to colour output for this choice and destination.
pub fn use_color(choice: ColorChoice, to_file: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            !to_file
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::io::stdout().is_terminal()
        }
    }
}

/// The table width: the terminal's, or 160 when writing elsewhere.
pub fn terminal_width(to_stdout: bool) -> u16 {
    if to_stdout && std::io::stdout().is_terminal() {
        if let Some(cols) = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()) {
            return cols;
        }
        if let Some((w, _)) = comfy_table::Table::new().width().map(|w| (w, 0)) {
            return w;
        }
    }
    160
}
