//! The MCP wire layer: talk to a live MCP server and bring back exactly what it says about itself.
//!
//! A thin JSON-RPC 2.0 client of our own over [`serde_json::Value`] (not rmcp, which drops unknown
//! tool fields and fails a whole `tools/list` on one ill-typed tool). Every tool is kept as the raw
//! JSON the server sent; nothing here validates tools, the pipeline judges each on its own.
//!
//! * [`introspect_stdio`] spawns a server in its own process group, speaks newline-delimited JSON on
//!   its stdin/stdout, and ends the whole group when done (or on timeout, error, or drop).
//! * [`introspect_http`] speaks streamable HTTP and falls back to the old HTTP+SSE transport.
//!
//! Handshake: `initialize` offering [`LATEST_PROTOCOL_VERSION`] and accepting whatever version the
//! server answers, then `notifications/initialized`, then `tools/list` pages following
//! `nextCursor`, then `prompts/list`, `resources/list` and `resources/templates/list` (paged the
//! same way) where the server's capabilities announce them; a failure on those is kept as an
//! [`OfferError`], not the end of the introspection. When `initialize` is answered with "method not found" (-32601) the server is taken
//! to speak the stateless 2026-07-28 protocol: `server/discover`, then `tools/list` with the
//! protocol version and client capabilities in `params._meta`.
//!
//! Decisions worth knowing:
//! * Pagination guard: a cursor the server already sent, or more than [`Options::max_pages`] pages,
//!   stops the listing; the result is `Ok` with the tools gathered so far and a warning saying the
//!   list is incomplete and why. A timeout while paging is an error. Pages that add up to more
//!   than [`Options::max_list_bytes`] also stop it, and that is an error to report
//!   ([`Introspection::incomplete`]), with the tools of the pages before kept.
//! * Bounded memory: one message is at most [`Options::max_message_bytes`]; a stdio server's
//!   stdout is read at most a few messages ahead, and our writes to its stdin go through a
//!   bounded queue on a thread of their own, so a server that does not read (or floods us with
//!   requests) runs into the deadline instead of blocking it.
//! * A 401 (or a 403 with `WWW-Authenticate`) is not a crash: it is
//!   [`WireError::AuthRequired`], carrying the observed [`AuthPosture`] (challenge, OAuth
//!   protected-resource metadata). Use [`WireError::auth_posture`] to read it.
//! * Secrets: header values and env values are never put in a message or a `Debug` output. URLs are
//!   shown without user-info and without their query string; command arguments are shown with
//!   secret values and URL user-info masked ([`crate::targets::redact`]).
//! * Signals: stdio servers run in their own process group, so a terminal's SIGINT does not reach
//!   them. A CLI calls [`procs::guard`] once: SIGINT, SIGTERM and SIGHUP then end every server
//!   (and the processes that left its group) before mcprisk dies of the signal.

mod http;
mod lines;
pub mod procs;
mod session;
mod sse;
mod stdio;

use std::fmt;
use std::time::Duration;

use serde_json::Value;

use crate::output::sanitize::whole_line;
pub use http::introspect_http;
pub use stdio::{introspect_stdio, kill_running_servers};

/// The protocol version offered in `initialize`.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";
/// The stateless protocol revision spoken after a `server/discover`.
pub const STATELESS_PROTOCOL_VERSION: &str = "2026-07-28";

/// What a live server told us about itself.
#[derive(Debug, Clone)]
pub struct Introspection {
    /// Every tool exactly as the server sent it, in order, across all pages.
    pub tools: Vec<Value>,
    /// The `serverInfo` object (name, title, version...), raw.
    pub server_info: Option<Value>,
    /// The protocol version the server answered (or chose from `server/discover`).
    pub protocol_version: Option<String>,
    pub transport: Transport,
    pub auth: AuthPosture,
    /// Things that did not stop the scan but matter, e.g. skipped non-JSON stdout lines or an
    /// incomplete tool list.
    pub warnings: Vec<String>,
    /// Set when the tool list is incomplete because it passed [`Options::max_list_bytes`]: an
    /// error to report, with the tools read before it kept in `tools`.
    pub incomplete: Option<String>,
    /// The `instructions` of the handshake and every prompt, resource and resource template,
    /// as sent, for the lists the server's capabilities announce.
    pub offers: crate::targets::offers::RawOffers,
    /// Lists of offers that failed (an error, a timeout, a malformed answer); the tools and the
    /// other lists are still assessed, and each failure is reported as a finding.
    pub offer_errors: Vec<OfferError>,
}

/// A list of offers the server announced but did not deliver.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferError {
    /// Which list.
    pub kind: crate::model::offers::OfferKind,
    /// What went wrong (server text escaped when shown).
    pub message: String,
}

/// How a server was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    StreamableHttp,
    /// The old (2024-11-05) HTTP+SSE transport.
    Sse,
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Transport::Stdio => "stdio",
            Transport::StreamableHttp => "streamable HTTP",
            Transport::Sse => "HTTP+SSE",
        })
    }
}

/// How the server's channel is protected and how it asked us to authenticate, as observed.
#[derive(Debug, Clone, PartialEq)]
pub struct AuthPosture {
    pub channel: ChannelSecurity,
    /// Names (never values) of the credentials we were given: header names for HTTP, env variable
    /// names for stdio.
    pub credential_names: Vec<String>,
    /// The challenge the server answered with, if it refused us. `None` means the server was
    /// reached (and listed its tools) without one.
    pub challenge: Option<AuthChallenge>,
}

/// How safe the channel to a server is from others on the way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChannelSecurity {
    /// A local child process (stdio).
    Local,
    /// Plain `http://`. `loopback` is true for 127.0.0.0/8, ::1 and localhost.
    PlainHttp {
        loopback: bool,
    },
    Https,
}

/// A refusal (401, or 403 with `WWW-Authenticate`) and what it pointed at.
#[derive(Debug, Clone, PartialEq)]
pub struct AuthChallenge {
    pub status: u16,
    /// The raw `WWW-Authenticate` header(s) the server sent (server data, not our secret).
    pub www_authenticate: Vec<String>,
    /// The `resource_metadata` URL from the challenge, if any.
    pub resource_metadata_url: Option<String>,
    /// Where the OAuth protected-resource metadata (RFC 9728) was found, and what it says.
    pub metadata_url: Option<String>,
    pub metadata: Option<Value>,
    /// Why no metadata was read, when none was.
    pub metadata_problem: Option<String>,
}

/// A stdio server to launch. `Debug` shows env names only.
#[derive(Clone, Default)]
pub struct StdioCommand {
    pub program: String,
    pub args: Vec<String>,
    /// Added to (and overriding) the inherited environment.
    pub env: Vec<(String, String)>,
    pub cwd: Option<std::path::PathBuf>,
}

impl fmt::Debug for StdioCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioCommand")
            .field("program", &self.program)
            .field("args", &crate::targets::redact::args(&self.args))
            .field(
                "env",
                &self
                    .env
                    .iter()
                    .map(|(k, _)| format!("{k}=<redacted>"))
                    .collect::<Vec<_>>(),
            )
            .field("cwd", &self.cwd)
            .finish()
    }
}

/// Limits and identity for one introspection.
#[derive(Debug, Clone)]
pub struct Options {
    /// Bounds the whole introspection of one server: start-up, handshake, every page (default 30 s).
    pub timeout: Duration,
    /// From launch (or first connect) until `initialize` is answered (default 20 s).
    pub startup_timeout: Duration,
    /// Each later request, e.g. one `tools/list` page (default 10 s).
    pub request_timeout: Duration,
    /// Stop following `nextCursor` after this many pages (default 1000).
    pub max_pages: usize,
    /// Largest single message (stdout line, HTTP body, SSE event) accepted (default 32 MiB).
    pub max_message_bytes: usize,
    /// Largest whole tool list, all `tools/list` pages together (default 64 MiB). The page that
    /// would pass it is not kept; listing stops there and the introspection is `incomplete`.
    pub max_list_bytes: usize,
    /// Between SIGTERM and SIGKILL when ending a stdio server's process group (default 500 ms).
    pub kill_grace: Duration,
    pub client_name: String,
    pub client_version: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout: Duration::from_secs(30),
            startup_timeout: Duration::from_secs(20),
            request_timeout: Duration::from_secs(10),
            max_pages: 1000,
            max_message_bytes: 32 << 20,
            max_list_bytes: 64 << 20,
            kill_grace: Duration::from_millis(500),
            client_name: "mcprisk".to_string(),
            client_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// Which part of the conversation a failure happened in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    StartUp,
    Initialize,
    Discover,
    Initialized,
    ToolsList {
        page: usize,
    },
    /// `prompts/list`, `resources/list` or `resources/templates/list`.
    OfferList {
        method: &'static str,
        page: usize,
    },
    /// Old HTTP+SSE: opening the GET stream and waiting for its `endpoint` event.
    SseEndpoint,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::StartUp => f.write_str("start-up"),
            Step::Initialize => f.write_str("initialize"),
            Step::Discover => f.write_str("server/discover"),
            Step::Initialized => f.write_str("notifications/initialized"),
            Step::ToolsList { page } => write!(f, "tools/list page {page}"),
            Step::OfferList { method, page } => write!(f, "{method} page {page}"),
            Step::SseEndpoint => f.write_str("opening the SSE stream (endpoint event)"),
        }
    }
}

/// Which limit a timeout hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Overall(Duration),
    StartUp(Duration),
    Request(Duration),
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Overall(d) => write!(f, "the overall {} timeout", secs(*d)),
            Limit::StartUp(d) => write!(f, "the {} start-up limit", secs(*d)),
            Limit::Request(d) => write!(f, "the {} per-request limit", secs(*d)),
        }
    }
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

/// Why an introspection failed. Every variant names the server (command line or URL, secrets
/// masked) and, where it applies, the step; stdio failures carry the last lines of stderr.
#[derive(Debug)]
pub enum WireError {
    /// The program could not be started.
    Spawn {
        server: String,
        source: std::io::Error,
    },
    /// A header name or value could not be sent (the value is not shown).
    InvalidHeader {
        server: String,
        name: String,
    },
    InvalidUrl {
        server: String,
        detail: String,
    },
    /// No answer within a limit.
    Timeout {
        server: String,
        step: Step,
        limit: Limit,
        stderr: Vec<String>,
    },
    /// The process closed its stdout or exited.
    Exited {
        server: String,
        step: Step,
        status: Option<String>,
        stderr: Vec<String>,
    },
    /// One message was larger than [`Options::max_message_bytes`].
    MessageTooLarge {
        server: String,
        step: Step,
        limit: usize,
        stderr: Vec<String>,
    },
    /// The server answered the request with a JSON-RPC error.
    Rpc {
        server: String,
        step: Step,
        code: i64,
        message: String,
    },
    /// The server answered with something that is not the JSON-RPC / MCP shape we need.
    Protocol {
        server: String,
        step: Step,
        detail: String,
        stderr: Vec<String>,
    },
    /// An HTTP status we cannot go on from (other than auth refusals).
    Http {
        server: String,
        step: Step,
        status: u16,
        detail: String,
    },
    /// Connecting, sending or reading failed below HTTP.
    Network {
        server: String,
        step: Step,
        detail: String,
    },
    /// Neither streamable HTTP nor the old HTTP+SSE transport worked.
    NoTransport {
        server: String,
        streamable: Box<WireError>,
        sse: Box<WireError>,
    },
    /// The server refused us (401, or 403 with a challenge): its auth posture is the result.
    AuthRequired {
        server: String,
        transport: Transport,
        auth: Box<AuthPosture>,
    },
}

impl WireError {
    /// The auth posture a refusal carried, if this is one (also inside [`WireError::NoTransport`]).
    pub fn auth_posture(&self) -> Option<&AuthPosture> {
        match self {
            WireError::AuthRequired { auth, .. } => Some(auth),
            WireError::NoTransport {
                streamable, sse, ..
            } => streamable.auth_posture().or_else(|| sse.auth_posture()),
            _ => None,
        }
    }

    /// The step the failure happened in, where there is one.
    pub fn step(&self) -> Option<&Step> {
        match self {
            WireError::Timeout { step, .. }
            | WireError::Exited { step, .. }
            | WireError::MessageTooLarge { step, .. }
            | WireError::Rpc { step, .. }
            | WireError::Protocol { step, .. }
            | WireError::Http { step, .. }
            | WireError::Network { step, .. } => Some(step),
            _ => None,
        }
    }

    pub(crate) fn with_stderr(mut self, tail: Vec<String>) -> Self {
        match &mut self {
            WireError::Timeout { stderr, .. }
            | WireError::Exited { stderr, .. }
            | WireError::MessageTooLarge { stderr, .. }
            | WireError::Protocol { stderr, .. }
                if stderr.is_empty() =>
            {
                *stderr = tail
            }
            _ => {}
        }
        self
    }
}

fn write_stderr(f: &mut fmt::Formatter<'_>, stderr: &[String]) -> fmt::Result {
    if stderr.is_empty() {
        return Ok(());
    }
    write!(f, "; last lines of its stderr:")?;
    for l in stderr {
        // Server output: escaped, so it cannot set a title, clear the screen or fake a line.
        write!(f, "\n    {}", whole_line(l))?;
    }
    Ok(())
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Spawn { server, source } => {
                write!(f, "{server}: could not start the server: {source}")
            }
            WireError::InvalidHeader { server, name } => write!(
                f,
                "{server}: header {name:?} cannot be sent (invalid name or value; value not shown)"
            ),
            WireError::InvalidUrl { server, detail } => write!(f, "{server}: bad URL: {detail}"),
            WireError::Timeout {
                server,
                step,
                limit,
                stderr,
            } => {
                write!(f, "{server}: no answer during {step} within {limit}")?;
                write_stderr(f, stderr)
            }
            WireError::Exited {
                server,
                step,
                status,
                stderr,
            } => {
                write!(f, "{server}: the server closed its output during {step}")?;
                if let Some(s) = status {
                    write!(f, " ({s})")?;
                }
                write_stderr(f, stderr)
            }
            WireError::MessageTooLarge {
                server,
                step,
                limit,
                stderr,
            } => {
                write!(
                    f,
                    "{server}: during {step} the server sent a message larger than the {} MiB limit; gave up on it",
                    limit >> 20
                )?;
                write_stderr(f, stderr)
            }
            WireError::Rpc {
                server,
                step,
                code,
                message,
            } => write!(
                f,
                "{server}: {step} failed: the server answered JSON-RPC error {code}: {}",
                whole_line(message)
            ),
            WireError::Protocol {
                server,
                step,
                detail,
                stderr,
            } => {
                write!(
                    f,
                    "{server}: {step}: unexpected answer: {}",
                    whole_line(detail)
                )?;
                write_stderr(f, stderr)
            }
            WireError::Http {
                server,
                step,
                status,
                detail,
            } => write!(
                f,
                "{server}: {step}: HTTP status {status}{}",
                whole_line(detail)
            ),
            WireError::Network {
                server,
                step,
                detail,
            } => write!(f, "{server}: {step}: {}", whole_line(detail)),
            WireError::NoTransport {
                server,
                streamable,
                sse,
            } => {
                let strip = |e: &WireError| {
                    let t = e.to_string();
                    t.strip_prefix(&format!("{server}: "))
                        .map(String::from)
                        .unwrap_or(t)
                };
                write!(
                    f,
                    "{server}: no MCP transport answered. Streamable HTTP: {}. Old HTTP+SSE: {}",
                    strip(streamable),
                    strip(sse)
                )
            }
            WireError::AuthRequired {
                server,
                transport,
                auth,
            } => {
                let c = auth.challenge.as_ref();
                write!(
                    f,
                    "{server}: the server requires authorization ({transport}, HTTP {})",
                    c.map(|c| c.status).unwrap_or(401)
                )?;
                if auth.credential_names.is_empty() {
                    write!(f, "; no credentials were supplied")?;
                } else {
                    write!(
                        f,
                        "; the supplied credentials ({}) were refused",
                        auth.credential_names.join(", ")
                    )?;
                }
                if let Some(u) = c.and_then(|c| c.metadata_url.as_deref()) {
                    write!(f, "; OAuth protected-resource metadata at {u}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for WireError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            WireError::Spawn { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// A URL for messages: no user-info, no query string (it often carries keys), no fragment.
pub(crate) fn redact_url(raw: &str) -> String {
    match reqwest::Url::parse(raw) {
        Ok(mut u) => {
            let had_query = u.query().is_some();
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.set_fragment(None);
            let mut s = u.to_string();
            if had_query {
                s.push_str("?…");
            }
            s
        }
        Err(_) => "<unparsable URL>".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_hides_userinfo_and_query() {
        assert_eq!(
            redact_url("https://u:p@example.invalid/mcp?key=s3cret#x"),
            "https://example.invalid/mcp?…"
        );
    }

    #[test]
    fn debug_of_a_command_shows_env_names_only() {
        let c = StdioCommand {
            program: "srv".into(),
            args: vec![],
            env: vec![("GITHUB_TOKEN".into(), "ghp_secretvalue".into())],
            cwd: None,
        };
        let d = format!("{c:?}");
        assert!(d.contains("GITHUB_TOKEN"));
        assert!(!d.contains("ghp_secretvalue"));
    }
}
