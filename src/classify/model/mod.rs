//! The learned part of classification: a multinomial logistic regression over the words of a
//! tool (see [`tokens`]) and what the rules said about it, trained on the blind-labelled corpus
//! (`catalog/corpus/`) by `scripts/train-model.sh`, its weights embedded in the binary.
//!
//! The rules keep the strong, explainable evidence and the hard constraints; the model decides
//! where the rules are weak or silent (see `Engine::classify`).

pub mod classes;
pub mod fnv;
pub mod lexnames;
pub mod tokens;
pub mod train;
pub mod weights;

use super::features::Features;
use super::words::Words;
use crate::model::{Category, Tool};
use std::sync::OnceLock;
pub use tokens::Place;
use tokens::{emit, KeySink, TokenScratch};
use weights::{ModelText, Table, CLASSES};

/// The shipped weights.
pub const SHIPPED: &str = include_str!("../../../catalog/model/weights.tsv");

/// The shipped weights as `build.rs` packs them for a quick start (see `Table::from_packed`).
pub static PACKED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/weights.bin"));

/// A trained model, ready to classify.
#[derive(Debug)]
pub struct Model {
    table: Table,
    /// Whether the weights have WordNet word-class keys (see [`train::WORD_CLASS_PLACES`]);
    /// without them, prediction skips looking words up.
    classes: bool,
}

/// What the model says about one tool.
#[derive(Debug, Clone)]
pub struct Prediction {
    /// Each category's probability, in `Category::ALL` order.
    pub probabilities: [f64; 5],
}

impl Prediction {
    /// The probability of one category.
    pub fn p(&self, c: Category) -> f64 {
        self.probabilities[c as usize]
    }

    /// The likeliest category and its probability.
    pub fn best(&self) -> (Category, f64) {
        self.ranked()[0]
    }

    /// Categories from likeliest to least likely (the more dangerous first among equals).
    pub fn ranked(&self) -> [(Category, f64); 5] {
        let mut r = CLASSES.map(|c| (c, self.p(c)));
        r.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        r
    }
}

/// What the rules contributed, as the model reads it.
#[derive(Debug, Clone, Copy)]
pub struct RuleSignals<'a> {
    /// The category rules that matched, by id.
    pub matched: &'a [&'a str],
    /// The rules' own verdict, or `None` when no rule decided.
    pub verdict: Option<Category>,
    /// The tool's action words, as the rules found them.
    pub verbs: &'a [&'a str],
    /// The values of its mode arguments that are action words.
    pub modes: &'a [&'a str],
}

impl Model {
    /// The model shipped in the binary (parsed once).
    pub fn shipped() -> &'static Model {
        static MODEL: OnceLock<Model> = OnceLock::new();
        MODEL.get_or_init(|| {
            Model::of(Table::from_packed(PACKED).expect("build.rs packs the shipped weights"))
        })
    }

    /// A model from its weights.
    pub fn from_text(m: &ModelText) -> Model {
        Model::of(Table::new(m))
    }

    /// Whether any class key is among the weights: each possible one looked up by its hash, as a
    /// prediction looks keys up (a few hundred lookups, not a pass over every key's text).
    fn of(table: Table) -> Model {
        let classes = tokens::CLASS_PLACES.iter().any(|&place| {
            lexnames::CLASS_NAMES.iter().any(|class| {
                ["v", "n"].iter().any(|pos| {
                    table
                        .find(tokens::hash_parts(place, &[pos, class]))
                        .is_some()
                })
            })
        });
        Model { table, classes }
    }

    /// The category its thresholds and offsets choose for a prediction.
    pub fn choose(&self, p: &Prediction) -> Category {
        self.table.decision.choose(&p.probabilities)
    }

    /// [`Model::choose`] for a tool on which the rules stand so (see [`weights::Stance`]).
    pub fn choose_in(&self, p: &Prediction, stance: weights::Stance) -> Category {
        self.table.decision.choose_in(&p.probabilities, stance)
    }

    /// True when the model knows no feature (no corpus yet).
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Predicts a tool's category. Leaves the tool's known keys in `s` for [`Model::reasons`].
    pub fn predict(
        &self,
        tool: &Tool,
        f: &Features,
        rules: RuleSignals,
        s: &mut Scratch,
    ) -> Prediction {
        s.found.clear();
        let mut known = Known {
            table: &self.table,
            found: &mut s.found,
            classes: self.classes,
        };
        keys(tool, f, rules, &mut s.tokens, &mut known);
        // Each known key's row once, whatever its repeats (one row per key), in row order.
        s.found.sort_unstable_by_key(|&(row, _)| row);
        s.found.dedup_by_key(|(row, _)| *row);
        Prediction {
            probabilities: self
                .table
                .probabilities_of_rows(s.found.iter().map(|&(row, _)| row)),
        }
    }

    /// Whether some feature of the tool last predicted with `s` (the rules' own signals
    /// included), at none of the places `unheard`, pushes it towards `c` by more than `margin`
    /// against Read and Write.
    pub fn names_evidence_for(
        &self,
        c: Category,
        margin: f32,
        unheard: &[Place],
        s: &Scratch,
    ) -> bool {
        let ci = c as usize;
        s.found.iter().any(|&(row, place)| {
            if unheard.contains(&place) {
                return false;
            }
            let w = self.table.row(row);
            w[ci] - w[Category::Read as usize].max(w[Category::Write as usize]) > margin
        })
    }

    /// The features of the tool last predicted with `s` that pushed it most towards `c` (against
    /// the likeliest other category), strongest first, each described in words:
    /// `'close' + 'position' in the name`. The rules' own signals are left out: the rules are
    /// evidence of their own.
    pub fn reasons(&self, f: &Features, c: Category, limit: usize, s: &Scratch) -> Vec<String> {
        let ci = c as usize;
        // The `limit` strongest, kept in order as they are found: (margin, key text, place).
        let mut best: Vec<(f32, &str, Place)> = Vec::with_capacity(limit + 1);
        for &(row, place) in &s.found {
            if matches!(place, Place::Rule | Place::RuleVerdict | Place::Arity) {
                continue;
            }
            let w = self.table.row(row);
            let others = (0..5)
                .filter(|&o| o != ci)
                .map(|o| w[o])
                .fold(f32::MIN, f32::max);
            let margin = w[ci] - others;
            if margin <= 0.05 {
                continue;
            }
            let key = self.table.key(row);
            let at = best.partition_point(|b| b.0 > margin || (b.0 == margin && b.1 < key));
            if at < limit {
                best.insert(at, (margin, key, place));
                best.truncate(limit);
            }
        }
        best.into_iter()
            .map(|(_, k, place)| describe_key(place, k, s.tokens.description_words(), f))
            .collect()
    }
}

/// Looks each key up as it is emitted, without spelling it out, and keeps the rows of those
/// the model knows (the table has their text, for explanations).
struct Known<'a> {
    table: &'a Table,
    found: &'a mut Vec<(u32, Place)>,
    classes: bool,
}

impl KeySink for Known<'_> {
    fn key(&mut self, place: Place, parts: &[&str]) {
        if let Some(row) = self.table.find(tokens::hash_parts(place, parts)) {
            self.found.push((row, place));
        }
    }

    fn wants_classes(&self) -> bool {
        self.classes
    }

    /// A class stands in only for a word the model has not met, or met rarely; a word met
    /// rarely is known by its rare key.
    fn class_key(&mut self, place: Place, parts: &[&str], source: Place, stem: &str) {
        if self
            .table
            .find(tokens::hash_parts(source, &[stem]))
            .is_some()
        {
            return;
        }
        if let Some(rare) = source.rare() {
            self.key(rare, &[stem]);
        }
        self.key(place, parts);
    }
}

/// Buffers a prediction reuses from tool to tool.
#[derive(Debug, Default)]
pub struct Scratch {
    tokens: TokenScratch,
    /// The known keys of the tool last predicted: their rows and where they were found, each
    /// row once.
    found: Vec<(u32, Place)>,
}

/// Every feature key of a tool: its words, and the rules' signals.
pub fn keys(
    tool: &Tool,
    f: &Features,
    rules: RuleSignals,
    s: &mut TokenScratch,
    sink: &mut impl KeySink,
) {
    emit(tool, f, s, sink);
    for id in rules.matched {
        sink.key(Place::Rule, &[id]);
    }
    for (place, list) in [(Place::Verb, rules.verbs), (Place::ModeVerb, rules.modes)] {
        for v in list {
            let words = tokens::prose_words(v, 1);
            if let Some(w) = words.first() {
                sink.key(place, &[tokens::stem(w)]);
            }
        }
    }
    sink.key(
        Place::RuleVerdict,
        &[rules.verdict.map_or("none", |c| c.as_str())],
    );
}

/// A feature key found at `place`, in words, with the tool's own spelling of each stem where
/// it can be found: `'close' + 'position' in the name`.
pub fn describe_key(place: Place, key: &str, description: &Words, f: &Features) -> String {
    let rest = key.split_once(':').map_or(key, |(_, rest)| rest);
    let mut out = String::with_capacity(rest.len() + 32);
    match place {
        Place::Annotation => {
            let (name, value) = rest.split_once('+').unwrap_or((rest, ""));
            out.push_str("annotation ");
            out.push_str(name);
            out.push('=');
            out.push_str(value);
            return out;
        }
        Place::Rule => {
            out.push_str("rule ");
            out.push_str(rest);
            return out;
        }
        Place::NameClass | Place::NameFirstClass | Place::LeadClass => {
            describe_class(place, rest, description, f, &mut out);
            return out;
        }
        _ => {}
    }
    let argument = matches!(place, Place::Property | Place::Switch | Place::FreeText);
    if argument {
        out.push_str(place.describe());
        out.push(' ');
    }
    // Each part quoted, as the tool spells it: 'close' + 'position'.
    for (i, p) in rest.split('+').enumerate() {
        if i > 0 {
            out.push_str(" + ");
        }
        out.push('\'');
        out.push_str(spelled(place, p, description, f).unwrap_or(p));
        out.push('\'');
    }
    if !argument {
        out.push(' ');
        out.push_str(place.describe());
    }
    out
}

/// A word-class key (`v+cognition`) in words, with the word of the tool that has the class:
/// `'factor' (a cognition verb) first in the name`.
fn describe_class(place: Place, key: &str, description: &Words, f: &Features, out: &mut String) {
    let (pos, class) = key.split_once('+').unwrap_or(("v", key));
    let has = |w: &&str| {
        classes::of(w).is_some_and(|c| {
            if pos == "n" {
                c.noun == Some(class)
            } else {
                c.verb == Some(class)
            }
        })
    };
    let word = if place == Place::LeadClass {
        description.iter().take(tokens::LEAD_WORDS).find(has)
    } else {
        f.name_words.iter().find(has)
    };
    if let Some(w) = word {
        out.push('\'');
        out.push_str(w);
        out.push_str("' (");
    }
    out.push_str(if class.starts_with(['a', 'e', 'o']) {
        "an "
    } else {
        "a "
    });
    out.push_str(class);
    out.push_str(if pos == "n" { " noun" } else { " verb" });
    if word.is_some() {
        out.push(')');
    }
    out.push(' ');
    out.push_str(place.describe());
}

/// The word of the tool that a stem came from, as the tool spells it (lowercased).
fn spelled<'a>(
    place: Place,
    stem: &str,
    description: &'a Words,
    f: &'a Features,
) -> Option<&'a str> {
    let matches = |w: &&str| tokens::stem(w) == stem;
    match place {
        Place::Name
        | Place::NameFirst
        | Place::NameLast
        | Place::NamePair
        | Place::NameRare
        | Place::Verb => f
            .name_words
            .iter()
            .find(matches)
            .or_else(|| spelled(Place::Description, stem, description, f)),
        Place::Lead | Place::LeadRare | Place::Description | Place::Negated => {
            description.iter().find(matches)
        }
        Place::Property | Place::Switch | Place::FreeText => (0..f.properties.len())
            .find(|&i| f.key(i) == stem)
            .map(|i| f.properties[i].name),
        Place::PropertyWord => (0..f.properties.len())
            .flat_map(|i| f.words_of(i))
            .find(matches),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> Tool {
        crate::targets::toollist::from_value(
            serde_json::json!({"tools": [{"name": name, "description": "",
                "inputSchema": {"type": "object", "properties": {}}}]}),
            "test",
        )
        .unwrap()
        .tools
        .remove(0)
    }

    /// The probabilities a model gives a tool named `name`, rules silent.
    fn predict(m: &Model, name: &str) -> [f64; 5] {
        let t = tool(name);
        let f = Features::of(&t);
        let rules = RuleSignals {
            matched: &[],
            verdict: None,
            verbs: &[],
            modes: &[],
        };
        m.predict(&t, &f, rules, &mut Scratch::default())
            .probabilities
    }

    #[test]
    fn a_word_class_counts_only_for_a_word_the_model_has_not_met() {
        // "delete" and "erase" are both verbs of change; the model has met "delete" (as Read,
        // to tell the two apart) and knows the class as Destructive.
        let mut text = ModelText {
            comment: String::new(),
            temperature: 1.0,
            decision: weights::Decision::thresholds(weights::DEFAULT_THRESHOLDS),
            bias: [0.0; 5],
            weights: vec![
                ("n:delet".into(), [3.0, 0.0, 0.0, 0.0, 0.0]),
                ("wc:v+change".into(), [0.0, 0.0, 0.0, 3.0, 0.0]),
            ],
        };
        let m = Model::from_text(&text);
        assert!(m.classes);
        let destructive = Category::Destructive as usize;
        let read = Category::Read as usize;
        assert!(predict(&m, "delete")[read] > 0.5);
        assert!(predict(&m, "erase")[destructive] > 0.5);
        // Weights without class keys look no word up.
        text.weights.remove(1);
        let plain = Model::from_text(&text);
        assert!(!plain.classes);
        assert!(predict(&plain, "erase")[destructive] < 0.5);
    }
}
