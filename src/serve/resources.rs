//! Resources: every catalog record as `mcprisk://servers/{id}` (the server's summary, as
//! `lookup_server` returns it) and every rule as `mcprisk://rules/{id}` (its documentation, as
//! `explain_rule` returns it), both JSON. Ids with `/` may be sent raw or percent-encoded.

use super::protocol::{code, RpcError};
use super::tools::{rule_document, server_summary, server_uri};
use super::Service;
use serde_json::{json, Map, Value};

const SERVERS: &str = "mcprisk://servers/";
const RULES: &str = "mcprisk://rules/";
/// Resources per `resources/list` page.
const PAGE: usize = 200;

/// The resource templates (`resources/templates/list`).
pub fn templates() -> Vec<Value> {
    vec![
        json!({
            "uriTemplate": "mcprisk://servers/{id}",
            "name": "server",
            "title": "MCP server record",
            "description": "A catalog server's summary: identity, auth posture, grade with reasons, counts per category, each tool with its category, severity and recommended rule. The id is the record's id (search_catalog finds it).",
            "mimeType": "application/json",
        }),
        json!({
            "uriTemplate": "mcprisk://rules/{id}",
            "name": "rule",
            "title": "Classification rule",
            "description": "A rule's documentation (an ID like MR-C304): what it matches, why it matters, an example.",
            "mimeType": "application/json",
        }),
    ]
}

/// `resources/list`: every rule, then every catalog record, in pages of 200 (the cursor is the
/// offset of the next page).
pub fn list(service: &Service, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(c)) => c
            .parse::<usize>()
            .map_err(|_| RpcError::params("unknown cursor: pass back a nextCursor as it came"))?,
        Some(_) => return Err(RpcError::params("cursor must be a string")),
    };
    let rules = &service.engine().rules().rules;
    let entries = &service.catalog().entries;
    let total = rules.len() + entries.len();
    let end = (start + PAGE).min(total);
    let mut page = Vec::new();
    for i in start..end {
        page.push(if i < rules.len() {
            let r = &rules[i];
            json!({"uri": format!("{RULES}{}", r.id), "name": r.id, "title": r.name,
                   "description": r.summary, "mimeType": "application/json"})
        } else {
            let l = &entries[i - rules.len()].listing;
            json!({"uri": server_uri(&l.id), "name": l.id, "title": l.name,
                   "description": l.summary, "mimeType": "application/json"})
        });
    }
    let mut result = json!({"resources": page});
    if end < total {
        result["nextCursor"] = json!(end.to_string());
    }
    Ok(result)
}

/// `resources/read`.
pub fn read(service: &Service, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let uri = match params.get("uri") {
        Some(Value::String(u)) => u.as_str(),
        Some(_) => return Err(RpcError::params("uri must be a string")),
        None => return Err(RpcError::params("resources/read needs a uri")),
    };
    let not_found = || RpcError {
        code: code::RESOURCE_NOT_FOUND,
        message: format!(
            "resource not found: {}",
            crate::output::sanitize::one_line(uri, 200)
        ),
        data: Some(json!({"uri": uri})),
    };
    let doc = if let Some(id) = uri.strip_prefix(SERVERS) {
        let id = percent_decode(id).ok_or_else(not_found)?;
        let entry = service
            .catalog()
            .entries
            .iter()
            .find(|e| e.listing.id.eq_ignore_ascii_case(&id))
            .ok_or_else(not_found)?;
        let record = entry
            .record()
            .map_err(|e| RpcError::new(code::RESOURCE_NOT_FOUND, e.to_string()))?;
        server_summary(&record, &service.assess_record(&record))
    } else if let Some(id) = uri.strip_prefix(RULES) {
        let id = percent_decode(id).ok_or_else(not_found)?;
        rule_document(service.engine().rules().get(&id).ok_or_else(not_found)?)
    } else {
        return Err(not_found());
    };
    Ok(json!({"contents": [{
        "uri": uri,
        "mimeType": "application/json",
        "text": crate::output::inert::json_pretty_string(&doc),
    }]}))
}

/// `%XX` escapes decoded (a URI template expands `/` in an id to `%2F`); `None` when the
/// result is not UTF-8 or an escape is broken.
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::percent_decode;

    #[test]
    fn ids_may_be_percent_encoded() {
        assert_eq!(
            percent_decode("io.github.x%2Fproxmox-mcp").as_deref(),
            Some("io.github.x/proxmox-mcp")
        );
        assert_eq!(percent_decode("npm/@a/b").as_deref(), Some("npm/@a/b"));
        assert_eq!(percent_decode("bad%2"), None);
        assert_eq!(percent_decode("bad%zz"), None);
        assert_eq!(percent_decode("%ff"), None);
    }
}
