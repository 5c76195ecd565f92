//! Output formats: one small emitter per format, each writing to `&mut dyn Write`.

pub mod ci;
pub mod ci_formats;
pub mod github;
pub mod json;
pub mod junit;
pub mod lookup;
pub mod rule;
pub mod sarif;
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
    /// SARIF 2.1.0 (GitHub code scanning).
    Sarif,
    /// GitHub Actions workflow annotations.
    Github,
    /// JUnit XML.
    Junit,
}

/// Everything a report shows.
pub struct Report<'a> {
    pub servers: &'a [ServerAssessment],
    /// The recommended policy, already rendered as JSON text.
    pub policy: &'a serde_json::Value,
}
