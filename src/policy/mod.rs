//! Policies: the recommended rule per tool, and one module per output flavour.

pub mod claude_code;
pub mod merge;
pub mod policylayer;
pub mod read;
pub mod recommend;

pub use recommend::{recommend, Limits, Profile};

/// The policy formats `mcprisk policy` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Flavor {
    /// PolicyLayer policy.json.
    #[default]
    Policylayer,
    /// Claude Code settings.json permissions (allow / ask / deny).
    ClaudeCode,
}
