//! A rule's condition compiled against the engine's word and phrase tables.

/// A compiled condition: words and phrases are ids in the engine's tables.
#[derive(Debug)]
pub(super) enum C {
    All(Vec<C>),
    Any(Vec<C>),
    Not(Box<C>),
    Verb(IdSet),
    Name(IdSet),
    /// Phrases in the description (`desc` and `desc_exact`).
    Desc(IdSet),
    /// Phrases in the description or the schema's texts.
    Text(IdSet),
    /// As `Text`, for a condition reached only when others beside it hold: its phrases are
    /// looked for when it is evaluated, not for every tool.
    LazyText(IdSet),
    Lead(IdSet),
    Prop(IdSet),
    PropWord(IdSet),
    SwitchLead(IdSet),
    FreeText(IdSet),
    Enum(IdSet),
    EnumIn(IdSet, IdSet),
    Annotation(Vec<(String, bool)>),
}

/// A set of word or phrase ids as a bitset: membership is one shift, whatever the list's length
/// (verb lists hold over a hundred words).
#[derive(Debug)]
pub(super) struct IdSet {
    bits: Vec<u64>,
}

impl IdSet {
    /// The set of `ids`.
    pub(super) fn new(ids: &[u32]) -> IdSet {
        let max = ids.iter().copied().max().unwrap_or(0) as usize;
        let mut bits = vec![0u64; max / 64 + 1];
        for &id in ids {
            bits[id as usize / 64] |= 1 << (id % 64);
        }
        IdSet { bits }
    }

    /// Whether `id` is in the set.
    pub(super) fn contains(&self, id: &u32) -> bool {
        let i = *id as usize / 64;
        i < self.bits.len() && (self.bits[i] >> (id % 64)) & 1 == 1
    }

    /// The ids in the set, smallest first.
    pub(super) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.bits.iter().enumerate().flat_map(|(i, &word)| {
            (0..64)
                .filter(move |b| word >> b & 1 == 1)
                .map(move |b| (i * 64 + b) as u32)
        })
    }
}
