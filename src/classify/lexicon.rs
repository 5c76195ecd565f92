//! The rules' vocabulary: every word they name, interned to a small id, with what each word is
//! (an action word, a description lead, a mode argument's name).
//!
//! Looking a tool's word up is one probe of a table: the plural forms that resolve to a known
//! word ("files" to "file") are put in the table once, when the rules are compiled, instead of
//! being tried one by one for every word of every tool.

use rustc_hash::FxHashMap as HashMap;

/// The id of a word the rules do not know.
pub(super) const NONE: u32 = u32::MAX;

/// What a word is, as bits of [`Lexicon::is`].
pub(super) mod role {
    /// Some `verb` condition lists it.
    pub const VERB: u8 = 1;
    /// Some `lead` condition lists it.
    pub const LEAD: u8 = 2;
    /// A mode argument's name (`action`, `operation`): its enum values are action words.
    pub const MODE: u8 = 4;
    /// A mode argument whose description may list the action words, when it has no enum.
    pub const MODE_TEXT: u8 = 8;
}

/// Interned words and their roles.
#[derive(Debug, Default)]
pub(super) struct Lexicon {
    /// Each word, lowercased, to its id.
    exact: HashMap<String, u32>,
    /// `exact` again, for lookups; built by [`Lexicon::seal`].
    exact_table: WordTable,
    /// `exact`, plus each word's plural forms ending in `es` and `s` (a stem of three bytes or
    /// more) that are not words themselves; built by [`Lexicon::seal`].
    forms: WordTable,
    /// Per id, its `role` bits.
    roles: Vec<u8>,
}

impl Lexicon {
    /// The id of `word` (lowercased), adding it if it is new.
    pub(super) fn intern(&mut self, word: &str) -> u32 {
        let next = self.exact.len() as u32;
        let id = *self.exact.entry(word.to_lowercase()).or_insert(next);
        if self.roles.len() <= id as usize {
            self.roles.resize(id as usize + 1, 0);
        }
        id
    }

    /// Gives word `id` a role.
    pub(super) fn add_role(&mut self, id: u32, role: u8) {
        self.roles[id as usize] |= role;
    }

    /// Whether word `id` (possibly [`NONE`]) has `role`.
    pub(super) fn is(&self, id: u32, role: u8) -> bool {
        self.roles.get(id as usize).is_some_and(|r| r & role != 0)
    }

    /// The id of exactly this (lowercase) word, if the rules know it. Only after
    /// [`Lexicon::seal`].
    pub(super) fn exact(&self, word: &str) -> Option<u32> {
        Some(self.exact_table.get(word)).filter(|&id| id != NONE)
    }

    /// The id of a lowercase word, or of the word it is a plural of: `word` itself if known,
    /// else `word` less `es`, else less `s` (stems of three bytes or more); [`NONE`] if none.
    /// Only after [`Lexicon::seal`].
    pub(super) fn lookup(&self, word: &str) -> u32 {
        self.forms.get(word)
    }

    /// Builds the tables `exact` and `lookup` read; call after the last `intern`.
    pub(super) fn seal(&mut self) {
        let mut forms: HashMap<String, u32> =
            HashMap::with_capacity_and_hasher(self.exact.len() * 3, Default::default());
        forms.extend(self.exact.iter().map(|(w, &id)| (w.clone(), id)));
        for suffix in ["es", "s"] {
            for (word, &id) in &self.exact {
                if word.len() >= 3 {
                    let mut form = String::with_capacity(word.len() + suffix.len());
                    form.push_str(word);
                    form.push_str(suffix);
                    forms.entry(form).or_insert(id);
                }
            }
        }
        self.exact_table = WordTable::new(&self.exact);
        self.forms = WordTable::new(&forms);
    }
}

/// A read-only map from words to ids, made for looking up many short words fast.
///
/// Written here rather than using a general hash map: a word of up to 16 bytes is kept in the
/// slot itself as two numbers, so a lookup is a cheap hash of those numbers and, at the slot,
/// three integer compares, where a general map hashes the bytes one by one and then compares
/// them through a pointer. And most words a tool uses are not the rules' words: a byte per
/// slot, in a table small enough to stay in the nearest cache, turns nearly all of those away
/// before any slot is read. Nearly every word a rule names is that short; longer ones (and the
/// empty word) go to an ordinary map.
#[derive(Debug, Default)]
struct WordTable {
    /// Per slot, eight bits of its word's hash (never zero), or zero for an empty slot.
    tags: Vec<u8>,
    /// Open addressing with linear probing.
    slots: Vec<Slot>,
    /// Bits of the hash that pick a slot (`slots.len()` is `1 << bits`).
    bits: u32,
    /// Words that do not fit a slot.
    other: HashMap<String, u32>,
}

/// One word of up to 16 bytes, as [`inline_key`] packs it, and its id.
#[derive(Debug, Default, Clone, Copy)]
struct Slot {
    lo: u64,
    hi: u64,
    len: u32,
    id: u32,
}

impl WordTable {
    fn new(words: &HashMap<String, u32>) -> WordTable {
        let inline = words
            .keys()
            .filter(|w| inline_key(w.as_bytes()).is_some())
            .count();
        // At most a quarter full: most words a tool uses are not the rules' words, and a
        // lookup of one then nearly always meets an empty slot first, a branch that predicts.
        let bits = (inline * 4).max(16).next_power_of_two().trailing_zeros();
        let mut table = WordTable {
            tags: vec![0; 1 << bits],
            slots: vec![Slot::default(); 1 << bits],
            bits,
            other: HashMap::default(),
        };
        let mask = table.slots.len() - 1;
        for (word, &id) in words {
            let Some((lo, hi)) = inline_key(word.as_bytes()) else {
                table.other.insert(word.clone(), id);
                continue;
            };
            let (mut i, tag) = table.slot_of(lo, hi, word.len());
            while table.tags[i] != 0 {
                i = (i + 1) & mask;
            }
            table.tags[i] = tag;
            table.slots[i] = Slot {
                lo,
                hi,
                len: word.len() as u32,
                id,
            };
        }
        table
    }

    /// The id of `word`, or [`NONE`].
    #[inline]
    fn get(&self, word: &str) -> u32 {
        let bytes = word.as_bytes();
        let Some((lo, hi)) = inline_key(bytes) else {
            return self.other.get(word).copied().unwrap_or(NONE);
        };
        if self.slots.is_empty() {
            return NONE;
        }
        let mask = self.slots.len() - 1;
        let len = bytes.len() as u32;
        let (mut i, tag) = self.slot_of(lo, hi, bytes.len());
        loop {
            match self.tags[i] {
                0 => return NONE,
                t if t == tag => {
                    let s = &self.slots[i];
                    if s.len == len && s.lo == lo && s.hi == hi {
                        return s.id;
                    }
                }
                _ => {}
            }
            i = (i + 1) & mask;
        }
    }

    /// The slot a word's probe starts at, and its tag.
    fn slot_of(&self, lo: u64, hi: u64, len: usize) -> (usize, u8) {
        let h = (lo ^ hi.rotate_left(29) ^ len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // The tag is the eight bits below the slot index's (the product's high bits mix
        // best), and never zero.
        let tag = ((h >> (56 - self.bits)) as u8).max(1);
        ((h >> (64 - self.bits)) as usize, tag)
    }
}

/// A word of 1 to 16 bytes as two numbers that, with its length, tell it from every other
/// word: its first and last eight bytes (overlapping when shorter than 16), or for shorter
/// words its first and last four, or its first, middle and last byte.
#[inline]
fn inline_key(b: &[u8]) -> Option<(u64, u64)> {
    let n = b.len();
    let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"));
    let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("four bytes"));
    match n {
        0 => None,
        1..=3 => Some((
            u64::from(b[0]) | u64::from(b[n / 2]) << 8 | u64::from(b[n - 1]) << 16,
            0,
        )),
        4..=7 => Some((u64::from(u32_at(0)) | u64::from(u32_at(n - 4)) << 32, 0)),
        8..=16 => Some((u64_at(0), u64_at(n - 8))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plurals_resolve_like_stripping_the_suffix() {
        let mut lex = Lexicon::default();
        let file = lex.intern("File");
        let boxe = lex.intern("boxe");
        let bx = lex.intern("box");
        let files = lex.intern("files");
        let go = lex.intern("go");
        lex.seal();
        assert_eq!(lex.lookup("file"), file);
        assert_eq!(lex.lookup("files"), files, "a known word is itself");
        assert_eq!(lex.lookup("filees"), file);
        assert_eq!(lex.lookup("boxes"), bx, "`es` is stripped before `s`");
        assert_eq!(lex.lookup("boxess"), NONE);
        assert_eq!(lex.lookup("boxs"), bx);
        assert_eq!(lex.lookup("boxe"), boxe);
        assert_eq!(lex.lookup("gos"), NONE, "stems are three bytes or more");
        assert_eq!(lex.lookup("goes"), NONE);
        assert_eq!(lex.lookup(""), NONE);
        assert_eq!(lex.exact("files"), Some(files));
        assert_eq!(lex.exact("boxes"), None);
        let _ = go;
    }

    #[test]
    fn the_word_table_agrees_with_a_map() {
        // Words of every length class, near misses that share a packed half, and long ones.
        let words = [
            "a",
            "ab",
            "ba",
            "abc",
            "acb",
            "abcd",
            "abce",
            "abcdefg",
            "abcdefh",
            "abcdefgh",
            "abcdefghi",
            "abcdefghijklmnop",
            "abcdefghijklmnoq",
            "abcdefghijklmnopq",
            "éé",
            "x_y",
        ];
        let mut map = HashMap::default();
        for (i, w) in words.iter().enumerate() {
            map.insert(w.to_string(), i as u32);
        }
        let table = WordTable::new(&map);
        for (i, w) in words.iter().enumerate() {
            assert_eq!(table.get(w), i as u32, "{w}");
        }
        for miss in [
            "",
            "b",
            "aab",
            "abd",
            "abcdef",
            "abcdefgg",
            "bbcdefghi",
            "abcdefghijklmnoz",
            "abcdefghijklmnopr",
            "aé",
            "abcdefghijklmnopqr",
        ] {
            assert_eq!(table.get(miss), NONE, "{miss}");
        }
        assert_eq!(WordTable::default().get("a"), NONE);
    }
}
