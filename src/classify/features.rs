//! What the rules look at, extracted once per tool: name words, the action word, the
//! description's phrases, and the input schema's properties and enum values.

use super::words::{leading_words, normalize_key, split_identifier};
use crate::model::Tool;
use serde_json::Value;

/// Bounds on the schema walk, so a hostile schema costs little.
const MAX_SCHEMA_DEPTH: usize = 16;
const MAX_SCHEMA_NODES: usize = 2_000;
/// How many leading description words may hold the description's action word.
const LEAD_WINDOW: usize = 8;

/// One property of the input schema.
#[derive(Debug, Default)]
pub struct Property<'a> {
    /// As written in the schema.
    pub name: &'a str,
    /// The property's own description, if it has one.
    pub description: Option<&'a str>,
    /// Lowercase, separators removed.
    pub key: String,
    /// The name split into lowercase words.
    pub words: Vec<String>,
    /// Takes free text: a string (or an array of strings) with no enum or const.
    pub free_text: bool,
    /// Enum and const values that are strings, as written.
    pub values: Vec<String>,
}

/// Everything the rules read about one tool.
#[derive(Debug, Default)]
pub struct Features<'a> {
    pub name_words: Vec<String>,
    /// Leading description words, lowercased.
    pub lead_words: Vec<String>,
    pub properties: Vec<Property<'a>>,
    /// Descriptions, titles and string defaults inside the schema, one per line (bounded).
    pub schema_text: String,
}

impl<'a> Features<'a> {
    /// Extracts the features of a tool.
    pub fn of(tool: &'a Tool) -> Features<'a> {
        let mut f = Features::default();
        split_identifier(&tool.name, &mut f.name_words);
        f.lead_words = leading_words(&tool.description, LEAD_WINDOW).collect();
        let mut budget = MAX_SCHEMA_NODES;
        walk_schema(tool.input_schema(), 0, &mut budget, &mut f.properties);
        let mut budget = MAX_SCHEMA_NODES;
        collect_text(tool.input_schema(), 0, &mut budget, &mut f.schema_text);
        f
    }
}

fn walk_schema<'a>(
    schema: &'a Value,
    depth: usize,
    budget: &mut usize,
    out: &mut Vec<Property<'a>>,
) {
    if depth > MAX_SCHEMA_DEPTH || *budget == 0 {
        return;
    }
    *budget -= 1;
    let Value::Object(map) = schema else { return };
    // One pass over the keys: each `get` on a JSON object hashes the key.
    for (key, sub) in map {
        match key.as_str() {
            "properties" => {
                let Value::Object(props) = sub else { continue };
                for (name, sub) in props {
                    if *budget == 0 {
                        return;
                    }
                    out.push(property(name, sub));
                    walk_schema(sub, depth + 1, budget, out);
                }
            }
            "items" | "additionalProperties" => walk_schema(sub, depth + 1, budget, out),
            "anyOf" | "oneOf" | "allOf" => {
                if let Value::Array(variants) = sub {
                    for v in variants {
                        walk_schema(v, depth + 1, budget, out);
                    }
                }
            }
            _ => {}
        }
    }
}

/// One property: its name, words, description, and whether it takes free text.
fn property<'a>(name: &'a str, sub: &'a Value) -> Property<'a> {
    let mut p = Property {
        name,
        key: normalize_key(name),
        ..Property::default()
    };
    split_identifier(name, &mut p.words);
    let mut types = Vec::new();
    let mut string_items = false;
    if let Value::Object(m) = sub {
        for (k, v) in m {
            match k.as_str() {
                "description" => p.description = v.as_str(),
                "items" => string_items = v.get("type").and_then(Value::as_str) == Some("string"),
                _ => {}
            }
        }
    }
    collect_shape(sub, 0, &mut types, &mut p.values);
    let has_string = types.iter().any(|t| t == "string")
        || (string_items && types.iter().all(|t| t == "array" || t == "null"));
    p.free_text = p.values.is_empty() && (has_string || types.is_empty());
    p
}

/// Most schema text gathered for scanning; hostile text past this is still bounded work.
const MAX_SCHEMA_TEXT: usize = 256 * 1024;

fn collect_text(schema: &Value, depth: usize, budget: &mut usize, out: &mut String) {
    if depth > MAX_SCHEMA_DEPTH || *budget == 0 || out.len() >= MAX_SCHEMA_TEXT {
        return;
    }
    *budget -= 1;
    match schema {
        Value::Object(map) => {
            for (k, v) in map {
                match v {
                    Value::String(s)
                        if matches!(k.as_str(), "description" | "title" | "default") =>
                    {
                        let room = MAX_SCHEMA_TEXT.saturating_sub(out.len());
                        let mut cut = s.len().min(room);
                        while !s.is_char_boundary(cut) {
                            cut -= 1;
                        }
                        out.push_str(&s[..cut]);
                        out.push('\n');
                    }
                    Value::Object(_) | Value::Array(_) => collect_text(v, depth + 1, budget, out),
                    _ => {}
                }
            }
        }
        Value::Array(items) => {
            for v in items {
                collect_text(v, depth + 1, budget, out);
            }
        }
        _ => {}
    }
}

/// The types and enum values a property allows, looking through anyOf/oneOf/allOf.
fn collect_shape(schema: &Value, depth: usize, types: &mut Vec<String>, values: &mut Vec<String>) {
    if depth > 4 {
        return;
    }
    let Value::Object(map) = schema else { return };
    let mut has_enum = false;
    for (key, v) in map {
        match (key.as_str(), v) {
            ("type", Value::String(t)) => types.push(t.clone()),
            ("type", Value::Array(ts)) => {
                types.extend(ts.iter().filter_map(Value::as_str).map(String::from))
            }
            ("enum", Value::Array(items)) => {
                values.extend(items.iter().filter_map(Value::as_str).map(String::from));
                has_enum = true;
            }
            ("const", c) => match c.as_str() {
                Some(s) => values.push(s.to_string()),
                None => types.push("const".into()),
            },
            ("anyOf" | "oneOf" | "allOf", Value::Array(variants)) => {
                for v in variants {
                    collect_shape(v, depth + 1, types, values);
                }
            }
            _ => {}
        }
    }
    if has_enum && types.is_empty() {
        types.push("enum".into());
    }
}
