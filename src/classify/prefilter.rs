//! Which rules could match a tool at all, so the engine evaluates those and skips the rest.
//!
//! Most rules need some word or phrase that most tools lack: a money verb, a shell property, a
//! poisoning phrase. Each rule's condition gives a set of keys (a verb id, a phrase id, ...)
//! of which at least one must be present for it to hold; a tool's keys then pick out its
//! candidate rules in a few table reads, and only those are evaluated. A rule that can hold
//! with no key present (one that is only a `not`) is always a candidate. The filter only
//! ever skips rules that cannot match, so verdicts are the same as evaluating every rule.

use super::cond::C;

/// Where in a tool a key was found.
#[derive(Debug, Clone, Copy)]
pub(super) enum Slot {
    /// An action word (a verb id), from the name, the description or a mode argument.
    Verb,
    /// A word of the name.
    Name,
    /// The description's action word.
    Lead,
    /// A phrase id found in the description or a schema text.
    Phrase,
    /// A property name, normalised.
    Prop,
    /// A word of a property name.
    PropWord,
    /// A word of an enum value.
    Enum,
    /// Any annotation hint at all (id 0).
    Annotation,
}

const SLOTS: usize = 8;

/// Candidate rules, as a bitset over rule indices.
pub(super) type RuleSet = Vec<u64>;

/// The compiled filter: for each slot and id, the rules that key can make candidates.
#[derive(Debug, Default)]
pub(super) struct Prefilter {
    /// Rules that are candidates whatever the tool has.
    always: RuleSet,
    /// Per slot, where each id's rules start in `rules` (with the end as a last entry).
    starts: [Vec<u32>; SLOTS],
    rules: [Vec<u32>; SLOTS],
}

impl Prefilter {
    /// Builds the filter for the rules' conditions (`None`: a rule without one, never run).
    pub(super) fn new(conds: &[Option<C>]) -> Prefilter {
        let words = conds.len().div_ceil(64).max(1);
        let mut always = vec![0u64; words];
        let mut keyed: [Vec<(u32, u32)>; SLOTS] = Default::default();
        for (rule, cond) in conds.iter().enumerate() {
            let Some(cond) = cond else { continue };
            match triggers(cond) {
                None => always[rule / 64] |= 1 << (rule % 64),
                Some(keys) => {
                    for (slot, id) in keys {
                        keyed[slot as usize].push((id, rule as u32));
                    }
                }
            }
        }
        let mut filter = Prefilter {
            always,
            ..Prefilter::default()
        };
        for (slot, mut pairs) in keyed.into_iter().enumerate() {
            pairs.sort_unstable();
            pairs.dedup();
            let ids = pairs.last().map_or(0, |&(id, _)| id as usize + 1);
            let mut starts = vec![0u32; ids + 1];
            for &(id, _) in &pairs {
                starts[id as usize + 1] += 1;
            }
            for i in 1..starts.len() {
                starts[i] += starts[i - 1];
            }
            filter.starts[slot] = starts;
            filter.rules[slot] = pairs.into_iter().map(|(_, rule)| rule).collect();
        }
        filter
    }

    /// Sets `set` to the rules that are candidates for every tool; [`Prefilter::mark`] adds
    /// to it.
    pub(super) fn start(&self, set: &mut RuleSet) {
        set.clear();
        set.extend_from_slice(&self.always);
    }

    /// Adds the rules that key `id` in `slot` makes candidates.
    pub(super) fn mark(&self, slot: Slot, id: u32, set: &mut RuleSet) {
        let starts = &self.starts[slot as usize];
        let i = id as usize;
        if i + 1 >= starts.len() {
            return;
        }
        for &rule in &self.rules[slot as usize][starts[i] as usize..starts[i + 1] as usize] {
            set[rule as usize / 64] |= 1 << (rule % 64);
        }
    }
}

/// The rule indices in a set, smallest first.
pub(super) fn members(set: &RuleSet) -> impl Iterator<Item = usize> + '_ {
    set.iter().enumerate().flat_map(|(w, &bits)| {
        let mut bits = bits;
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let b = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            Some(w * 64 + b)
        })
    })
}

/// Keys of which at least one must be present for `c` to hold; `None` when it can hold with
/// none present.
fn triggers(c: &C) -> Option<Vec<(Slot, u32)>> {
    let keyed =
        |slot: Slot, ids: &super::cond::IdSet| Some(ids.iter().map(|id| (slot, id)).collect());
    match c {
        // Any one part's keys will do; the part with the fewest is the sharpest filter.
        C::All(cs) => cs.iter().filter_map(triggers).min_by_key(Vec::len),
        C::Any(cs) => {
            let mut keys = Vec::new();
            for c in cs {
                keys.extend(triggers(c)?);
            }
            Some(keys)
        }
        // Lazy phrases are not looked for up front, so they key nothing; a gated condition
        // is keyed by the parts before it.
        C::Not(_) | C::LazyText(_) => None,
        C::Verb(ids) => keyed(Slot::Verb, ids),
        C::Name(ids) => keyed(Slot::Name, ids),
        C::Lead(ids) => keyed(Slot::Lead, ids),
        C::Desc(ids) | C::Text(ids) => keyed(Slot::Phrase, ids),
        C::Prop(ids) | C::FreeText(ids) => keyed(Slot::Prop, ids),
        // A switch's first word is one of its property words.
        C::PropWord(ids) | C::SwitchLead(ids) => keyed(Slot::PropWord, ids),
        C::Enum(ids) | C::EnumIn(_, ids) => keyed(Slot::Enum, ids),
        C::Annotation(pairs) if pairs.is_empty() => None,
        C::Annotation(_) => Some(vec![(Slot::Annotation, 0)]),
    }
}
