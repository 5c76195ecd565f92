//! `mcprisk.lock`: what every server offered when it was locked, per tool a fingerprint of its
//! canonical JSON plus the text needed to say what changed, and the verdict at lock time; per
//! instructions, prompt, resource and template the same fingerprint and text.
//! Pretty-printed JSON with sorted keys: stable and diff-friendly.

use crate::catalog::record::{canonical, fingerprint};
use crate::error::{Error, Result};
use crate::model::offers::{OfferKind, Offers};
use crate::model::ServerAssessment;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The lock file format version.
pub const LOCK_VERSION: u32 = 1;

/// One tool as locked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedTool {
    /// `sha256:` of the canonical JSON of name, description, input schema and annotations.
    pub fingerprint: String,
    /// The category at lock time.
    pub category: String,
    /// The severity at lock time.
    pub severity: String,
    /// The description, to say what changed in it.
    pub description: String,
    /// The input schema, to say what changed in it.
    pub input_schema: Value,
    /// The annotations, to say what changed in them.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub annotations: Value,
}

/// One offer as locked: the instructions, a prompt, a resource or a template.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedOffer {
    /// `sha256:` of the canonical JSON of what the server sent for it.
    pub fingerprint: String,
    /// Its description (the instructions' text), to say what changed in it.
    pub text: String,
    /// Everything else it was sent with (arguments, name, MIME type...), keys sorted.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub rest: Value,
}

/// One server as locked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedServer {
    /// Where its tool list came from.
    pub source: String,
    /// Its grade at lock time.
    pub grade: char,
    /// Its tools by name.
    pub tools: BTreeMap<String, LockedTool>,
    /// Its instructions, when it had any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<LockedOffer>,
    /// Its prompts by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub prompts: BTreeMap<String, LockedOffer>,
    /// Its resources by URI.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resources: BTreeMap<String, LockedOffer>,
    /// Its resource templates by URI template.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resource_templates: BTreeMap<String, LockedOffer>,
}

impl LockedServer {
    /// The locked offers of one kind by name (the instructions under the empty name).
    pub fn offers_of(&self, kind: OfferKind) -> BTreeMap<String, LockedOffer> {
        match kind {
            OfferKind::Instructions => self
                .instructions
                .iter()
                .map(|i| (String::new(), i.clone()))
                .collect(),
            OfferKind::Prompt => self.prompts.clone(),
            OfferKind::Resource => self.resources.clone(),
            OfferKind::ResourceTemplate => self.resource_templates.clone(),
        }
    }
}

/// One offer's lock entry from the raw JSON the server sent; `text_key` holds its text.
fn locked_offer(raw: &Value, text_key: &str) -> LockedOffer {
    let mut rest = sorted(raw);
    let text = match &mut rest {
        Value::Object(m) => match m.remove(text_key) {
            Some(Value::String(s)) => s,
            _ => String::new(),
        },
        _ => String::new(),
    };
    LockedOffer {
        fingerprint: fingerprint(std::slice::from_ref(raw)),
        text,
        rest,
    }
}

/// The lock entries of what a server offers besides tools.
fn locked_offers(o: &Offers, entry: &mut LockedServer) {
    entry.instructions = o.instructions.as_ref().map(|i| LockedOffer {
        fingerprint: fingerprint(&[Value::String(i.clone())]),
        text: i.clone(),
        rest: Value::Null,
    });
    for p in &o.prompts {
        entry
            .prompts
            .insert(p.name.clone(), locked_offer(&p.raw, "description"));
    }
    for r in &o.resources {
        entry
            .resources
            .insert(r.uri.clone(), locked_offer(&r.raw, "description"));
    }
    for t in &o.resource_templates {
        entry
            .resource_templates
            .insert(t.uri_template.clone(), locked_offer(&t.raw, "description"));
    }
}

/// The whole lock file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    /// The lock file format's version.
    pub version: u32,
    /// Every server by name.
    pub servers: BTreeMap<String, LockedServer>,
}

/// The part of a tool that is pinned: what the model sees.
pub fn pinned(raw: &Value) -> Value {
    serde_json::json!({
        "name": raw.get("name").cloned().unwrap_or(Value::Null),
        "description": raw.get("description").cloned().unwrap_or(Value::Null),
        "inputSchema": raw.get("inputSchema").cloned().unwrap_or(Value::Null),
        "annotations": raw.get("annotations").cloned().unwrap_or(Value::Null),
    })
}

/// Sorts object keys all the way down, so the file is the same whatever order a server sent.
pub fn sorted(v: &Value) -> Value {
    let mut buf = Vec::new();
    canonical(v, &mut buf);
    let text = String::from_utf8(buf).unwrap_or_default();
    // Parsed back into a map that keeps insertion order, which is now sorted.
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

impl Lock {
    /// The lock for assessed servers, with each tool's raw JSON from `raw_of(server, tool)`.
    pub fn from_assessments(servers: &[(ServerAssessment, Vec<Value>)]) -> Lock {
        let mut out = BTreeMap::new();
        for (s, raws) in servers {
            // Each tool's raw JSON by name, the first of a name winning as a linear search
            // would: built once, so locking is linear in the tool count (issue 12, item 12).
            let mut raw_of: std::collections::HashMap<&str, &Value> =
                std::collections::HashMap::with_capacity(raws.len());
            for r in raws {
                if let Some(name) = r.get("name").and_then(Value::as_str) {
                    raw_of.entry(name).or_insert(r);
                }
            }
            let mut tools = BTreeMap::new();
            for t in &s.tools {
                let Some(raw) = raw_of.get(t.name.as_str()).copied() else {
                    continue;
                };
                let p = pinned(raw);
                tools.insert(
                    t.name.clone(),
                    LockedTool {
                        fingerprint: fingerprint(std::slice::from_ref(&p)),
                        category: t.category.as_str().into(),
                        severity: t.severity.as_str().into(),
                        description: t.description.clone(),
                        input_schema: sorted(&p["inputSchema"]),
                        annotations: sorted(&p["annotations"]),
                    },
                );
            }
            let mut entry = LockedServer {
                source: s.source.clone(),
                grade: s.grade,
                tools,
                instructions: None,
                prompts: BTreeMap::new(),
                resources: BTreeMap::new(),
                resource_templates: BTreeMap::new(),
            };
            locked_offers(&s.offers, &mut entry);
            out.insert(s.name.clone(), entry);
        }
        Lock {
            version: LOCK_VERSION,
            servers: out,
        }
    }

    /// Puts back `previous`'s entry for each server named in `failed` (one that could not be
    /// scanned, or whose tool list is incomplete, says nothing about what it offers), or leaves
    /// the server out when `previous` has none. Returns, per failed server, whether its
    /// entry was kept.
    pub fn keep_failed(&mut self, previous: Option<&Lock>, failed: &[&str]) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        for name in failed {
            match previous.and_then(|p| p.servers.get(*name)) {
                Some(old) => {
                    self.servers.insert(name.to_string(), old.clone());
                    out.push((name.to_string(), true));
                }
                None => {
                    self.servers.remove(*name);
                    out.push((name.to_string(), false));
                }
            }
        }
        out
    }

    /// Puts back `previous`'s entries of the kinds of offers a server did not deliver this
    /// time (a list that failed says nothing about what it holds). Returns (server, kind) for
    /// each kind kept.
    pub fn keep_unlisted(
        &mut self,
        previous: Option<&Lock>,
        servers: &[ServerAssessment],
    ) -> Vec<(String, OfferKind)> {
        let mut out = Vec::new();
        for s in servers {
            let (Some(entry), Some(old)) = (
                self.servers.get_mut(&s.name),
                previous.and_then(|p| p.servers.get(&s.name)),
            ) else {
                continue;
            };
            for &kind in &s.offers.unlisted {
                match kind {
                    OfferKind::Instructions => entry.instructions = old.instructions.clone(),
                    OfferKind::Prompt => entry.prompts = old.prompts.clone(),
                    OfferKind::Resource => entry.resources = old.resources.clone(),
                    OfferKind::ResourceTemplate => {
                        entry.resource_templates = old.resource_templates.clone()
                    }
                }
                out.push((s.name.clone(), kind));
            }
        }
        out
    }

    /// Reads a lock file.
    pub fn load(path: &str) -> Result<Lock> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::new(format!("{path}: cannot read the lock file: {e}")))?;
        let lock: Lock = serde_json::from_str(&text).map_err(|e| {
            Error::new(format!(
                "{path}: not a mcprisk lock file at line {}, column {}: {e}",
                e.line(),
                e.column()
            ))
        })?;
        if lock.version != LOCK_VERSION {
            return Err(Error::new(format!(
                "{path}: lock version {} (this mcprisk reads {LOCK_VERSION})",
                lock.version
            )));
        }
        Ok(lock)
    }

    /// The file's text: pretty JSON, keys sorted, a final newline.
    pub fn to_text(&self) -> String {
        let mut s = crate::output::inert::json_pretty_string(self);
        s.push('\n');
        s
    }

    /// The 1-based line where a server (or one of its tools) is written, for SARIF locations.
    pub fn line_of(text: &str, server: &str, tool: Option<&str>) -> usize {
        let key = |k: &str| format!("{}:", serde_json::to_string(k).unwrap_or_default());
        let Some(s_at) = text.find(&key(server)) else {
            return 1;
        };
        let at = match tool.and_then(|t| text[s_at..].find(&key(t)).map(|o| s_at + o)) {
            Some(t_at) => t_at,
            None => s_at,
        };
        text[..at].matches('\n').count() + 1
    }
}
