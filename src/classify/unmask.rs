//! Tool text as the model that calls the tool reads it. A hostile server can hide a word from
//! mcprisk's rules while an agent still reads it: a zero-width space inside "pur\u{200B}ge", or
//! a Cyrillic "е" inside "dеstroy". Before a tool is classified, invisible characters are
//! dropped and look-alike letters inside a Latin word are read as the Latin letters they
//! imitate, so the verdict is the one the plain spelling gets. The tool as sent is kept for
//! every report, and [`MR-F102`](super::findings::hidden_characters) names what was hidden.
//!
//! Which characters are hidden and which words are disguised is `output::deceptive`'s answer,
//! the same that output reveals them by.

use super::features::Features;
use crate::model::Tool;
use crate::output::deceptive::{
    is_disguised, is_dropped, is_filler, is_kept_selector, look_alike, pieces,
};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// The tool with its name, title, description and input schema (every key and string in it)
/// unmasked, which is all that classifying reads (see the module's head). Called only for a
/// tool that [`masks_what_is_read`]: the few others pay for a copy.
pub fn unmasked(tool: &Tool) -> Tool {
    let mut raw = tool.raw.clone();
    if let Value::Object(map) = &mut raw {
        for key in ["name", "title", "description"] {
            if let Some(Value::String(text)) = map.get_mut(key) {
                if let Cow::Owned(u) = unmask(text) {
                    *text = u;
                }
            }
        }
        if let Some(schema) = map.get_mut("inputSchema") {
            *schema = unmask_value(schema, &mut { MAX_STRINGS });
        }
    }
    Tool {
        name: unmask(&tool.name).into_owned(),
        title: tool.title.as_deref().map(|t| unmask(t).into_owned()),
        description: unmask(&tool.description).into_owned(),
        raw,
    }
}

/// Whether any text the rules and the model read of `tool` (its name, its description, and
/// the schema's property names, enum values and texts that `f` gathered from it) needs
/// unmasking: a check of the few strings read, not of the whole schema.
pub fn masks_what_is_read(tool: &Tool, f: &Features) -> bool {
    !(is_plain(&tool.name) && is_plain(&tool.description) && f.schema_strings().all(is_plain))
}

/// Most strings of one input schema looked at (and unmasked): a bound on hostile schemas, as
/// the hidden-character finding has.
const MAX_STRINGS: usize = 10_000;

/// Whether [`unmask`] leaves `s` as it is, without building anything.
fn is_plain(s: &str) -> bool {
    is_plain_ascii(s) || !needs_unmask(s)
}

/// `s` with invisible characters dropped (Hangul fillers, which show as blanks, read as
/// spaces) and the look-alike letters of disguised words replaced; borrowed when unchanged.
pub fn unmask(s: &str) -> Cow<'_, str> {
    if is_plain(s) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    for (is_word, piece) in pieces(s) {
        if is_word && is_disguised(piece) {
            out.extend(
                piece
                    .chars()
                    .filter(|&c| !is_dropped(c))
                    .map(|c| look_alike(c).unwrap_or(c)),
            );
            continue;
        }
        let mut before: Option<char> = out.chars().next_back();
        for c in piece.chars() {
            if is_filler(c) {
                out.push(' ');
            } else if !is_dropped(c) || is_kept_selector(c, before) {
                out.push(c);
            } else {
                // Inside a word or not, it shows nothing: the word goes on across it.
                continue;
            }
            before = Some(c);
        }
    }
    Cow::Owned(out)
}

/// Whether anything of `s` is to be unmasked: a filler, an invisible character (but a
/// variation selector where it belongs), or a disguised word. Only reads.
fn needs_unmask(s: &str) -> bool {
    let mut before: Option<char> = None;
    for c in s.chars() {
        if is_filler(c) || (is_dropped(c) && !is_kept_selector(c, before)) {
            return true;
        }
        if !is_dropped(c) {
            before = Some(c);
        }
    }
    pieces(s).any(|(is_word, w)| is_word && is_disguised(w))
}

/// ASCII only: nothing to unmask. The standard library's test reads a machine word at a
/// time; this is the path almost every text takes. (ASCII control characters are reported by
/// the hidden-character finding, not undone: a text need not be read a second time for them.)
fn is_plain_ascii(s: &str) -> bool {
    s.is_ascii()
}

/// `v` with every string and key unmasked, at most [`MAX_STRINGS`] of them.
fn unmask_value(v: &Value, budget: &mut usize) -> Value {
    if *budget == 0 {
        return v.clone();
    }
    *budget -= 1;
    match v {
        Value::String(s) => Value::String(unmask(s).into_owned()),
        Value::Array(items) => {
            Value::Array(items.iter().map(|i| unmask_value(i, budget)).collect())
        }
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (k, i) in map {
                // Two keys that unmask alike: the first keeps its place, as JSON parsers do.
                out.entry(unmask(k).into_owned())
                    .or_insert_with(|| unmask_value(i, budget));
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(unmask("delete_repository"), Cow::Borrowed(_)));
        assert!(matches!(unmask("Löscht das Repository"), Cow::Borrowed(_)));
        assert!(matches!(unmask("删除仓库 delete"), Cow::Borrowed(_)));
    }

    #[test]
    fn invisible_characters_inside_a_word_are_dropped() {
        assert_eq!(unmask("pur\u{200b}ge_database"), "purge_database");
        assert_eq!(unmask("Wi\u{2060}pes the di\u{feff}sk"), "Wipes the disk");
        assert_eq!(unmask("de\u{00ad}lete\u{e0041}"), "delete");
        assert_eq!(unmask("run\u{3164}shell"), "run shell");
    }

    #[test]
    fn look_alike_letters_in_a_latin_word_read_as_latin() {
        // Cyrillic е (U+0435) and о (U+043E), Greek ο (U+03BF), Cyrillic І (U+0406).
        assert_eq!(unmask("d\u{0435}stroy_vm"), "destroy_vm");
        assert_eq!(unmask("Dr\u{03bf}p the table"), "Drop the table");
        assert_eq!(unmask("\u{0406}NSERT r\u{043e}ws"), "INSERT rows");
        // Styled letters, wholly: mathematical bold and fullwidth.
        assert_eq!(
            unmask("\u{1d41d}\u{1d41e}\u{1d425}\u{1d41e}\u{1d42d}\u{1d41e} all"),
            "delete all"
        );
        assert_eq!(unmask("\u{ff45}\u{ff58}\u{ff45}\u{ff43}"), "exec");
    }

    #[test]
    fn words_of_other_languages_are_left_alone() {
        for text in crate::output::deceptive::NOT_DISGUISED {
            assert!(matches!(unmask(text), Cow::Borrowed(_)), "{text}");
        }
    }

    #[test]
    fn a_tool_is_unmasked_only_when_something_read_is_masked() {
        let tool = |name: &str, enum_value: &str| Tool {
            name: name.into(),
            title: None,
            description: "Deletes things".into(),
            raw: serde_json::json!({"name": name, "inputSchema": {"type": "object",
                "properties": {"mode": {"type": "string", "enum": ["soft", enum_value]}}}}),
        };
        let plain = tool("remove_user", "hard");
        assert!(!masks_what_is_read(&plain, &Features::of(&plain)));
        let masked = tool("remove_user", "pur\u{200b}ge");
        assert!(masks_what_is_read(&masked, &Features::of(&masked)));
        let u = unmasked(&masked);
        assert_eq!(
            u.raw["inputSchema"]["properties"]["mode"]["enum"][1],
            "purge"
        );
        assert_eq!(u.name, "remove_user");
    }
}
