//! A catalog record: the facts about one MCP server (never verdicts). Verdicts, grades and
//! policies are computed from a record by the same engine as a live scan.
//!
//! One YAML file per server in `catalog/servers/`. Unknown keys are errors.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How far the publisher of a server can be vouched for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdentityLevel {
    /// Published by the vendor of the service it talks to (or the MCP project itself).
    OfficialVendor,
    /// The registry verified the namespace (e.g. `io.github.<owner>` proven by the owner).
    RegistryVerified,
    /// A known community project with a public repository.
    Community,
    /// Nothing to go on.
    Unverified,
}

/// What a server needs to authenticate to whatever it talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuthKind {
    None,
    ApiKey,
    Token,
    Oauth,
    UserPassword,
}

/// A package the server is published as.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Package {
    /// npm, pypi, oci, github, nuget, mcpb.
    pub registry: String,
    pub identifier: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// Who publishes the server and how we know.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    pub level: IdentityLevel,
    /// Facts that support the level ("npm scope @modelcontextprotocol is the MCP project's").
    pub evidence: Vec<String>,
}

/// One environment variable or header the server reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthVariable {
    pub name: String,
    pub secret: bool,
    pub required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meaning: Option<String>,
}

/// What the server needs to authenticate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Auth {
    /// Every way it can authenticate; `[none]` when it needs nothing.
    pub kinds: Vec<AuthKind>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variables: Vec<AuthVariable>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// The tool list exactly as the server sent it, and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    /// The package and version that was run (`npm @modelcontextprotocol/server-memory@2026.8.31`),
    /// and any requirement installed alongside it (`pypi pdf-tools-mcp@0.1.4 --with mcp<2`).
    pub source: String,
    /// The day it was taken (YYYY-MM-DD).
    pub taken: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// `sha256:` of the canonical JSON of `tools` (see [`fingerprint`]), or, when the server
    /// offers more than tools, of the whole capture (see [`Snapshot::expected_fingerprint`]).
    pub fingerprint: String,
    pub tools: Vec<Value>,
    /// The `instructions` of the handshake, as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<Value>,
    /// The prompts, as sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<Value>,
    /// The resources, as sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Value>,
    /// The resource templates, as sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_templates: Vec<Value>,
}

impl Snapshot {
    /// The fingerprint its content should have: of the tools alone when nothing else is
    /// offered (so records of tool-only servers keep theirs), else of the canonical capture
    /// `{"instructions":..,"prompts":..,"resourceTemplates":..,"resources":..,"tools":..}`.
    pub fn expected_fingerprint(&self) -> String {
        let mut capture = serde_json::Map::new();
        if let Some(i) = &self.instructions {
            capture.insert("instructions".into(), i.clone());
        }
        for (key, items) in [
            ("prompts", &self.prompts),
            ("resources", &self.resources),
            ("resourceTemplates", &self.resource_templates),
        ] {
            if !items.is_empty() {
                capture.insert(key.into(), Value::Array(items.clone()));
            }
        }
        if capture.is_empty() {
            return fingerprint(&self.tools);
        }
        capture.insert("tools".into(), Value::Array(self.tools.clone()));
        digest(&Value::Object(capture))
    }

    /// The names of its tools, in order (a tool without a string name is skipped).
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().filter_map(|t| t.get("name")?.as_str())
    }
}

/// Why a record has no tool snapshot: the server was installed and started, but would not
/// list its tools here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unscanned {
    /// `needs-credentials` (it insists on a real account or service first) or
    /// `failed-to-start` (anything else: a broken package, a missing runtime...).
    pub outcome: String,
    /// What the server said, cleaned of control characters and capped.
    pub reason: String,
    /// The day it was tried (YYYY-MM-DD).
    pub tried: String,
    /// The exact command that scans it, to run with real credentials.
    pub scan: String,
}

/// The outcomes an [`Unscanned`] may have.
pub const UNSCANNED_OUTCOMES: [&str; 2] = ["needs-credentials", "failed-to-start"];

/// A reviewed verdict for one tool, shown as "reviewed" wherever it is used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Override {
    pub tool: String,
    /// Read, Write, Execute, Destructive or Financial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Low, Medium, High or Critical.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    pub reason: String,
}

/// The facts about one MCP server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// Registry-style id, e.g. `io.github.plgonzalezrx8/proxmox-mcp`.
    pub id: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repository: Option<String>,
    pub publisher: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<Package>,
    /// How to start it over stdio, when it can be (`npx -y @scope/pkg@1.2.3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Remote endpoints, when it is offered as a hosted server.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remotes: Vec<String>,
    /// stdio, streamable-http, sse.
    pub transports: Vec<String>,
    pub identity: Identity,
    pub auth: Auth,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<Snapshot>,
    /// Why there is no snapshot, when the server was tried and listed no tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unscanned: Option<Unscanned>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<Override>,
}

impl Record {
    /// Why the record has no tool snapshot, and how to take one: the error a scan or an
    /// assessment of a record without tools reports.
    pub fn no_snapshot_reason(&self) -> String {
        match &self.unscanned {
            Some(u) => format!(
                "the catalog record {} has no tool snapshot ({}: {}); scan it with: {}",
                self.id, u.outcome, u.reason, u.scan
            ),
            None => format!(
                "the catalog record {} has no tool snapshot yet; scan the server to add one",
                self.id
            ),
        }
    }

    /// A copy of the record whose snapshot, if any, holds no tools (its source, date and
    /// fingerprint stay): what a page about the server shows beside an assessment of them.
    pub fn clone_without_tools(&self) -> Record {
        let snapshot = self.snapshot.as_ref().map(|s| Snapshot {
            source: s.source.clone(),
            taken: s.taken.clone(),
            server_info: s.server_info.clone(),
            protocol_version: s.protocol_version.clone(),
            fingerprint: s.fingerprint.clone(),
            tools: Vec::new(),
            instructions: s.instructions.clone(),
            prompts: s.prompts.clone(),
            resources: s.resources.clone(),
            resource_templates: s.resource_templates.clone(),
        });
        // Field by field, so that the tools are never copied (and a new field is not forgotten).
        Record {
            id: self.id.clone(),
            name: self.name.clone(),
            aliases: self.aliases.clone(),
            summary: self.summary.clone(),
            repository: self.repository.clone(),
            publisher: self.publisher.clone(),
            license: self.license.clone(),
            packages: self.packages.clone(),
            command: self.command.clone(),
            remotes: self.remotes.clone(),
            transports: self.transports.clone(),
            identity: self.identity.clone(),
            auth: self.auth.clone(),
            snapshot,
            unscanned: self.unscanned.clone(),
            overrides: self.overrides.clone(),
        }
    }

    /// The names of the tools in its snapshot; none without a snapshot.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.snapshot.iter().flat_map(Snapshot::tool_names)
    }
}

/// `sha256:<hex>` of the canonical JSON of a tool list: objects with sorted keys, no spaces.
pub fn fingerprint(tools: &[Value]) -> String {
    digest(&Value::Array(tools.to_vec()))
}

/// `sha256:<hex>` of the canonical JSON of any value.
pub fn digest(v: &Value) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let mut buf = Vec::new();
    canonical(v, &mut buf);
    h.update(&buf);
    format!("sha256:{:x}", h.finalize())
}

/// Writes `v` as canonical JSON (sorted keys, no whitespace).
pub fn canonical(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(m) => {
            out.push(b'{');
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend(serde_json::to_vec(k).unwrap_or_default());
                out.push(b':');
                canonical(&m[*k], out);
            }
            out.push(b'}');
        }
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical(x, out);
            }
            out.push(b']');
        }
        other => out.extend(serde_json::to_vec(other).unwrap_or_default()),
    }
}
