//! The rules' vocabulary: every word they name, interned to a small id, with what each word is
//! (an action word, a description lead, a mode argument's name).
//!
//! Looking a tool's word up is one hash lookup: the plural forms that resolve to a known word
//! ("files" to "file") are put in the table once, when the rules are compiled, instead of
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
    /// `exact`, plus each word's plural forms ending in `es` and `s` (a stem of three bytes or
    /// more) that are not words themselves; built by [`Lexicon::seal`].
    forms: HashMap<String, u32>,
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

    /// The id of exactly this (lowercase) word, if the rules know it.
    pub(super) fn exact(&self, word: &str) -> Option<u32> {
        self.exact.get(word).copied()
    }

    /// The id of a lowercase word, or of the word it is a plural of: `word` itself if known,
    /// else `word` less `es`, else less `s` (stems of three bytes or more); [`NONE`] if none.
    /// Only after [`Lexicon::seal`].
    pub(super) fn lookup(&self, word: &str) -> u32 {
        self.forms.get(word).copied().unwrap_or(NONE)
    }

    /// Builds the table `lookup` reads; call after the last `intern`.
    pub(super) fn seal(&mut self) {
        let mut forms = HashMap::with_capacity_and_hasher(self.exact.len() * 3, Default::default());
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
        self.forms = forms;
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
}
