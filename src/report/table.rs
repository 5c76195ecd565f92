//! The terminal table: one row per tool, then findings and the grade with its reasons.
//! Tool text is hostile, so every string is made visible and single-line first.

use super::Report;
use crate::model::offers::Offers;
use crate::model::{Category, Severity};
use crate::output::sanitize::{one_line, one_line_ends};
use comfy_table::{presets, Cell, Color, ContentArrangement, Table};
use std::io::Write;

/// Writes the table report; `color` turns on ANSI colours.
pub fn write(report: &Report, out: &mut dyn Write, color: bool, width: u16) -> std::io::Result<()> {
    for server in report.servers {
        writeln!(
            out,
            "{}  grade {} ({}/100)  {} tools  from {}",
            one_line(&server.name, 80),
            server.grade,
            server.score,
            server.tools.len(),
            one_line(&server.source, 120)
        )?;
        let counts: Vec<String> = server
            .category_counts()
            .iter()
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        writeln!(out, "{}", counts.join(" · "))?;
        let scan_failed =
            server.tools.is_empty() && server.errors.iter().any(|e| e.location == "server");
        if scan_failed {
            for e in &server.errors {
                writeln!(out, "Scan failed: {}", one_line_ends(&e.message, 400))?;
            }
        }
        let mut table = Table::new();
        table
            .load_style(presets::UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(width)
            .set_header(vec!["Tool", "Category", "Severity", "Rule", "Why"]);
        if !color {
            table.force_no_tty();
        } else {
            table.enforce_styling();
        }
        for t in &server.tools {
            let why = t
                .evidence
                .first()
                .map(|e| format!("{} {}", e.rule, one_line(&e.detail, 90)))
                .unwrap_or_default();
            let rule = match t.recommended.max_per_minute {
                Some(n) => format!("{} {n}/min", t.recommended.action.as_str()),
                None => t.recommended.action.as_str().to_string(),
            };
            let mut cat = Cell::new(match &t.needs_review {
                Some(r) => format!("{} (review: or {})", t.category, r.alternative),
                None => t.category.as_str().to_string(),
            });
            let mut sev = Cell::new(t.severity.as_str());
            if color {
                cat = cat.fg(category_color(t.category));
                sev = sev.fg(severity_color(t.severity));
            }
            table.add_row(vec![
                Cell::new(one_line(&t.name, 60)),
                cat,
                sev,
                Cell::new(rule),
                Cell::new(why),
            ]);
        }
        if !scan_failed {
            writeln!(out, "{table}")?;
        }
        write_offers(out, &server.offers)?;
        if !server.findings.is_empty() {
            writeln!(out, "Findings:")?;
            for f in &server.findings {
                writeln!(
                    out,
                    "  {} {:<8} {}: {}",
                    f.rule,
                    f.severity.as_str(),
                    one_line(&f.about(), 60),
                    one_line(&f.message, 160)
                )?;
            }
        }
        if !server.errors.is_empty() && !scan_failed {
            writeln!(out, "Tools that could not be read:")?;
            for e in &server.errors {
                writeln!(out, "  {}: {}", e.location, one_line(&e.message, 160))?;
            }
        }
        writeln!(out, "Grade {} ({}/100):", server.grade, server.score)?;
        for r in &server.grade_reasons {
            writeln!(out, "  -{:<3} {}", r.points, one_line(&r.reason, 160))?;
        }
        writeln!(
            out,
            "  (100 less the deductions; one Critical tool caps the grade at C, two at D: `mcprisk rules MR-G012`)"
        )?;
        writeln!(out)?;
    }
    Ok(())
}

/// The instructions, prompts, resources and templates, one line each (server text, escaped).
fn write_offers(out: &mut dyn Write, o: &Offers) -> std::io::Result<()> {
    if let Some(i) = &o.instructions {
        writeln!(out, "Instructions: {}", one_line(i, 300))?;
    }
    let line = |name: &str, desc: &str| {
        if desc.is_empty() {
            one_line(name, 80)
        } else {
            format!("{}: {}", one_line(name, 80), one_line(desc, 120))
        }
    };
    if !o.prompts.is_empty() {
        writeln!(out, "Prompts ({}):", o.prompts.len())?;
        for p in &o.prompts {
            let args: Vec<String> = p.arguments.iter().map(|a| one_line(&a.name, 40)).collect();
            let name = if args.is_empty() {
                p.name.clone()
            } else {
                format!("{}({})", p.name, args.join(", "))
            };
            writeln!(out, "  {}", line(&name, &p.description))?;
        }
    }
    if !o.resources.is_empty() {
        writeln!(out, "Resources ({}):", o.resources.len())?;
        for r in &o.resources {
            writeln!(out, "  {}", line(&r.uri, &r.name))?;
        }
    }
    if !o.resource_templates.is_empty() {
        writeln!(out, "Resource templates ({}):", o.resource_templates.len())?;
        for r in &o.resource_templates {
            writeln!(out, "  {}", line(&r.uri_template, &r.name))?;
        }
    }
    Ok(())
}

fn category_color(c: Category) -> Color {
    match c {
        Category::Read => Color::Green,
        Category::Write => Color::Yellow,
        Category::Execute => Color::DarkYellow,
        Category::Destructive | Category::Financial => Color::Red,
    }
}

fn severity_color(s: Severity) -> Color {
    match s {
        Severity::Low => Color::Green,
        Severity::Medium => Color::Yellow,
        Severity::High => Color::DarkYellow,
        Severity::Critical => Color::Red,
    }
}
