//! The lexical class of an English word, from WordNet 3.0: "factor" and "solve" are verbs of
//! cognition, "refund" and "pay" of possession, "window" a noun of artifacts. The model reads a
//! word's class beside the word itself, so a verb it never met in training (`integrate`,
//! `apart`) still says something through the verbs of its class that it did meet.
//!
//! The table is `catalog/model/word-classes.tsv` (made by `scripts/word-classes.py`), packed
//! by `build.rs`: the word count (u32), where each word ends (u32 each), each word's verb class
//! then each word's noun class (one byte each: an index into [`CLASS_NAMES`] plus one, 0 for
//! none), then the words back to back, ascending; numbers little-endian. It is searched where it
//! lies, so start-up parses nothing.

use super::lexnames::CLASS_NAMES;

static PACKED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/word_classes.bin"));

/// A word's classes: that of its most frequent sense as a verb, and as a noun.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WordClass {
    /// As a verb ("cognition" for "solve").
    pub verb: Option<&'static str>,
    /// As a noun ("possession" for "invoice").
    pub noun: Option<&'static str>,
}

/// The packed table, read where it lies.
struct Table {
    count: usize,
    ends: &'static [u8],
    verbs: &'static [u8],
    nouns: &'static [u8],
    words: &'static [u8],
}

fn table() -> Table {
    let count = u32::from_le_bytes(PACKED[..4].try_into().expect("4 bytes")) as usize;
    let (ends, rest) = PACKED[4..].split_at(4 * count);
    let (verbs, rest) = rest.split_at(count);
    let (nouns, words) = rest.split_at(count);
    Table {
        count,
        ends,
        verbs,
        nouns,
        words,
    }
}

impl Table {
    fn word(&self, i: usize) -> &'static [u8] {
        let end = |j: usize| {
            u32::from_le_bytes(self.ends[4 * j..4 * j + 4].try_into().expect("4 bytes")) as usize
        };
        let start = if i == 0 { 0 } else { end(i - 1) };
        &self.words[start..end(i)]
    }

    fn find(&self, word: &[u8]) -> Option<WordClass> {
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.word(mid).cmp(word) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    let class = |b: u8| (b > 0).then(|| CLASS_NAMES[b as usize - 1]);
                    return Some(WordClass {
                        verb: class(self.verbs[mid]),
                        noun: class(self.nouns[mid]),
                    });
                }
            }
        }
        None
    }
}

/// Inflections WordNet's own lookup ("morphy") takes off, with what replaces each.
const DETACH: [(&str, &str); 8] = [
    ("ies", "y"),
    ("es", "e"),
    ("es", ""),
    ("s", ""),
    ("ed", "e"),
    ("ed", ""),
    ("ing", "e"),
    ("ing", ""),
];

/// The classes of a lowercase word, or of its base form when WordNet lacks the word itself
/// ("integrates" -> "integrate", "stopped" -> "stop"); `None` for words WordNet does not have as a verb or noun.
pub fn of(word: &str) -> Option<WordClass> {
    if !(3..=24).contains(&word.len()) || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return None;
    }
    let t = table();
    if let Some(c) = t.find(word.as_bytes()) {
        return Some(c);
    }
    let mut base = [0u8; 24];
    for (suffix, with) in DETACH {
        let Some(stem) = word.strip_suffix(suffix) else {
            continue;
        };
        if stem.len() < 2 {
            continue;
        }
        let n = stem.len() + with.len();
        base[..stem.len()].copy_from_slice(stem.as_bytes());
        base[stem.len()..n].copy_from_slice(with.as_bytes());
        if let Some(c) = t.find(&base[..n]) {
            return Some(c);
        }
        // A doubled last consonant: "stopped" -> "stop", "mapped" -> "map".
        let b = stem.as_bytes();
        if with.is_empty() && b.len() >= 3 && b[b.len() - 1] == b[b.len() - 2] {
            if let Some(c) = t.find(&b[..b.len() - 1]) {
                return Some(c);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_have_the_class_of_their_commonest_sense() {
        let c = of("factor").unwrap();
        assert_eq!(c.verb, Some("cognition"));
        assert_eq!(of("refund").unwrap().verb, Some("possession"));
        assert_eq!(of("invoice").unwrap().noun, Some("communication"));
        assert_eq!(
            of("window").unwrap(),
            WordClass {
                verb: None,
                noun: Some("artifact")
            }
        );
    }

    #[test]
    fn inflected_forms_find_their_base() {
        assert_eq!(of("integrates"), of("integrate"));
        assert_eq!(of("factors"), of("factor"));
        assert_eq!(of("stopped"), of("stop"));
        // A form WordNet has in its own right keeps its own classes: "running" is a noun.
        assert_eq!(of("running").unwrap().noun, Some("act"));
        assert_eq!(of("mapped"), of("map"));
        assert_eq!(of("queries"), of("query"));
        assert!(of("integrating").is_some());
    }

    #[test]
    fn unknown_short_and_foreign_words_have_none() {
        for w in ["xq", "zzzzqqq", "Factor", "fäctor", "", "ab", "getuserbyid"] {
            assert_eq!(of(w), None, "{w}");
        }
        assert_eq!(of(&"a".repeat(100)), None);
    }

    #[test]
    fn the_packed_table_is_sorted() {
        let t = table();
        assert!(t.count > 50_000);
        for i in 1..t.count {
            assert!(t.word(i - 1) < t.word(i));
        }
    }
}
