//! Finds the rules' phrases in descriptions and schema texts.
//!
//! Rule phrases are few (a few hundred) and may only start where a word starts, or at
//! punctuation. So the search marks, 64 bytes at a time and without branches (SSE2 on x86-64,
//! arithmetic on `u64`s elsewhere), the places where a phrase could start (not inside a word,
//! not a blank); hashes the four bytes at each place into buckets of the phrases' first four
//! bytes and keeps, again without branches, the places whose bucket is not empty (one bit
//! each, 512 bytes that stay in the nearest cache; nearly all buckets are empty). At those, a
//! second bitmap of the long phrases' first eight bytes (and one of the shorter phrases' four)
//! turns away the common openings they share ("the ", "with"); only what passes compares the
//! phrases in the bucket, eight bytes at once first.
//!
//! Written here rather than taken from the aho-corasick crate (used before): its automaton
//! pays a dependent table load on every byte of every text, and on rule-sized phrase sets
//! that was several times the cost of this filter, which is most of a tool's classification.

/// Which texts a phrase is looked for in.
pub mod scope {
    /// The tool's description.
    pub const DESCRIPTION: u8 = 1;
    /// Descriptions, titles and defaults inside the input schema.
    pub const SCHEMA: u8 = 2;
    /// Phrases of conditions reached only when another condition beside them holds, looked
    /// for in the description and the schema's texts only then (see `Engine::compile`): most
    /// tools never pay for them.
    pub const LAZY: u8 = 4;
    /// Every scope, in the order of `PhraseIndex::tables`.
    pub(super) const ALL: [u8; 3] = [DESCRIPTION, SCHEMA, LAZY];
}

/// A phrase found: its id, which text (0 for the description), and its byte range there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhraseHit {
    pub id: u32,
    pub text: u32,
    pub start: usize,
    pub end: usize,
}

#[derive(Debug)]
struct Phrase {
    /// Lowercased when `fold`.
    text: String,
    /// Ends with `*` in the rules: it may end inside a word.
    prefix: bool,
    /// Compared ignoring ASCII case.
    fold: bool,
    /// `scope` bits.
    scope: u8,
}

/// Every rule phrase, indexed for search.
#[derive(Debug, Default)]
pub struct PhraseIndex {
    phrases: Vec<Phrase>,
    /// Some phrase begins with a blank, so blanks are places to look too.
    blank_first: bool,
    /// Per scope (in `scope::ALL` order), the tables the search reads. Separate tables keep
    /// the schema texts, searched for few phrases, from stopping at the starts of the many
    /// description phrases, and both from the lazy ones.
    tables: [ScopeTable; 3],
}

/// The search tables of one scope.
#[derive(Debug, Default)]
struct ScopeTable {
    /// One bit per bucket of a phrase of one to three bytes, case folded as `key4` folds
    /// (see [`short_keys`]). Keyed by all of a short phrase's bytes, not only its first, so
    /// that "pay" or "tax" does not stop the search at every word that starts with a `p` or
    /// a `t`.
    short: Vec<u64>,
    /// One bit per bucket of case-folded first four bytes: set when some phrase of four bytes
    /// or more begins with bytes of that bucket. The first, cheapest test of every place.
    first4: Vec<u64>,
    /// Phrases of four to seven bytes, by their case-folded first four bytes.
    medium: LeadTable,
    /// Phrases of eight bytes or more, by their case-folded first eight. Keyed by eight bytes,
    /// common openings that a long phrase shares ("the " of "the user must not know", "with",
    /// "you ") are turned away at once instead of each costing a look into the bucket.
    long: LeadTable,
    /// Phrases of one to three bytes, by their lowercased first byte: `short_start` as
    /// `LeadTable::bucket_start`.
    short_start: Vec<u32>,
    short_ids: Vec<u32>,
}

/// Phrases grouped by bucket (a hash of their case-folded leading bytes).
#[derive(Debug, Default)]
struct LeadTable {
    /// Bucket `b` holds `leads[bucket_start[b]..bucket_start[b + 1]]`.
    bucket_start: Vec<u32>,
    /// One bit per bucket: set when the bucket holds a phrase. Most buckets are empty, so most
    /// places are turned away by one test against this: 512 bytes, which stay in the nearest
    /// cache where the 16 KB of `bucket_start`, on a core shared with other work, often do not.
    nonempty: Vec<u64>,
    leads: Vec<Lead>,
}

impl LeadTable {
    fn new(leads: Vec<(usize, Lead)>) -> LeadTable {
        let (bucket_start, leads) = group(leads, BUCKETS);
        let mut nonempty = vec![0; BUCKETS / 64];
        for b in 0..BUCKETS {
            if bucket_start[b] != bucket_start[b + 1] {
                mark_bucket(&mut nonempty, b);
            }
        }
        LeadTable {
            bucket_start,
            nonempty,
            leads,
        }
    }

    /// The phrases of bucket `b`.
    #[inline]
    fn bucket(&self, b: usize) -> &[Lead] {
        &self.leads[self.bucket_start[b] as usize..self.bucket_start[b + 1] as usize]
    }
}

/// A phrase of four bytes or more, with its first eight bytes ready for a one-step compare:
/// common openings ("the ", "with") share buckets with phrases, and this turns most of those
/// places away without a byte-by-byte compare.
#[derive(Debug)]
struct Lead {
    /// Its first eight bytes (fewer when shorter), folded as `fold8` folds.
    prefix: u64,
    /// Which bytes of `prefix` are the phrase's.
    mask: u64,
    id: u32,
}

/// Up to eight bytes from `at` as one number, ASCII case folded like `key4`; bytes past the
/// end are zero.
fn fold8(bytes: &[u8], at: usize) -> u64 {
    let raw = match bytes.get(at..at + 8) {
        Some(eight) => u64::from_le_bytes(eight.try_into().expect("eight bytes")),
        None => {
            let mut buf = [0u8; 8];
            let rest = &bytes[at.min(bytes.len())..];
            buf[..rest.len()].copy_from_slice(rest);
            u64::from_le_bytes(buf)
        }
    };
    raw | 0x2020_2020_2020_2020
}

/// Buckets of phrase leads: 4,096, so a few hundred phrases leave nearly all of them empty
/// and each bitmap of the ones that are not (`ScopeTable::first4`, `LeadTable::nonempty`) is
/// 512 bytes.
const BUCKET_BITS: u32 = 12;
const BUCKETS: usize = 1 << BUCKET_BITS;

/// The bytes of a one-, two- and three-byte phrase in a `key4` key.
const SHORT_MASKS: [u32; 3] = [0xFF, 0xFFFF, 0xFF_FFFF];

/// Whether the place whose four bytes (folded) are `key` begins with the bytes of a short
/// phrase's bucket: its first one, two or three bytes each looked up, without branches.
#[inline]
fn short_keys(short: &[u64; BUCKETS / 64], key: u32) -> bool {
    SHORT_MASKS
        .iter()
        .fold(false, |any, &m| any | has_bucket(short, bucket(key & m)))
}

/// Sets bucket `b`'s bit in a bitmap of buckets (`BUCKETS / 64` words).
fn mark_bucket(bits: &mut [u64], b: usize) {
    bits[b / 64] |= 1 << (b % 64);
}

/// Whether bucket `b`'s bit is set, as [`mark_bucket`] sets it.
#[inline]
fn has_bucket(bits: &[u64; BUCKETS / 64], b: usize) -> bool {
    (bits[b / 64] >> (b % 64)) & 1 == 1
}

impl PhraseIndex {
    /// Adds phrases (a trailing `*` makes a prefix) for the texts in `scope`; returns their ids.
    /// Call [`PhraseIndex::build`] after the last one.
    pub fn add(&mut self, ps: &[String], fold: bool, scope: u8) -> Vec<u32> {
        ps.iter()
            .map(|p| {
                let prefix = p.ends_with('*');
                let text = p.trim_end_matches('*');
                let text = if fold {
                    text.to_lowercase()
                } else {
                    text.to_string()
                };
                if let Some(i) = self
                    .phrases
                    .iter()
                    .position(|q| q.text == text && q.prefix == prefix && q.fold == fold)
                {
                    self.phrases[i].scope |= scope;
                    return i as u32;
                }
                self.phrases.push(Phrase {
                    text,
                    prefix,
                    fold,
                    scope,
                });
                (self.phrases.len() - 1) as u32
            })
            .collect()
    }

    /// Builds the search tables.
    pub fn build(&mut self) {
        self.blank_first = self
            .phrases
            .iter()
            .any(|p| p.text.as_bytes().first().is_some_and(|&b| b <= b' '));
        for (t, scope) in scope::ALL.into_iter().enumerate() {
            let mut table = ScopeTable {
                short: vec![0; BUCKETS / 64],
                ..ScopeTable::default()
            };
            let mut medium: Vec<(usize, Lead)> = Vec::new();
            let mut long: Vec<(usize, Lead)> = Vec::new();
            let mut shorts: Vec<(usize, u32)> = Vec::new();
            table.first4 = vec![0; BUCKETS / 64];
            for (id, p) in self.phrases.iter().enumerate() {
                let bytes = p.text.as_bytes();
                let Some(&first) = bytes.first() else {
                    continue;
                };
                if p.scope & scope == 0 {
                    continue;
                }
                if bytes.len() >= 4 {
                    let b = bucket(key4(bytes));
                    mark_bucket(&mut table.first4, b);
                }
                if bytes.len() >= 8 {
                    let prefix = fold8(bytes, 0);
                    let lead = Lead {
                        prefix,
                        mask: u64::MAX,
                        id: id as u32,
                    };
                    long.push((bucket8(prefix), lead));
                } else if bytes.len() >= 4 {
                    let mask = (1u64 << (8 * bytes.len())) - 1;
                    let lead = Lead {
                        prefix: fold8(bytes, 0) & mask,
                        mask,
                        id: id as u32,
                    };
                    medium.push((bucket(key4(bytes)), lead));
                } else {
                    let mut four = [0u8; 4];
                    four[..bytes.len()].copy_from_slice(bytes);
                    let key = key4(&four) & SHORT_MASKS[bytes.len() - 1];
                    mark_bucket(&mut table.short, bucket(key));
                    shorts.push((first.to_ascii_lowercase() as usize, id as u32));
                }
            }
            table.medium = LeadTable::new(medium);
            table.long = LeadTable::new(long);
            (table.short_start, table.short_ids) = group(shorts, 256);
            self.tables[t] = table;
        }
    }

    /// Adds to `hits` every phrase of `scope` found in `text` at word boundaries, the first
    /// place of each; `index` says which text this is.
    ///
    /// A blank between two words of a phrase matches any run of whitespace in the text, so a
    /// description wrapped across lines ("pays\n    via x402") or spaced twice still holds the
    /// phrase. Such a text is searched with each run folded to one space, and the hits are
    /// mapped back to where they are in `text`.
    pub fn find(&self, text: &str, index: u32, scope: u8, hits: &mut Vec<PhraseHit>) {
        if self.phrases.is_empty() {
            return;
        }
        let bytes = text.as_bytes();
        if !has_loose_whitespace(bytes) {
            self.find_in(bytes, index, scope, hits);
            return;
        }
        FOLDED.with(|folded| {
            let mut folded = folded.borrow_mut();
            let Folded { text: flat, origin } = &mut *folded;
            fold_with_origin(bytes, flat, origin);
            let before = hits.len();
            self.find_in(flat, index, scope, hits);
            for h in &mut hits[before..] {
                h.start = origin[h.start] as usize;
                h.end = origin[h.end - 1] as usize + 1;
            }
        });
    }

    /// [`PhraseIndex::find`] on a text with no run of whitespace (one [`fold_whitespace`]
    /// made, or one [`has_loose_whitespace`] passed): searched as it is, hits at its offsets.
    pub fn find_folded(&self, text: &str, index: u32, scope: u8, hits: &mut Vec<PhraseHit>) {
        debug_assert!(!has_loose_whitespace(text.as_bytes()), "{text:?}");
        if !self.phrases.is_empty() {
            self.find_in(text.as_bytes(), index, scope, hits);
        }
    }

    /// [`PhraseIndex::find`] on a text taken as it is.
    fn find_in(&self, bytes: &[u8], index: u32, scope: u8, hits: &mut Vec<PhraseHit>) {
        let Some(t) = scope::ALL.iter().position(|&s| s == scope) else {
            debug_assert!(false, "one scope at a time, not {scope}");
            return;
        };
        let table = &self.tables[t];
        // Fixed sizes, so indexing by a byte or a bucket needs no bounds check.
        let short: &[u64; BUCKETS / 64] = table.short.as_slice().try_into().expect("built");
        let first4: &[u64; BUCKETS / 64] = table.first4.as_slice().try_into().expect("built");
        let medium: &[u64; BUCKETS / 64] =
            table.medium.nonempty.as_slice().try_into().expect("built");
        let long: &[u64; BUCKETS / 64] = table.long.nonempty.as_slice().try_into().expect("built");
        let before = hits.len();
        let mut prev_word_carry = 0u64;
        for (c, chunk) in bytes.chunks(64).enumerate() {
            let (word, blank) = match chunk.try_into() {
                Ok(full) => chunk_masks(full),
                Err(_) => {
                    // The last, short chunk: padded with NULs, which are blanks, not words.
                    let mut buf = [0u8; 64];
                    buf[..chunk.len()].copy_from_slice(chunk);
                    chunk_masks(&buf)
                }
            };
            // A phrase cannot start inside a word (this byte and the one before are word
            // bytes), nor at a blank.
            let inside = word & ((word << 1) | prev_word_carry);
            prev_word_carry = word >> 63;
            let base = c * 64;
            let blank = if self.blank_first { 0 } else { blank };
            let mut candidates = !(inside | blank);
            if chunk.len() < 64 {
                candidates &= (1u64 << chunk.len()) - 1;
            }
            // First, without unpredictable branches, keep the places whose leading four bytes
            // fall in a bucket some phrase begins in, or whose byte begins a short phrase.
            let mut kept = [0u32; 64];
            let mut n = 0;
            while candidates != 0 {
                let i = base + candidates.trailing_zeros() as usize;
                candidates &= candidates - 1;
                let key = key4_at(bytes, i);
                let keep = has_bucket(first4, bucket(key)) | short_keys(short, key);
                kept[n] = i as u32;
                n += usize::from(keep);
            }
            // Then look into the buckets only where the leading eight bytes (for long phrases)
            // or four (for the others) pass their own bitmap.
            for &i in &kept[..n] {
                let i = i as usize;
                let here = fold8(bytes, i);
                let b8 = bucket8(here);
                if has_bucket(long, b8) {
                    for lead in table.long.bucket(b8) {
                        if here == lead.prefix {
                            self.check(lead.id, bytes, i, index, hits);
                        }
                    }
                }
                let b4 = bucket(here as u32);
                if has_bucket(medium, b4) {
                    for lead in table.medium.bucket(b4) {
                        if here & lead.mask == lead.prefix {
                            self.check(lead.id, bytes, i, index, hits);
                        }
                    }
                }
                if short_keys(short, here as u32) {
                    let b = bytes[i].to_ascii_lowercase() as usize;
                    let (s, e) = (table.short_start[b], table.short_start[b + 1]);
                    for &id in &table.short_ids[s as usize..e as usize] {
                        self.check(id, bytes, i, index, hits);
                    }
                }
            }
        }
        // In the order the phrases end, so the first hit of a rule is its shortest at a place
        // ("UPDATE" before "UPDATE,"), whatever order the rules list them in.
        hits[before..].sort_by_key(|h| (h.end, h.start));
    }

    /// Records phrase `id` if it occurs at `start` and ends at a word boundary, unless `hits`
    /// has it already.
    fn check(&self, id: u32, bytes: &[u8], start: usize, index: u32, hits: &mut Vec<PhraseHit>) {
        let p = &self.phrases[id as usize];
        let phrase = p.text.as_bytes();
        let end = start + phrase.len();
        let Some(found) = bytes.get(start..end) else {
            return;
        };
        let same = if p.fold {
            found.eq_ignore_ascii_case(phrase)
        } else {
            found == phrase
        };
        let end_ok =
            p.prefix || end == bytes.len() || !is_word(bytes[end]) || !is_word(bytes[end - 1]);
        if same && end_ok && !hits.iter().any(|h| h.id == id) {
            hits.push(PhraseHit {
                id,
                text: index,
                start,
                end,
            });
        }
    }
}

/// A text with its whitespace runs folded, and where each of its bytes came from.
#[derive(Debug, Default)]
struct Folded {
    text: Vec<u8>,
    /// `origin[i]` is the offset in the original text of the folded text's byte `i`.
    origin: Vec<u32>,
}

thread_local! {
    /// Reused by [`PhraseIndex::find`], so folding a text allocates nothing once warm.
    static FOLDED: std::cell::RefCell<Folded> = std::cell::RefCell::new(Folded::default());
}

/// The length in bytes of the whitespace character at `at`, or 0 if there is none: any
/// character Unicode calls white space (`char::is_whitespace`), so a no-break, em or
/// ideographic space, a vertical tab or a form feed stands between words as a space does.
/// NUL is not white space: it separates the schema's texts when they are searched as one, and
/// no phrase runs across two of them.
fn space_len(bytes: &[u8], at: usize) -> usize {
    match bytes.get(at..).unwrap_or_default() {
        [b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c, ..] => 1,
        // U+0085 next line, U+00A0 no-break space.
        [0xc2, 0x85 | 0xa0, ..] => 2,
        // U+1680 ogham space mark.
        [0xe1, 0x9a, 0x80, ..] => 3,
        // U+2000 to U+200A, U+2028 and U+2029 (line and paragraph separators), U+202F.
        [0xe2, 0x80, 0x80..=0x8a | 0xa8 | 0xa9 | 0xaf, ..] => 3,
        // U+205F medium mathematical space.
        [0xe2, 0x81, 0x9f, ..] => 3,
        // U+3000 ideographic space.
        [0xe3, 0x80, 0x80, ..] => 3,
        _ => 0,
    }
}

/// The next place at or after a given offset where one search finds something, remembered
/// so that the search runs again only once the caller has moved past it.
#[derive(Debug, Default)]
struct NextHit {
    /// `None` before the first search; `Some(None)` once nothing is left to find.
    found: Option<Option<usize>>,
}

impl NextHit {
    fn at_or_after(
        &mut self,
        from: usize,
        search: impl FnOnce(usize) -> Option<usize>,
    ) -> Option<usize> {
        match self.found {
            Some(Some(p)) if p >= from => Some(p),
            Some(None) => None,
            _ => {
                let found = search(from);
                self.found = Some(found);
                found
            }
        }
    }
}

/// Where folding has work to do: each search finds candidates with `memchr`'s vectorized
/// searches, as most text has none. Tabs and line breaks; two spaces in a row; vertical tab,
/// form feed and the lead byte of a two-byte space; the lead bytes of three-byte spaces. A
/// lead byte is a candidate only: an em dash starts as an em space does.
#[derive(Debug, Default)]
struct LoosePlaces {
    breaks: NextHit,
    doubled: NextHit,
    narrow: NextHit,
    wide: NextHit,
}

impl LoosePlaces {
    /// The first whitespace character at or after `from` that folding changes.
    fn next(&mut self, bytes: &[u8], mut from: usize) -> Option<usize> {
        static DOUBLED: std::sync::OnceLock<memchr::memmem::Finder<'static>> =
            std::sync::OnceLock::new();
        loop {
            let rest = |from: usize| &bytes[from.min(bytes.len())..];
            let candidates = [
                self.breaks.at_or_after(from, |f| {
                    memchr::memchr3(b'\n', b'\t', b'\r', rest(f)).map(|i| f + i)
                }),
                self.doubled.at_or_after(from, |f| {
                    let finder = DOUBLED.get_or_init(|| memchr::memmem::Finder::new(b"  "));
                    finder.find(rest(f)).map(|i| f + i)
                }),
                self.narrow.at_or_after(from, |f| {
                    memchr::memchr3(0x0b, 0x0c, 0xc2, rest(f)).map(|i| f + i)
                }),
                self.wide.at_or_after(from, |f| {
                    memchr::memchr3(0xe1, 0xe2, 0xe3, rest(f)).map(|i| f + i)
                }),
            ];
            let p = candidates.into_iter().flatten().min()?;
            if space_len(bytes, p) > 0 {
                return Some(p);
            }
            from = p + 1;
        }
    }
}

/// Whether `bytes` has whitespace other than single spaces: a line break, a tab, two spaces in
/// a row, or any other white space character. Such a text is searched folded.
pub fn has_loose_whitespace(bytes: &[u8]) -> bool {
    LoosePlaces::default().next(bytes, 0).is_some()
}

/// A piece of a text as folding sees it.
enum Piece {
    /// Bytes `start..end`, copied whole.
    Kept(usize, usize),
    /// A run of whitespace starting at this byte, which becomes one space.
    Run(usize),
}

/// Hands `each` the pieces of `bytes` in order: the one definition of a run of whitespace that
/// both folds below use.
fn fold_pieces(bytes: &[u8], mut each: impl FnMut(Piece)) {
    let mut places = LoosePlaces::default();
    let mut copied = 0;
    while let Some(p) = places.next(bytes, copied) {
        // A run starts at the space before a tab or line break, if there is one.
        let run_start = if p > copied && bytes[p - 1] == b' ' {
            p - 1
        } else {
            p
        };
        each(Piece::Kept(copied, run_start));
        each(Piece::Run(run_start));
        let mut end = p;
        loop {
            match space_len(bytes, end) {
                0 => break,
                width => end += width,
            }
        }
        copied = end;
    }
    each(Piece::Kept(copied, bytes.len()));
}

/// Appends `text` to `out` with every run of whitespace made one space: the text
/// [`PhraseIndex::find_folded`] searches and evidence quotes. The spans between runs are
/// copied whole; a text without runs is copied as it is.
pub fn fold_whitespace(text: &str, out: &mut String) {
    fold_pieces(text.as_bytes(), |piece| match piece {
        // A run is made of whole characters, so span ends are character boundaries.
        Piece::Kept(start, end) => out.push_str(&text[start..end]),
        Piece::Run(_) => out.push(' '),
    });
}

/// `bytes` into `text` as [`fold_whitespace`] folds it, and into `origin` where each byte of
/// `text` came from.
fn fold_with_origin(bytes: &[u8], text: &mut Vec<u8>, origin: &mut Vec<u32>) {
    text.clear();
    origin.clear();
    fold_pieces(bytes, |piece| match piece {
        Piece::Kept(start, end) => {
            text.extend_from_slice(&bytes[start..end]);
            origin.extend(start as u32..end as u32);
        }
        Piece::Run(at) => {
            text.push(b' ');
            origin.push(at as u32);
        }
    });
}

/// Items tagged with their group (below `groups`) as one list in group order, and where each
/// group starts in it (with the end as a last entry). Within a group, items keep their order.
fn group<T>(mut items: Vec<(usize, T)>, groups: usize) -> (Vec<u32>, Vec<T>) {
    items.sort_by_key(|&(g, _)| g);
    let mut starts = vec![0u32; groups + 1];
    for &(g, _) in &items {
        starts[g + 1] += 1;
    }
    for g in 0..groups {
        starts[g + 1] += starts[g];
    }
    (starts, items.into_iter().map(|(_, item)| item).collect())
}

/// The first four bytes as one number, ASCII case folded by setting the 0x20 bit of each.
/// That also merges a few punctuation pairs (`[` and `{`): fine for a filter, as the compare
/// that follows is exact.
fn key4(bytes: &[u8]) -> u32 {
    u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) | 0x2020_2020
}

/// The four bytes at `at`, case folded as `key4` folds; bytes past the end count as zero.
fn key4_at(bytes: &[u8], at: usize) -> u32 {
    match bytes.get(at..at + 4) {
        Some(four) => key4(four),
        None => {
            let mut buf = [0u8; 4];
            let rest = &bytes[at.min(bytes.len())..];
            buf[..rest.len()].copy_from_slice(rest);
            key4(&buf)
        }
    }
}

/// The bucket of eight leading bytes (folded as `fold8` folds).
fn bucket8(key: u64) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - BUCKET_BITS)) as usize
}

/// The lead bucket of a key.
fn bucket(key: u32) -> usize {
    (key.wrapping_mul(0x9E37_79B1) >> (32 - BUCKET_BITS)) as usize
}

/// Bit masks of 64 bytes: which are word bytes, and which are blanks (space, control).
///
/// On x86-64 sixteen bytes at a time with SSE2, which every x86-64 processor has.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
fn chunk_masks(chunk: &[u8; 64]) -> (u64, u64) {
    // SAFETY: the function only needs SSE2, and this build targets processors that have it
    // (the cfg above).
    unsafe { chunk_masks_sse2(chunk) }
}

/// Bit masks of 64 bytes: which are word bytes, and which are blanks (space, control).
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
fn chunk_masks(chunk: &[u8; 64]) -> (u64, u64) {
    chunk_masks_swar(chunk)
}

/// `chunk_masks` with SSE2: per byte, range tests by a wrapping add and one signed compare.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
fn chunk_masks_sse2(chunk: &[u8; 64]) -> (u64, u64) {
    use std::arch::x86_64::*;
    /// Where `lo <= byte < lo + n` (unsigned): shifted so the range starts at -128, then one
    /// signed compare.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn in_range(v: __m128i, lo: u8, n: u8) -> __m128i {
        let shifted = _mm_add_epi8(v, _mm_set1_epi8(0x80u8.wrapping_sub(lo) as i8));
        _mm_cmplt_epi8(shifted, _mm_set1_epi8((n as i8).wrapping_sub(-128i8)))
    }
    let (mut word, mut blank) = (0u64, 0u64);
    for (k, part) in chunk.chunks_exact(16).enumerate() {
        let lo = u64::from_le_bytes(part[..8].try_into().expect("eight bytes"));
        let hi = u64::from_le_bytes(part[8..].try_into().expect("eight bytes"));
        let v = _mm_set_epi64x(hi as i64, lo as i64);
        let lower = _mm_or_si128(v, _mm_set1_epi8(0x20));
        let w = _mm_or_si128(
            _mm_or_si128(in_range(lower, b'a', 26), in_range(v, b'0', 10)),
            _mm_cmpeq_epi8(v, _mm_set1_epi8(b'_' as i8)),
        );
        let b = in_range(v, 0, b' ' + 1);
        word |= u64::from(_mm_movemask_epi8(w) as u16) << (16 * k);
        blank |= u64::from(_mm_movemask_epi8(b) as u16) << (16 * k);
    }
    (word, blank)
}

/// `chunk_masks` eight bytes at a time in a `u64` (SWAR): a few arithmetic operations per
/// byte and no table loads or branches; see `is_word` for the definition it must agree with.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
fn chunk_masks_swar(chunk: &[u8; 64]) -> (u64, u64) {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    /// Per byte (high bits clear): the high bit is set where the byte is at least `n`.
    fn at_least(y: u64, n: u8) -> u64 {
        y.wrapping_add(u64::from_ne_bytes([0x80 - n; 8])) & HIGH
    }
    /// The high bit of each byte, gathered into the low eight bits.
    fn gather(m: u64) -> u64 {
        ((m >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
    }
    let (mut word, mut blank) = (0u64, 0u64);
    for (k, part) in chunk.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes(part.try_into().expect("eight bytes"));
        let ascii = !x & HIGH;
        let y = x & LOW7;
        let lower = y | 0x2020_2020_2020_2020;
        let alpha = at_least(lower, b'a') & !at_least(lower, b'z' + 1);
        let digit = at_least(y, b'0') & !at_least(y, b'9' + 1);
        let u = y ^ 0x5F5F_5F5F_5F5F_5F5F;
        let underscore = !((u & LOW7).wrapping_add(LOW7) | u) & HIGH;
        let w = (alpha | digit | underscore) & ascii;
        let b = !at_least(y, b' ' + 1) & ascii;
        word |= gather(w) << (8 * k);
        blank |= gather(b) << (8 * k);
    }
    (word, blank)
}

/// A word byte, for phrase boundaries: ASCII letters, digits and `_`.
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(phrases: &[(&str, bool, u8)]) -> PhraseIndex {
        let mut ix = PhraseIndex::default();
        for &(p, fold, scope) in phrases {
            ix.add(&[p.to_string()], fold, scope);
        }
        ix.build();
        ix
    }

    fn found(ix: &PhraseIndex, text: &str, scope: u8) -> Vec<(u32, usize, usize)> {
        let mut hits = Vec::new();
        ix.find(text, 0, scope, &mut hits);
        hits.iter().map(|h| (h.id, h.start, h.end)).collect()
    }

    #[test]
    fn chunk_masks_agree_with_byte_tests() {
        let bytes: Vec<u8> = (0..=255u8).collect();
        for chunk in bytes.chunks_exact(64) {
            let chunk: &[u8; 64] = chunk.try_into().unwrap();
            for (word, blank) in [chunk_masks(chunk), chunk_masks_swar(chunk)] {
                for (j, &b) in chunk.iter().enumerate() {
                    assert_eq!(word >> j & 1 == 1, is_word(b), "word {b:#x}");
                    assert_eq!(blank >> j & 1 == 1, b <= b' ', "blank {b:#x}");
                }
            }
        }
        let mut chunk = [0u8; 64];
        chunk[..5].copy_from_slice(b"ab_9 ");
        assert_eq!(chunk_masks(&chunk).0, 0b01111);
    }

    #[test]
    fn finds_phrases_at_word_boundaries_only() {
        use scope::DESCRIPTION as D;
        let ix = index(&[
            ("delete", true, D),
            ("db", true, D),
            ("exfiltrat*", true, D),
        ]);
        assert_eq!(found(&ix, "Deletes a row", D), vec![]);
        assert_eq!(found(&ix, "will DELETE it", D), vec![(0, 5, 11)]);
        assert_eq!(found(&ix, "undelete", D), vec![]);
        assert_eq!(found(&ix, "the db.", D), vec![(1, 4, 6)]);
        assert_eq!(found(&ix, "dbs", D), vec![]);
        assert_eq!(found(&ix, "then exfiltrates", D), vec![(2, 5, 14)]);
    }

    #[test]
    fn a_blank_of_a_phrase_matches_any_run_of_whitespace() {
        use scope::DESCRIPTION as D;
        let ix = index(&[("pays via x402", true, D), ("rm -rf", false, D)]);
        assert_eq!(found(&ix, "It pays via x402.", D), vec![(0, 3, 16)]);
        // Wrapped as a docstring wraps, spaced twice, tabbed: found, at the original offsets.
        assert_eq!(found(&ix, "It pays\n    via x402.", D), vec![(0, 3, 20)]);
        assert_eq!(found(&ix, "It  pays  via\r\n\tx402", D), vec![(0, 4, 20)]);
        assert_eq!(found(&ix, "run  rm \n -rf /", D), vec![(1, 5, 13)]);
        // A run before the phrase moves where it starts, not whether it is found.
        assert_eq!(found(&ix, "\n\n  pays via x402", D), vec![(0, 4, 17)]);
        // Words still have to be apart, and a NUL (between schema texts) is not a space.
        assert_eq!(found(&ix, "paysvia x402", D), vec![]);
        assert_eq!(found(&ix, "pays\0via x402", D), vec![]);
        // Multi-byte text around a run stays whole.
        assert_eq!(found(&ix, "é  pays\nvia x402 ü", D), vec![(0, 4, 17)]);
        // A no-break, em or ideographic space stands between words as a space does; an em
        // dash or a zero-width space does not.
        assert_eq!(found(&ix, "pays\u{a0}via x402", D), vec![(0, 0, 14)]);
        assert_eq!(
            found(&ix, "pays \u{2003}via\u{3000}x402", D),
            vec![(0, 0, 18)]
        );
        assert_eq!(found(&ix, "pays\u{2014}via x402", D), vec![]);
        assert_eq!(found(&ix, "pays\u{200b}via x402", D), vec![]);
    }

    #[test]
    fn a_whitespace_character_is_what_unicode_calls_white_space() {
        let mut buf = [0u8; 4];
        for c in (0..=char::MAX as u32).filter_map(char::from_u32) {
            let encoded = c.encode_utf8(&mut buf).as_bytes();
            let expected = if c.is_whitespace() { encoded.len() } else { 0 };
            assert_eq!(space_len(encoded, 0), expected, "{c:?}");
        }
    }

    #[test]
    fn folding_makes_each_run_of_whitespace_one_space_and_knows_where_bytes_came_from() {
        let naive = |t: &str| {
            let mut out = String::new();
            let mut in_run = false;
            for c in t.chars() {
                if c.is_whitespace() {
                    if !in_run {
                        out.push(' ');
                    }
                    in_run = true;
                } else {
                    out.push(c);
                    in_run = false;
                }
            }
            out
        };
        for t in [
            "",
            " ",
            "  ",
            "a",
            "a b",
            "a  b",
            " a\n",
            "\n\n",
            "a \n b",
            "a\t\tb  c \r\n d ",
            "é  ü\n\u{a0}x",
            "a\u{a0}b",
            "a \u{2003}\u{3000} b\u{85}c\u{2028}",
            "dash\u{2014}and \u{201c}quotes\u{201d} \u{200b}zero-width",
            "\u{0b}vt\u{0c}ff\u{1680}\u{205f}\u{202f}",
            "\u{e2}\u{e3}\u{c2}",
            "one two  three\nfour\tfive   six",
            "x\0 \0y",
            "  lead",
            "trail \n",
        ] {
            let mut folded = String::new();
            fold_whitespace(t, &mut folded);
            assert_eq!(folded, naive(t), "{t:?}");
            assert_eq!(has_loose_whitespace(t.as_bytes()), folded != t, "{t:?}");
            let (mut flat, mut origin) = (Vec::new(), Vec::new());
            fold_with_origin(t.as_bytes(), &mut flat, &mut origin);
            assert_eq!(flat, folded.as_bytes(), "{t:?}");
            for (i, &o) in origin.iter().enumerate() {
                let b = t.as_bytes()[o as usize];
                assert!(
                    b == flat[i] || (flat[i] == b' ' && space_len(t.as_bytes(), o as usize) > 0),
                    "{t:?} at {i}"
                );
            }
        }
    }

    #[test]
    fn punctuation_phrases_start_anywhere_and_overlaps_are_all_found() {
        use scope::DESCRIPTION as D;
        let ix = index(&[
            ("~/.ssh", true, D),
            (".ssh/id_rsa", true, D),
            ("id_rsa", true, D),
            ("<important>", true, D),
        ]);
        let hits = found(&ix, "read ~/.ssh/id_rsa then", D);
        assert_eq!(hits, vec![(0, 5, 11), (1, 7, 18), (2, 12, 18)]);
        assert_eq!(found(&ix, "x<IMPORTANT>y", D), vec![(3, 1, 12)]);
    }

    #[test]
    fn case_scope_and_chunk_edges() {
        use scope::{DESCRIPTION as D, SCHEMA as S};
        let ix = index(&[("Ignore Me", false, D), ("keep this secret", true, D | S)]);
        assert_eq!(found(&ix, "ignore me", D), vec![]);
        assert_eq!(found(&ix, "Ignore Me", D), vec![(0, 0, 9)]);
        assert_eq!(found(&ix, "Ignore Me", S), vec![]);
        // A phrase straddling the 64-byte chunk boundary, and one inside a word there.
        let text = format!("{}keep this secret", "a ".repeat(30));
        assert_eq!(found(&ix, &text, S), vec![(1, 60, 76)]);
        let text = format!("{}keep this secret", "a".repeat(62));
        assert_eq!(found(&ix, &text, S), vec![]);
    }

    /// Every occurrence the slow way: each phrase at each byte, with the same boundary rules.
    fn naive(ix: &PhraseIndex, text: &str, scope: u8) -> Vec<(u32, usize, usize)> {
        let b = text.as_bytes();
        let mut out: Vec<(u32, usize, usize)> = Vec::new();
        for (id, p) in ix.phrases.iter().enumerate() {
            if p.scope & scope == 0 {
                continue;
            }
            let ph = p.text.as_bytes();
            for i in 0..b.len() {
                let Some(found) = b.get(i..i + ph.len()) else {
                    break;
                };
                let same = if p.fold {
                    found.eq_ignore_ascii_case(ph)
                } else {
                    found == ph
                };
                let end = i + ph.len();
                let start_ok = i == 0 || !is_word(b[i - 1]) || !is_word(b[i]);
                let end_ok = p.prefix || end == b.len() || !is_word(b[end]) || !is_word(b[end - 1]);
                if same && start_ok && end_ok {
                    out.push((id as u32, i, end));
                    break;
                }
            }
        }
        out.sort_by_key(|&(_, s, e)| (e, s));
        out
    }

    #[test]
    fn agrees_with_a_naive_search_on_generated_text() {
        use scope::{DESCRIPTION as D, SCHEMA as S};
        let ix = index(&[
            ("the user", true, D),
            ("the", true, D | S),
            ("user's", true, D),
            ("ab", true, D),
            ("b", true, S),
            ("ER", false, D | S),
            ("sa*", true, S),
            ("~/.ssh", true, D | S),
            ("DROP", false, D),
            ("drop table*", true, D),
            ("x_y", true, D),
            (" lead", true, D),
        ]);
        // A small alphabet so phrases, near misses and boundaries all turn up often.
        let alphabet = b"theusr'sabTHEUDROPdrop table~/.ssh x_y\n-_.lead\xc3\xa9";
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        for round in 0..3000 {
            let len = (round % 150) + 1;
            let mut text = Vec::with_capacity(len);
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push(alphabet[(seed % alphabet.len() as u64) as usize]);
            }
            let text = String::from_utf8_lossy(&text).into_owned();
            for scope in [D, S] {
                let mut got = found(&ix, &text, scope);
                got.sort_by_key(|&(_, s, e)| (e, s));
                assert_eq!(got, naive(&ix, &text, scope), "{text:?} scope {scope}");
            }
        }
    }
}
