//! What the rules look at, extracted once per tool: name words, the action word, the
//! description's phrases, and the input schema's properties and enum values.

use super::words::{leading_words_into, split_identifier, Words};
use crate::model::Tool;
use serde_json::Value;

/// Bounds on the schema walk, so a hostile schema costs little.
const MAX_SCHEMA_DEPTH: usize = 16;
const MAX_SCHEMA_NODES: usize = 2_000;
/// How many leading description words may hold the description's action word.
const LEAD_WINDOW: usize = 8;

/// One property of the input schema. Its key, words and values live in the tool's
/// [`Features`] (one buffer each for all properties, not three allocations per property).
#[derive(Debug, Default, Clone, Copy)]
pub struct Property<'a> {
    /// As written in the schema.
    pub name: &'a str,
    /// The property's own description, if it has one.
    pub description: Option<&'a str>,
    /// Takes free text: a string (or an array of strings) with no enum or const.
    pub free_text: bool,
    /// A switch: its type is `boolean`.
    pub switch: bool,
    /// Its words: a range of `Features::prop_words`.
    words: (u32, u32),
    /// Its enum and const values: a range of `Features::values`.
    values: (u32, u32),
}

/// Everything the rules read about one tool.
#[derive(Debug, Default)]
pub struct Features<'a> {
    pub name_words: Words,
    /// Leading description words, lowercased.
    pub lead_words: Words,
    pub properties: Vec<Property<'a>>,
    /// Each property's name lowercased with separators removed, in property order.
    prop_keys: Words,
    /// Every property's name split into lowercase words.
    prop_words: Words,
    /// Every property's enum and const values that are strings, as written.
    values: Vec<&'a str>,
    /// Descriptions, titles and string defaults inside the schema, where they are (bounded).
    pub schema_texts: Vec<&'a str>,
    /// The boolean annotations the server set, such as `readOnlyHint`.
    pub hints: Vec<(&'a str, bool)>,
}

/// The buffers of a [`Features`], emptied, to extract the next tool's features into without
/// allocating them again.
#[derive(Debug, Default)]
pub struct Buffers {
    words: [Words; 4],
    properties: Vec<Property<'static>>,
    values: Vec<&'static str>,
    schema_texts: Vec<&'static str>,
    hints: Vec<(&'static str, bool)>,
}

/// `v` emptied, as a vector of another type of the same size: the allocation is kept (the
/// standard library collects an emptied vector's `into_iter` in place), and it is only ever
/// used empty, so nothing of the old type is read as the new.
fn emptied<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter()
        .map(|_| unreachable!("the vector is empty"))
        .collect()
}

impl<'a> Features<'a> {
    /// Extracts the features of a tool.
    pub fn of(tool: &'a Tool) -> Features<'a> {
        Features::reusing(tool, Buffers::default())
    }

    /// Extracts the features of a tool into buffers given back by [`Features::recycle`].
    pub fn reusing(tool: &'a Tool, buffers: Buffers) -> Features<'a> {
        // Buffers are empty whenever they exist (made by `default` or `recycle`), and the
        // borrowed ones take the tool's lifetime as they are.
        let Buffers {
            words: [name_words, lead_words, prop_keys, prop_words],
            properties,
            values,
            schema_texts,
            hints,
        } = buffers;
        let mut f = Features {
            name_words,
            lead_words,
            properties,
            prop_keys,
            prop_words,
            values,
            schema_texts,
            hints,
        };
        f.name_words.reserve(4, tool.name.len());
        f.lead_words.reserve(LEAD_WINDOW, 64);
        f.schema_texts.reserve(8);
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
            features: &mut f,
            schema_budget: MAX_SCHEMA_NODES,
            text_budget: MAX_SCHEMA_NODES,
            room: MAX_SCHEMA_TEXT,
        }
        .visit(schema, 0, Some(0));
        f
    }

    /// Every schema string the rules and the model read: property names, enum and const
    /// values, and the gathered texts.
    pub fn schema_strings(&self) -> impl Iterator<Item = &'a str> + '_ {
        let names = self.properties.iter().map(|p| p.name);
        names
            .chain(self.values.iter().copied())
            .chain(self.schema_texts.iter().copied())
    }

    /// Gives back the buffers, emptied, for the next tool.
    pub fn recycle(self) -> Buffers {
        let mut words = [
            self.name_words,
            self.lead_words,
            self.prop_keys,
            self.prop_words,
        ];
        for w in &mut words {
            w.clear();
        }
        Buffers {
            words,
            properties: emptied(self.properties),
            values: emptied(self.values),
            schema_texts: emptied(self.schema_texts),
            hints: emptied(self.hints),
        }
    }

    /// A boolean annotation such as `readOnlyHint`, if the server set it.
    pub fn hint(&self, key: &str) -> Option<bool> {
        self.hints.iter().find(|(k, _)| *k == key).map(|&(_, v)| v)
    }

    /// Property `i`'s name, lowercase with separators removed (`force_stop` is `forcestop`).
    pub fn key(&self, i: usize) -> &str {
        self.prop_keys.get(i)
    }

    /// Property `i`'s name split into lowercase words.
    pub fn words_of(&self, i: usize) -> impl Iterator<Item = &str> + '_ {
        let (start, end) = self.properties[i].words;
        (start as usize..end as usize).map(|w| self.prop_words.get(w))
    }

    /// Property `i`'s enum and const values that are strings, as written.
    pub fn values_of(&self, i: usize) -> &[&'a str] {
        let (start, end) = self.properties[i].values;
        &self.values[start as usize..end as usize]
    }

    /// Adds a property: its name, words, description, and whether it takes free text.
    fn add_property(&mut self, name: &'a str, sub: &'a Value) {
        let words_start = self.prop_words.len() as u32;
        split_identifier(name, &mut self.prop_words);
        // The key is the name's words run together (see `normalize_key`).
        self.prop_keys
            .push_joined(&self.prop_words, words_start as usize);
        let values_start = self.values.len() as u32;
        let mut shape = Shape::default();
        collect_shape(sub, 0, &mut shape, &mut self.values);
        let has_values = self.values.len() as u32 > values_start;
        let has_string = shape.string || (shape.string_items && !shape.other);
        self.properties.push(Property {
            name,
            description: shape.description,
            free_text: !has_values && (has_string || !shape.any),
            switch: shape.boolean,
            words: (words_start, self.prop_words.len() as u32),
            values: (values_start, self.values.len() as u32),
        });
    }
}

/// What a property's schema says about it, as far as the rules need: its description, and
/// the types it allows as far as the free-text test needs them.
#[derive(Default)]
struct Shape<'a> {
    /// Its own `description`.
    description: Option<&'a str>,
    /// Its `items` are strings.
    string_items: bool,
    /// Some type at all (or an enum or a non-string const).
    any: bool,
    /// `string` among them.
    string: bool,
    /// A type other than `array` and `null` among them.
    other: bool,
    /// `boolean` among them.
    boolean: bool,
}

/// One pass over the input schema, gathering its properties and its texts, within budgets.
struct SchemaWalk<'a, 'f> {
    features: &'f mut Features<'a>,
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
        match node {
            Value::Object(map) => {
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
            Value::Array(items) if texts_on => {
                for v in items {
                    match v {
                        Value::Object(_) | Value::Array(_) => self.visit(v, depth + 1, None),
                        // What visiting a scalar (an enum value, a required name) would do:
                        // count it against the budget, without the call.
                        _ => {
                            if depth < MAX_SCHEMA_DEPTH && self.text_budget > 0 && self.room > 0 {
                                self.text_budget -= 1;
                            }
                        }
                    }
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
        let f = &mut *self.features;
        f.properties.reserve(props.len());
        f.prop_keys.reserve(props.len(), props.len() * 10);
        f.prop_words.reserve(props.len() * 2, props.len() * 10);
        for (name, sub) in props {
            if self.schema_budget == 0 {
                break;
            }
            self.features.add_property(name, sub);
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
            self.features.schema_texts.push(&s[..cut]);
            self.room -= cut;
        }
    }
}

/// Most schema text gathered for scanning; hostile text past this is still bounded work.
const MAX_SCHEMA_TEXT: usize = 256 * 1024;

/// The types and enum values a property allows, looking through anyOf/oneOf/allOf.
fn collect_shape<'a>(
    schema: &'a Value,
    depth: usize,
    shape: &mut Shape<'a>,
    values: &mut Vec<&'a str>,
) {
    if depth > 4 {
        return;
    }
    let Value::Object(map) = schema else { return };
    let mut has_enum = false;
    let add_type = |shape: &mut Shape<'a>, t: &str| {
        shape.any = true;
        shape.string |= t == "string";
        shape.boolean |= t == "boolean";
        shape.other |= t != "array" && t != "null";
    };
    for (key, v) in map {
        match (key.as_str(), v) {
            ("type", Value::String(t)) => add_type(shape, t),
            ("type", Value::Array(ts)) => {
                for t in ts.iter().filter_map(Value::as_str) {
                    add_type(shape, t);
                }
            }
            ("enum", Value::Array(items)) => {
                values.extend(items.iter().filter_map(Value::as_str));
                has_enum = true;
            }
            ("const", c) => match c.as_str() {
                Some(s) => values.push(s),
                None => add_type(shape, "const"),
            },
            ("anyOf" | "oneOf" | "allOf", Value::Array(variants)) => {
                for v in variants {
                    collect_shape(v, depth + 1, shape, values);
                }
            }
            ("description", Value::String(d)) if depth == 0 => shape.description = Some(d),
            ("items", Value::Object(items)) if depth == 0 => {
                shape.string_items = items
                    .iter()
                    .any(|(k, t)| k == "type" && t.as_str() == Some("string"))
            }
            _ => {}
        }
    }
    if has_enum && !shape.any {
        add_type(shape, "enum");
    }
}
