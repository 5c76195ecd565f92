//! What each tool of `mcprisk serve` computes (their schemas are in [`super::schema`]). Every
//! one only reads: the catalog, the rules, or the tool list the client sends.
//!
//! Arguments that are missing, ill-typed or unknown are a JSON-RPC "invalid params" error; a
//! name that the catalog or the rules do not hold is a tool result with `isError: true` and
//! text saying what is there instead, which an agent can act on.

use super::protocol::RpcError;
use super::schema::{FLAVORS, MAX_MATCHES, MAX_NAME_CHARS};
use super::Service;
use crate::catalog::lookup::{find, resolve, search, Found};
use crate::catalog::{Entry, Record};
use crate::model::{Action, Category, ServerAssessment};
use crate::policy::{agentgateway, claude_code, intercept, policylayer, Flavor};
use crate::report::json::SCHEMA_VERSION;
use serde_json::{json, Map, Value};

/// What a tool call ends in: structured content, or an error the agent should read.
enum Outcome {
    /// `structuredContent` (its pretty JSON is the text content too).
    Done(Value),
    /// A result with `isError: true` and this text.
    Failed(String),
}

/// Handles `tools/call`: the result object (`content`, `structuredContent`, `isError`).
pub fn call(service: &Service, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let name = match params.get("name") {
        Some(Value::String(n)) => n.as_str(),
        Some(_) => return Err(RpcError::params("name must be a string")),
        None => return Err(RpcError::params("tools/call needs the tool's name")),
    };
    let empty = Map::new();
    let args = match params.get("arguments") {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(a)) => a,
        Some(_) => return Err(RpcError::params("arguments must be an object")),
    };
    let outcome = match name {
        "lookup_server" => {
            only(args, &["name"])?;
            lookup_server(service, text_arg(args, "name")?)
        }
        "lookup_tool" => {
            only(args, &["server", "tool"])?;
            lookup_tool(service, text_arg(args, "server")?, text_arg(args, "tool")?)
        }
        "assess_tools" => {
            only(args, &["tools", "name"])?;
            let tools = args
                .get("tools")
                .ok_or_else(|| RpcError::params("assess_tools needs tools"))?;
            let name = optional_text(args, "name")?.unwrap_or("supplied-tools");
            assess_tools(service, tools, name)
        }
        "recommend_policy" => {
            only(args, &["server", "tools", "name", "flavor"])?;
            recommend_policy(service, args)?
        }
        "search_catalog" => {
            only(args, &["query", "limit"])?;
            let limit = match args.get("limit") {
                None | Some(Value::Null) => MAX_MATCHES,
                Some(v) => match v.as_u64() {
                    Some(n @ 1..=100) => n as usize,
                    _ => return Err(RpcError::params("limit must be an integer from 1 to 100")),
                },
            };
            search_catalog(service, text_arg(args, "query")?, limit)
        }
        "explain_rule" => {
            only(args, &["id"])?;
            explain_rule(service, text_arg(args, "id")?)
        }
        other => {
            return Err(RpcError::params(format!(
                "no tool {}; the tools are lookup_server, lookup_tool, assess_tools, recommend_policy, search_catalog, explain_rule",
                crate::output::sanitize::one_line(other, 80)
            )))
        }
    };
    Ok(match outcome {
        Outcome::Done(doc) => json!({
            "content": [{"type": "text", "text": crate::output::inert::json_pretty_string(&doc)}],
            "structuredContent": doc,
            "isError": false,
        }),
        Outcome::Failed(text) => json!({
            "content": [{"type": "text", "text": crate::output::sanitize::visible(&text)}],
            "isError": true,
        }),
    })
}

/// Refuses arguments the tool does not take (a misspelt one would otherwise be ignored).
fn only(args: &Map<String, Value>, known: &[&str]) -> Result<(), RpcError> {
    match args.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(RpcError::params(format!(
            "unknown argument {}; this tool takes {}",
            crate::output::sanitize::one_line(k, 60),
            known.join(", ")
        ))),
        None => Ok(()),
    }
}

fn optional_text<'a>(args: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, RpcError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => {
            Err(RpcError::params(format!("{key} is empty")))
        }
        Some(Value::String(s)) if s.chars().count() > MAX_NAME_CHARS => Err(RpcError::params(
            format!("{key} is longer than {MAX_NAME_CHARS} characters"),
        )),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(RpcError::params(format!("{key} must be a string"))),
    }
}

fn text_arg<'a>(args: &'a Map<String, Value>, key: &str) -> Result<&'a str, RpcError> {
    optional_text(args, key)?.ok_or_else(|| RpcError::params(format!("{key} is required")))
}

/// A record's resource URI.
pub fn server_uri(id: &str) -> String {
    format!("mcprisk://servers/{id}")
}

/// A catalog entry in a list of matches.
fn candidate(e: &Entry) -> Value {
    json!({
        "id": e.listing.id,
        "name": e.listing.name,
        "publisher": e.listing.publisher,
        "summary": e.listing.summary,
        "tools": e.listing.tools.len(),
        "uri": server_uri(&e.listing.id),
    })
}

/// Whether `query` names the entry itself (id, name, alias or package, ignoring case and
/// punctuation) rather than being a close spelling of it.
fn names_exactly(e: &Entry, query: &str) -> bool {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    if query.contains("://") {
        // find() takes a repository URL only when it names this record's repository.
        return true;
    }
    let named = if query.trim().contains(' ') {
        crate::catalog::lookup::package_of_command(query).unwrap_or_else(|| query.to_string())
    } else {
        query.to_string()
    };
    let q = norm(&named);
    let l = &e.listing;
    let tail = |s: &str| s.rsplit('/').next().unwrap_or(s).to_string();
    std::iter::once(l.id.clone())
        .chain(std::iter::once(tail(&l.id)))
        .chain(std::iter::once(l.name.clone()))
        .chain(l.aliases.iter().cloned())
        .chain(l.packages.iter().cloned())
        .chain(l.packages.iter().map(|p| tail(p)))
        .any(|k| norm(&k) == q)
}

/// A server's summary: the record's facts and its assessment, per tool the recommended rule.
pub fn server_summary(record: &Record, server: &ServerAssessment) -> Value {
    let mut counts = Map::new();
    for c in Category::ALL {
        let n = server.tools.iter().filter(|t| t.category == c).count();
        counts.insert(c.as_str().to_string(), json!(n));
    }
    let tools: Vec<Value> = server
        .tools
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "category": t.category,
                "severity": t.severity,
                "confidence": t.confidence,
                "action": t.recommended.action,
                "reason": t.recommended.reason,
                "rule": policylayer::tool_rule(t),
                "hidden": t.recommended.action == Action::Hide,
            })
        })
        .collect();
    json!({
        "schema_version": SCHEMA_VERSION,
        "id": record.id,
        "name": record.name,
        "summary": record.summary,
        "publisher": record.publisher,
        "repository": record.repository,
        "packages": record.packages,
        "scanned": record.snapshot.is_some(),
        "grade": server.grade.to_string(),
        "score": server.score,
        "grade_reasons": server.grade_reasons,
        "identity": server.identity,
        "auth": server.auth,
        "counts": counts,
        "tools": tools,
        "findings": server.findings,
        "unscanned": record.unscanned,
        "uri": server_uri(&record.id),
    })
}

fn lookup_server(service: &Service, name: &str) -> Outcome {
    let list = |es: &[&Entry]| -> Vec<Value> {
        es.iter().take(MAX_MATCHES).map(|e| candidate(e)).collect()
    };
    let (kind, server, candidates) = match find(service.catalog(), name) {
        Found::One(e) => match e.record() {
            Ok(record) => {
                let kind = if names_exactly(e, name) {
                    "exact"
                } else {
                    "close"
                };
                let assessed = service.assess_record(&record);
                (kind, server_summary(&record, &assessed), Vec::new())
            }
            Err(err) => return Outcome::Failed(err.to_string()),
        },
        Found::Several(es) => ("several", Value::Null, list(&es)),
        Found::Vendor(_, es) => ("vendor", Value::Null, list(&es)),
        Found::None(near) => ("none", Value::Null, list(&near)),
    };
    Outcome::Done(json!({
        "query": name,
        "match": kind,
        "server": server,
        "candidates": candidates,
    }))
}

/// The record a person named, or the message that says what fits instead.
fn resolve_record(service: &Service, name: &str) -> Result<Record, String> {
    resolve(service.catalog(), name).map_err(|e| {
        format!(
            "{e}. The search_catalog tool finds servers by words; live scans are for the mcprisk command line."
        )
    })
}

fn lookup_tool(service: &Service, server: &str, tool: &str) -> Outcome {
    let record = match resolve_record(service, server) {
        Ok(r) => r,
        Err(msg) => return Outcome::Failed(msg),
    };
    let assessed = service.assess_record(&record);
    match assessed.tools.iter().find(|t| t.name == tool) {
        Some(t) => Outcome::Done(crate::report::lookup::tool_document(&record, &assessed, t)),
        None => {
            let names: Vec<&str> = assessed.tools.iter().map(|t| t.name.as_str()).collect();
            Outcome::Failed(if names.is_empty() {
                format!(
                    "{} has no tool snapshot, so no tool {tool:?} is known",
                    record.id
                )
            } else {
                format!(
                    "{} has no tool {tool:?}; its tools: {}",
                    record.id,
                    names.join(", ")
                )
            })
        }
    }
}

/// Reads a supplied tool list (an array of tools, or an object with `tools`).
fn read_tools(tools: &Value) -> Result<crate::targets::toollist::ToolList, RpcError> {
    if !(tools.is_array() || tools.get("tools").is_some_and(Value::is_array)) {
        return Err(RpcError::params(
            "tools must be an array of tools (or a tools/list result with a tools array)",
        ));
    }
    crate::targets::toollist::from_value(tools.clone(), "tools")
        .map_err(|e| RpcError::params(e.to_string()))
}

fn assess_tools(service: &Service, tools: &Value, name: &str) -> Outcome {
    let list = match read_tools(tools) {
        Ok(l) => l,
        Err(e) => return Outcome::Failed(e.message),
    };
    let server = service.assess_list(name, &list);
    Outcome::Done(json!({"schema_version": SCHEMA_VERSION, "servers": [server]}))
}

fn recommend_policy(service: &Service, args: &Map<String, Value>) -> Result<Outcome, RpcError> {
    let flavor = match optional_text(args, "flavor")? {
        None => Flavor::Policylayer,
        Some(f) => FLAVORS
            .into_iter()
            .find(|x| x.as_str() == f)
            .ok_or_else(|| {
                RpcError::params(
                    "flavor must be one of policylayer, claude-code, intercept, agentgateway",
                )
            })?,
    };
    let server = optional_text(args, "server")?;
    let tools = args.get("tools").filter(|v| !v.is_null());
    let assessed = match (server, tools) {
        (Some(_), Some(_)) => {
            return Err(RpcError::params("give either server or tools, not both"))
        }
        (None, None) => {
            return Err(RpcError::params(
                "give server (a catalog server) or tools (a tool list)",
            ))
        }
        (Some(name), None) => {
            if args.get("name").is_some_and(|v| !v.is_null()) {
                return Err(RpcError::params("name goes with tools, not with server"));
            }
            match resolve_record(service, name) {
                Ok(record) => service.assess_record(&record),
                Err(msg) => return Ok(Outcome::Failed(msg)),
            }
        }
        (None, Some(tools)) => {
            let name = optional_text(args, "name")?.unwrap_or("supplied-tools");
            let list = read_tools(tools)?;
            service.assess_list(name, &list)
        }
    };
    if assessed.tools.is_empty() && !assessed.errors.is_empty() {
        let why: Vec<&str> = assessed.errors.iter().map(|e| e.message.as_str()).collect();
        return Ok(Outcome::Failed(format!(
            "no tool of {} could be assessed, so there is no policy: {}",
            assessed.name,
            why.join("; ")
        )));
    }
    let servers = std::slice::from_ref(&assessed);
    let doc = match flavor {
        Flavor::Policylayer => policylayer::policy(servers),
        Flavor::ClaudeCode => claude_code::settings(servers),
        Flavor::Intercept => intercept::policy(servers),
        Flavor::Agentgateway => agentgateway::policy(servers),
    };
    let (text, media) = if flavor.is_yaml() {
        let yaml = match crate::output::inert::yaml(&doc) {
            Ok(y) => y,
            Err(e) => {
                return Ok(Outcome::Failed(format!(
                    "cannot write the policy as YAML: {e}"
                )))
            }
        };
        let header = if flavor == Flavor::Agentgateway {
            agentgateway::HEADER
        } else {
            ""
        };
        let newline = if yaml.ends_with('\n') { "" } else { "\n" };
        (format!("{header}{yaml}{newline}"), "application/yaml")
    } else {
        (
            format!("{}\n", crate::output::inert::json_pretty_string(&doc)),
            "application/json",
        )
    };
    Ok(Outcome::Done(json!({
        "flavor": flavor.as_str(),
        "media_type": media,
        "policy": text,
        "document": doc,
        "servers": [{"name": assessed.name, "grade": assessed.grade.to_string()}],
    })))
}

fn search_catalog(service: &Service, query: &str, limit: usize) -> Outcome {
    let hits = search(service.catalog(), query);
    Outcome::Done(json!({
        "query": query,
        "total": hits.len(),
        "results": hits.iter().take(limit).map(|e| candidate(e)).collect::<Vec<_>>(),
    }))
}

/// A rule's document with its effect and resource URI.
pub fn rule_document(rule: &crate::classify::Rule) -> Value {
    let mut doc = crate::report::rule::document(rule);
    doc["effect"] = json!(crate::report::rule::effect(rule));
    doc["uri"] = json!(format!("mcprisk://rules/{}", rule.id));
    doc
}

fn explain_rule(service: &Service, id: &str) -> Outcome {
    match service.engine().rules().find(id) {
        Some(rule) => Outcome::Done(rule_document(rule)),
        None => Outcome::Failed(format!(
            "no rule {id:?}; rule IDs look like MR-C304 and appear in evidence, findings and grade reasons"
        )),
    }
}
