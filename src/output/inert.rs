//! JSON and YAML documents whose text is inert: every character [`is_hidden`] (C0 and C1
//! controls, bidi overrides and isolates, zero-width and other invisible characters) is written
//! as an escape, so a tool name from a server cannot reorder or hide what a reader sees in a
//! terminal, a diff or a code review. The documents mean exactly the same: the escapes stand for
//! the same characters, so a policy still names the tool the server sent.

use super::sanitize::is_hidden;
use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};
use serde_json::Value;
use std::io::{self, Write};

/// serde_json's pretty formatter, with hidden characters in strings written as `\uXXXX`
/// (serde_json itself escapes only C0 controls).
struct InertPretty(PrettyFormatter<'static>);

impl Formatter for InertPretty {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if is_hidden(c) {
                w.write_all(&fragment.as_bytes()[start..i])?;
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    write!(w, "\\u{u:04x}")?;
                }
                start = i + c.len_utf8();
            }
        }
        w.write_all(&fragment.as_bytes()[start..])
    }
}

/// Writes `value` as pretty JSON with hidden characters escaped.
pub fn json_pretty<T: Serialize + ?Sized>(w: &mut dyn Write, value: &T) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(w, InertPretty(PrettyFormatter::new()));
    value.serialize(&mut ser).map_err(io::Error::from)
}

/// `value` as pretty JSON text with hidden characters escaped.
pub fn json_pretty_string<T: Serialize + ?Sized>(value: &T) -> String {
    let mut buf = Vec::new();
    let _ = json_pretty(&mut buf, value);
    String::from_utf8(buf).unwrap_or_default()
}

/// Appended to a key with a hidden character, so that it is double-quoted.
const KEY_MARK: char = '\u{1}';

/// A JSON value serialized for YAML with every string that holds a hidden character forced
/// into double quotes, where [`yaml`] can escape it.
struct ForYaml<'a>(&'a Value);

impl Serialize for ForYaml<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::String(t) if t.chars().any(is_hidden) => {
                serde_saphyr::DoubleQuoted(t.as_str()).serialize(s)
            }
            Value::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    seq.serialize_element(&ForYaml(v))?;
                }
                seq.end()
            }
            Value::Object(o) => {
                let mut map = s.serialize_map(Some(o.len()))?;
                for (k, v) in o {
                    if k.chars().any(is_hidden) {
                        // serde_saphyr does not take DoubleQuoted for a key, but it double-quotes
                        // any string with a control character: a trailing SOH forces the quotes,
                        // and [`yaml`] takes it out again.
                        map.serialize_entry(&format!("{k}{KEY_MARK}"), &ForYaml(v))?;
                    } else {
                        map.serialize_entry(k, &ForYaml(v))?;
                    }
                }
                map.end()
            }
            other => other.serialize(s),
        }
    }
}

/// `value` as YAML in which every hidden character is a double-quoted escape (`\uXXXX`,
/// `\UXXXXXXXX`), or an error when one could not be put in double quotes.
pub fn yaml(value: &Value) -> Result<String, String> {
    let text = serde_saphyr::to_string(&ForYaml(value)).map_err(|e| e.to_string())?;
    // The marked keys' closing quotes: in a double-quoted scalar a raw `"` only ever closes it,
    // and only a key's closing quote is followed by `:`.
    let text = text.replace("\\x01\":", "\":");
    let mut out = String::with_capacity(text.len());
    // Where we are: in a double-quoted scalar (and after a backslash in it), in a single-quoted
    // one, or elsewhere. A quote opens a scalar only where a scalar can start.
    let (mut dq, mut esc, mut sq) = (false, false, false);
    let mut prev = '\n'; // the last character outside spaces, or a line start
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if dq {
            if esc {
                esc = false;
            } else if c == '\\' {
                esc = true;
            } else if c == '"' {
                dq = false;
            }
        } else if sq {
            if c == '\'' {
                if chars.peek() == Some(&'\'') {
                    out.push(c);
                    out.push(chars.next().unwrap_or('\''));
                    continue;
                }
                sq = false;
            }
        } else if matches!(prev, '\n' | ':' | '-' | '?' | '[' | '{' | ',') {
            dq = c == '"';
            sq = c == '\'';
        }
        if is_hidden(c) && c != '\n' {
            if !dq {
                return Err(format!(
                    "a hidden character (U+{:04X}) outside a double-quoted string",
                    c as u32
                ));
            }
            if (c as u32) <= 0xFFFF {
                out.push_str(&format!("\\u{:04X}", c as u32));
            } else {
                out.push_str(&format!("\\U{:08X}", c as u32));
            }
        } else {
            out.push(c);
        }
        if c == '\n' || !c.is_whitespace() {
            prev = c;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const HOSTILE: &str = "get_x\u{9b}31m\u{202e}evil\u{200b}\u{e0041}";

    #[test]
    fn json_escapes_hidden_characters_and_means_the_same() {
        let v = json!({ HOSTILE: [HOSTILE, "plain <b>"], "n": 1 });
        let s = json_pretty_string(&v);
        assert!(!s.chars().any(|c| is_hidden(c) && c != '\n'), "{s}");
        assert!(
            s.contains("\\u009b31m\\u202eevil\\u200b\\udb40\\udc41"),
            "{s}"
        );
        assert!(s.contains("plain <b>"));
        let back: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
        // The same layout as serde_json's own pretty printer.
        let plain = json!({"a": [1, {"b": null}], "c": "d"});
        assert_eq!(
            json_pretty_string(&plain),
            serde_json::to_string_pretty(&plain).unwrap()
        );
    }

    #[test]
    fn yaml_escapes_hidden_characters_in_keys_and_values() {
        let v = json!({
            "run_\u{2066}command": {"a\u{1}": 1, "b\u{1}\u{1}": 2},
            HOSTILE: {"deny": [HOSTILE, "ok", "it's \"quoted", "a\"b"]},
            "rule": format!("mcp.tool.name == \"{HOSTILE}\""),
            "x\"y": "'single' \u{202e}"
        });
        let s = yaml(&v).unwrap();
        assert!(!s.chars().any(|c| is_hidden(c) && c != '\n'), "{s}");
        let back: Value = serde_saphyr::from_str(&s).unwrap();
        assert_eq!(back, v, "{s}");
    }
}
