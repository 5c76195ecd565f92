//! Splits identifiers and prose into lowercase words.

/// Lowercase words stored end to end in one buffer: a list costs two allocations, not one per
/// word, which matters at hundreds of thousands of tools a second.
#[derive(Debug, Default, Clone)]
pub struct Words {
    buf: String,
    ends: Vec<u32>,
}

impl Words {
    /// The number of words.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there are no words.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The `i`th word.
    pub fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.buf[start..self.ends[i] as usize]
    }

    /// The first word, if any.
    pub fn first(&self) -> Option<&str> {
        (!self.is_empty()).then(|| self.get(0))
    }

    /// The words in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Makes room for `words` more words of `bytes` bytes in all.
    pub fn reserve(&mut self, words: usize, bytes: usize) {
        self.ends.reserve(words);
        self.buf.reserve(bytes);
    }

    /// Removes every word, keeping the buffers.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.ends.clear();
    }

    /// Adds, as one word, the words of `from` from its `first` on, run together (possibly
    /// empty). For a name just split into `from`, that is the name as [`normalize_key`] spells
    /// it, without reading the name again.
    pub fn push_joined(&mut self, from: &Words, first: usize) {
        let start = match first {
            0 => 0,
            n => from.ends[n - 1] as usize,
        };
        self.buf.push_str(&from.buf[start..]);
        self.ends.push(self.buf.len() as u32);
    }

    fn push_char(&mut self, c: char) {
        if c.is_ascii() {
            self.buf.push(c.to_ascii_lowercase());
        } else {
            self.buf.extend(c.to_lowercase());
        }
    }

    /// Ends the word being built, if it has any characters.
    fn finish(&mut self) {
        let start = self.ends.last().copied().unwrap_or(0) as usize;
        if self.buf.len() > start {
            self.ends.push(self.buf.len() as u32);
        }
    }

    fn current_is_empty(&self) -> bool {
        self.buf.len() == self.ends.last().copied().unwrap_or(0) as usize
    }
}

/// Splits a tool or property name into lowercase words at `_ - . / :` and spaces, camelCase
/// humps and letter/digit changes: `API-patch-block`, `getHTTPStatus2` and `pve_get_vm` all work.
pub fn split_identifier(name: &str, out: &mut Words) {
    if name.is_ascii() {
        return split_ascii_identifier(name.as_bytes(), out);
    }
    let mut prev: Option<char> = None;
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if !c.is_alphanumeric() {
            out.finish();
            prev = Some(c);
            continue;
        }
        if let (false, Some(p)) = (out.current_is_empty(), prev) {
            let next_lower = chars.peek().is_some_and(|n| n.is_lowercase());
            let boundary = (c.is_uppercase()
                && (p.is_lowercase() || (p.is_uppercase() && next_lower)))
                || (c.is_ascii_digit() != p.is_ascii_digit());
            if boundary {
                out.finish();
            }
        }
        out.push_char(c);
        prev = Some(c);
    }
    out.finish();
}

/// `split_identifier` for ASCII names (nearly all of them), byte by byte.
fn split_ascii_identifier(name: &[u8], out: &mut Words) {
    let mut prev: Option<u8> = None;
    for (i, &c) in name.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            out.finish();
            prev = Some(c);
            continue;
        }
        if let (false, Some(p)) = (out.current_is_empty(), prev) {
            let next_lower = name.get(i + 1).is_some_and(u8::is_ascii_lowercase);
            let boundary = (c.is_ascii_uppercase()
                && (p.is_ascii_lowercase() || (p.is_ascii_uppercase() && next_lower)))
                || (c.is_ascii_digit() != p.is_ascii_digit());
            if boundary {
                out.finish();
            }
        }
        out.buf.push(c.to_ascii_lowercase() as char);
        prev = Some(c);
    }
    out.finish();
}

/// The first `limit` words of prose, lowercased, skipping punctuation, added to `out`.
pub fn leading_words_into(text: &str, limit: usize, out: &mut Words) {
    if limit == 0 {
        return;
    }
    let mut taken = 0;
    let mut in_word = false;
    for c in text.chars() {
        if c.is_alphanumeric() || c == '\'' {
            out.push_char(c);
            in_word = true;
        } else if in_word {
            out.finish();
            in_word = false;
            taken += 1;
            if taken == limit {
                return;
            }
        }
    }
    out.finish();
}

/// The first `limit` runs of letters and digits of `text`, lowercased, added to `out` (prose
/// as the learned model reads it: apostrophes and other punctuation split words).
pub fn prose_words_into(text: &str, limit: usize, out: &mut Words) {
    if text.is_ascii() {
        return ascii_prose_words_into(text.as_bytes(), limit, out);
    }
    let mut taken = 0;
    for c in text.chars() {
        if taken == limit {
            break;
        }
        if c.is_alphanumeric() {
            if c.is_ascii() {
                out.buf.push(c.to_ascii_lowercase());
            } else {
                out.buf.extend(c.to_lowercase());
            }
        } else if !out.current_is_empty() {
            out.finish();
            taken += 1;
        }
    }
    if taken < limit {
        out.finish();
    }
}

/// `prose_words_into` for ASCII text (nearly all of it), byte by byte.
fn ascii_prose_words_into(text: &[u8], limit: usize, out: &mut Words) {
    let mut taken = 0;
    for &c in text {
        if c.is_ascii_alphanumeric() {
            out.buf.push(c.to_ascii_lowercase() as char);
        } else if !out.current_is_empty() {
            out.finish();
            taken += 1;
            if taken == limit {
                return;
            }
        }
    }
    out.finish();
}

/// Lowercases a property name and drops separators, so `force_stop`, `forceStop` and
/// `force-stop` compare equal.
pub fn normalize_key(name: &str) -> String {
    let mut key = String::with_capacity(name.len());
    push_normalized_key(name, &mut key);
    key
}

/// Appends `name` as [`normalize_key`] spells it, byte by byte for ASCII names.
fn push_normalized_key(name: &str, out: &mut String) {
    if name.is_ascii() {
        out.extend(
            name.bytes()
                .filter(u8::is_ascii_alphanumeric)
                .map(|b| b.to_ascii_lowercase() as char),
        );
    } else {
        out.extend(
            name.chars()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Vec<String> {
        let mut v = Words::default();
        split_identifier(s, &mut v);
        v.iter().map(String::from).collect()
    }

    #[test]
    fn splits_every_style() {
        assert_eq!(
            split("pve_get_cluster_status"),
            ["pve", "get", "cluster", "status"]
        );
        assert_eq!(
            split("API-patch-block-children"),
            ["api", "patch", "block", "children"]
        );
        assert_eq!(split("getHTTPStatus2"), ["get", "http", "status", "2"]);
        assert_eq!(split("browser.click"), ["browser", "click"]);
        assert_eq!(split("sequentialthinking"), ["sequentialthinking"]);
        assert_eq!(split("löschenDatei_2"), ["löschen", "datei", "2"]);
    }

    #[test]
    fn takes_leading_words() {
        let mut w = Words::default();
        leading_words_into("  Deletes the user's FILE, then... more words", 4, &mut w);
        let got: Vec<&str> = w.iter().collect();
        assert_eq!(got, ["deletes", "the", "user's", "file"]);
        let mut w = Words::default();
        leading_words_into("Émet un café", 8, &mut w);
        assert_eq!(w.iter().collect::<Vec<_>>(), ["émet", "un", "café"]);
    }

    #[test]
    fn joined_words_spell_the_key() {
        for name in [
            "force_stop",
            "$$",
            "",
            "Löschen-Jetzt",
            "getHTTPStatus2",
            "a.b-c d",
        ] {
            let mut words = Words::default();
            split_identifier("first_name", &mut words);
            let first = words.len();
            split_identifier(name, &mut words);
            let mut keys = Words::default();
            keys.push_joined(&words, first);
            assert_eq!(keys.get(0), normalize_key(name), "{name:?}");
        }
    }

    #[test]
    fn normalizes_keys() {
        assert_eq!(normalize_key("force_stop"), "forcestop");
        assert_eq!(normalize_key("$$"), "");
        assert_eq!(normalize_key("Löschen-Jetzt"), "löschenjetzt");
        assert_eq!(normalize_key("launchOptions"), "launchoptions");
    }
}
