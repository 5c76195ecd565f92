//! `mcprisk rules [ID]`: every rule, or one rule's docs.

use crate::assess::grade;
use crate::assess::pipeline::load_rules;
use crate::classify::{RuleFile, RuleKind};
use crate::cli::{RulesArgs, RulesFormat};
use crate::error::{Error, Result};
use crate::output::emit;
use crate::report::rule::{document as rule_json, effect};
use std::io::Write;

/// Runs `rules`: every rule, or the docs of the one named.
pub fn run(args: &RulesArgs) -> Result<u8> {
    let rules = load_rules(args.rules.as_deref())?;
    emit(None, |out| {
        write(&rules, args.id.as_deref(), args.format, out)
    })?;
    Ok(0)
}

/// Lists every rule, or explains the one named.
fn write(
    rules: &RuleFile,
    id: Option<&str>,
    format: RulesFormat,
    out: &mut dyn Write,
) -> Result<()> {
    let io = crate::output::io_err;
    match id {
        Some(id) => {
            let rule = rules.find(id).ok_or_else(|| {
                Error::new(format!(
                    "no rule {id:?}; `mcprisk rules` lists them (IDs look like MR-C304)"
                ))
            })?;
            match format {
                RulesFormat::Json => {
                    serde_json::to_writer_pretty(&mut *out, &rule_json(rule))
                        .map_err(|e| io(e.into()))?;
                    writeln!(out).map_err(io)
                }
                RulesFormat::Table => {
                    writeln!(out, "{} {} ({})", rule.id, rule.name, effect(rule)).map_err(io)?;
                    writeln!(out, "\nWhat it matches\n  {}", rule.summary).map_err(io)?;
                    writeln!(out, "\nWhy it matters\n  {}", rule.why).map_err(io)?;
                    writeln!(out, "\nExample\n  {}", rule.example).map_err(io)?;
                    if let Some(c) = &rule.check {
                        writeln!(out, "\nChecked in code: {c}").map_err(io)?;
                    }
                    if rule.kind == RuleKind::Grade {
                        writeln!(out, "\nHow the grade is computed\n  {}", grade::FORMULA)
                            .map_err(io)?;
                    }
                    Ok(())
                }
            }
        }
        None => match format {
            RulesFormat::Json => {
                let all: Vec<_> = rules.rules.iter().map(rule_json).collect();
                crate::output::inert::json_pretty(&mut *out, &all).map_err(io)?;
                writeln!(out).map_err(io)
            }
            RulesFormat::Table => {
                for r in &rules.rules {
                    writeln!(
                        out,
                        "{:<9} {:<28} {:<28} {}",
                        r.id,
                        r.name,
                        effect(r),
                        r.summary
                    )
                    .map_err(io)?;
                }
                writeln!(out, "\n{}", grade::FORMULA).map_err(io)
            }
        },
    }
}
