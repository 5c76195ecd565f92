//! MCP client config files (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Gemini CLI,
//! Codex): which servers they declare, how each is started or reached, and what in them is a
//! problem (a literal secret, a variable that cannot be resolved). Values of env and headers
//! are [`Secret`]s: never printed.

pub mod discover;
pub mod parse;
pub mod secret;
pub mod vars;

pub use parse::{load, parse_text};
pub use secret::Secret;

use std::path::PathBuf;

/// The MCP client a config file belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    VsCode,
    Windsurf,
    Gemini,
    Codex,
    /// A file with an `mcpServers` map from a client we cannot tell.
    Generic,
}

impl Client {
    /// The client's name for people.
    pub fn as_str(self) -> &'static str {
        match self {
            Client::ClaudeDesktop => "Claude Desktop",
            Client::ClaudeCode => "Claude Code",
            Client::Cursor => "Cursor",
            Client::VsCode => "VS Code",
            Client::Windsurf => "Windsurf",
            Client::Gemini => "Gemini CLI",
            Client::Codex => "Codex",
            Client::Generic => "MCP client",
        }
    }
}

/// Which HTTP transport a remote server speaks, as far as the config says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpKind {
    /// Streamable HTTP.
    Streamable,
    /// The old HTTP+SSE transport.
    Sse,
    /// Not said: try streamable HTTP, then SSE.
    Auto,
}

/// How a server is started or reached.
#[derive(Debug, Clone, PartialEq)]
pub enum Launch {
    /// A child process speaking JSON-RPC on stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, Secret)>,
        cwd: Option<String>,
    },
    /// A remote server.
    Http {
        url: String,
        headers: Vec<(String, Secret)>,
        kind: HttpKind,
    },
}

impl Launch {
    /// The command line or URL for people, without env or header values, and with secret
    /// arguments and URL user-info masked ([`super::redact`]).
    pub fn display(&self) -> String {
        match self {
            Launch::Stdio {
                command, args, env, ..
            } => {
                let mut s = String::new();
                for (k, _) in env {
                    s.push_str(&format!("{k}=<redacted> "));
                }
                s.push_str(&shell_quote(&super::redact::arg(command)));
                for a in super::redact::args(args) {
                    s.push(' ');
                    s.push_str(&shell_quote(&a));
                }
                s
            }
            Launch::Http { url, headers, .. } => {
                let mut s = url.clone();
                for (k, _) in headers {
                    s.push_str(&format!(" [{k}: <redacted>]"));
                }
                s
            }
        }
    }
}

fn shell_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+%".contains(c));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// One server declared in a config file.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerEntry {
    pub name: String,
    pub client: Client,
    pub file: PathBuf,
    /// `user`, `project`, `local: /path` and the like, where the client has scopes.
    pub scope: Option<String>,
    /// 1-based line of the file that declares the server.
    pub line: usize,
    pub launch: Launch,
    /// Variable references that could not be resolved.
    pub unresolved: Vec<String>,
    /// Env or header keys whose values are literal secrets written in the file.
    pub literal_secrets: Vec<String>,
    /// For a remote server: the environment variables whose values the config puts into its
    /// URL or headers (`${VAR}`, `env_http_headers`, `bearer_token_env_var`), sorted, once each.
    pub sends_env: Vec<String>,
    /// The config turns the server off.
    pub disabled: bool,
}

/// A parsed config file.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigFile {
    pub path: PathBuf,
    pub client: Client,
    pub servers: Vec<ServerEntry>,
    /// Entries that could not be read, with where and why.
    pub problems: Vec<String>,
}
