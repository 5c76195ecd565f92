//! `mcprisk policy TARGET...`: write the recommended policy in the flavour asked for, merged
//! with the hand edits of the file at `-o` (or, with `--check`, say whether that file is current).

use crate::assess::pipeline::{exit_code, load_and_assess, Assessed};
use crate::cli::PolicyArgs;
use crate::error::{Error, Result};
use crate::output::sanitize;
use crate::output::{emit, io_err, note_written};
use crate::policy::{agentgateway, claude_code, intercept, policylayer, Flavor};

/// Runs `policy`.
pub fn run(args: &PolicyArgs) -> Result<u8> {
    let Assessed {
        servers,
        any_failed,
        settings,
        raw_tools,
    } = load_and_assess(&args.target, &args.assess, args.output.quiet)?;
    let fail_on = args.fail_on.or(settings.project.fail_on_value());
    let fresh = match args.flavor {
        Flavor::Policylayer => policylayer::policy(&servers),
        Flavor::ClaudeCode => claude_code::settings(&servers),
        Flavor::Intercept => intercept::policy(&servers),
        Flavor::Agentgateway => agentgateway::policy(&servers),
    };
    let path = args.output.output.as_deref().filter(|p| *p != "-");
    if args.check && path.is_none() {
        return Err(Error::new(
            "policy --check compares with the file given by -o FILE",
        ));
    }
    // Only a regular file holds a policy to merge with: `-o /dev/stdout` or a FIFO is
    // somewhere to write, and reading it would block or consume someone else's data.
    let existing = match path {
        Some(p) if std::fs::metadata(p).is_ok_and(|m| m.is_file()) => {
            Some(crate::policy::read::load(p)?)
        }
        _ => None,
    };
    if let Some(old) = existing.as_ref().filter(|_| !args.reset) {
        if old.kind != args.flavor.kind() {
            return Err(Error::new(format!(
                "{}: the file is not a {} policy; give its --flavor, or --reset to replace it",
                path.unwrap_or_default(),
                args.flavor.as_str()
            )));
        }
    }
    let doc = match &existing {
        Some(old) if !args.reset => {
            let (doc, notes) = crate::policy::merge::merge(&fresh, old, &servers);
            if !args.output.quiet {
                for k in &notes.looser {
                    eprintln!(
                        "mcprisk: hand-edited rule looser than recommended: {}",
                        sanitize::one_line(k, 300)
                    );
                }
                if !notes.kept.is_empty() {
                    eprintln!(
                        "mcprisk: kept {} hand-edited rule(s); --reset replaces them",
                        notes.kept.len()
                    );
                }
                for d in &notes.dropped {
                    eprintln!(
                        "mcprisk: dropped the rule for {}, which no scanned server offers",
                        sanitize::one_line(d, 200)
                    );
                }
            }
            doc
        }
        _ => fresh,
    };
    if args.check {
        let same = existing.as_ref().is_some_and(|old| old.doc == doc);
        if !args.output.quiet {
            if same {
                eprintln!("mcprisk: {} is up to date", path.unwrap_or_default());
            } else {
                eprintln!("mcprisk: {} differs from the policy that would be written; run mcprisk policy without --check", path.unwrap_or_default());
            }
        }
        return Ok(if any_failed {
            2
        } else if same {
            0
        } else {
            1
        });
    }
    emit(args.output.output.as_deref(), |out| {
        if args.flavor.is_yaml() {
            let yaml = crate::output::inert::yaml(&doc)
                .map_err(|e| Error::new(format!("cannot write the policy as YAML: {e}")))?;
            if args.flavor == Flavor::Agentgateway {
                out.write_all(agentgateway::HEADER.as_bytes())
                    .map_err(io_err)?;
            }
            out.write_all(yaml.as_bytes()).map_err(io_err)?;
            if !yaml.ends_with('\n') {
                writeln!(out).map_err(io_err)?;
            }
            return Ok(());
        }
        crate::output::inert::json_pretty(&mut *out, &doc).map_err(io_err)?;
        writeln!(out).map_err(io_err)
    })?;
    note_written(args.output.output.as_deref(), args.output.quiet);
    let code = exit_code(&servers, fail_on, any_failed);
    // As for scan: the process ends next, so nothing is freed piece by piece.
    std::mem::forget((servers, raw_tools, doc));
    Ok(code)
}
