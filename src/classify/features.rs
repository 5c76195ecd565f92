//! What the rules look at, extracted once per tool: name words, the action word, the
//! description's phrases, and the input schema's properties and enum values.

use super::words::{leading_words_into, normalize_key, split_identifier, Words};
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
    pub words: Words,
    /// Takes free text: a string (or an array of strings) with no enum or const.
    pub free_text: bool,
    /// Enum and const values that are strings, as written.
    pub values: Vec<&'a str>,
}

/// Everything the rules read about one tool.
#[derive(Debug, Default)]
pub struct Features<'a> {
    pub name_words: Words,
    /// Leading description words, lowercased.
    pub lead_words: Words,
    pub properties: Vec<Property<'a>>,
    /// Descriptions, titles and string defaults inside the schema, where they are (bounded).
    pub schema_texts: Vec<&'a str>,
    /// The boolean annotations the server set, such as `readOnlyHint`.
    pub hints: Vec<(&'a str, bool)>,
}

impl<'a> Features<'a> {
    /// Extracts the features of a tool.
    pub fn of(tool: &'a Tool) -> Features<'a> {
        let mut f = Features::default();
        split_identifier(&tool.name, &mut f.name_words);
        leading_words_into(&tool.description, LEAD_WINDOW, &mut f.lead_words);
        let mut schema = &Value::Null;
        if let Value::Object(raw) = &tool.raw {
            for (key, value) in raw {
                match (key.as_str(), value) {
                    ("inputSchema", _) => schema = value,
                    ("annotations", Value::Object(a)) => f.hints.extend(
                        a.iter()
                            .filter_map(|(k, v)| Some((k.as_str(), v.as_bool()?))),
                    ),
                    _ => {}
                }
            }
        }
        SchemaWalk {
            properties: &mut f.properties,
            texts: &mut f.schema_texts,
            schema_budget: MAX_SCHEMA_NODES,
            text_budget: MAX_SCHEMA_NODES,
            room: MAX_SCHEMA_TEXT,
        }
        .visit(schema, 0, Some(0));
        f
    }

    /// A boolean annotation such as `readOnlyHint`, if the server set it.
    pub fn hint(&self, key: &str) -> Option<bool> {
        self.hints.iter().find(|(k, _)| *k == key).map(|&(_, v)| v)
    }
}

/// One pass over the input schema, gathering its properties and its texts, within budgets.
struct SchemaWalk<'a, 'f> {
    properties: &'f mut Vec<Property<'a>>,
    texts: &'f mut Vec<&'a str>,
    /// Schema nodes left to read properties from.
    schema_budget: usize,
    /// JSON nodes left to read texts from.
    text_budget: usize,
    /// Bytes of text left to gather.
    room: usize,
}

impl<'a> SchemaWalk<'a, '_> {
    /// Visits `node`, `depth` JSON levels down; `schema_depth` is its depth as a schema when it
    /// is one (properties are read from it), `None` when it is other JSON (texts only).
    fn visit(&mut self, node: &'a Value, depth: usize, schema_depth: Option<usize>) {
        let texts_on = depth <= MAX_SCHEMA_DEPTH && self.text_budget > 0 && self.room > 0;
        let schema_depth =
            schema_depth.filter(|&d| d <= MAX_SCHEMA_DEPTH && self.schema_budget > 0);
        if texts_on {
            self.text_budget -= 1;
        }
        match (node, schema_depth) {
            (Value::Object(map), _) => {
                if schema_depth.is_some() {
                    self.schema_budget -= 1;
                }
                for (key, v) in map {
                    let key = key.as_str();
                    if let Some(d) = schema_depth {
                        match (key, v) {
                            ("properties", Value::Object(props)) => {
                                self.properties_of(props, depth, d, texts_on);
                                continue;
                            }
                            ("items" | "additionalProperties", _) => {
                                self.visit(v, depth + 1, Some(d + 1));
                                continue;
                            }
                            ("anyOf" | "oneOf" | "allOf", Value::Array(variants)) => {
                                for variant in variants {
                                    self.visit(variant, depth + 2, Some(d + 1));
                                }
                                continue;
                            }
                            _ => {}
                        }
                    }
                    if !texts_on {
                        continue;
                    }
                    match v {
                        Value::String(s) if matches!(key, "description" | "title" | "default") => {
                            self.text(s)
                        }
                        Value::Object(_) | Value::Array(_) => self.visit(v, depth + 1, None),
                        _ => {}
                    }
                }
            }
            (Value::Array(items), _) if texts_on => {
                for v in items {
                    self.visit(v, depth + 1, None);
                }
            }
            _ => {}
        }
    }

    /// The entries of a `properties` object: each is a property, and a schema to walk.
    fn properties_of(
        &mut self,
        props: &'a serde_json::Map<String, Value>,
        depth: usize,
        schema_depth: usize,
        texts_on: bool,
    ) {
        for (name, sub) in props {
            if self.schema_budget == 0 {
                break;
            }
            self.properties.push(property(name, sub));
            match sub {
                // Not a schema, but text a model would read all the same.
                Value::String(s)
                    if texts_on && matches!(name.as_str(), "description" | "title") =>
                {
                    self.text(s)
                }
                _ => self.visit(sub, depth + 2, Some(schema_depth + 1)),
            }
        }
    }

    /// Gathers one text, cut to the room left.
    fn text(&mut self, s: &'a str) {
        let mut cut = s.len().min(self.room);
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        if cut > 0 {
            self.texts.push(&s[..cut]);
            self.room -= cut;
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
    let mut types: Vec<&str> = Vec::new();
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
    let has_string = types.contains(&"string")
        || (string_items && types.iter().all(|&t| t == "array" || t == "null"));
    p.free_text = p.values.is_empty() && (has_string || types.is_empty());
    p
}

/// Most schema text gathered for scanning; hostile text past this is still bounded work.
const MAX_SCHEMA_TEXT: usize = 256 * 1024;

/// The types and enum values a property allows, looking through anyOf/oneOf/allOf.
fn collect_shape<'a>(
    schema: &'a Value,
    depth: usize,
    types: &mut Vec<&'a str>,
    values: &mut Vec<&'a str>,
) {
    if depth > 4 {
        return;
    }
    let Value::Object(map) = schema else { return };
    let mut has_enum = false;
    for (key, v) in map {
        match (key.as_str(), v) {
            ("type", Value::String(t)) => types.push(t),
            ("type", Value::Array(ts)) => types.extend(ts.iter().filter_map(Value::as_str)),
            ("enum", Value::Array(items)) => {
                values.extend(items.iter().filter_map(Value::as_str));
                has_enum = true;
            }
            ("const", c) => match c.as_str() {
                Some(s) => values.push(s),
                None => types.push("const"),
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
        types.push("enum");
    }
}
