//! The definitions `tools/list` returns: each tool's input schema, output schema (matching the
//! documents [`super::tools`] builds, which the tests validate against them) and annotations.

use crate::model::Category;
use crate::policy::Flavor;
use serde_json::{json, Value};

/// The longest name, query or id argument accepted, in characters.
pub const MAX_NAME_CHARS: usize = 1000;
/// At most this many close matches or search results are returned.
pub const MAX_MATCHES: usize = 20;
/// The policy flavours `recommend_policy` writes.
pub const FLAVORS: [Flavor; 4] = [
    Flavor::Policylayer,
    Flavor::ClaudeCode,
    Flavor::Intercept,
    Flavor::Agentgateway,
];

/// The annotations every tool carries: each only reads data mcprisk holds or is sent.
fn annotations(title: &str) -> Value {
    json!({
        "title": title,
        "readOnlyHint": true,
        "destructiveHint": false,
        "idempotentHint": true,
        "openWorldHint": false,
    })
}

fn string(description: &str) -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": MAX_NAME_CHARS, "description": description})
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// A loose object schema: these documents only ever gain fields.
fn open_object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

fn nullable(schema: Value) -> Value {
    json!({"anyOf": [schema, {"type": "null"}]})
}

fn category_enum() -> Value {
    json!({"type": "string", "enum": Category::ALL.iter().map(|c| c.as_str()).collect::<Vec<_>>()})
}

fn severity_enum() -> Value {
    json!({"type": "string", "enum": ["Low", "Medium", "High", "Critical"]})
}

/// The schema of one assessed tool as the JSON report writes it.
fn tool_assessment_schema() -> Value {
    open_object(
        json!({
            "name": {"type": "string"},
            "category": category_enum(),
            "severity": severity_enum(),
            "confidence": {"type": "number"},
            "evidence": {"type": "array", "items": open_object(json!({"rule": {"type": "string"}, "detail": {"type": "string"}}), &["rule", "detail"])},
            "recommended": open_object(json!({"action": {"type": "string"}, "reason": {"type": "string"}}), &["action", "reason"]),
        }),
        &[
            "name",
            "category",
            "severity",
            "confidence",
            "evidence",
            "recommended",
        ],
    )
}

fn grade_reasons_schema() -> Value {
    json!({"type": "array", "items": open_object(json!({"points": {"type": "integer"}, "reason": {"type": "string"}}), &["points", "reason"])})
}

fn findings_schema() -> Value {
    json!({"type": "array", "items": open_object(json!({"rule": {"type": "string"}, "severity": severity_enum(), "message": {"type": "string"}}), &["rule", "severity", "message"])})
}

/// The schema of `scan --format json`.
fn scan_document_schema() -> Value {
    open_object(
        json!({
            "schema_version": {"type": "integer"},
            "servers": {"type": "array", "items": open_object(json!({
                "name": {"type": "string"},
                "grade": {"type": "string", "enum": ["A", "B", "C", "D", "F"]},
                "score": {"type": "integer"},
                "grade_reasons": grade_reasons_schema(),
                "identity": {"type": "object"},
                "auth": {"type": "object"},
                "tools": {"type": "array", "items": tool_assessment_schema()},
                "findings": findings_schema(),
                "errors": {"type": "array", "items": {"type": "object"}},
            }), &["name", "grade", "grade_reasons", "identity", "auth", "tools", "findings", "errors"])},
        }),
        &["schema_version", "servers"],
    )
}

fn candidate_schema() -> Value {
    open_object(
        json!({
            "id": {"type": "string"},
            "name": {"type": "string"},
            "publisher": {"type": "string"},
            "summary": {"type": "string"},
            "tools": {"type": "integer"},
            "uri": {"type": "string"},
        }),
        &["id", "name", "publisher", "summary", "tools", "uri"],
    )
}

/// The schema of a server's summary (`lookup_server`'s `server`, and the server resource).
pub fn server_summary_schema() -> Value {
    let count = json!({"type": "integer", "minimum": 0});
    open_object(
        json!({
            "schema_version": {"type": "integer"},
            "id": {"type": "string"},
            "name": {"type": "string"},
            "summary": {"type": "string"},
            "publisher": {"type": "string"},
            "repository": nullable(json!({"type": "string"})),
            "packages": {"type": "array", "items": {"type": "object"}},
            "scanned": {"type": "boolean"},
            "grade": {"type": "string", "enum": ["A", "B", "C", "D", "F"]},
            "score": {"type": "integer"},
            "grade_reasons": grade_reasons_schema(),
            "identity": {"type": "object"},
            "auth": {"type": "object"},
            "counts": open_object(json!({"Read": count, "Write": count, "Execute": count, "Destructive": count, "Financial": count}), &["Read", "Write", "Execute", "Destructive", "Financial"]),
            "tools": {"type": "array", "items": open_object(json!({
                "name": {"type": "string"},
                "category": category_enum(),
                "severity": severity_enum(),
                "confidence": {"type": "number"},
                "action": {"type": "string"},
                "reason": {"type": "string"},
                "rule": {"description": "the tool's entry in a PolicyLayer policy.json; null when the tool is hidden"},
                "hidden": {"type": "boolean"},
            }), &["name", "category", "severity", "action", "rule", "hidden"])},
            "findings": findings_schema(),
            "unscanned": nullable(json!({"type": "object"})),
            "uri": {"type": "string"},
        }),
        &[
            "schema_version",
            "id",
            "name",
            "scanned",
            "grade",
            "grade_reasons",
            "identity",
            "auth",
            "counts",
            "tools",
            "findings",
            "uri",
        ],
    )
}

/// Every tool's definition, as `tools/list` returns them.
pub fn definitions() -> Vec<Value> {
    let flavors: Vec<&str> = FLAVORS.iter().map(|f| f.as_str()).collect();
    let tool_list = json!({
        "type": "array",
        "items": {"type": "object"},
        "description": "the tools as an MCP server lists them: objects with name, description, inputSchema and optional annotations",
    });
    vec![
        json!({
            "name": "lookup_server",
            "title": "Look up an MCP server",
            "description": "The catalog record of an MCP server: identity, auth posture, grade A-F with the reasons, tool counts per category, and each tool with its category, severity and recommended policy rule. Takes an id, name, alias, package name, a package's start command line or a repository URL; when nothing fits exactly, returns the closest records.",
            "inputSchema": object(json!({"name": string("the server: id, name, alias, package, start command line or repository URL")}), &["name"]),
            "outputSchema": open_object(json!({
                "query": {"type": "string"},
                "match": {"type": "string", "enum": ["exact", "close", "several", "vendor", "none"]},
                "server": nullable(server_summary_schema()),
                "candidates": {"type": "array", "items": candidate_schema()},
            }), &["query", "match", "server", "candidates"]),
            "annotations": annotations("Look up an MCP server"),
        }),
        json!({
            "name": "lookup_tool",
            "title": "Look up one tool of an MCP server",
            "description": "One tool of a catalog server as a record page: its category and severity with the evidence, findings about it, and the policy.json rule recommended for it, with examples that deny or rate-limit it.",
            "inputSchema": object(json!({
                "server": string("the server, as for lookup_server"),
                "tool": string("the tool's name exactly as the server lists it"),
            }), &["server", "tool"]),
            "outputSchema": open_object(json!({
                "schema_version": {"type": "integer"},
                "server": open_object(json!({"id": {"type": "string"}, "name": {"type": "string"}, "grade": {"type": "string"}}), &["id", "name", "grade"]),
                "tool": tool_assessment_schema(),
                "findings": findings_schema(),
                "policy": {"type": "object"},
                "how_to_deny": {"type": "object"},
                "how_to_rate_limit": {"type": "object"},
            }), &["schema_version", "server", "tool", "findings", "policy"]),
            "annotations": annotations("Look up one tool of an MCP server"),
        }),
        json!({
            "name": "assess_tools",
            "title": "Assess a tool list",
            "description": "Assesses a tool list the caller supplies (the tools array of a tools/list result): each tool's category (Read, Write, Execute, Destructive, Financial), severity, evidence and recommended rule, findings, and the server's grade. Returns the same JSON document as `mcprisk scan --format json`.",
            "inputSchema": object(json!({
                "tools": tool_list,
                "name": string("the server's name in the report (default: supplied-tools)"),
            }), &["tools"]),
            "outputSchema": scan_document_schema(),
            "annotations": annotations("Assess a tool list"),
        }),
        json!({
            "name": "recommend_policy",
            "title": "Recommend a least-privilege policy",
            "description": "The recommended least-privilege policy for a catalog server (server) or for a supplied tool list (tools), as the text of a policy file: PolicyLayer policy.json, Claude Code settings permissions, Intercept YAML or agentgateway CEL rules.",
            "inputSchema": object(json!({
                "server": string("a catalog server, as for lookup_server; give this or tools"),
                "tools": tool_list,
                "name": string("the server's name when tools are given (default: supplied-tools)"),
                "flavor": {"type": "string", "enum": flavors, "default": "policylayer", "description": "the policy format"},
            }), &[]),
            "outputSchema": open_object(json!({
                "flavor": {"type": "string", "enum": flavors},
                "media_type": {"type": "string", "enum": ["application/json", "application/yaml"]},
                "policy": {"type": "string", "description": "the policy file's text"},
                "document": {"type": "object", "description": "the same policy as JSON"},
                "servers": {"type": "array", "items": open_object(json!({"name": {"type": "string"}, "grade": {"type": "string"}}), &["name", "grade"])},
            }), &["flavor", "media_type", "policy", "document", "servers"]),
            "annotations": annotations("Recommend a least-privilege policy"),
        }),
        json!({
            "name": "search_catalog",
            "title": "Search the catalog",
            "description": "Catalog records matching every word of a query, best first: words of the name or package count most, then aliases, the summary and tool names.",
            "inputSchema": object(json!({
                "query": string("words to find, e.g. \"postgres\" or \"payments refund\""),
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": MAX_MATCHES, "description": "at most this many records"},
            }), &["query"]),
            "outputSchema": open_object(json!({
                "query": {"type": "string"},
                "total": {"type": "integer"},
                "results": {"type": "array", "items": candidate_schema()},
            }), &["query", "total", "results"]),
            "annotations": annotations("Search the catalog"),
        }),
        json!({
            "name": "explain_rule",
            "title": "Explain a rule",
            "description": "The documentation of one rule named in evidence, findings or grade reasons (an ID like MR-C304): what it matches, why it matters, an example.",
            "inputSchema": object(json!({"id": string("the rule ID, e.g. MR-C304")}), &["id"]),
            "outputSchema": open_object(json!({
                "id": {"type": "string"},
                "name": {"type": "string"},
                "kind": {"type": "string"},
                "effect": {"type": "string"},
                "summary": {"type": "string"},
                "why": {"type": "string"},
                "example": {"type": "string"},
                "uri": {"type": "string"},
            }), &["id", "name", "kind", "effect", "summary", "why", "example", "uri"]),
            "annotations": annotations("Explain a rule"),
        }),
    ]
}
