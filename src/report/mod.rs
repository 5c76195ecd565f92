//! Output formats: one small emitter per format, each writing to `&mut dyn Write`.

pub mod json;
pub mod sanitize;
pub mod table;
pub mod templates;

use crate::model::ServerAssessment;

/// The formats `scan` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    #[default]
    Table,
    Json,
    Md,
    Html,
}

/// Everything a report shows.
pub struct Report<'a> {
    pub servers: &'a [ServerAssessment],
    /// The recommended policy, already rendered as JSON text.
    pub policy: &'a serde_json::Value,
}
