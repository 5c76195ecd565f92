//! The first stage of the pipeline: what to assess, and how its tool list is obtained.
//!
//! A [`Target`] is one server named on the command line, resolved into a server to introspect
//! or a tool list to read. Servers from config files carry where they were declared, for consent
//! and for findings. Beside it: [`clients`] reads MCP client config files, [`mcp`] is the wire
//! (stdio and HTTP), [`resolve`] turns the command line into targets, [`fetch`] gets every
//! target's tool list, and [`toollist`] reads one.

pub mod clients;
pub mod fetch;
pub mod mcp;
pub mod offers;
pub mod package;
pub mod redact;
pub mod resolve;
pub mod toollist;

use crate::error::{Error, Result};
use crate::targets::clients::{ConfigFile, HttpKind, Launch, ServerEntry};
use crate::targets::mcp::StdioCommand;

/// How one server's tool list is obtained.
#[derive(Debug, Clone)]
pub enum Source {
    /// A saved tool list (a path, or `-` for standard input).
    ToolsFile(String),
    /// A child process speaking MCP on stdio.
    Stdio(StdioCommand),
    /// A catalog record's tool snapshot.
    Catalog(Box<crate::catalog::Record>),
    /// A remote server.
    Http {
        /// The server's URL, as given.
        url: String,
        /// Headers sent with every request (values are never printed).
        headers: Vec<(String, clients::Secret)>,
        /// Which HTTP transport to speak, or both in turn.
        kind: HttpKind,
    },
}

/// One server to assess.
#[derive(Debug, Clone)]
pub struct Target {
    /// The server's name in reports and policies, unique among the targets.
    pub name: String,
    /// How its tool list is obtained.
    pub source: Source,
    /// The config entry that declared it, when it came from a config file.
    pub entry: Option<ServerEntry>,
    /// Starting it runs code the user did not name on the command line.
    pub needs_consent: bool,
}

impl Target {
    /// Where the tool list comes from, for people; no secret values.
    pub fn describe(&self) -> String {
        match &self.source {
            Source::ToolsFile(p) if p == "-" => "standard input".into(),
            Source::ToolsFile(p) => format!("tool list {p}"),
            Source::Catalog(r) => match &r.snapshot {
                Some(s) => format!(
                    "catalog record {} (snapshot of {}, {})",
                    r.id, s.source, s.taken
                ),
                None => format!("catalog record {} (no tool snapshot)", r.id),
            },
            Source::Stdio(cmd) => {
                let launch = Launch::Stdio {
                    command: cmd.program.clone(),
                    args: cmd.args.clone(),
                    env: cmd
                        .env
                        .iter()
                        .map(|(k, v)| (k.clone(), clients::Secret::new(v.clone())))
                        .collect(),
                    cwd: None,
                };
                format!("stdio: {}", launch.display())
            }
            Source::Http { url, headers, .. } => {
                let launch = Launch::Http {
                    url: crate::targets::redact_url(url),
                    headers: headers.clone(),
                    kind: HttpKind::Auto,
                };
                launch.display()
            }
        }
    }
}

/// Whether a URL's host is this machine's loopback (127.0.0.0/8, ::1, localhost); an
/// unparsable URL is not.
pub fn is_loopback_url(url: &str) -> bool {
    match url::Url::parse(url).ok().as_ref().and_then(|u| u.host()) {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => {
            let d = d.to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        None => false,
    }
}

/// What starting or contacting a target that needs consent does, for the consent listing: the
/// whole command line (secrets masked), or which variables go to which remote server.
pub fn consent_line(t: &Target) -> String {
    match &t.source {
        Source::Http { url, headers, .. } => {
            let vars: Vec<String> = t
                .entry
                .as_ref()
                .map(|e| e.sends_env.iter().map(|v| format!("${v}")).collect())
                .unwrap_or_default();
            let launch = Launch::Http {
                url: redact_url(url),
                headers: headers.clone(),
                kind: HttpKind::Auto,
            };
            format!(
                "sends the value of {} to {}",
                vars.join(", "),
                launch.display()
            )
        }
        _ => {
            let d = t.describe();
            format!("runs {}", d.strip_prefix("stdio: ").unwrap_or(&d))
        }
    }
}

/// A URL without user-info or query string (either may carry a secret).
pub fn redact_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            let had_query = u.query().is_some();
            u.set_query(None);
            u.set_fragment(None);
            if had_query {
                format!("{u}?<redacted>")
            } else {
                u.to_string()
            }
        }
        Err(_) => "<invalid URL>".into(),
    }
}

/// Splits `--stdio "CMD ARGS"` like a POSIX shell would, without running one.
pub fn split_command(line: &str) -> Result<Vec<String>> {
    let words = shlex::split(line)
        .ok_or_else(|| Error::new(format!("--stdio {line:?}: unbalanced quotes")))?;
    if words.is_empty() {
        return Err(Error::new(
            "--stdio needs a command, e.g. --stdio \"mcp-server-git --repository .\"",
        ));
    }
    Ok(words)
}

/// Parses `--header 'Name: value'`.
pub fn parse_header(h: &str) -> Result<(String, clients::Secret)> {
    let (k, v) = h
        .split_once(':')
        .ok_or_else(|| Error::new("--header takes 'Name: value' (the value is not shown here)"))?;
    let k = k.trim();
    if k.is_empty()
        || !k
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
    {
        return Err(Error::new(format!(
            "--header: {k:?} is not a valid header name"
        )));
    }
    Ok((k.to_string(), clients::Secret::new(v.trim())))
}

/// Parses `--header-env NAME=VAR`: the header NAME with the value of the environment variable
/// VAR (read through `env`). The value is never shown; a variable that is unset or empty is an
/// error that names it.
pub fn header_from_env(
    spec: &str,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(String, clients::Secret)> {
    let (name, var) = spec.split_once('=').ok_or_else(|| {
        Error::new(format!(
            "--header-env {spec:?}: takes NAME=VAR, e.g. Authorization=MCP_AUTH"
        ))
    })?;
    let (name, var) = (name.trim(), var.trim());
    let (name, _) = parse_header(&format!("{name}: x"))
        .map_err(|_| Error::new(format!("--header-env: {name:?} is not a valid header name")))?;
    if var.is_empty() {
        return Err(Error::new(format!(
            "--header-env {name}=: name the environment variable that holds the value"
        )));
    }
    match env(var) {
        Some(v) if !v.trim().is_empty() => Ok((name, clients::Secret::new(v.trim()))),
        _ => Err(Error::new(format!(
            "--header-env {name}={var}: the environment variable {var} is not set (or is empty)"
        ))),
    }
}

/// A stdio target from a command line given on the command line (consent is implied).
pub fn stdio(words: Vec<String>, name: Option<&str>) -> Target {
    let program = words[0].clone();
    let name = name
        .map(str::to_string)
        .unwrap_or_else(|| server_name_from_command(&words));
    Target {
        name,
        source: Source::Stdio(StdioCommand {
            program,
            args: words[1..].to_vec(),
            env: Vec::new(),
            cwd: None,
        }),
        entry: None,
        needs_consent: false,
    }
}

/// A name for a server started by a command: the package or program it runs.
pub fn server_name_from_command(words: &[String]) -> String {
    // A script inside an installed package is named after the package. A link in
    // `node_modules/.bin` is not in a package: it is named after its file name (the command
    // it installs) below, like any other program.
    for w in words {
        if let Some((_, rest)) = w.rsplit_once("node_modules/") {
            let mut parts = rest.split('/').filter(|p| !p.is_empty());
            let first = parts.next().unwrap_or("");
            let pkg = if first.starts_with('@') {
                parts.next().unwrap_or(first)
            } else {
                first
            };
            if !pkg.is_empty() && !pkg.starts_with('.') {
                return pkg.to_string();
            }
        }
    }
    let runners = [
        "npx", "uvx", "pipx", "bunx", "pnpm", "yarn", "node", "python", "python3", "uv", "deno",
        "docker", "dlx", "run", "exec", "--from",
    ];
    let pick = words
        .iter()
        .filter(|w| !w.starts_with('-'))
        .map(|w| w.rsplit('/').next().unwrap_or(w))
        .find(|w| !runners.contains(w) && !w.is_empty())
        .unwrap_or("server");
    let pick = pick.split('@').find(|s| !s.is_empty()).unwrap_or(pick);
    pick.trim_end_matches(".js")
        .trim_end_matches(".py")
        .to_string()
}

/// Targets for every enabled server of a config file; disabled ones are skipped.
pub fn from_config(file: &ConfigFile) -> Vec<Target> {
    file.servers
        .iter()
        .filter(|s| !s.disabled)
        .map(|s| {
            let source = match &s.launch {
                Launch::Stdio {
                    command,
                    args,
                    env,
                    cwd,
                } => Source::Stdio(StdioCommand {
                    program: command.clone(),
                    args: args.clone(),
                    env: env
                        .iter()
                        .map(|(k, v)| (k.clone(), v.expose().to_string()))
                        .collect(),
                    cwd: cwd.as_ref().map(Into::into),
                }),
                Launch::Http { url, headers, kind } => Source::Http {
                    url: url.clone(),
                    headers: headers.clone(),
                    kind: *kind,
                },
            };
            // Starting a command runs code; expanding the environment into a request to another
            // machine sends secrets the config chose to whoever it names. Both need consent.
            let needs_consent = match &source {
                Source::Stdio(_) => true,
                Source::Http { url, .. } => !s.sends_env.is_empty() && !is_loopback_url(url),
                _ => false,
            };
            Target {
                name: s.name.clone(),
                source,
                entry: Some(s.clone()),
                needs_consent,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        split_command(s).unwrap()
    }

    #[test]
    fn names_servers_after_their_package() {
        assert_eq!(
            server_name_from_command(&w("npx -y @modelcontextprotocol/server-everything stdio")),
            "server-everything"
        );
        assert_eq!(
            server_name_from_command(&w("uvx mcp-server-git --repository .")),
            "mcp-server-git"
        );
        assert_eq!(
            server_name_from_command(&w("node ./build/index.js")),
            "index"
        );
        assert_eq!(
            server_name_from_command(&w("npx -y @playwright/mcp@0.0.83")),
            "mcp"
        );
        assert_eq!(
            server_name_from_command(&w(
                "node x/node_modules/@modelcontextprotocol/server-memory/dist/index.js"
            )),
            "server-memory"
        );
        // Issue 12, item 17: a link in node_modules/.bin is named after its file name.
        assert_eq!(
            server_name_from_command(&w("node_modules/.bin/mcp-server-everything stdio")),
            "mcp-server-everything"
        );
        assert_eq!(
            server_name_from_command(&w("node /w/node_modules/.bin/mcp-server-git.js")),
            "mcp-server-git"
        );
    }

    #[test]
    fn headers_and_urls_keep_secrets_out_of_sight() {
        let (k, v) = parse_header("Authorization: Bearer abc").unwrap();
        assert_eq!(k, "Authorization");
        assert_eq!(v.expose(), "Bearer abc");
        assert!(parse_header("no colon").is_err());
        assert_eq!(
            redact_url("https://u:p@h.example/mcp?key=s3cret"),
            "https://h.example/mcp?<redacted>"
        );
        assert!(split_command("a 'b").is_err());
        let env = |v: &str| (v == "TOK").then(|| "Bearer s3cret".to_string());
        let (k, v) = header_from_env("Authorization=TOK", env).unwrap();
        assert_eq!((k.as_str(), v.expose()), ("Authorization", "Bearer s3cret"));
        let e = header_from_env("Authorization=NOPE", env)
            .unwrap_err()
            .to_string();
        assert!(e.contains("NOPE is not set"), "{e}");
        assert!(header_from_env("Authorization", env).is_err());
        assert!(header_from_env("Bad Name=TOK", env).is_err());
    }
}
