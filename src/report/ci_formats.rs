//! Writes the CI format that `--format` names (SARIF, GitHub annotations, JUnit), with the
//! docs of the rules in use, to standard output or a file.

use super::ci::CiOptions;
use super::{github, junit, sarif, Format, Report};
use crate::classify::RuleFile;
use crate::error::Result;
use crate::model::Severity;
use crate::output::{emit, io_err};

/// Writes `report` as `format` (JUnit for any format that is not SARIF or GitHub) to `output`.
pub fn write(
    format: Format,
    report: &Report,
    rules: &RuleFile,
    fail_on: Option<Severity>,
    output: Option<&str>,
) -> Result<()> {
    let opts = CiOptions { fail_on };
    emit(output, |out| {
        match format {
            Format::Sarif => sarif::write(report, rules, &opts, out),
            Format::Github => github::write(report, rules, &opts, out),
            _ => junit::write(report, rules, &opts, out),
        }
        .map_err(io_err)
    })
}
