//! Reads what a server offers besides tools (instructions, prompts, resources, resource
//! templates) from the raw JSON it sent, live or in a saved capture. Every item is checked on
//! its own: a malformed one is an input error at its place (`prompts[2]`), the rest are kept.

use crate::model::offers::{Offers, Prompt, PromptArgument, Resource, ResourceTemplate};
use crate::model::InputError;
use crate::targets::toollist::kind;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Everything besides tools exactly as a server sent it. In a saved capture these are the
/// keys `instructions`, `prompts`, `resources` and `resourceTemplates` beside `tools`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RawOffers {
    /// The handshake's `instructions` (a string, when the server follows the protocol).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<Value>,
    /// Every prompt of every `prompts/list` page.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<Value>,
    /// Every resource of every `resources/list` page.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Value>,
    /// Every template of every `resources/templates/list` page.
    #[serde(
        default,
        rename = "resourceTemplates",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub resource_templates: Vec<Value>,
}

impl RawOffers {
    /// Whether nothing besides tools was offered.
    pub fn is_empty(&self) -> bool {
        self.instructions.is_none()
            && self.prompts.is_empty()
            && self.resources.is_empty()
            && self.resource_templates.is_empty()
    }

    /// The keys of a capture these take (`instructions`, `prompts`, ...), moved out of `map`.
    /// A key holding the wrong kind of JSON is an error naming it.
    pub fn take_from(map: &mut Map<String, Value>, origin: &str) -> Result<RawOffers, String> {
        let mut out = RawOffers::default();
        for (key, slot) in [
            ("prompts", &mut out.prompts),
            ("resources", &mut out.resources),
            ("resourceTemplates", &mut out.resource_templates),
        ] {
            match map.remove(key) {
                None | Some(Value::Null) => {}
                Some(Value::Array(items)) => *slot = items,
                Some(other) => {
                    return Err(format!(
                        "{origin}: \"{key}\" must be an array, found {}",
                        kind(&other)
                    ))
                }
            }
        }
        out.instructions = map.remove("instructions").filter(|v| !v.is_null());
        Ok(out)
    }
}

/// Reads every offer; unreadable ones become input errors at their place.
pub fn read(raw: &RawOffers) -> (Offers, Vec<InputError>) {
    let mut offers = Offers::default();
    let mut errors = Vec::new();
    match &raw.instructions {
        None => {}
        Some(Value::String(s)) => offers.instructions = Some(s.clone()),
        Some(other) => errors.push(InputError {
            location: "instructions".into(),
            tool: None,
            message: format!("\"instructions\" must be a string, found {}", kind(other)),
        }),
    }
    for (i, v) in raw.prompts.iter().enumerate() {
        match prompt(v) {
            Ok(p) => offers.prompts.push(p),
            Err(m) => errors.push(error(&format!("prompts[{i}]"), v, "name", m)),
        }
    }
    for (i, v) in raw.resources.iter().enumerate() {
        match resource(v) {
            Ok(r) => offers.resources.push(r),
            Err(m) => errors.push(error(&format!("resources[{i}]"), v, "uri", m)),
        }
    }
    for (i, v) in raw.resource_templates.iter().enumerate() {
        match template(v) {
            Ok(t) => offers.resource_templates.push(t),
            Err(m) => errors.push(error(
                &format!("resourceTemplates[{i}]"),
                v,
                "uriTemplate",
                m,
            )),
        }
    }
    (offers, errors)
}

fn error(location: &str, v: &Value, name_key: &str, message: String) -> InputError {
    InputError {
        location: location.to_string(),
        tool: v.get(name_key).and_then(Value::as_str).map(str::to_string),
        message,
    }
}

fn object(v: &Value) -> Result<&Map<String, Value>, String> {
    v.as_object()
        .ok_or_else(|| format!("must be an object, found {}", kind(v)))
}

/// A required non-empty string field.
fn required(map: &Map<String, Value>, key: &str) -> Result<String, String> {
    match map.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(format!("\"{key}\" is empty")),
        Some(other) => Err(format!("\"{key}\" must be a string, found {}", kind(other))),
        None => Err(format!("\"{key}\" is missing")),
    }
}

/// An optional string field.
fn optional(map: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("\"{key}\" must be a string, found {}", kind(other))),
    }
}

fn prompt(v: &Value) -> Result<Prompt, String> {
    let map = object(v)?;
    let name = required(map, "name")?;
    let mut arguments = Vec::new();
    match map.get("arguments") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (i, a) in items.iter().enumerate() {
                let at = |m: String| format!("arguments[{i}]: {m}");
                let am = object(a).map_err(at)?;
                arguments.push(PromptArgument {
                    name: required(am, "name").map_err(at)?,
                    description: optional(am, "description").map_err(at)?.unwrap_or_default(),
                    required: match am.get("required") {
                        None | Some(Value::Null) => false,
                        Some(Value::Bool(b)) => *b,
                        Some(other) => {
                            return Err(at(format!(
                                "\"required\" must be a boolean, found {}",
                                kind(other)
                            )))
                        }
                    },
                });
            }
        }
        Some(other) => {
            return Err(format!(
                "\"arguments\" must be an array, found {}",
                kind(other)
            ))
        }
    }
    Ok(Prompt {
        name,
        title: optional(map, "title")?,
        description: optional(map, "description")?.unwrap_or_default(),
        arguments,
        raw: v.clone(),
    })
}

fn resource(v: &Value) -> Result<Resource, String> {
    let map = object(v)?;
    Ok(Resource {
        uri: required(map, "uri")?,
        name: optional(map, "name")?.unwrap_or_default(),
        title: optional(map, "title")?,
        description: optional(map, "description")?.unwrap_or_default(),
        mime_type: optional(map, "mimeType")?,
        raw: v.clone(),
    })
}

fn template(v: &Value) -> Result<ResourceTemplate, String> {
    let map = object(v)?;
    Ok(ResourceTemplate {
        uri_template: required(map, "uriTemplate")?,
        name: optional(map, "name")?.unwrap_or_default(),
        title: optional(map, "title")?,
        description: optional(map, "description")?.unwrap_or_default(),
        mime_type: optional(map, "mimeType")?,
        raw: v.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_each_kind_and_reports_bad_items_in_place() {
        let raw = RawOffers {
            instructions: Some(json!("Use the tools kindly.")),
            prompts: vec![
                json!({"name": "greet", "arguments": [{"name": "who", "required": true}]}),
                json!({"name": 7}),
                json!({"name": "x", "arguments": [{"description": "no name"}]}),
            ],
            resources: vec![
                json!({"uri": "file:///etc/hosts", "name": "hosts"}),
                json!("nope"),
            ],
            resource_templates: vec![json!({"uriTemplate": "file:///{path}", "name": "file"})],
        };
        let (offers, errors) = read(&raw);
        assert_eq!(
            offers.instructions.as_deref(),
            Some("Use the tools kindly.")
        );
        assert_eq!(offers.prompts.len(), 1);
        assert!(offers.prompts[0].arguments[0].required);
        assert_eq!(offers.resources.len(), 1);
        assert_eq!(offers.resource_templates.len(), 1);
        let places: Vec<&str> = errors.iter().map(|e| e.location.as_str()).collect();
        assert_eq!(places, ["prompts[1]", "prompts[2]", "resources[1]"]);
        assert!(
            errors[1].message.contains("arguments[0]"),
            "{}",
            errors[1].message
        );
    }

    #[test]
    fn instructions_that_are_not_text_are_an_error() {
        let raw = RawOffers {
            instructions: Some(json!({"a": 1})),
            ..RawOffers::default()
        };
        let (offers, errors) = read(&raw);
        assert!(offers.instructions.is_none());
        assert_eq!(errors[0].location, "instructions");
    }
}
