//! Which characters deceive a reader: the hidden ones (controls, zero-width and invisible
//! fillers, bidi overrides, Unicode tags), and look-alike letters that disguise a word (a
//! Cyrillic "е" in "dеstroy", mathematical bold letters). Output reveals them
//! ([`super::sanitize`]); classification reads past them (`classify::unmask`); the
//! hidden-character finding counts them.
//!
//! Which letters look alike is Unicode's answer (the confusables of UTS #39, through the
//! `unicode-security` crate); which words are disguised is decided here: a word that mixes
//! ASCII letters with look-alikes of another script, or is made wholly of styled letters. A word
//! wholly in another script is a word of that language ("сор" is Russian) and is left alone.

use unicode_script::{Script, UnicodeScript};

/// Whether a character must not reach a reader as-is: controls, zero-width and invisible
/// fillers, bidi overrides and isolates, variation selectors, Unicode tag characters.
pub fn is_hidden(c: char) -> bool {
    if c < '\u{7f}' {
        // ASCII, the common case: only the C0 controls are hidden.
        return c < ' ';
    }
    matches!(c,
        '\u{00ad}' | '\u{034f}' | '\u{061c}' | '\u{115f}' | '\u{1160}' | '\u{17b4}' | '\u{17b5}'
        | '\u{180b}'..='\u{180f}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{206f}' | '\u{3164}' | '\u{fe00}'..='\u{fe0f}' | '\u{feff}'
        | '\u{ffa0}' | '\u{fff0}'..='\u{fffb}' | '\u{1d173}'..='\u{1d17a}'
        | '\u{e0000}'..='\u{e007f}' | '\u{e0100}'..='\u{e01ef}')
        || c.is_control()
}

/// A variation selector after a symbol or a letter beyond ASCII (an emoji's text or colour
/// form, "ℹ️") is what it is for, and stays; after an ASCII letter or digit it hides nothing but
/// itself, and goes.
pub fn is_kept_selector(c: char, before: Option<char>) -> bool {
    is_variation_selector(c) && !before.is_some_and(|b| b.is_ascii_alphanumeric())
}

/// `s` cut into words (letters and digits, with the invisible characters among them) and what
/// stands between them, in order: `(true, word)` or `(false, the rest)`.
pub fn pieces(s: &str) -> impl Iterator<Item = (bool, &str)> {
    let in_word = |c: char| (c.is_alphanumeric() && !is_filler(c)) || is_dropped(c);
    let mut rest = s;
    std::iter::from_fn(move || {
        let first = rest.chars().next()?;
        let is_word = in_word(first);
        let end = rest
            .char_indices()
            .find(|&(_, c)| in_word(c) != is_word)
            .map_or(rest.len(), |(i, _)| i);
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some((is_word, piece))
    })
}

/// How many look-alike letters stand in disguised words of `s` (for the finding).
pub fn look_alikes_in(s: &str) -> usize {
    if s.is_ascii() {
        return 0;
    }
    pieces(s)
        .filter(|&(is_word, w)| is_word && is_disguised(w))
        .map(|(_, w)| w.chars().filter(|&c| look_alike(c).is_some()).count())
        .sum()
}

/// Variation selectors: they choose how the character before them is drawn.
fn is_variation_selector(c: char) -> bool {
    matches!(c, '\u{fe00}'..='\u{fe0f}' | '\u{e0100}'..='\u{e01ef}')
}

/// Hangul fillers: blank to a reader, letters to Unicode.
pub fn is_filler(c: char) -> bool {
    matches!(c, '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}')
}

/// A character beyond ASCII that a reader does not see (zero-width, joiners, bidi controls,
/// variation selectors, Unicode tags, C1 controls).
pub fn is_dropped(c: char) -> bool {
    !c.is_ascii() && !is_filler(c) && is_hidden(c)
}

/// A word is disguised when its look-alike letters are no more than its ASCII letters and
/// either stand among three ASCII letters or more or come from a script other than Greek (a
/// Cyrillic "о" in "Dо"), or when it is made wholly of styled letters (mathematical,
/// fullwidth), which no language writes in. A formula's Greek beside one or two Latin letters
/// ("ρgh", "σ²I") is not a disguise, nor a word of another script. The cheap tests come first:
/// Unicode's confusables are looked up only for a word that has letters beyond ASCII.
pub fn is_disguised(word: &str) -> bool {
    let mut ascii_letters = 0usize;
    let mut beyond_ascii = false;
    let mut styled_only = true;
    for c in word.chars() {
        if c.is_ascii_alphabetic() {
            ascii_letters += 1;
        } else if !c.is_ascii() && !is_dropped(c) {
            beyond_ascii = true;
            styled_only &= is_styled(c);
        }
    }
    let others = || word.chars().filter(|&c| !c.is_ascii() && !is_dropped(c));
    if !beyond_ascii {
        false
    } else if ascii_letters == 0 {
        styled_only && others().all(|c| look_alike(c).is_some())
    } else {
        let (mut look_alikes, mut foreign) = (0, false);
        for c in others().filter(|&c| look_alike(c).is_some()) {
            look_alikes += 1;
            foreign |= !matches!(c.script(), Script::Greek | Script::Common);
        }
        look_alikes > 0 && look_alikes <= ascii_letters && (ascii_letters >= 3 || foreign)
    }
}

/// Letters and digits drawn in another style: mathematical alphanumerics (script Common) and
/// the fullwidth forms.
fn is_styled(c: char) -> bool {
    matches!(c, '\u{ff10}'..='\u{ff5a}' | '\u{1d400}'..='\u{1d7ff}')
}

/// The ASCII letter or digit a non-ASCII character imitates, when Unicode's confusables map it
/// to exactly one and it is not a Latin letter of its own (an accented or dotless letter of a
/// Latin alphabet is a letter of that language, not a disguise).
pub fn look_alike(c: char) -> Option<char> {
    if c.is_ascii() {
        return None;
    }
    match c.script() {
        Script::Latin if !is_styled(c) => return None,
        // The scripts of most non-Latin tool text, none of whose letters Unicode gives an
        // ASCII look-alike: answered without looking up the confusables.
        Script::Han | Script::Hiragana | Script::Katakana | Script::Hangul => return None,
        _ => {}
    }
    let mut buf = [0u8; 4];
    let mut proto = unicode_security::skeleton(c.encode_utf8(&mut buf));
    let one = proto.next()?;
    if proto.next().is_some() || !one.is_ascii_alphanumeric() {
        return None;
    }
    // The skeleton writes capital I and the digit 1 as "l", and the digit 0 as "O": keep the
    // case and kind of what is imitated.
    Some(match one {
        'l' if c.is_uppercase() => 'I',
        'l' if c.is_numeric() => '1',
        'O' if c.is_numeric() => '0',
        'O' if c.is_lowercase() => 'o',
        other => other,
    })
}

/// Where the look-alike letters of disguised words stand in `s`, as byte ranges in order
/// (for output to reveal them); empty for ASCII text, at once.
pub fn look_alike_spans(s: &str) -> Vec<std::ops::Range<usize>> {
    let mut spans = Vec::new();
    if s.is_ascii() {
        return spans;
    }
    let mut at = 0;
    for (is_word, w) in pieces(s) {
        if is_word && is_disguised(w) {
            for (i, c) in w.char_indices() {
                if look_alike(c).is_some() {
                    spans.push(at + i..at + i + c.len_utf8());
                }
            }
        }
        at += w.len();
    }
    spans
}

/// Texts with letters beyond ASCII and no disguise: other languages, a formula's Greek, an
/// emoji's variation selector (for the tests of this module and of `classify::unmask`).
#[cfg(test)]
pub(crate) const NOT_DISGUISED: [&str; 8] = [
    "Удаляет сор",
    "Ελληνικά ορ",
    "dotless ı and ł",
    "naïve café",
    "μ-law",
    "P = P_atm + ρgh",
    "Σ=σ²I",
    "\u{26a0}\u{fe0f} Warning",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_of_other_languages_and_formulas_are_not_disguised() {
        for text in NOT_DISGUISED {
            assert_eq!(look_alikes_in(text), 0, "{text}");
            assert!(look_alike_spans(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn look_alikes_are_counted_and_placed_only_in_disguised_words() {
        assert_eq!(look_alikes_in("d\u{0435}stroy and Удаляет"), 1);
        assert_eq!(look_alikes_in("pur\u{200b}g\u{0435}"), 1);
        assert_eq!(look_alikes_in("D\u{043e} it"), 1);
        assert_eq!(look_alikes_in("plain"), 0);
        assert_eq!(look_alike_spans("a d\u{0435}stroy"), vec![3..5]);
    }
}
