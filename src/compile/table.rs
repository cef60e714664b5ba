//! Path rules matched by hash lookups instead of automata: those whose
//! matching form is a literal tied to segment boundaries.
//!
//! Three shapes (see [`super::glob`] for the matching form, the relative
//! path followed by one `/`):
//!
//! - *prefix*: an anchored literal ending with `/` (`a/b/c`, the exact
//!   path or anything under it), optionally followed by one more byte
//!   (`dir/**`: something under it). The query looks up its own prefixes
//!   that end before a `/` (or at its end). Keys and texts leave out the
//!   final `/`.
//! - *name*: an any-depth literal of one segment (`**/name`, `name`): the
//!   query looks up each of its segments.
//! - *extension*: an any-depth `*` followed by a literal of one segment
//!   that holds a `.` (`**/*.ext`, `*.test.tsx`): keyed by its final
//!   extension (from its last `.`), which is the final extension of every
//!   segment it matches; the query looks up each segment's final extension
//!   and checks that the segment ends with the whole literal.
//!
//! A query so does a few hash lookups per segment and walks no automaton
//! for these rules; the anchored trie and the any-depth automata they
//! would otherwise fill were most of a novel path query's time at 10,000
//! rules (BENCHMARKS.md, "Compiled matchers"). It hashes each segment once
//! and chains the hash of each path prefix from them, and stops looking up
//! prefixes past one that no key continues. It folds and scans its path
//! eight bytes at a time into caller-owned scratch (the folded path
//! followed by zero bytes, so that every word it loads is whole, and the
//! segments, as many as the path has), and compares keys a word at a
//! time.
//!
//! Case-insensitive rules are tabled when every character of their
//! literal that is not ASCII has no other case forms (see
//! [`caseless_beyond_ascii`]), under its ASCII lower case. Every key (case-sensitive ones too) is indexed
//! folded and the query folds its path once (ASCII letters, `K` KELVIN
//! SIGN → `k`, `ſ` LONG S → `s`, see [`super::route`]), each
//! case-sensitive entry comparing its text with the path as it is — or,
//! when folding changed nothing in the path, only checking that folding
//! changes nothing in its text (flagged at build).
//! Folding keeps every `/` where it is (the two non-ASCII folds are of
//! multi-byte characters without a `/` byte), so the segments of the
//! folded path are those of the path.

use super::lazy::parse_hex_escape;
use super::route::{ByteMap, fold_into};

/// The shape of a tabled rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TableKind {
    /// Anchored literal ending with `/`.
    Prefix,
    /// Any-depth single-segment literal.
    Name,
    /// Any-depth `*` + single-segment literal holding a `.`.
    Ext,
}

/// One tabled rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) id: u32,
    /// What is compared: the literal as it is (case-sensitive) or in ASCII
    /// lower case (`folded`).
    pub(crate) text: Box<[u8]>,
    /// Case-insensitive.
    pub(crate) folded: bool,
    /// Prefix rules: what must follow the literal's `/`.
    pub(crate) tail: Tail,
}

/// What a prefix rule asks of the rest of the path, after its literal's
/// `/`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tail {
    /// Nothing (the path itself, or anything under it).
    Free,
    /// Something (`dir/**`: anything under it).
    More,
    /// The next segment ends with this text (`dir/*.ext`).
    Child(Box<[u8]>),
    /// Some later segment ends with this text (`dir/**/*.ext`).
    Deep(Box<[u8]>),
}

/// One shape's table: an open-addressing index from the 64-bit hash of a
/// key (taken of its folded form, see [`hash_key`]) to the key's group of
/// entries.
///
/// Written here rather than with a standard `HashMap` because a query
/// looks up every segment of a path up to three times and almost every
/// lookup misses: with the hash of each segment computed once (and the
/// hash of each path prefix chained from them, not recomputed over the
/// whole prefix), a miss is one load and compare of a 16-byte slot, where
/// a map keyed by byte strings hashes the key again and probes its groups.
#[derive(Clone, Debug, Default)]
pub(crate) struct Table {
    /// `(hash, value)`, a power of two of them (or none); hash 0 is an
    /// empty slot; at least half are empty.
    /// A value is a group index, or [`NO_GROUP`], with [`LONGER`] set when
    /// some key of the table continues the hashed text with more segments
    /// (prefix tables).
    slots: Box<[(u64, u32)]>,
    /// Folded key → its entries, in key order, each with the [`ext_code`]
    /// of its tail (prefix rules whose tail is a segment ending: a query
    /// compares it with its segments' codes before comparing text;
    /// [`NO_CODE`] otherwise), uncoded entries first, then by their code's
    /// bit and code.
    groups: Box<[Group]>,
    /// Name and extension tables: a filter of the slots' hashes (a bit of
    /// one word per hash, see [`filter_bits`]), in which a lookup that
    /// misses usually finds a bit clear and stops without probing;
    /// empty for prefix tables (whose lookups mostly find their key).
    filter: Box<[u64]>,
}

/// The word (an index, to be masked) and the bit of a hash in a table's
/// filter: bits of the hash's high half (see [`slot_of`]).
#[inline]
fn filter_bits(h: u64) -> (usize, u64) {
    ((h >> 32) as usize, 1u64 << (h >> 58))
}

/// The entries of one key; aligned to a cache line (and as long as one),
/// so that a lookup that finds one reads one line of it.
#[derive(Clone, Debug)]
#[repr(align(64))]
struct Group {
    /// The key, folded (see the module documentation), followed by
    /// [`PAD`] zero bytes (compared a word at a time).
    padded: Box<[u8]>,
    entries: Box<[Item]>,
    /// The coded entries are sorted by their code's bit (then by code):
    /// where the run of each bit set in `codes` starts among them, in bit
    /// order, then their count (empty without coded entries). The run of
    /// a bit is found by the number of bits set below it.
    starts: Box<[u32]>,
    /// The key's length.
    key_len: u32,
    /// How many entries lead `entries` with [`NO_CODE`].
    plain: u32,
    /// A bit per code of the coded entries (`1 << code_bit(code)`): a query
    /// looks at them only for a segment whose code's bit is set.
    codes: u64,
}

impl Group {
    /// The key, folded.
    fn key(&self) -> &[u8] {
        self.padded.get(..self.key_len as usize).unwrap_or_default()
    }
}

/// An entry of a group.
#[derive(Clone, Debug)]
struct Item {
    e: Entry,
    /// The [`ext_code`] of its tail, or [`NO_CODE`].
    code: u64,
    /// Its text is its own fold (no ASCII capital, or case-insensitive).
    lower: bool,
    /// A coded tail of at most eight bytes as a little-endian word, and
    /// its length (0 for any other tail): compared with the end of a
    /// folded segment a word at a time.
    tail_word: u64,
    tail_len: usize,
}

/// A slot value without a group (only [`LONGER`]).
const NO_GROUP: u32 = u32::MAX >> 1;
/// A slot value's flag: keys continue this text.
const LONGER: u32 = 1 << 31;

/// The code of a tail that is not filtered by extension.
const NO_CODE: u64 = 0;
/// The code of a segment without a `.`.
const NO_EXT: u64 = 1;

/// The 8 bytes of `f` from `i` as a little-endian word; 0 past its end.
/// Query texts carry [`PAD`] zero bytes after their end, so every word
/// a query loads from inside its text is whole.
#[inline]
fn word_at(f: &[u8], i: usize) -> u64 {
    f.get(i..i.wrapping_add(8))
        .and_then(|x| <[u8; 8]>::try_from(x).ok())
        .map_or(0, u64::from_le_bytes)
}

/// Zero bytes after a query's folded text (see [`word_at`]).
const PAD: usize = 8;

/// The multiplier of the word steps of [`hash_span`].
const K: u64 = 0x9E37_79B9_7F4A_7C15;
/// The state of [`hash_span`] before its first word.
const SEED: u64 = 0x1319_8A2E_0370_7344;

/// One word step of [`hash_span`].
#[inline]
fn mix(h: u64, w: u64) -> u64 {
    (h.rotate_left(5) ^ w).wrapping_mul(K)
}

/// The last step of [`hash_span`]: the length of the text and a final
/// multiply, whose high half (which indexes tables and filters, see
/// [`slot_of`]) depends on every bit of the state. Never 0 (an empty
/// slot).
#[inline]
fn finish(h: u64, len: usize) -> u64 {
    (h ^ len as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9) | 1
}

/// The first slot of a hash in a table of `mask + 1` slots: bits of its
/// high half (the low bits of a product depend only on the low bits of
/// its factors).
#[inline]
fn slot_of(h: u64, mask: usize) -> usize {
    (h >> 32) as usize & mask
}

/// The bit of an [`ext_code`] among a group's code bits: its top six.
#[inline]
fn code_bit(code: u64) -> u64 {
    code >> 58
}

/// The hash of `f[s..e]` (a folded key, segment or extension), read a
/// word at a time from `f`, which holds at least [`PAD`] bytes after `e`
/// (the last word is masked to the text): [`mix`] of each whole word
/// from `s`, then of the masked last one when the text is not a whole
/// number of words, then [`finish`]. Never 0 (an empty slot).
#[inline]
fn hash_span(f: &[u8], s: usize, e: usize) -> u64 {
    let mut h = SEED;
    let mut i = s;
    while i + 8 <= e {
        h = mix(h, word_at(f, i));
        i += 8;
    }
    if i < e {
        let keep = (e - i) * 8;
        h = mix(h, word_at(f, i) & ((1u64 << keep) - 1));
    }
    finish(h, e.saturating_sub(s))
}

/// Whether `f[s..e]` is the first `e - s` bytes of `key`, both followed
/// by at least [`PAD`] bytes, compared a word at a time (the caller has
/// compared the lengths).
#[inline]
fn eq_span(key: &[u8], f: &[u8], s: usize, e: usize) -> bool {
    let n = e.saturating_sub(s);
    if n < 8 {
        let diff = word_at(key, 0) ^ word_at(f, s);
        return diff & !(u64::MAX << (8 * n)) == 0;
    }
    let (Some(a), Some(b)) = (key.get(..n), f.get(s..e)) else {
        return false;
    };
    // Whole words, then the last eight bytes (overlapping the last whole
    // word when the length is not a multiple of eight).
    let word = |x: &[u8]| <[u8; 8]>::try_from(x).map_or(0, u64::from_le_bytes);
    a.chunks_exact(8)
        .zip(b.chunks_exact(8))
        .all(|(x, y)| word(x) == word(y))
        && a.get(n - 8..).map(word) == b.get(n - 8..).map(word)
}

/// [`hash_span`] of a whole text (at build and load), read from it
/// without padding: the same words, the last one gathered byte by byte.
fn hash_key(text: &[u8]) -> u64 {
    let mut h = SEED;
    let mut words = text.chunks_exact(8);
    for c in &mut words {
        h = mix(h, <[u8; 8]>::try_from(c).map_or(0, u64::from_le_bytes));
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        h = mix(
            h,
            rest.iter().rev().fold(0u64, |w, &b| w << 8 | u64::from(b)),
        );
    }
    finish(h, text.len())
}

/// The hash of a path prefix, chained from the hash of the prefix before
/// its last segment (`prev`, [`CHAIN_START`] for the first) and of that
/// segment's text. Never 0.
#[inline]
fn chain(prev: u64, seg: u64) -> u64 {
    (prev.rotate_left(21) ^ seg).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1
}

/// The chain of the empty prefix.
const CHAIN_START: u64 = 0x243F_6A88_85A3_08D3;

/// The chained hash of a folded key of several `/`-separated segments.
fn chain_of(key: &[u8]) -> u64 {
    key.split(|&b| b == b'/')
        .fold(CHAIN_START, |h, seg| chain(h, hash_key(seg)))
}

/// A filter code of a segment's final extension (from its last `.`, of
/// the folded text): a segment that ends with a tail holding a `.` has the
/// tail's final extension, so equal codes are necessary for a match, and
/// the text comparison that decides is done only for them. Never
/// [`NO_CODE`]; [`NO_EXT`] without a `.`. It is also the hash under which
/// the extension table indexes an extension.
#[inline]
fn ext_code(text: &[u8]) -> u64 {
    code_of_ext(final_ext(text))
}

/// [`ext_code`] of a final extension found already.
#[inline]
fn code_of_ext(ext: Option<&[u8]>) -> u64 {
    match ext {
        Some(ext) => hash_key(ext).max(2),
        None => NO_EXT,
    }
}

/// Whether every character of the UTF-8 text `t` that is not ASCII
/// matches only itself when case is ignored, as the automata read
/// `(?i:…)` (its case-insensitive regex is a literal, not a class): then
/// the text, its ASCII letters in lower case, matches a folded path
/// exactly where the text matches the path ignoring case. `K` KELVIN SIGN,
/// `ſ` LONG S and every other character with case forms are not.
pub(crate) fn caseless_beyond_ascii(t: &[u8]) -> bool {
    if t.is_ascii() {
        return true;
    }
    let Ok(text) = std::str::from_utf8(t) else {
        return false;
    };
    let cfg = regex_automata::util::syntax::Config::new()
        .utf8(false)
        .unicode(true);
    text.chars().filter(|c| !c.is_ascii()).all(|c| {
        let re = format!("(?i:\\x{{{:X}}})", u32::from(c));
        regex_automata::util::syntax::parse_with(&re, &cfg)
            .is_ok_and(|h| h.properties().is_literal())
    })
}

/// Folds `text` as the keys are (see the module documentation).
fn folded(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    fold_into(text, &mut out);
    out
}

impl Table {
    /// Builds a table of `entries`.
    fn build(entries: Vec<Entry>, kind: TableKind) -> Table {
        // Keyed by the folded key followed by `PAD` zero bytes (the
        // group's `padded`).
        let mut grouped: ByteMap<Vec<Item>> = ByteMap::default();
        for e in entries {
            let code = match &e.tail {
                Tail::Child(x) | Tail::Deep(x) if x.contains(&b'.') => ext_code(&folded(x)),
                _ => NO_CODE,
            };
            let (tail_word, tail_len) = match &e.tail {
                Tail::Child(x) | Tail::Deep(x) if code != NO_CODE && x.len() <= 8 => {
                    let w = x.iter().rev().fold(0u64, |w, &b| w << 8 | u64::from(b));
                    (w, x.len())
                }
                _ => (0, 0),
            };
            let k = match kind {
                TableKind::Ext => final_ext(&e.text).unwrap_or(&e.text),
                _ => &e.text,
            };
            let mut padded = Vec::with_capacity(k.len() + PAD);
            fold_into(k, &mut padded);
            padded.extend_from_slice(&[0; PAD]);
            grouped
                .entry(padded.into_boxed_slice())
                .or_default()
                .push(Item {
                    lower: e.folded || *folded(&e.text) == *e.text,
                    e,
                    code,
                    tail_word,
                    tail_len,
                });
        }
        // Uncoded entries first, then by their code's bit and code (a query
        // finds the run of a bit); stable, and groups in key order, so images
        // are written in a fixed order.
        let mut groups: Vec<Group> = grouped
            .into_iter()
            .map(|(padded, mut v)| {
                // (The code's bit is its top bits: uncoded entries, code 0, first.)
                v.sort_by_key(|it| it.code);
                let plain = v.iter().take_while(|it| it.code == NO_CODE).count();
                let coded = v.get(plain..).unwrap_or_default();
                let codes = coded.iter().fold(0u64, |m, it| m | 1 << code_bit(it.code));
                // (Nothing, without coded entries: most groups.)
                let mut starts = Vec::new();
                if !coded.is_empty() {
                    for (i, it) in coded.iter().enumerate() {
                        let bit = code_bit(it.code);
                        if i == 0 || coded.get(i - 1).is_some_and(|p| code_bit(p.code) != bit) {
                            starts.push(u32::try_from(i).unwrap_or(u32::MAX));
                        }
                    }
                    starts.push(u32::try_from(coded.len()).unwrap_or(u32::MAX));
                }
                let key_len = u32::try_from(padded.len().saturating_sub(PAD)).unwrap_or(u32::MAX);
                Group {
                    padded,
                    entries: v.into_boxed_slice(),
                    starts: starts.into_boxed_slice(),
                    key_len,
                    plain: u32::try_from(plain).unwrap_or(u32::MAX),
                    codes,
                }
            })
            .collect();
        groups.sort_by(|a, b| a.key().cmp(b.key()));
        let mut items: Vec<(u64, u32)> = Vec::with_capacity(groups.len());
        let mut inner = std::collections::HashSet::new();
        if kind == TableKind::Prefix {
            for g in groups.iter() {
                // Every proper prefix of the key at a segment boundary:
                // a query goes on looking up longer prefixes only past
                // one of these.
                // Kept by hash alone: a lookup of a prefix without a
                // group of its own goes by its hash, and a flag on a slot
                // whose hash another text shares only makes a query look
                // further.
                let mut h = CHAIN_START;
                for (p, head) in g.key().split(|&b| b == b'/').enumerate() {
                    if p > 0 {
                        inner.insert(h);
                    }
                    h = chain(h, hash_key(head));
                }
            }
        }
        for (gi, g) in groups.iter().enumerate() {
            let h = match kind {
                TableKind::Prefix => chain_of(g.key()),
                TableKind::Name => hash_key(g.key()),
                TableKind::Ext => code_of_ext(Some(g.key())),
            };
            // A key that is also a proper prefix of another carries the
            // flag on its own slot.
            let longer = inner.remove(&h);
            let v = u32::try_from(gi).unwrap_or(NO_GROUP).min(NO_GROUP);
            items.push((h, if longer { v | LONGER } else { v }));
        }
        items.extend(inner.into_iter().map(|h| (h, NO_GROUP | LONGER)));
        let cap = (items.len() * 2).next_power_of_two().max(8);
        let mut slots = vec![(0u64, 0u32); cap].into_boxed_slice();
        let mask = cap - 1;
        for (h, v) in items {
            let mut i = slot_of(h, mask);
            while let Some(slot) = slots.get_mut(i) {
                if slot.0 == 0 {
                    *slot = (h, v);
                    break;
                }
                i = (i + 1) & mask;
            }
        }
        let mut filter = Vec::new();
        if kind != TableKind::Prefix && groups.is_empty() {
            // One clear word: every lookup stops at the filter.
            filter = vec![0];
        } else if kind != TableKind::Prefix {
            // About 32 bits a key.
            filter = vec![0u64; groups.len().div_ceil(2).next_power_of_two()];
            let fmask = filter.len() - 1;
            for &(h, _) in slots.iter().filter(|s| s.0 != 0) {
                let (w, bits) = filter_bits(h);
                if let Some(x) = filter.get_mut(w & fmask) {
                    *x |= bits;
                }
            }
        }
        Table {
            slots,
            groups: groups.into_boxed_slice(),
            filter: filter.into_boxed_slice(),
        }
    }

    /// Whether some slot may have the hash `h`: false only when none has
    /// (a table without a filter answers true).
    #[inline(always)]
    fn may_hold(&self, h: u64) -> bool {
        let (w, bit) = filter_bits(h);
        let fmask = self.filter.len().wrapping_sub(1);
        self.filter.get(w & fmask).is_none_or(|x| x & bit != 0)
    }

    /// The index of the group of the key `f[s..e]` (folded; `f` padded)
    /// of hash `h`, and whether some key continues it (prefix tables).
    #[inline(always)]
    fn get(&self, h: u64, f: &[u8], s: usize, e: usize) -> (Option<usize>, bool) {
        let mut longer = false;
        // (A power of two: the masked index is always in bounds.)
        let slots = &*self.slots;
        let mask = slots.len().wrapping_sub(1);
        let mut i = slot_of(h, mask);
        while let Some(&(sh, v)) = slots.get(i) {
            if sh == 0 {
                break;
            }
            if sh == h {
                longer |= v & LONGER != 0;
                let gi = (v & !LONGER) as usize;
                let Some(g) = self.groups.get(gi) else {
                    // A slot without a group has a hash that no key has (a
                    // key of the same hash carries the flag on its own slot).
                    return (None, longer);
                };
                // Keys are distinct, and a key's own slot carries its
                // flag: nothing after it can add to the answer.
                if g.key_len as usize == e.wrapping_sub(s) && eq_span(&g.padded, f, s, e) {
                    return (Some(gi), longer);
                }
            }
            i = (i + 1) & mask;
        }
        (None, longer)
    }

    /// The group of an index [`Table::get`] returned.
    #[inline]
    fn group(&self, i: usize) -> Option<&Group> {
        self.groups.get(i)
    }

    /// Rebuilds the table from entries read back from an image (keys are
    /// derived, never read).
    pub(crate) fn from_entries(entries: Vec<Entry>, kind: TableKind) -> Table {
        Table::build(entries, kind)
    }

    /// Every entry, in a stable order (for images).
    pub(crate) fn entries(&self) -> Vec<&Entry> {
        self.groups
            .iter()
            .flat_map(|g| g.entries.iter().map(|it| &it.e))
            .collect()
    }

    fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    fn len(&self) -> usize {
        self.groups.iter().map(|g| g.entries.len()).sum()
    }

    /// Heap bytes (approximate).
    pub(crate) fn memory_usage(&self) -> usize {
        self.slots.len() * 16
            + self.filter.len() * 8
            + self
                .groups
                .iter()
                .map(|g| {
                    g.padded.len()
                        + g.starts.len() * 4
                        + size_of::<Group>()
                        + g.entries
                            .iter()
                            .map(|it| it.e.text.len() + size_of::<Item>())
                            .sum::<usize>()
                })
                .sum::<usize>()
    }
}

/// Whether the rest of the path `q` after the segment `me`, which ends a
/// prefix rule's literal, is what its tail asks for (compared folded when
/// the rule is case-insensitive).
#[inline]
fn tail_fits(tail: &Tail, folded: bool, q: &Query<'_>, me: &Seg) -> bool {
    match tail {
        Tail::Free => true,
        // Something after the segment's `/`.
        Tail::More => me.oe + 1 < q.hay.len(),
        _ => tail_fits_rest(tail, folded, q, me),
    }
}

/// [`tail_fits`] for a tail that asks for a segment ending (without a
/// `.`, so not searched by code).
#[inline(never)]
fn tail_fits_rest(tail: &Tail, folded: bool, q: &Query<'_>, me: &Seg) -> bool {
    let rest = || q.hay.get(me.oe + 1..).unwrap_or_default();
    let r = || {
        if folded {
            q.f.get(me.se + 1..q.n).unwrap_or_default()
        } else {
            rest()
        }
    };
    match tail {
        Tail::Free => true,
        Tail::More => !rest().is_empty(),
        Tail::Child(t) => {
            let r = r();
            let seg = r.split(|&b| b == b'/').next().unwrap_or_default();
            !r.is_empty() && seg.ends_with(t)
        }
        Tail::Deep(t) => {
            let r = r();
            !r.is_empty() && r.split(|&b| b == b'/').any(|seg| seg.ends_with(t))
        }
    }
}

/// The final extension of a segment: from its last `.`.
fn final_ext(seg: &[u8]) -> Option<&[u8]> {
    let i = seg.iter().rposition(|&b| b == b'.')?;
    seg.get(i..)
}

/// The tabled rules of one path matcher.
#[derive(Clone, Debug, Default)]
pub(crate) struct PathTables {
    pub(crate) prefix: Table,
    pub(crate) name: Table,
    pub(crate) ext: Table,
}

/// Decodes a regex in matching form that is a plain literal (ASCII
/// letters and digits, `/`, `\x{H}` escapes) up to `rest`; `None` when an
/// escape is not a character.
fn decode(re: &str) -> Option<(Vec<u8>, &str)> {
    let mut out = Vec::new();
    let mut i = 0;
    let b = re.as_bytes();
    while let Some(&c) = b.get(i) {
        if c == b'\\' {
            let (ch, len) = parse_hex_escape(re.get(i..)?)?;
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            i += len;
        } else if c.is_ascii_alphanumeric() || c == b'/' {
            out.push(c);
            i += 1;
        } else {
            break;
        }
    }
    Some((out, re.get(i..)?))
}

/// `"one more byte"`, as [`super::glob`] writes a final `**`.
const ONE_MORE: &str = "(?s-u:.)";

/// A run inside one segment, as [`super::glob`] writes `*`.
const SEG_RUN: &str = "(?-u:[^/])*";
/// Zero or more whole segments, as [`super::glob`] writes an inner `**`.
const SEGS: &str = "(?:(?-u:[^/])*/)*";

/// The literal of a `*LIT/` tail: one segment's text, not empty.
fn star_tail(rest: &str) -> Option<Vec<u8>> {
    let (mut lit, end) = decode(rest.strip_prefix(SEG_RUN)?)?;
    if !end.is_empty() || lit.pop() != Some(b'/') {
        return None;
    }
    (!lit.is_empty() && !lit.contains(&b'/')).then_some(lit)
}

/// Whether a path regex in matching form, walked as `walk` says, is a
/// tabled shape; its table and entry.
pub(crate) fn classify(
    re: &str,
    walk: super::matcher::Walk,
    shape: super::lower::Shape,
    id: u32,
) -> Option<(TableKind, Entry)> {
    use super::lower::Shape;
    use super::matcher::Walk;
    let (inner, folded) = match re.strip_prefix("(?i:").and_then(|r| r.strip_suffix(')')) {
        Some(inner) => (inner, true),
        None => (re, false),
    };
    let (lit, rest) = decode(inner)?;
    let (last, body) = lit.split_last()?;
    if *last != b'/' || body.is_empty() {
        return None;
    }
    let one_segment = !body.contains(&b'/');
    let (kind, tail) = match (walk, shape, rest) {
        (Walk::Fwd, Shape::Pure, "") => (TableKind::Prefix, Tail::Free),
        (Walk::Fwd, Shape::Pure, ONE_MORE) => (TableKind::Prefix, Tail::More),
        (Walk::Fwd, Shape::Pure, _) => (TableKind::Prefix, Tail::Child(star_tail(rest)?.into())),
        (Walk::Fwd, Shape::Tracking, _) => (
            TableKind::Prefix,
            Tail::Deep(star_tail(rest.strip_prefix(SEGS)?)?.into()),
        ),
        (Walk::Seg, Shape::Pure, "") if one_segment => (TableKind::Name, Tail::Free),
        (Walk::SegRev, Shape::Pure, "") if one_segment && body.contains(&b'.') => {
            (TableKind::Ext, Tail::Free)
        }
        _ => return None,
    };
    let fold = |t: &[u8]| -> Option<Box<[u8]>> {
        if !folded {
            return Some(t.into());
        }
        caseless_beyond_ascii(t).then(|| t.to_ascii_lowercase().into_boxed_slice())
    };
    let tail = match tail {
        Tail::Child(t) => Tail::Child(fold(&t)?),
        Tail::Deep(t) => Tail::Deep(fold(&t)?),
        t => t,
    };
    // Compared without the final `/` (the query's segment ends there).
    Some((
        kind,
        Entry {
            id,
            text: fold(body)?,
            folded,
            tail,
        },
    ))
}

impl PathTables {
    /// Builds the tables of `(kind, entry)` pairs.
    pub(crate) fn build(entries: Vec<(TableKind, Entry)>) -> PathTables {
        let mut by: [Vec<Entry>; 3] = Default::default();
        for (k, e) in entries {
            by[k as usize].push(e);
        }
        let [p, n, x] = by;
        PathTables {
            prefix: Table::build(p, TableKind::Prefix),
            name: Table::build(n, TableKind::Name),
            ext: Table::build(x, TableKind::Ext),
        }
    }

    /// Whether no rule is tabled.
    pub(crate) fn is_empty(&self) -> bool {
        self.prefix.is_empty() && self.name.is_empty() && self.ext.is_empty()
    }

    /// How many rules are tabled.
    pub(crate) fn len(&self) -> usize {
        self.prefix.len() + self.name.len() + self.ext.len()
    }

    /// Heap bytes (approximate).
    pub(crate) fn memory_usage(&self) -> usize {
        self.prefix.memory_usage() + self.name.memory_usage() + self.ext.memory_usage()
    }

    /// Appends the ids of the tabled rules matching `hay` (a relative path;
    /// the matching form is `hay` followed by `/`), with caller-owned
    /// scratch (kept between queries, so a query allocates nothing once
    /// it has grown).
    ///
    /// One pass over the segments looks up each one's name and extension
    /// and (while some prefix key is longer than the path so far) the path
    /// up to its end; the prefix groups it found with rules whose tail asks
    /// for a later segment's extension are kept, and each later segment
    /// with a `.` looks up its extension's code in them.
    ///
    /// Out of line: inlined into the matcher's query, its pass would share
    /// that function's registers with the parts commands use.
    #[inline(never)]
    pub(crate) fn find_into(&self, hay: &[u8], scratch: &mut PathScratch, out: &mut Vec<u32>) {
        let PathScratch { f, pending } = scratch;
        pending.clear();
        let (len, changed, same) = fold_path(hay, f);
        let f = f.get(..len).unwrap_or_default();
        let q = Query {
            hay,
            f,
            n: len.saturating_sub(PAD),
            lower: !changed,
        };
        if same {
            self.run::<true>(&q, pending, out);
        } else {
            self.run_shifted(&q, pending, out);
        }
    }

    /// [`PathTables::run`] of a path whose folded segments are not at the
    /// offsets of its own (rare: the two folds beyond ASCII change lengths).
    #[inline(never)]
    #[cold]
    fn run_shifted(&self, q: &Query<'_>, pending: &mut Vec<Pending>, out: &mut Vec<u32>) {
        self.run::<false>(q, pending, out);
    }

    /// The pass of [`PathTables::find_into`] over the folded path; `SAME`:
    /// the folded path's segments are at the offsets of the path's.
    #[inline(always)]
    fn run<const SAME: bool>(&self, q: &Query<'_>, pending: &mut Vec<Pending>, out: &mut Vec<u32>) {
        let mut prefixes = !self.prefix.is_empty();
        let mut before = CHAIN_START;
        let (mut s, mut o) = (0, 0);
        loop {
            let (me, hash) = q.segment::<SAME>(s, o);
            if self.name.may_hold(hash) {
                self.name_hit(q, &me, hash, out);
            }
            if me.code != NO_EXT {
                if self.ext.may_hold(me.code) {
                    self.ext_hit(q, &me, out);
                }
                let bit = 1 << code_bit(me.code);
                for &(gi, codes, oe) in pending.iter() {
                    if codes & bit != 0 {
                        self.coded_hits(gi, q, oe, &me, out);
                    }
                }
            }
            if prefixes {
                before = chain(before, hash);
                let (g, longer) = self.prefix.get(before, q.f, 0, me.se);
                if let Some(gi) = g {
                    self.prefix_hit(gi, q, &me, pending, out);
                }
                prefixes = longer;
            }
            if me.se >= q.n {
                break;
            }
            (s, o) = (me.se + 1, if SAME { 0 } else { me.oe + 1 });
        }
    }

    /// The entries of the name key equal to the segment `me` (of hash
    /// `hash`).
    #[inline(always)]
    fn name_hit(&self, q: &Query<'_>, me: &Seg, hash: u64, out: &mut Vec<u32>) {
        let Some(g) = self.name.get(hash, q.f, me.s, me.se).0 else {
            return;
        };
        let Some(g) = self.name.group(g) else {
            return;
        };
        for it in g.entries.iter() {
            let e = &it.e;
            // A case-sensitive entry's text, equal to the segment when
            // both are folded, is equal to it as it is: without folding
            // having changed the path, exactly when folding does not
            // change the entry's text.
            if e.folded
                || if q.lower {
                    it.lower
                } else {
                    *e.text == *q.oseg(me)
                }
            {
                out.push(e.id);
            }
        }
    }

    /// The entries of the extension key equal to the final extension of
    /// the segment `me` whose text the segment ends with.
    #[inline(always)]
    fn ext_hit(&self, q: &Query<'_>, me: &Seg, out: &mut Vec<u32>) {
        let Some(g) = self.ext.get(me.code, q.f, me.dot, me.se).0 else {
            return;
        };
        let Some(g) = self.ext.group(g) else {
            return;
        };
        let (oseg, sseg) = (q.oseg(me), q.f.get(me.s..me.se).unwrap_or_default());
        for it in g.entries.iter() {
            let e = &it.e;
            let against = if e.folded || q.lower { sseg } else { oseg };
            if against.ends_with(&e.text) {
                out.push(e.id);
            }
        }
    }

    /// The uncoded entries of the prefix group `gi`, whose key is the path
    /// up to the segment `me`; the group is kept in `pending` when it has
    /// coded ones.
    #[inline(always)]
    fn prefix_hit(
        &self,
        gi: usize,
        q: &Query<'_>,
        me: &Seg,
        pending: &mut Vec<Pending>,
        out: &mut Vec<u32>,
    ) {
        let Some(g) = self.prefix.group(gi) else {
            return;
        };
        let (plain, coded) = g.entries.split_at((g.plain as usize).min(g.entries.len()));
        for it in plain {
            if q.case_ok(it, me.oe) && tail_fits(&it.e.tail, it.e.folded, q, me) {
                out.push(it.e.id);
            }
        }
        if !coded.is_empty() {
            pending.push((gi, g.codes, me.oe));
        }
    }

    /// The coded entries of the prefix group `gi`, whose key is the path
    /// up to the segment that ends at `oe` in the path as it is, whose
    /// tail the later segment `sg` (which has a `.`) ends with: those of
    /// its code's run (see [`Group::starts`]). A `Child` tail asks for the
    /// segment right after the key's, the one that starts at `oe + 1`.
    #[inline(always)]
    fn coded_hits(&self, gi: usize, q: &Query<'_>, oe: usize, sg: &Seg, out: &mut Vec<u32>) {
        let Some(g) = self.prefix.group(gi) else {
            return;
        };
        let code = sg.code;
        // The number of code bits set below the code's (the caller has
        // checked that its own is set), counted a set bit at a time: groups
        // have few codes, and the target has no population count.
        let mut below = g.codes & ((1u64 << code_bit(code)) - 1);
        let mut r = 0;
        while below != 0 {
            below &= below - 1;
            r += 1;
        }
        let (Some(&from), Some(&to)) = (g.starts.get(r), g.starts.get(r + 1)) else {
            return;
        };
        let coded = g.entries.get(g.plain as usize..).unwrap_or_default();
        for it in coded.get(from as usize..to as usize).unwrap_or_default() {
            if it.code != code {
                continue;
            }
            let t = match &it.e.tail {
                Tail::Child(t) if sg.o == oe + 1 => t,
                Tail::Deep(t) => t,
                _ => continue,
            };
            let ends = if it.e.folded || q.lower {
                let n = it.tail_len;
                if n != 0 {
                    // The segment's last `n` bytes, a word from
                    // inside the padded folded path.
                    let keep = u64::MAX >> (64 - 8 * n as u32);
                    sg.se - sg.s >= n && word_at(q.f, sg.se - n) & keep == it.tail_word
                } else {
                    q.f.get(sg.s..sg.se).is_some_and(|x| x.ends_with(t))
                }
            } else {
                q.hay.get(sg.o..sg.oe).is_some_and(|x| x.ends_with(t))
            };
            if ends && q.case_ok(it, oe) {
                out.push(it.e.id);
            }
        }
    }
}

/// A path query's scratch: the path folded (followed by [`PAD`] bytes)
/// and the prefix groups with coded entries it reached (each with its
/// code bits, and the end of the segment that ends its key).
#[derive(Clone, Debug, Default)]
pub(crate) struct PathScratch {
    f: Vec<u8>,
    pending: Vec<Pending>,
}

/// A prefix group with coded entries that a query reached: its index, its
/// code bits, and the end (in the path as it is) of the segment that ends
/// its key.
type Pending = (usize, u64, usize);

/// The high bit of each byte of `w` (ASCII) that is an ASCII capital.
#[inline]
fn upper_mask(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // Each byte is at most 0x7F, so no sum carries into the next byte.
    let from_a = w + ONES * (0x80 - u64::from(b'A'));
    let past_z = w + ONES * (0x80 - u64::from(b'Z') - 1);
    from_a & !past_z & (ONES * 0x80)
}

/// The high bit of each byte of a word.
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The last word of `hay`, from `i` (`hay.len() - 8 < i <= hay.len()`):
/// its bytes up to the path's end, then the `/` after the path (where
/// the matching form has it), then zero bytes.
#[inline]
fn path_word(hay: &[u8], i: usize) -> u64 {
    let n = hay.len();
    let r = n.saturating_sub(i);
    let w = if n >= 8 {
        // The path's last eight bytes, of which the last `r` are kept.
        word_at(hay, n - 8)
            .checked_shr(64 - 8 * r as u32)
            .unwrap_or(0)
    } else {
        hay.get(i..)
            .unwrap_or_default()
            .iter()
            .rev()
            .fold(0u64, |w, &b| w << 8 | u64::from(b))
    };
    w | u64::from(b'/') << (8 * r)
}

/// Folds `hay` into `f`: the folded path, then [`PAD`] bytes (a `/`,
/// where the matching form has it, then zero bytes), from its start (`f`
/// may be longer: it only grows, so that a query writes its words without
/// zeroing them first). Returns the length of these bytes, whether folding
/// changed the path (or it is not ASCII) and whether the folded path is as
/// long as the path (so that their segments are at the same offsets).
///
/// An ASCII path is folded a word at a time; any other byte by byte.
fn fold_path(hay: &[u8], f: &mut Vec<u8>) -> (usize, bool, bool) {
    let n = hay.len();
    let whole = n - n % 8;
    if f.len() < whole + 2 * PAD {
        f.resize(whole + 2 * PAD, 0);
    }
    let mut changed = 0u64;
    let mut high = 0u64;
    let mut fold = |w: u64| {
        high |= w & HIGH;
        let m = upper_mask(w & !HIGH);
        changed |= m;
        (w | m >> 2).to_le_bytes()
    };
    if let Some((body, rest)) = f.split_at_mut_checked(whole) {
        for (d, c) in body.chunks_exact_mut(8).zip(hay.chunks_exact(8)) {
            d.copy_from_slice(&fold(<[u8; 8]>::try_from(c).map_or(0, u64::from_le_bytes)));
        }
        if let Some(d) = rest.get_mut(..2 * PAD) {
            let (last, zero) = d.split_at_mut(PAD);
            last.copy_from_slice(&fold(path_word(hay, whole)));
            zero.fill(0);
        }
    }
    if high == 0 {
        return (n + PAD, changed != 0, true);
    }
    // Not ASCII: byte by byte.
    f.clear();
    fold_into(hay, f);
    let folded = f.len();
    f.push(b'/');
    f.extend_from_slice(&[0; PAD - 1]);
    (folded + PAD, true, folded == n)
}

/// One segment of a query: its bounds in the path as it is
/// (`o..oe`) and folded (`s..se`), where its last `.` is in the folded
/// path (`se` without one), and its extension code ([`NO_EXT`] without
/// a `.`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Seg {
    o: usize,
    oe: usize,
    s: usize,
    se: usize,
    dot: usize,
    code: u64,
}

/// The bytes of `w` equal to `b`: the high bit of each set, the others
/// clear, except that a byte `b ^ 1` right above one of them (or above
/// another such byte) may be set too: exact up to the first byte equal
/// to `b`, and when `b ^ 1` is the byte that ends the search.
#[inline]
fn byte_mask(w: u64, b: u8) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let x = w ^ (ONES * u64::from(b));
    x.wrapping_sub(ONES) & !x & (ONES * 0x80)
}

/// A query's path as it is and folded.
struct Query<'a> {
    hay: &'a [u8],
    /// Folded, then [`PAD`] bytes (see [`fold_path`]).
    f: &'a [u8],
    /// The folded path's length.
    n: usize,
    /// Folding did not change the path.
    lower: bool,
}

/// The end of the segment of the folded path `f` (of `n` bytes, then a
/// `/`) from `start`, its last `.` (`usize::MAX` without one) and the
/// hash of its text ([`hash_span`]), scanned and hashed in one pass over
/// its words from `start`, the `/` and `.` among them found a word at a
/// time.
#[inline]
fn scan(f: &[u8], start: usize, n: usize) -> (usize, usize, u64) {
    let mut i = start;
    let mut h = SEED;
    let mut dot = usize::MAX;
    // The words from `start`: `f` holds at least eight bytes from `n`,
    // so that the one holding the `/` at `n` is whole.
    while let Some(c) = f.get(i..i.wrapping_add(8)) {
        let w = <[u8; 8]>::try_from(c).map_or(0, u64::from_le_bytes);
        // The `/` bits are exact up to the first `/`; the `.` bits up
        // to the first `.` and where a `/` is taken for one.
        let stop = byte_mask(w, b'/');
        let dots = byte_mask(w, b'.');
        if stop == 0 {
            if dots != 0 {
                dot = i + (63 - dots.leading_zeros() as usize) / 8;
            }
            h = mix(h, w);
            i += 8;
            continue;
        }
        // The bytes before the first `/`.
        let keep = ((stop & stop.wrapping_neg()) >> 7).wrapping_sub(1);
        let d = dots & keep;
        if d != 0 {
            dot = i + (63 - d.leading_zeros() as usize) / 8;
        }
        if keep != 0 {
            h = mix(h, w & keep);
        }
        // (At most `n`: `f` has a `/` there.)
        let end = i + (stop.trailing_zeros() / 8) as usize;
        return (end, dot, finish(h, end.wrapping_sub(start)));
    }
    // Never (the `/` at `n` stops the scan).
    (n, dot, finish(h, n.saturating_sub(start)))
}

impl Query<'_> {
    /// The segment that starts at `s` in the folded path and
    /// at `o` in the path as it is, and the hash of its folded text.
    /// `SAME`: the folded path's segments are at the offsets of the path's
    /// (folding changes lengths only for the two folds beyond ASCII).
    #[inline(always)]
    fn segment<const SAME: bool>(&self, s: usize, o: usize) -> (Seg, u64) {
        let (se, dot, hash) = scan(self.f, s, self.n);
        let o = if SAME { s } else { o };
        let oe = if SAME {
            se
        } else {
            self.hay
                .get(o..)
                .and_then(|r| r.iter().position(|&b| b == b'/'))
                .map_or(self.hay.len(), |i| o + i)
        };
        let (dot, code) = if dot < se {
            (dot, hash_span(self.f, dot, se).max(2))
        } else {
            (se, NO_EXT)
        };
        let sg = Seg {
            o,
            oe,
            s,
            se,
            dot,
            code,
        };
        (sg, hash)
    }

    /// The segment `me` in the path as it is.
    #[inline]
    fn oseg(&self, me: &Seg) -> &[u8] {
        self.hay.get(me.o..me.oe).unwrap_or_default()
    }

    /// Whether a prefix entry's case fits the path up to `oe` (the end of
    /// the segment that ends its key, see [`PathTables::name_hit`]).
    #[inline]
    fn case_ok(&self, it: &Item, oe: usize) -> bool {
        it.e.folded
            || if self.lower {
                it.lower
            } else {
                *it.e.text == *self.hay.get(..oe).unwrap_or_default()
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::lower::Shape;
    use crate::compile::matcher::Walk;

    fn c(re: &str, walk: Walk, shape: Shape) -> Option<(TableKind, String, bool, Tail)> {
        classify(re, walk, shape, 0).map(|(k, e)| {
            (
                k,
                String::from_utf8(e.text.into()).unwrap(),
                e.folded,
                e.tail,
            )
        })
    }

    #[test]
    fn tabled_shapes() {
        let t = |s: &str| s.as_bytes().to_vec().into_boxed_slice();
        let p = TableKind::Prefix;
        assert_eq!(
            c("src/a\\x{2E}rs/", Walk::Fwd, Shape::Pure),
            Some((p, "src/a.rs".into(), false, Tail::Free))
        );
        assert_eq!(
            c("src/(?s-u:.)", Walk::Fwd, Shape::Pure),
            Some((p, "src".into(), false, Tail::More))
        );
        assert_eq!(
            c("(?i:Src/(?-u:[^/])*\\x{2E}TS/)", Walk::Fwd, Shape::Pure),
            Some((p, "src".into(), true, Tail::Child(t(".ts"))))
        );
        assert_eq!(
            c(
                "a/b/(?:(?-u:[^/])*/)*(?-u:[^/])*\\x{2E}rs/",
                Walk::Fwd,
                Shape::Tracking
            ),
            Some((p, "a/b".into(), false, Tail::Deep(t(".rs"))))
        );
        assert_eq!(
            c("Makefile/", Walk::Seg, Shape::Pure),
            Some((TableKind::Name, "Makefile".into(), false, Tail::Free))
        );
        assert_eq!(
            c("\\x{2E}tar\\x{2E}gz/", Walk::SegRev, Shape::Pure),
            Some((TableKind::Ext, ".tar.gz".into(), false, Tail::Free))
        );
        // Not tabled: a prefix inside a segment, a name of two segments,
        // a suffix without a `.`, a class, a non-ASCII case-insensitive
        // literal, a latching or reversed walk.
        assert_eq!(c("src/fo", Walk::Fwd, Shape::Pure), None);
        assert_eq!(c("a/b/", Walk::Seg, Shape::Pure), None);
        assert_eq!(c("rc/", Walk::SegRev, Shape::Pure), None);
        assert_eq!(c("src/[^/]/", Walk::Fwd, Shape::Pure), None);
        assert_eq!(c("(?i:\\x{E9}/)", Walk::Fwd, Shape::Pure), None);
        assert_eq!(
            c("a/(?-u:[^/])*x(?-u:[^/])*y/", Walk::Fwd, Shape::Latching),
            None
        );
        assert_eq!(c("a/(?-u:[^/])*x/z/", Walk::Fwd, Shape::Pure), None);
        assert_eq!(c("/", Walk::Fwd, Shape::Pure), None);
    }

    /// Every key of many, in every table, is found (a filter that dropped
    /// a key, or a scan that hashed a segment or an extension otherwise
    /// than its key, would lose its rule).
    #[test]
    fn lookups_find_every_key() {
        let entry = |id: u32, text: String, folded: bool| Entry {
            id,
            text: text.into_bytes().into_boxed_slice(),
            folded,
            tail: Tail::Free,
        };
        let mut entries = Vec::new();
        for i in 0..3000u32 {
            let name = format!("n{i}.k{}", i % 7);
            entries.push((TableKind::Name, entry(i, name, i % 3 == 0)));
            let ext = format!(".e{i}x");
            entries.push((TableKind::Ext, entry(10_000 + i, ext, i % 2 == 0)));
            let dir = format!("d{}/segment{i}", i % 13);
            entries.push((TableKind::Prefix, entry(20_000 + i, dir, false)));
        }
        let t = PathTables::build(entries);
        let mut scratch = PathScratch::default();
        let mut out = Vec::new();
        for i in 0..3000u32 {
            let path = format!("d{}/segment{i}/x/n{i}.k{}/f.E{i}X", i % 13, i % 7);
            out.clear();
            t.find_into(path.as_bytes(), &mut scratch, &mut out);
            out.sort_unstable();
            // The extension matches folded only (`E`, `X`).
            let ext = (i % 2 == 0).then_some(10_000 + i);
            let want: Vec<u32> = [Some(i), ext, Some(20_000 + i)]
                .into_iter()
                .flatten()
                .collect();
            assert_eq!(out, want, "{path}");
        }
        // And nothing for segments no key has.
        out.clear();
        t.find_into(b"d1/segment0/n1.k0/f.e1", &mut scratch, &mut out);
        assert!(out.is_empty(), "{out:?}");
    }

    /// The segments of a path, as [`Query::segment`] finds them a word at
    /// a time after [`fold_path`], are those of splitting it at each `/`:
    /// bounds, last `.`, hashes and codes.
    fn check_segments(hay: &[u8]) {
        // Longer scratch, as a previous query leaves it.
        let mut f = vec![b'x'; 100];
        let (len, changed, same) = fold_path(hay, &mut f);
        f.truncate(len);
        let n = len - PAD;
        let folded = folded(hay);
        assert_eq!(f.get(..n), Some(&folded[..]));
        assert_eq!(f.get(n..), Some(&b"/\0\0\0\0\0\0\0"[..]));
        assert_eq!(changed, folded != hay || !hay.is_ascii());
        assert_eq!(same, n == hay.len());
        let q = Query {
            hay,
            f: &f,
            n,
            lower: !changed,
        };
        let mut segs = Vec::new();
        let (mut s, mut o) = (0, 0);
        loop {
            let (sg, hash) = if same {
                q.segment::<true>(s, o)
            } else {
                q.segment::<false>(s, o)
            };
            segs.push((sg, hash));
            if sg.se >= n {
                break;
            }
            (s, o) = (sg.se + 1, sg.oe + 1);
        }
        let parts: Vec<&[u8]> = folded.split(|&b| b == b'/').collect();
        let oparts: Vec<&[u8]> = hay.split(|&b| b == b'/').collect();
        assert_eq!(segs.len(), parts.len());
        let (mut at, mut oat) = (0, 0);
        for ((&(sg, hash), part), opart) in segs.iter().zip(&parts).zip(&oparts) {
            assert_eq!((sg.s, sg.se), (at, at + part.len()));
            assert_eq!((sg.o, sg.oe), (oat, oat + opart.len()));
            let dot = part
                .iter()
                .rposition(|&b| b == b'.')
                .map_or(sg.se, |d| at + d);
            assert_eq!(sg.dot, dot);
            assert_eq!(hash, hash_key(part));
            assert_eq!(sg.code, ext_code(part));
            at += part.len() + 1;
            oat += opart.len() + 1;
        }
    }

    #[test]
    fn segments_fixed() {
        for hay in [
            "",
            "/",
            "a",
            "a/",
            "/a",
            "a//b",
            "src/main.rs",
            "a.b.c/d.e/f",
            "12345678/12345678.12345678/x",
            "abcdefgh.ijklmnop",
            "abcdefghijklmno/p",
            "a/./b/.",
            ".../...",
            "Src/Main.RS",
            "\u{212A}elvin/\u{17F}ub.Tx",
            "a\0b/c\0.d",
        ] {
            check_segments(hay.as_bytes());
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        #[test]
        fn segments_as_split(
            parts in proptest::collection::vec(
                proptest::sample::select(vec!["a", "B", "/", ".", "\0", "\u{212A}", "\u{17F}", "é", "xyzxyzx"]),
                0..30,
            ),
        ) {
            check_segments(parts.concat().as_bytes());
        }
    }
}
