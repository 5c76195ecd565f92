//! `mcprisk man [COMMAND...]`: the manual pages (roff), one for `mcprisk` and one for every
//! subcommand (`mcprisk-scan(1)`, `mcprisk-catalog-add(1)`, ...), each with its exit status and
//! examples; `--dir DIR` writes them all as files.

use crate::cli::{Cli, ManArgs};
use crate::error::{Error, Result};
use crate::output::{emit, io_err};
use clap::Command;
use roff::{bold, roman, Roff};

/// What a page says beyond its options: the exit status and examples.
struct Extra {
    /// `(code, meaning)`, in order.
    exit: &'static [(&'static str, &'static str)],
    /// `(command line, what it does)`.
    examples: &'static [(&'static str, &'static str)],
}

const EXIT_ASSESS: &[(&str, &str)] = &[
    ("0", "Done, and nothing at or above --fail-on."),
    (
        "1",
        "A tool or finding at or above --fail-on (standard error says which).",
    ),
    (
        "2",
        "An error: bad input (the message says what and where), or a server that could not be scanned.",
    ),
];
const EXIT_PLAIN: &[(&str, &str)] = &[
    ("0", "Done."),
    ("2", "An error: the message says what and where."),
];

/// The extra sections of the page of `path` (`""` for `mcprisk` itself, `"catalog add"`...).
fn extra(path: &str) -> Extra {
    match path {
        "" => Extra {
            exit: &[
                ("0", "Done, and nothing at or above --fail-on."),
                (
                    "1",
                    "Findings at or above --fail-on; drift or policy gaps in check; a policy that differs in policy --check; no match in catalog search.",
                ),
                (
                    "2",
                    "An error: bad input, an unreachable server, a server that could not be scanned.",
                ),
            ],
            examples: &[
                (
                    "mcprisk scan --tools examples/proxmox-mcp.tools.json",
                    "Assess a saved tool list (nothing is run).",
                ),
                (
                    "mcprisk policy --tools examples/proxmox-mcp.tools.json -o policy.json",
                    "Write the recommended PolicyLayer policy.",
                ),
                ("mcprisk lookup proxmox", "A server's catalog record."),
                (
                    "mcprisk man --dir ~/.local/share/man/man1",
                    "Install every manual page.",
                ),
            ],
        },
        "scan" => Extra {
            exit: EXIT_ASSESS,
            examples: &[
                (
                    "mcprisk scan --tools tools.json",
                    "Terminal table: every tool, its category, severity and why.",
                ),
                (
                    "mcprisk scan -- npx -y @modelcontextprotocol/server-everything stdio",
                    "Start a server over stdio and assess it.",
                ),
                (
                    "mcprisk scan --url https://mcp.example.com/mcp --header 'Authorization: Bearer TOKEN'",
                    "Assess a remote server.",
                ),
                (
                    "mcprisk scan --config .mcp.json --yes --format sarif -o mcprisk.sarif --fail-on high",
                    "Every server of a client config, as SARIF for code scanning; exit 1 at High.",
                ),
                (
                    "mcprisk scan --tools tools.json --format html -o review.html",
                    "One self-contained HTML report.",
                ),
                (
                    "mcprisk scan --config .mcp.json --yes --lock mcprisk.lock",
                    "Pin what every server offers for mcprisk check.",
                ),
            ],
        },
        "policy" => Extra {
            exit: &[
                ("0", "Written (or up to date with --check)."),
                (
                    "1",
                    "--check: the file differs from what would be written; or something at or above --fail-on.",
                ),
                (
                    "2",
                    "An error, or a server that could not be scanned.",
                ),
            ],
            examples: &[
                (
                    "mcprisk policy --tools tools.json -o policy.json",
                    "PolicyLayer policy.json, merged into the file when it exists (hand edits are kept).",
                ),
                (
                    "mcprisk policy --tools tools.json --flavor claude-code",
                    "Claude Code permissions (allow, ask, deny).",
                ),
                (
                    "mcprisk policy --tools tools.json --flavor intercept -o intercept.yaml",
                    "Intercept proxy YAML.",
                ),
                (
                    "mcprisk policy --config .mcp.json --yes -o policy.json --check",
                    "Exit 1 when policy.json is not what would be written.",
                ),
            ],
        },
        "check" => Extra {
            exit: &[
                ("0", "Nothing moved and no policy gaps."),
                (
                    "1",
                    "Drift against the lock file, or tools the policy does not cover or covers too loosely.",
                ),
                (
                    "2",
                    "An error, or a server that could not be scanned (it is listed as not checked).",
                ),
            ],
            examples: &[
                (
                    "mcprisk check --config .mcp.json --yes --lock mcprisk.lock",
                    "What changed since the servers were locked.",
                ),
                (
                    "mcprisk check --config .mcp.json --yes --policy policy.json",
                    "Tools the policy does not cover.",
                ),
                (
                    "mcprisk check --config .mcp.json --yes --lock mcprisk.lock --format sarif -o mcprisk.sarif",
                    "The same as SARIF.",
                ),
            ],
        },
        "rules" => Extra {
            exit: &[
                ("0", "Printed."),
                ("2", "No rule has that ID, or the rules file is invalid."),
            ],
            examples: &[
                ("mcprisk rules", "Every rule, and how the grade is computed."),
                (
                    "mcprisk rules c304",
                    "One rule: what it matches, why it matters, an example (any case, MR- optional).",
                ),
                ("mcprisk rules --format json", "Every rule as JSON."),
            ],
        },
        "lookup" => Extra {
            exit: &[
                ("0", "Printed."),
                ("2", "No record or tool by that name (close spellings are suggested)."),
            ],
            examples: &[
                ("mcprisk lookup proxmox", "A server's record: identity, auth, grade, tools, policy."),
                (
                    "mcprisk lookup proxmox-mcp pve_api_request",
                    "One tool's record: what it does, why it needs a policy, the rule.",
                ),
                (
                    "mcprisk lookup github --format md -o github.md",
                    "The record as Markdown.",
                ),
            ],
        },
        "catalog" => Extra {
            exit: &[
                ("0", "Done."),
                ("1", "catalog search: no record matches."),
                ("2", "An error, or catalog lint found problems."),
            ],
            examples: &[
                ("mcprisk catalog list", "Every record."),
                ("mcprisk catalog search github", "Records that mention a word."),
                ("mcprisk catalog show proxmox-mcp", "One record as stored."),
                ("mcprisk catalog lint", "Check every record."),
            ],
        },
        "catalog list" => Extra {
            exit: EXIT_PLAIN,
            examples: &[
                ("mcprisk catalog list", "Every record."),
                (
                    "mcprisk catalog list --category Financial",
                    "Servers with at least one Financial tool (any case).",
                ),
            ],
        },
        "catalog search" => Extra {
            exit: &[
                ("0", "At least one record matches."),
                ("1", "No record matches (standard error says so)."),
                ("2", "An error."),
            ],
            examples: &[(
                "mcprisk catalog search github --format json",
                "Records whose id, names, summary or tool names contain the word.",
            )],
        },
        "catalog show" => Extra {
            exit: EXIT_PLAIN,
            examples: &[("mcprisk catalog show proxmox-mcp", "One record, as YAML.")],
        },
        "catalog lint" => Extra {
            exit: &[
                ("0", "Every record is well formed."),
                ("2", "Problems (each printed with its file and line), or an error."),
            ],
            examples: &[
                ("mcprisk catalog lint", "Check catalog/servers."),
                ("mcprisk catalog lint my-records/", "Check another directory."),
            ],
        },
        "catalog add" => Extra {
            exit: EXIT_PLAIN,
            examples: &[
                (
                    "mcprisk catalog add --record facts.yaml -- npx -y @modelcontextprotocol/server-memory",
                    "Start the server, take its tool snapshot, write catalog/servers/<id>.yaml.",
                ),
                (
                    "mcprisk catalog add --record facts.yaml --tools tools.json --dir my-records",
                    "The same from a saved tool list.",
                ),
            ],
        },
        "catalog import-registry" => Extra {
            exit: EXIT_PLAIN,
            examples: &[(
                "mcprisk catalog import-registry --url https://registry.modelcontextprotocol.io",
                "Create or update records from an MCP registry.",
            )],
        },
        "completions" => Extra {
            exit: EXIT_PLAIN,
            examples: &[
                (
                    "mcprisk completions bash > ~/.local/share/bash-completion/completions/mcprisk",
                    "Bash completions.",
                ),
                (
                    "mcprisk completions zsh > \"${fpath[1]}/_mcprisk\"",
                    "Zsh completions.",
                ),
            ],
        },
        "serve" => Extra {
            exit: &[
                (
                    "0",
                    "The client closed standard input (stdio). Over --http it runs until a signal ends it.",
                ),
                (
                    "2",
                    "Bad flags, an address that is not loopback without --allow-remote, or one that cannot be bound.",
                ),
            ],
            examples: &[
                (
                    "mcprisk serve",
                    "Serve the catalog, assessments and policies to an agent over stdio.",
                ),
                (
                    "mcprisk serve --http 127.0.0.1:7410",
                    "The same over streamable HTTP at http://127.0.0.1:7410/mcp.",
                ),
                (
                    "mcprisk scan -- mcprisk serve",
                    "Assess mcprisk's own server: every tool Read, grade A.",
                ),
            ],
        },
        "man" => Extra {
            exit: EXIT_PLAIN,
            examples: &[
                ("mcprisk man | man -l -", "Read this manual."),
                ("mcprisk man scan | man -l -", "The page of one subcommand."),
                (
                    "mcprisk man --dir ~/.local/share/man/man1",
                    "Write every page (mcprisk.1, mcprisk-scan.1, ...).",
                ),
            ],
        },
        _ => Extra {
            exit: EXIT_PLAIN,
            examples: &[],
        },
    }
}

/// Every page: `(path, command)`, `mcprisk` first, then each subcommand depth first. The
/// command is built, so its display name is `mcprisk-catalog-add` and its bin name
/// `mcprisk catalog add`.
fn pages() -> Vec<(String, Command)> {
    fn walk(cmd: &Command, path: &str, out: &mut Vec<(String, Command)>) {
        out.push((path.to_string(), cmd.clone()));
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let p = if path.is_empty() {
                sub.get_name().to_string()
            } else {
                format!("{path} {}", sub.get_name())
            };
            walk(sub, &p, out);
        }
    }
    let mut cmd = <Cli as clap::CommandFactory>::command().disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, "", &mut out);
    out
}

/// The file name of a page: `mcprisk.1`, `mcprisk-catalog-add.1`.
fn file_name(path: &str) -> String {
    if path.is_empty() {
        "mcprisk.1".into()
    } else {
        format!("mcprisk-{}.1", path.replace(' ', "-"))
    }
}

/// Renders one page: clap_mangen's page with EXIT STATUS, EXAMPLES and SEE ALSO added before
/// its VERSION section.
fn render(path: &str, cmd: &Command, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .source(concat!("mcprisk ", env!("CARGO_PKG_VERSION")))
        .manual("mcprisk manual")
        .render(&mut page)?;
    let page = String::from_utf8_lossy(&page).into_owned();
    let extra = extra(path);
    let mut roff = Roff::default();
    roff.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in extra.exit {
        roff.control("TP", []);
        roff.text([bold(*code)]);
        roff.text([roman(*meaning)]);
    }
    if !extra.examples.is_empty() {
        roff.control("SH", ["EXAMPLES"]);
        for (line, what) in extra.examples {
            roff.control("TP", []);
            roff.text([bold(*line)]);
            roff.text([roman(*what)]);
        }
    }
    roff.control("SH", ["SEE ALSO"]);
    roff.text([roman(see_also(path, cmd).join(", "))]);
    let added = roff.to_roff();
    let at = page
        .find("\n.SH VERSION")
        .map(|i| i + 1)
        .unwrap_or(page.len());
    out.write_all(&page.as_bytes()[..at])?;
    out.write_all(added.as_bytes())?;
    out.write_all(&page.as_bytes()[at..])
}

/// The pages a page refers to: its parent's and its subcommands', then the repository's docs.
fn see_also(path: &str, cmd: &Command) -> Vec<String> {
    let page = |p: &str| format!("{}(1)", file_name(p).trim_end_matches(".1"));
    let mut see: Vec<String> = Vec::new();
    if !path.is_empty() {
        see.push(page(path.rsplit_once(' ').map(|(p, _)| p).unwrap_or("")));
    }
    for s in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        see.push(page(&if path.is_empty() {
            s.get_name().to_string()
        } else {
            format!("{path} {}", s.get_name())
        }));
    }
    see.push("README.md and docs/classification.md in the mcprisk repository".into());
    see
}

/// Runs `man`: the page of the command named (the whole program's when none), or every page
/// into `--dir`.
pub fn run(args: &ManArgs) -> Result<u8> {
    let pages = pages();
    if let Some(dir) = &args.dir {
        if !args.command.is_empty() {
            return Err(Error::new(
                "man --dir writes every page; name no command with it",
            ));
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::new(format!("{dir}: cannot create the directory: {e}")))?;
        for (path, cmd) in &pages {
            let file = std::path::Path::new(dir).join(file_name(path));
            let shown = file.display().to_string();
            emit(Some(&shown), |out| render(path, cmd, out).map_err(io_err))?;
        }
        if !args.quiet {
            eprintln!("mcprisk: wrote {} manual pages to {dir}", pages.len());
        }
        return Ok(0);
    }
    let wanted = args
        .command
        .iter()
        .map(|w| w.to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join(" ");
    let Some((path, cmd)) = pages.iter().find(|(p, _)| *p == wanted) else {
        let known: Vec<&str> = pages
            .iter()
            .map(|(p, _)| p.as_str())
            .filter(|p| !p.is_empty())
            .collect();
        return Err(Error::new(format!(
            "no manual page for {wanted:?}; pages: {}",
            known.join(", ")
        )));
    };
    emit(None, |out| render(path, cmd, out).map_err(io_err))?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 12, item 19: every page the main page refers to exists, with exit codes.
    #[test]
    fn every_subcommand_has_a_page_with_exit_status_and_examples() {
        let pages = pages();
        let names: Vec<&str> = pages.iter().map(|(p, _)| p.as_str()).collect();
        for want in [
            "",
            "scan",
            "policy",
            "check",
            "catalog",
            "catalog add",
            "man",
        ] {
            assert!(names.contains(&want), "{want:?} in {names:?}");
        }
        for (path, cmd) in &pages {
            let mut buf = Vec::new();
            render(path, cmd, &mut buf).unwrap();
            let text = String::from_utf8(buf).unwrap();
            assert!(text.contains(".SH \"EXIT STATUS\""), "{path}");
            assert!(!extra(path).examples.is_empty(), "{path:?} has no examples");
            assert!(text.contains(".SH EXAMPLES"), "{path}");
            // Every page it names (SUBCOMMANDS, SEE ALSO) is a page we make.
            for word in text.split(|c: char| c.is_whitespace() || c == ',') {
                if let Some(name) = word.strip_suffix("(1)") {
                    let name = name.replace("\\-", "-");
                    assert!(
                        pages
                            .iter()
                            .any(|(p, _)| file_name(p) == format!("{name}.1")),
                        "{path:?} refers to {name}(1), which is not made"
                    );
                }
            }
            let title = file_name(path);
            assert!(
                text.contains(&format!(".TH {}", title.trim_end_matches(".1"))),
                "{path}: {}",
                &text[..200.min(text.len())]
            );
        }
    }
}
