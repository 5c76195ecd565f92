//! The stable JSON document (`schema_version` 1; fields are only ever added).

use super::Report;
use serde_json::json;
use std::io::Write;

/// The JSON schema version of `scan --format json`.
pub const SCHEMA_VERSION: u32 = 1;

/// Writes the JSON document.
pub fn write(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let doc = json!({
        "schema_version": SCHEMA_VERSION,
        "servers": report.servers,
    });
    crate::output::inert::json_pretty(&mut *out, &doc)?;
    writeln!(out)
}
