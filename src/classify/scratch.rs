//! Buffers a classification needs, kept per thread between calls so that classifying a tool
//! does not allocate them afresh: at hundreds of thousands of tools a second, a dozen
//! allocations and frees a tool were a tenth of the time.

use super::features::Buffers;
use super::phrases::PhraseHit;
use super::words::Words;
use std::cell::RefCell;

/// The reusable buffers; each is cleared before use.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    pub name_ids: Vec<u32>,
    pub prop_keys: Vec<u32>,
    pub prop_words: Vec<(u32, usize)>,
    pub enum_words: Vec<(u32, usize, usize)>,
    pub hits: Vec<PhraseHit>,
    pub schema_hits: Vec<PhraseHit>,
    /// The schema texts end to end as phrases are searched in them (folded when any has a run
    /// of whitespace), each followed by a NUL, and where each starts.
    pub schema_joined: String,
    pub schema_starts: Vec<usize>,
    /// The description with its whitespace runs folded, when it has any.
    pub folded_description: String,
    pub words: Words,
    pub candidates: Vec<u64>,
    pub matched: Vec<usize>,
    pub features: Buffers,
    /// The learned model's buffers.
    pub model: super::model::Scratch,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's buffers (fresh ones if `f` is itself running inside `f`).
/// Borrowed in place rather than moved out and back: they are a few hundred bytes.
pub(super) fn with_scratch<T>(f: impl FnOnce(&mut Scratch) -> T) -> T {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => f(&mut scratch),
        Err(_) => f(&mut Scratch::default()),
    })
}

/// `v`, emptied, to be filled again.
pub(super) fn cleared<T>(v: &mut Vec<T>) -> Vec<T> {
    let mut v = std::mem::take(v);
    v.clear();
    v
}
