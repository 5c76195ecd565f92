//! The targets the command line names (`--tools`, `--stdio`, `--`, `--url`, `--server`,
//! `--config`, `--discover`), resolved in order, each with a name of its own.

use super::clients::{self, discover, HttpKind};
use super::package::{install, Launch, Registry, Spec};
use super::{from_config, parse_header, redact_url, split_command, stdio, Source, Target};
use crate::cli::TargetArgs;
use crate::error::{Error, Result};
use crate::output::sanitize;

/// Every target the command line names, in order: tool lists, stdio commands, URLs, catalog
/// records, configs (reporting what the configs declare on stderr unless `quiet`).
pub fn from_args(t: &TargetArgs, quiet: bool) -> Result<Vec<Target>> {
    let mut targets = Vec::new();
    for path in &t.tools {
        targets.push(Target {
            name: server_name_from_path(path),
            source: Source::ToolsFile(path.clone()),
            entry: None,
            needs_consent: false,
        });
    }
    for line in &t.stdio {
        targets.push(stdio(split_command(line)?, None));
    }
    if !t.command.is_empty() {
        targets.push(stdio(t.command.clone(), None));
    }
    targets.extend(packages(t, quiet)?);
    if t.no_network {
        for target in &mut targets {
            if let Source::Stdio(cmd) = &mut target.source {
                if cmd.program != "unshare" {
                    let mut words = super::package::no_network_prefix()?;
                    words.push(std::mem::take(&mut cmd.program));
                    words.append(&mut cmd.args);
                    cmd.program = words.remove(0);
                    cmd.args = words;
                }
            }
        }
    }
    let mut headers = t
        .headers
        .iter()
        .map(|h| parse_header(h))
        .collect::<Result<Vec<_>>>()?;
    for spec in &t.header_env {
        headers.push(super::header_from_env(spec, |v| std::env::var(v).ok())?);
    }
    if !headers.is_empty() && t.url.is_empty() {
        return Err(Error::new(
            "--header and --header-env apply to --url servers; none was given",
        ));
    }
    for url in &t.url {
        let parsed = url::Url::parse(url)
            .map_err(|e| Error::new(format!("--url {}: not a URL: {e}", redact_url(url))))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(Error::new(format!(
                "--url {}: only http and https are supported",
                redact_url(url)
            )));
        }
        targets.push(Target {
            name: parsed.host_str().unwrap_or("server").to_string(),
            source: Source::Http {
                url: url.clone(),
                headers: headers.clone(),
                kind: HttpKind::Auto,
            },
            entry: None,
            needs_consent: false,
        });
    }
    if !t.server.is_empty() {
        let catalog =
            crate::catalog::Catalog::load(&crate::catalog::store::user_dirs(&t.catalog_dirs))?;
        for name in &t.server {
            let record = crate::catalog::lookup::resolve(&catalog, name)?;
            targets.push(Target {
                name: record.id.clone(),
                source: Source::Catalog(Box::new(record)),
                entry: None,
                needs_consent: false,
            });
        }
    }
    let mut configs: Vec<std::path::PathBuf> = t.config.iter().map(Into::into).collect();
    if t.discover {
        let roots = discover::Roots::current()
            .ok_or_else(|| Error::new("--discover: cannot tell the home directory"))?;
        let found = discover::existing(&roots);
        if found.is_empty() {
            let looked: Vec<String> = discover::candidates(&roots)
                .iter()
                .map(|(c, p)| format!("  {} {}", c.as_str(), p.display()))
                .collect();
            return Err(Error::new(format!(
                "--discover: no MCP client config found; looked in:\n{}",
                looked.join("\n")
            )));
        }
        for (client, path) in found {
            if !quiet {
                eprintln!(
                    "mcprisk: found {} config {}",
                    client.as_str(),
                    path.display()
                );
            }
            configs.push(path);
        }
    }
    for path in &configs {
        let file = clients::load(path)?;
        if !quiet {
            for p in &file.problems {
                eprintln!("mcprisk: {}", sanitize::one_line(p, 300));
            }
        }
        let from = from_config(&file);
        if from.is_empty() && !quiet {
            eprintln!("mcprisk: {}: declares no enabled server", path.display());
        }
        targets.extend(from);
    }
    if targets.is_empty() {
        return Err(Error::new(
            "no target: give --tools FILE, --server NAME, --stdio \"CMD\", --url URL, --config FILE, --discover, --npm PKG, --pypi PKG, or -- CMD ARGS",
        ));
    }
    if let Some(name) = &t.name {
        if targets.len() != 1 {
            return Err(Error::new(
                "--name names one server, but several targets were given",
            ));
        }
        targets[0].name = name.clone();
    }
    dedupe_names(&mut targets);
    Ok(targets)
}

/// The launch options of `--npm`/`--pypi` targets (`--bin`, `--arg`, `--env`, ...).
pub fn launch_of(t: &TargetArgs) -> Result<Launch> {
    let mut env = Vec::new();
    for kv in &t.env {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| Error::new("--env takes KEY=VALUE (the value is not shown here)"))?;
        if k.is_empty() || !k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(Error::new(format!("--env: {k:?} is not a variable name")));
        }
        env.push((k.to_string(), v.to_string()));
    }
    let packages = t.npm.len() + t.pypi.len();
    if packages == 0 {
        for (given, flag) in [
            (t.bin.is_some(), "--bin"),
            (!t.args.is_empty(), "--arg"),
            (!t.env.is_empty(), "--env"),
            (t.python.is_some(), "--python"),
            (!t.with.is_empty(), "--with"),
            (t.no_keep, "--no-keep"),
        ] {
            if given {
                return Err(Error::new(format!(
                    "{flag} applies to --npm and --pypi packages; none was given"
                )));
            }
        }
    }
    if !t.with.is_empty() && !t.npm.is_empty() {
        return Err(Error::new(
            "--with applies to --pypi packages (requirements installed alongside); an --npm package was given",
        ));
    }
    let with = crate::targets::package::with_requirements(&t.with)?;
    if packages > 1 && (t.bin.is_some() || !t.args.is_empty()) {
        return Err(Error::new(
            "--bin and --arg apply to one package; name one --npm or --pypi package with them",
        ));
    }
    Ok(Launch {
        bin: t.bin.clone(),
        args: t.args.clone(),
        env,
        python: t.python.clone(),
        with,
        no_keep: t.no_keep,
        no_network: false,
    })
}

/// `--npm` and `--pypi` packages: installed (or found in the cache), each a stdio target.
fn packages(t: &TargetArgs, quiet: bool) -> Result<Vec<Target>> {
    let launch = launch_of(t)?;
    let specs = t
        .npm
        .iter()
        .map(|s| Spec::parse(Registry::Npm, s))
        .chain(t.pypi.iter().map(|s| Spec::parse(Registry::Pypi, s)))
        .collect::<Result<Vec<_>>>()?;
    let mut out = Vec::new();
    for spec in specs {
        let installed = install(&spec, &launch, quiet)?;
        let cmd = installed.command(&launch)?;
        out.push(Target {
            name: package_server_name(&spec.name),
            source: Source::Stdio(cmd),
            entry: None,
            needs_consent: false,
        });
    }
    Ok(out)
}

/// A server name from a package name: `@playwright/mcp` -> `playwright-mcp`.
pub fn package_server_name(name: &str) -> String {
    name.trim_start_matches('@').replace('/', "-")
}

/// Makes server names unique (`github`, `github-2`), so policies and reports can tell them apart.
fn dedupe_names(targets: &mut [Target]) {
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    for t in targets.iter_mut() {
        let n = seen.entry(t.name.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            t.name = format!("{}-{}", t.name, n);
        }
    }
}

/// A server name from a tool list's file name: `proxmox-mcp.tools.json` gives `proxmox-mcp`.
pub fn server_name_from_path(path: &str) -> String {
    if path == "-" {
        return "stdin".into();
    }
    let file = std::path::Path::new(path)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string());
    let mut name = file.as_str();
    for suffix in [".json", ".tools", "-tools", "_tools"] {
        name = name.strip_suffix(suffix).unwrap_or(name);
    }
    if name.is_empty() {
        "server".into()
    } else {
        name.to_string()
    }
}
