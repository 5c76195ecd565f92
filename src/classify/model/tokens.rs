//! The words the learned model reads from a tool, as feature keys: name words with their
//! position and side by side, the description's words and its leading (action) words (those
//! just after a negation apart: "does not *write*"), property names and their words, switches,
//! free-text arguments, enum values (nested too) and annotations; and, for models trained with
//! them, the WordNet classes of the name's and the leading words (see [`super::classes`]).
//! (Description word pairs, and
//! pairs of the leading words, and argument descriptions were tried and left out: they made
//! cross-validated verdicts no better and classification slower. So were Chinese and Japanese
//! clauses read as overlapping character pairs, where a "word" is otherwise a whole clause:
//! the 616 training tools with such descriptions went from 519 to 535 right in
//! cross-validation, but with the decision refitted the training split as a whole gained only
//! 5 tools, let 3 more dangerous ones through and found 5 fewer Financial ones.)
//!
//! A key is a short prefix that says where a word was found, a colon, and the word's stem (or
//! two stems joined by `+`): `n0:delet` is a name that starts with "delete", `nn:close+posit`
//! the name words "close" and "position" side by side. Training reads keys as strings; a
//! running classifier only hashes them (see [`KeySink`]), so the two must emit the same bytes.

use super::super::features::Features;
use super::super::words::{prose_words_into, Words};
use super::classes;
use crate::model::Tool;

/// How many description words are read. (100 words were tried: cross-validated category 89.1 ->
/// 89.5% on 7,838 training tools, but the 16 shared labelled servers fell to 230 of 235, below
/// their 98% bar, as words deep in long descriptions tipped two tools over the thresholds.)
const DESCRIPTION_WORDS: usize = 60;
/// How many leading description words count as where its action word stands.
pub const LEAD_WORDS: usize = 6;
/// How many description words after a negation ("not", "no", "without") count as negated.
const NEGATION_SCOPE: usize = 4;
/// Most properties read (a hostile schema may have thousands).
const MAX_PROPERTIES: usize = 64;

/// Where a word was found: the key's prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Any word of the name.
    Name,
    /// The name's first word.
    NameFirst,
    /// The name's last word.
    NameLast,
    /// Two adjacent name words.
    NamePair,
    /// A word of the description's first few.
    Lead,
    /// Any description word.
    Description,
    /// A description word just after a negation ("does not *write*", "without *deleting*").
    Negated,
    /// A property name, lowercased with separators removed.
    Property,
    /// A word of a property name.
    PropertyWord,
    /// A boolean property (a switch).
    Switch,
    /// A property that takes free text.
    FreeText,
    /// A word of an enum value.
    EnumValue,
    /// An annotation and its value.
    Annotation,
    /// How many properties the schema has, bucketed.
    Arity,
    /// The tool's action word, as the rules found it.
    Verb,
    /// An action word among a mode argument's values.
    ModeVerb,
    /// A classification rule that matched.
    Rule,
    /// The rules' own verdict.
    RuleVerdict,
    /// The WordNet class of a name word, as a verb and as a noun (see [`super::classes`]).
    NameClass,
    /// The WordNet class of the name's first word.
    NameFirstClass,
    /// The WordNet verb class of a word of the description's first few.
    LeadClass,
    /// A name word that has a WordNet class, met on too few training servers to stand without
    /// it (see `train::Settings::known_servers`).
    NameRare,
    /// The same, of a word of the description's first few.
    LeadRare,
}

/// The places of the WordNet word classes.
pub const CLASS_PLACES: [Place; 3] = [Place::NameClass, Place::NameFirstClass, Place::LeadClass];

impl Place {
    /// The key prefix.
    pub const fn prefix(self) -> &'static str {
        match self {
            Place::Name => "n",
            Place::NameFirst => "n0",
            Place::NameLast => "nz",
            Place::NamePair => "nn",
            Place::Lead => "dl",
            Place::Description => "d",
            Place::Negated => "dx",
            Place::Property => "p",
            Place::PropertyWord => "pw",
            Place::Switch => "pb",
            Place::FreeText => "pf",
            Place::EnumValue => "e",
            Place::Annotation => "a",
            Place::Arity => "np",
            Place::Verb => "v",
            Place::ModeVerb => "vm",
            Place::Rule => "r",
            Place::RuleVerdict => "rc",
            Place::NameClass => "wc",
            Place::NameFirstClass => "wc0",
            Place::LeadClass => "wcl",
            Place::NameRare => "nr",
            Place::LeadRare => "dlr",
        }
    }

    /// Where it is, in words, for evidence.
    pub fn describe(self) -> &'static str {
        match self {
            Place::Name | Place::NamePair => "in the name",
            Place::NameFirst => "first in the name",
            Place::NameLast => "last in the name",
            Place::Lead => "leading the description",
            Place::Description => "in the description",
            Place::Negated => "negated in the description",
            Place::Property => "an argument",
            Place::PropertyWord => "in an argument's name",
            Place::Switch => "a switch",
            Place::FreeText => "a free-text argument",
            Place::EnumValue => "an allowed value",
            Place::Annotation => "annotation",
            Place::Arity => "arguments",
            Place::Verb => "as the action word",
            Place::ModeVerb => "among the argument modes",
            Place::Rule => "rule",
            Place::RuleVerdict => "the rules' verdict",
            Place::NameClass => "in the name",
            Place::NameFirstClass => "first in the name",
            Place::LeadClass => "leading the description",
            Place::NameRare => "in the name",
            Place::LeadRare => "leading the description",
        }
    }

    /// For a place whose key says whether a model has met a word ([`CLASS_SOURCES`]), the
    /// place of the same word when it was met too rarely to stand without its classes.
    pub const fn rare(self) -> Option<Place> {
        match self {
            Place::Name => Some(Place::NameRare),
            Place::Lead => Some(Place::LeadRare),
            _ => None,
        }
    }
}

#[cfg(test)]
const ALL_PLACES: [Place; 23] = [
    Place::Name,
    Place::NameFirst,
    Place::NameLast,
    Place::NamePair,
    Place::Lead,
    Place::Description,
    Place::Negated,
    Place::Property,
    Place::PropertyWord,
    Place::Switch,
    Place::FreeText,
    Place::EnumValue,
    Place::Annotation,
    Place::Arity,
    Place::Verb,
    Place::ModeVerb,
    Place::Rule,
    Place::RuleVerdict,
    Place::NameClass,
    Place::NameFirstClass,
    Place::LeadClass,
    Place::NameRare,
    Place::LeadRare,
];

/// Receives feature keys, one `(place, parts)` at a time: the key is the place's prefix, `:`,
/// then the parts joined by `+`.
pub trait KeySink {
    /// Takes one key.
    fn key(&mut self, place: Place, parts: &[&str]);

    /// Whether the WordNet word-class keys are wanted (looking a word up costs a search; a
    /// model whose weights have no class keys skips it).
    fn wants_classes(&self) -> bool {
        true
    }

    /// Takes the word-class key `(place, parts)` of a word whose own key is `(source, [stem])`.
    /// Classes stand in for words the model has not met or met rarely: a running model takes
    /// one only when the word's own key is not among its weights ([`CLASS_SOURCES`]), and then
    /// the word's rare key too (`source.rare()`) if it has that. By default the key is taken as
    /// any other (tests that only count keys).
    fn class_key(&mut self, place: Place, parts: &[&str], source: Place, stem: &str) {
        let _ = (source, stem);
        self.key(place, parts);
    }
}

/// The places whose keys say whether the model has met a word: a name word's class stands in
/// for `n:` (the word anywhere in the name), a leading word's for `dl:`.
pub const CLASS_SOURCES: [Place; 2] = [Place::Name, Place::Lead];

/// What separates a spelled-out class key from the key of the word it stands in for
/// (`wc:v+motion@n:expand`).
pub const SOURCE_MARK: char = '@';

/// A spelled-out key and, for a class key, the key of the word it stands in for.
pub fn split_source(key: &str) -> (&str, Option<&str>) {
    match key.split_once(SOURCE_MARK) {
        Some((k, source)) => (k, Some(source)),
        None => (key, None),
    }
}

/// Collects keys as strings (training and inspection: `Engine::model_keys`; tests).
impl KeySink for Vec<String> {
    fn key(&mut self, place: Place, parts: &[&str]) {
        let mut k = String::with_capacity(16);
        k.push_str(place.prefix());
        k.push(':');
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                k.push('+');
            }
            k.push_str(p);
        }
        self.push(k);
    }

    /// Spells the class key with its source after [`SOURCE_MARK`], so that training can leave it
    /// out where the model knows the word, as a running model does.
    fn class_key(&mut self, place: Place, parts: &[&str], source: Place, stem: &str) {
        self.key(place, parts);
        if let Some(k) = self.last_mut() {
            k.push(SOURCE_MARK);
            k.push_str(source.prefix());
            k.push(':');
            k.push_str(stem);
        }
    }
}

/// [`hash_key`] of the key `(place, parts)` spells, without spelling it.
pub fn hash_parts(place: Place, parts: &[&str]) -> u64 {
    let mut h = Fnv::new();
    h.write(place.prefix().as_bytes());
    h.write(b":");
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            h.write(b"+");
        }
        h.write(p.as_bytes());
    }
    h.finish()
}

pub use super::fnv::hash_key;
use super::fnv::Fnv;

/// Words too common to say anything.
#[cfg(test)]
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "an", "and", "any", "are", "as", "at", "be", "by", "can", "for", "from",
    "if", "in", "into", "is", "it", "its", "of", "on", "or", "that", "the", "their", "then",
    "these", "this", "those", "to", "use", "used", "using", "via", "when", "which", "will", "with",
    "you", "your",
];

fn is_stop_word(w: &str) -> bool {
    // A match the compiler turns into length and byte comparisons: a binary search over the
    // list was a tenth of the model's time.
    matches!(
        w,
        "a" | "about"
            | "all"
            | "an"
            | "and"
            | "any"
            | "are"
            | "as"
            | "at"
            | "be"
            | "by"
            | "can"
            | "for"
            | "from"
            | "if"
            | "in"
            | "into"
            | "is"
            | "it"
            | "its"
            | "of"
            | "on"
            | "or"
            | "that"
            | "the"
            | "their"
            | "then"
            | "these"
            | "this"
            | "those"
            | "to"
            | "use"
            | "used"
            | "using"
            | "via"
            | "when"
            | "which"
            | "will"
            | "with"
            | "you"
            | "your"
    )
}

/// Words that negate what follows them ("doesn't" is read as "doesn" and "t").
fn is_negation(w: &str) -> bool {
    matches!(
        w,
        "not"
            | "no"
            | "never"
            | "without"
            | "nothing"
            | "none"
            | "cannot"
            | "doesn"
            | "don"
            | "isn"
            | "won"
            | "nor"
    )
}

/// A word's stem: plural, `-ing`, `-ed` and a final `e` or `y` taken off, so "delete",
/// "deletes", "deleted" and "deleting" are one feature. Crude on purpose: it only has to map a
/// word's forms together, consistently, without a dictionary.
pub fn stem(w: &str) -> &str {
    let b = w.as_bytes();
    let n = b.len();
    if n <= 3 || !w.is_ascii() {
        return w;
    }
    let mut s = w;
    if s.ends_with("sses") {
        s = &s[..n - 2];
    } else if (s.ends_with("ies") && n > 4) || (s.ends_with("ing") && n > 6) {
        s = &s[..n - 3];
    } else if s.ends_with("ed") && n > 4 {
        s = &s[..n - 2];
    } else if s.ends_with('s') && !(s.ends_with("ss") || s.ends_with("us") || s.ends_with("is")) {
        s = &s[..n - 1];
    }
    if s.len() > 3 && (s.ends_with('e') || s.ends_with('y')) {
        s = &s[..s.len() - 1];
    }
    s
}

/// Lowercase words of prose (letters and digits), at most `limit`.
pub fn prose_words(text: &str, limit: usize) -> Words {
    let mut w = Words::default();
    prose_words_into(text, limit, &mut w);
    w
}

/// Buffers the key extraction reuses from tool to tool.
#[derive(Debug, Default)]
pub struct TokenScratch {
    description: Words,
    small: Words,
}

impl TokenScratch {
    /// The description words of the tool whose keys were emitted last.
    pub fn description_words(&self) -> &Words {
        &self.description
    }
}

/// Emits every feature key of `tool` (with its extracted `f`) into `sink`. Keys may repeat.
pub fn emit(tool: &Tool, f: &Features, s: &mut TokenScratch, sink: &mut impl KeySink) {
    // The name.
    let name: Vec<&str> = f.name_words.iter().collect();
    for (i, w) in name.iter().enumerate() {
        let s = stem(w);
        sink.key(Place::Name, &[s]);
        if i == 0 {
            sink.key(Place::NameFirst, &[s]);
        }
        if i + 1 == name.len() {
            sink.key(Place::NameLast, &[s]);
        }
        if i > 0 {
            sink.key(Place::NamePair, &[stem(name[i - 1]), s]);
        }
        if let Some(c) = sink.wants_classes().then(|| classes::of(w)).flatten() {
            for (pos, class) in [("v", c.verb), ("n", c.noun)] {
                if let Some(class) = class {
                    sink.class_key(Place::NameClass, &[pos, class], Place::Name, s);
                    if i == 0 {
                        sink.class_key(Place::NameFirstClass, &[pos, class], Place::Name, s);
                    }
                }
            }
        }
    }
    // The description.
    let words = &mut s.description;
    words.clear();
    prose_words_into(&tool.description, DESCRIPTION_WORDS, words);
    // Words in a negation's scope are keys of their own: "does not write to disk" says
    // nothing is written, so its "write" must not count as one that does. (Ending the scope at
    // the clause's end, a `.`, `,` or `;`, was tried: cross-validated category 89.1% against
    // 89.4% with these four words whatever stands between them.)
    let mut negated = 0;
    for (i, w) in words.iter().enumerate() {
        // ("t" is the tail of "don't". Leaving out every word of one ASCII letter or digit, the
        // fragments of "server's" and "e.g.", was judged on set AL by a rule written before its
        // labels: 882 of 985 right against 886, the refit Financial threshold moving most; not
        // kept. See catalog/corpus/preregistrations.md.)
        if is_stop_word(w) || w == "t" {
            continue;
        }
        let s = stem(w);
        if negated > 0 {
            negated -= 1;
            sink.key(Place::Negated, &[s]);
        } else {
            sink.key(Place::Description, &[s]);
            // (`describe_class` looks for a class's word among the same first words.)
            if i < LEAD_WORDS {
                sink.key(Place::Lead, &[s]);
                let class = sink.wants_classes().then(|| classes::of(w)).flatten();
                if let Some(class) = class.and_then(|c| c.verb) {
                    sink.class_key(Place::LeadClass, &["v", class], Place::Lead, s);
                }
            }
        }
        if is_negation(w) {
            negated = NEGATION_SCOPE;
        }
    }
    // The arguments.
    let n = f.properties.len();
    let arity = match n {
        0 => "0",
        1 => "1",
        2..=3 => "2",
        4..=7 => "4",
        _ => "8",
    };
    sink.key(Place::Arity, &[arity]);
    let text = &mut s.small;
    for (i, p) in f.properties.iter().enumerate().take(MAX_PROPERTIES) {
        let key = f.key(i);
        if key.is_empty() {
            continue;
        }
        sink.key(Place::Property, &[key]);
        for w in f.words_of(i) {
            sink.key(Place::PropertyWord, &[stem(w)]);
        }
        if p.switch {
            sink.key(Place::Switch, &[key]);
        }
        if p.free_text {
            sink.key(Place::FreeText, &[key]);
        }
        for v in f.values_of(i).iter().take(MAX_PROPERTIES) {
            text.clear();
            prose_words_into(v, 4, text);
            for w in text.iter() {
                sink.key(Place::EnumValue, &[stem(w)]);
            }
        }
    }
    for &(k, v) in &f.hints {
        sink.key(Place::Annotation, &[k, if v { "true" } else { "false" }]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Collects keys as the running classifier hashes them ([`hash_parts`]).
    #[derive(Default)]
    struct Hashes(Vec<u64>);

    impl KeySink for Hashes {
        fn key(&mut self, place: Place, parts: &[&str]) {
            self.0.push(hash_parts(place, parts));
        }
    }

    #[test]
    fn every_place_has_a_prefix_of_its_own() {
        let mut prefixes: Vec<&str> = ALL_PLACES.iter().map(|p| p.prefix()).collect();
        prefixes.sort_unstable();
        prefixes.dedup();
        assert_eq!(prefixes.len(), ALL_PLACES.len());
    }

    #[test]
    fn stems_join_a_words_forms() {
        for forms in [
            ["delete", "deletes", "deleted", "deleting"],
            ["create", "creates", "created", "creating"],
            ["list", "lists", "listed", "listing"],
            ["update", "updates", "updated", "updating"],
        ] {
            let stems: Vec<&str> = forms.iter().map(|w| stem(w)).collect();
            assert!(
                stems.iter().all(|s| *s == stems[0]),
                "{forms:?} -> {stems:?}"
            );
        }
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("process"), "process");
        assert_eq!(stem("run"), "run");
    }

    #[test]
    fn the_stop_word_test_knows_every_stop_word() {
        assert!(STOP_WORDS.iter().all(|w| is_stop_word(w)));
        assert!(!is_stop_word("delete") && !is_stop_word("th"));
    }

    /// The one tool of a `{"tools": [...]}` document.
    fn only_tool(doc: serde_json::Value) -> Tool {
        crate::targets::toollist::from_value(doc, "test")
            .unwrap()
            .tools
            .remove(0)
    }

    #[test]
    fn hashing_a_key_in_parts_equals_hashing_the_string() {
        let tool = only_tool(serde_json::json!({"tools": [{
            "name": "closePosition",
            "description": "Closes an open trading position at market price.",
            "inputSchema": {"type": "object", "properties": {
                "symbol": {"type": "string", "description": "The ticker"},
                "force": {"type": "boolean"},
                "options": {"type": "object", "properties": {
                    "operation": {"type": "string", "enum": ["cancel", "hold"]}}}}},
            "annotations": {"destructiveHint": true}
        }]}));
        let f = Features::of(&tool);
        let mut keys: Vec<String> = Vec::new();
        emit(&tool, &f, &mut TokenScratch::default(), &mut keys);
        let mut hashes = Hashes::default();
        emit(&tool, &f, &mut TokenScratch::default(), &mut hashes);
        let from_strings: Vec<u64> = keys.iter().map(|k| hash_key(split_source(k).0)).collect();
        assert_eq!(from_strings, hashes.0);
        for want in [
            "n0:clos",
            "nn:clos+position",
            "dl:clos",
            "pb:force",
            "e:cancel",
            "p:operation",
            "a:destructiveHint+true",
        ] {
            assert!(keys.iter().any(|k| k == want), "{want} not in {keys:?}");
        }
    }

    /// Keys, collected as strings, from a sink that declines the word classes.
    struct NoClasses(Vec<String>);

    impl KeySink for NoClasses {
        fn key(&mut self, place: Place, parts: &[&str]) {
            self.0.key(place, parts);
        }

        fn wants_classes(&self) -> bool {
            false
        }
    }

    #[test]
    fn word_classes_are_keys_only_for_a_sink_that_wants_them() {
        let tool = only_tool(serde_json::json!({"tools": [{
            "name": "factor_polynomial",
            "description": "Solve the equation and refund nothing.",
            "inputSchema": {"type": "object", "properties": {}}
        }]}));
        let f = Features::of(&tool);
        let mut keys: Vec<String> = Vec::new();
        emit(&tool, &f, &mut TokenScratch::default(), &mut keys);
        let has = |k: &str| keys.iter().any(|x| x == k);
        for want in [
            "wc0:v+cognition@n:factor",
            "wc:v+cognition@n:factor",
            "wc:n+event@n:factor",
            "wcl:v+cognition@dl:solv",
        ] {
            assert!(has(want), "{want} not in {keys:?}");
        }
        let mut plain = NoClasses(Vec::new());
        emit(&tool, &f, &mut TokenScratch::default(), &mut plain);
        assert!(
            plain.0.iter().all(|k| !k.starts_with("wc")),
            "{:?}",
            plain.0
        );
        let without: Vec<&String> = keys.iter().filter(|k| !k.starts_with("wc")).collect();
        assert_eq!(without, plain.0.iter().collect::<Vec<_>>());
    }

    #[test]
    fn words_after_a_negation_are_keys_of_their_own() {
        let tool = only_tool(serde_json::json!({"tools": [{
            "name": "render_contract",
            "description": "Returns contract source code. Does not write to disk and \
                            doesn't deploy anything; results cached for later calls.",
            "inputSchema": {"type": "object", "properties": {}}
        }]}));
        let f = Features::of(&tool);
        let mut keys: Vec<String> = Vec::new();
        emit(&tool, &f, &mut TokenScratch::default(), &mut keys);
        let has = |k: &str| keys.iter().any(|x| x == k);
        // In a negation's scope: the next NEGATION_SCOPE words that are not stop words (a
        // negation inside a scope starts a new one).
        for want in ["dx:writ", "dx:disk", "dx:deplo", "dx:anyth"] {
            assert!(has(want), "{want} not in {keys:?}");
        }
        for unwanted in ["d:writ", "d:deplo", "d:cach"] {
            assert!(!has(unwanted), "{unwanted} in {keys:?}");
        }
        // Outside it, words count as they always did.
        for want in ["d:return", "dl:return", "d:later", "d:not"] {
            assert!(has(want), "{want} not in {keys:?}");
        }
    }
}
