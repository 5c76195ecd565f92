//! Reads a saved tool list: `{"tools":[...]}`, a bare array, or a JSON-RPC response wrapping one;
//! or a combined capture of everything a server offers, `{"tools":[...],"prompts":[...],
//! "resources":[...],"resourceTemplates":[...],"instructions":"..."}` (what `--save-tools` writes).
//!
//! Every tool and offer is checked on its own: a malformed one is reported in `errors` and the
//! rest are kept.

use crate::error::{Error, Result};
use crate::model::offers::Offers;
use crate::model::{InputError, Tool};
use crate::targets::mcp::OfferError;
use crate::targets::offers::{self, RawOffers};
use serde_json::Value;
use std::io::Read;

/// The largest input accepted, in bytes. Real tool lists are well under 10 MiB.
pub const MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;

/// The tools that could be read, and what was wrong with the others.
#[derive(Debug, Default)]
pub struct ToolList {
    /// The tools that could be read, in order.
    pub tools: Vec<Tool>,
    /// One error per tool (or offer) that could not be read, and where it is.
    pub errors: Vec<InputError>,
    /// Instructions, prompts, resources and templates that could be read.
    pub offers: Offers,
    /// Lists of offers a live server announced but did not deliver.
    pub offer_failures: Vec<OfferError>,
}

impl ToolList {
    /// Adds the offers read from `raw`; unreadable ones join `errors`.
    pub fn with_offers(mut self, raw: &RawOffers) -> ToolList {
        let (read, errors) = offers::read(raw);
        self.offers = read;
        self.errors.extend(errors);
        self
    }
}

/// Reads at most [`MAX_INPUT_BYTES`] from `reader`; `origin` names the input in messages.
pub fn read_limited(reader: impl Read, origin: &str) -> Result<Vec<u8>> {
    read_limited_sized(reader, origin, 0)
}

/// Like [`read_limited`], with room for `expected` bytes made up front (a file's size), so a
/// large list is read into one buffer instead of one that doubles and copies as it grows.
fn read_limited_sized(mut reader: impl Read, origin: &str, expected: u64) -> Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(expected.min(MAX_INPUT_BYTES) as usize + 1);
    reader
        .by_ref()
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::new(format!("{origin}: cannot read: {e}")))?;
    if buf.len() as u64 > MAX_INPUT_BYTES {
        return Err(too_large(origin));
    }
    Ok(buf)
}

fn too_large(origin: &str) -> Error {
    Error::new(format!(
        "{origin}: input is larger than {} MiB; a tool list is far smaller, so this is not one",
        MAX_INPUT_BYTES / (1024 * 1024)
    ))
}

/// Reads a tool list from a file path, or from standard input when `path` is `-`.
pub fn load(path: &str) -> Result<ToolList> {
    let bytes = if path == "-" {
        read_limited(std::io::stdin().lock(), "standard input")?
    } else {
        let file = std::fs::File::open(path)
            .map_err(|e| Error::new(format!("{path}: cannot open: {e}")))?;
        let mut expected = 0;
        if let Ok(meta) = file.metadata() {
            if meta.is_dir() {
                return Err(Error::new(format!(
                    "{path}: is a directory, not a tool list"
                )));
            }
            // Refuse an oversized regular file before reading any of it.
            if meta.is_file() && meta.len() > MAX_INPUT_BYTES {
                return Err(too_large(path));
            }
            if meta.is_file() {
                expected = meta.len();
            }
        }
        read_limited_sized(file, path, expected)?
    };
    let origin = if path == "-" { "standard input" } else { path };
    parse(&bytes, origin)
}

/// Parses the bytes of a tool list; `origin` names the input in messages.
pub fn parse(bytes: &[u8], origin: &str) -> Result<ToolList> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let (line, col) = line_col(&bytes[..at]);
        Error::new(format!(
            "{origin}: not valid UTF-8 at line {line}, column {col} (byte {at})"
        ))
    })?;
    if text.trim().is_empty() {
        return Err(Error::new(format!(
            "{origin}: is empty; expected a tools/list result ({{\"tools\": [...]}}), \
             a JSON array of tools, or a JSON-RPC response"
        )));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        let msg = e.to_string();
        let what = match e.classify() {
            serde_json::error::Category::Eof => "unexpected end of input",
            _ if msg.starts_with("recursion limit exceeded") => {
                "nested too deeply (JSON deeper than 128 levels is refused)"
            }
            _ => "invalid JSON",
        };
        Error::new(format!(
            "{origin}: {what} at line {}, column {}: {}",
            e.line(),
            e.column(),
            strip_position(&msg)
        ))
    })?;
    from_value(value, origin)
}

/// The tool array of a saved list and the offers beside it, exactly as written (no tool or
/// offer is checked or dropped).
pub fn load_raw(path: &str) -> Result<(Vec<Value>, RawOffers)> {
    let file =
        std::fs::File::open(path).map_err(|e| Error::new(format!("{path}: cannot open: {e}")))?;
    let bytes = read_limited(file, path)?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        Error::new(format!(
            "{path}: invalid JSON at line {}, column {}",
            e.line(),
            e.column()
        ))
    })?;
    let (tools, _, offers) = locate_tools(value, path)?;
    Ok((tools, offers))
}

/// Reads each tool of a list a live server sent (`tools[i]` in messages).
pub fn from_tools(tools: Vec<Value>) -> ToolList {
    let mut list = ToolList::default();
    for (i, raw) in tools.into_iter().enumerate() {
        match tool_from_value(raw, &format!("tools[{i}]")) {
            Ok(tool) => list.tools.push(tool),
            Err(err) => list.errors.push(err),
        }
    }
    list
}

/// Finds the tool array in a parsed document and reads each tool.
pub fn from_value(value: Value, origin: &str) -> Result<ToolList> {
    let (tools, base, raw_offers) = locate_tools(value, origin)?;
    let mut list = ToolList::default();
    for (i, raw) in tools.into_iter().enumerate() {
        let location = format!("{base}[{i}]");
        match tool_from_value(raw, &location) {
            Ok(tool) => list.tools.push(tool),
            Err(err) => list.errors.push(err),
        }
    }
    Ok(list.with_offers(&raw_offers))
}

fn locate_tools(value: Value, origin: &str) -> Result<(Vec<Value>, &'static str, RawOffers)> {
    match value {
        Value::Array(items) => Ok((items, "", RawOffers::default())),
        Value::Object(mut map) => {
            let raw_offers = RawOffers::take_from(&mut map, origin).map_err(Error::new)?;
            if let Some(tools) = map.remove("tools") {
                return match tools {
                    Value::Array(items) => Ok((items, "tools", raw_offers)),
                    other => Err(Error::new(format!(
                        "{origin}: \"tools\" must be an array, found {}",
                        kind(&other)
                    ))),
                };
            }
            if let Some(error) = map.get("error") {
                let msg = error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("no message");
                return Err(Error::new(format!(
                    "{origin}: the JSON-RPC response is an error, not a tool list: {}",
                    crate::output::sanitize::one_line(msg, 200)
                )));
            }
            if let Some(result) = map.remove("result") {
                if let Value::Object(mut result) = result {
                    if let Some(tools) = result.remove("tools") {
                        return match tools {
                            Value::Array(items) => {
                                Ok((items, "result.tools", RawOffers::default()))
                            }
                            other => Err(Error::new(format!(
                                "{origin}: \"result.tools\" must be an array, found {}",
                                kind(&other)
                            ))),
                        };
                    }
                }
                return Err(Error::new(format!(
                    "{origin}: the JSON-RPC response has no \"result.tools\" array"
                )));
            }
            // A capture of a server that offers no tools, only prompts or resources.
            if !raw_offers.is_empty() && !map.contains_key("result") {
                return Ok((Vec::new(), "tools", raw_offers));
            }
            Err(Error::new(format!(
                "{origin}: expected a tools/list result ({{\"tools\": [...]}}), a JSON array of tools, \
                 or a JSON-RPC response; found an object without \"tools\""
            )))
        }
        other => Err(Error::new(format!(
            "{origin}: expected a tools/list result or an array of tools, found {}",
            kind(&other)
        ))),
    }
}

fn tool_from_value(raw: Value, location: &str) -> std::result::Result<Tool, InputError> {
    let err = |tool: Option<&str>, message: String| InputError {
        location: location.to_string(),
        tool: tool.map(str::to_string),
        message,
    };
    let Value::Object(map) = &raw else {
        return Err(err(
            None,
            format!("a tool must be an object, found {}", kind(&raw)),
        ));
    };
    let name = match map.get("name") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::String(_)) => return Err(err(None, "\"name\" is empty".into())),
        Some(other) => {
            return Err(err(
                None,
                format!("\"name\" must be a string, found {}", kind(other)),
            ))
        }
        None => return Err(err(None, "\"name\" is missing".into())),
    };
    let description = match map.get("description") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(err(
                Some(&name),
                format!("\"description\" must be a string, found {}", kind(other)),
            ))
        }
    };
    let title = match map.get("title") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(err(
                Some(&name),
                format!("\"title\" must be a string, found {}", kind(other)),
            ))
        }
    };
    match map.get("inputSchema") {
        Some(Value::Object(_)) => {}
        Some(other) => {
            return Err(err(
                Some(&name),
                format!("\"inputSchema\" must be an object, found {}", kind(other)),
            ))
        }
        None => return Err(err(Some(&name), "\"inputSchema\" is missing".into())),
    }
    match map.get("annotations") {
        None | Some(Value::Null) | Some(Value::Object(_)) => {}
        Some(other) => {
            return Err(err(
                Some(&name),
                format!("\"annotations\" must be an object, found {}", kind(other)),
            ))
        }
    }
    Ok(Tool {
        name,
        title,
        description,
        raw,
    })
}

/// A JSON value's kind, for messages.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn line_col(prefix: &[u8]) -> (usize, usize) {
    let line = prefix.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = prefix.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    (line, col)
}

/// serde_json appends " at line L column C"; the message already says where.
fn strip_position(msg: &str) -> &str {
    match msg.rfind(" at line ") {
        Some(i) => &msg[..i],
        None => msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_three_shapes() {
        let tool = r#"{"name":"a","inputSchema":{"type":"object"}}"#;
        for doc in [
            format!(r#"{{"tools":[{tool}]}}"#),
            format!("[{tool}]"),
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{tool}]}}}}"#),
        ] {
            let list = parse(doc.as_bytes(), "t").unwrap();
            assert_eq!(list.tools.len(), 1, "{doc}");
            assert!(list.errors.is_empty());
        }
    }

    #[test]
    fn bad_tool_is_reported_and_others_kept() {
        let doc = r#"{"tools":[{"name":"ok","inputSchema":{}},{"name":5},{"name":"x","description":[1],"inputSchema":{}}]}"#;
        let list = parse(doc.as_bytes(), "t").unwrap();
        assert_eq!(list.tools.len(), 1);
        assert_eq!(list.errors.len(), 2);
        assert_eq!(list.errors[0].location, "tools[1]");
        assert!(list.errors[1].message.contains("description"));
    }

    #[test]
    fn a_combined_capture_keeps_its_offers() {
        let doc = r#"{"tools":[{"name":"a","inputSchema":{}}],"instructions":"Be kind.",
            "prompts":[{"name":"p"},{"name":1}],"resources":[{"uri":"mem://x","name":"x"}],
            "resourceTemplates":[{"uriTemplate":"file:///{path}","name":"f"}]}"#;
        let list = parse(doc.as_bytes(), "t").unwrap();
        assert_eq!(list.tools.len(), 1);
        assert_eq!(list.offers.instructions.as_deref(), Some("Be kind."));
        assert_eq!(list.offers.prompts.len(), 1);
        assert_eq!(list.offers.resources.len(), 1);
        assert_eq!(list.offers.resource_templates.len(), 1);
        assert_eq!(list.errors[0].location, "prompts[1]");
        let only = parse(br#"{"prompts":[{"name":"p"}]}"#, "t").unwrap();
        assert!(only.tools.is_empty() && only.offers.prompts.len() == 1);
        let bad = parse(br#"{"tools":[],"prompts":{}}"#, "t").unwrap_err();
        assert!(
            bad.to_string().contains("\"prompts\" must be an array"),
            "{bad}"
        );
    }

    #[test]
    fn invalid_utf8_says_where() {
        let err = parse(b"{\n \"tools\": \"\xff\"}", "f.json").unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let doc = "[".repeat(10_000) + &"]".repeat(10_000);
        let err = parse(doc.as_bytes(), "deep.json").unwrap_err();
        assert!(err.to_string().contains("deep.json"), "{err}");
    }
}
