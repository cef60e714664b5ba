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
//! prefixes past one that no key continues.
//!
//! Case-insensitive rules are tabled when their literal is ASCII, under
//! its ASCII lower case. Every key (case-sensitive ones too) is indexed
//! folded and the query folds its path once (ASCII letters, `K` KELVIN
//! SIGN → `k`, `ſ` LONG S → `s`, see [`super::route`]), each
//! case-sensitive entry comparing its text with the path as it is.
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
    /// `(hash, value)`; hash 0 is an empty slot; at least half are empty.
    /// A value is a group index, or [`NO_GROUP`], with [`LONGER`] set when
    /// some key of the table continues the hashed text with more segments
    /// (prefix tables).
    slots: Box<[(u64, u32)]>,
    mask: usize,
    /// Folded key → its entries, in key order, each with the [`ext_code`]
    /// of its tail (prefix rules whose tail is a segment ending: a query
    /// compares it with its segments' codes before comparing text;
    /// [`NO_CODE`] otherwise), uncoded entries first, then by code.
    groups: Box<[Group]>,
}

/// The entries of one key.
#[derive(Clone, Debug)]
struct Group {
    /// The key, folded (see the module documentation).
    key: Box<[u8]>,
    entries: Box<[(Entry, u64)]>,
}

/// A slot value without a group (only [`LONGER`]).
const NO_GROUP: u32 = u32::MAX >> 1;
/// A slot value's flag: keys continue this text.
const LONGER: u32 = 1 << 31;

/// The code of a tail that is not filtered by extension.
const NO_CODE: u64 = 0;
/// The code of a segment without a `.`.
const NO_EXT: u64 = 1;

/// The hash of a folded key or segment text. Never 0 (an empty slot).
#[inline]
fn hash_key(text: &[u8]) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = super::route::FastHash::default().build_hasher();
    h.write(text);
    h.finish().max(1)
}

/// The hash of a path prefix, chained from the hash of the prefix before
/// its last segment (`prev`, [`CHAIN_START`] for the first) and of that
/// segment's text. Never 0.
#[inline]
fn chain(prev: u64, seg: u64) -> u64 {
    let h = (prev.rotate_left(21) ^ seg).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h ^ (h >> 31)).max(1)
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

/// Folds `text` as the keys are (see the module documentation).
fn folded(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    fold_into(text, &mut out);
    out
}

impl Table {
    /// Builds a table of `entries`.
    fn build(entries: Vec<Entry>, kind: TableKind) -> Table {
        let mut grouped: ByteMap<Vec<(Entry, u64)>> = ByteMap::default();
        for e in entries {
            let code = match &e.tail {
                Tail::Child(x) | Tail::Deep(x) if x.contains(&b'.') => ext_code(&folded(x)),
                _ => NO_CODE,
            };
            let k = match kind {
                TableKind::Ext => final_ext(&e.text).unwrap_or(&e.text),
                _ => &e.text,
            };
            grouped
                .entry(folded(k).into_boxed_slice())
                .or_default()
                .push((e, code));
        }
        // Uncoded entries first, then by code (a query searches them by
        // code); stable, and groups in key order, so images are written in
        // a fixed order.
        let mut groups: Vec<Group> = grouped
            .into_iter()
            .map(|(key, mut v)| {
                v.sort_by_key(|(_, c)| *c);
                Group {
                    key,
                    entries: v.into_boxed_slice(),
                }
            })
            .collect();
        groups.sort_by(|a, b| a.key.cmp(&b.key));
        let mut items: Vec<(u64, u32)> = Vec::with_capacity(groups.len());
        let mut inner = std::collections::HashSet::new();
        if kind == TableKind::Prefix {
            for g in groups.iter() {
                // Every proper prefix of the key at a segment boundary:
                // a query goes on looking up longer prefixes only past
                // one of these.
                for (p, _) in g.key.iter().enumerate().filter(|(_, b)| **b == b'/') {
                    if let Some(head) = g.key.get(..p) {
                        inner.insert((chain_of(head), head.to_vec()));
                    }
                }
            }
        }
        for (gi, g) in groups.iter().enumerate() {
            let h = match kind {
                TableKind::Prefix => chain_of(&g.key),
                TableKind::Name => hash_key(&g.key),
                TableKind::Ext => code_of_ext(Some(&g.key)),
            };
            // A key that is also a proper prefix of another carries the
            // flag on its own slot.
            let longer = inner.remove(&(h, g.key.to_vec()));
            let v = u32::try_from(gi).unwrap_or(NO_GROUP).min(NO_GROUP);
            items.push((h, if longer { v | LONGER } else { v }));
        }
        items.extend(inner.into_iter().map(|(h, _)| (h, NO_GROUP | LONGER)));
        let cap = (items.len() * 2).next_power_of_two().max(8);
        let mut slots = vec![(0u64, 0u32); cap].into_boxed_slice();
        let mask = cap - 1;
        for (h, v) in items {
            let mut i = h as usize & mask;
            while let Some(slot) = slots.get_mut(i) {
                if slot.0 == 0 {
                    *slot = (h, v);
                    break;
                }
                i = (i + 1) & mask;
            }
        }
        Table {
            slots,
            mask,
            groups: groups.into_boxed_slice(),
        }
    }

    /// The entries of the key `key` (folded) of hash `h`, and whether some
    /// key continues it (prefix tables).
    #[inline]
    fn get(&self, h: u64, key: &[u8]) -> (Option<&[(Entry, u64)]>, bool) {
        let mut longer = false;
        let mut i = h as usize & self.mask;
        while let Some(&(sh, v)) = self.slots.get(i) {
            if sh == 0 {
                break;
            }
            if sh == h {
                longer |= v & LONGER != 0;
                if let Some(g) = self.groups.get((v & !LONGER) as usize) {
                    // Keys are distinct, and a key's own slot carries its
                    // flag: nothing after it can add to the answer.
                    if *g.key == *key {
                        return (Some(&g.entries), longer);
                    }
                }
            }
            i = (i + 1) & self.mask;
        }
        (None, longer)
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
            .flat_map(|g| g.entries.iter().map(|(e, _)| e))
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
            + self
                .groups
                .iter()
                .map(|g| {
                    g.key.len()
                        + 32
                        + g.entries
                            .iter()
                            .map(|(e, _)| e.text.len() + 64)
                            .sum::<usize>()
                })
                .sum::<usize>()
    }
}

/// Whether the rest of a path after a prefix rule's literal (`rest`, and
/// `frest` folded) is what its tail asks for.
#[inline]
fn tail_fits(tail: &Tail, folded: bool, rest: &[u8], frest: &[u8]) -> bool {
    let r = if folded { frest } else { rest };
    match tail {
        Tail::Free => true,
        Tail::More => !rest.is_empty(),
        Tail::Child(t) => {
            let seg = r.split(|&b| b == b'/').next().unwrap_or_default();
            !r.is_empty() && seg.ends_with(t)
        }
        Tail::Deep(t) => !r.is_empty() && r.split(|&b| b == b'/').any(|seg| seg.ends_with(t)),
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
        t.is_ascii()
            .then(|| t.to_ascii_lowercase().into_boxed_slice())
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
    /// the matching form is `hay` followed by `/`); `fold` is scratch.
    #[inline]
    pub(crate) fn find_into(&self, hay: &[u8], fold: &mut Vec<u8>, out: &mut Vec<u32>) {
        fold.clear();
        fold_into(hay, fold);
        let q = Query {
            hay,
            f: fold,
            // Folding changes lengths only for the two non-ASCII folds: an
            // ASCII path has its segments at the same offsets folded.
            same: hay.len() == fold.len(),
        };
        // Every segment, up to `MAX_SEGS`, with its hashes: the tails of
        // prefix rules are compared with the later segments' codes.
        let mut segs = [Seg::default(); MAX_SEGS];
        let indexed = if q.same {
            q.segments_ascii(&mut segs)
        } else {
            q.segments(&mut segs)
        };
        let Some(n) = indexed else {
            // A deeper path than the index holds: segment by segment, the
            // tails checked by splitting the rest.
            let mut prev: Option<Seg> = None;
            let mut prefixes = true;
            loop {
                let at = q.segment(prev.as_ref());
                prefixes = self.segment(&q, &at, &[], prefixes, out);
                if at.se >= q.f.len() {
                    return;
                }
                prev = Some(at);
            }
        };
        let mut prefixes = true;
        for j in 0..n {
            if let (Some(me), Some(later)) = (segs.get(j), segs.get(j + 1..n)) {
                prefixes = self.segment(&q, me, later, prefixes, out);
            }
        }
    }

    /// The lookups of one segment: its name, its extension, and (when
    /// `prefixes`) the path up to its end. Prefix rules' coded tails are
    /// looked up by the codes of the `later` segments when the query
    /// indexes them (`later` is empty for the last segment, and for every
    /// segment of a path deeper than the index, whose tails are checked by
    /// splitting the rest). Returns whether some prefix key is longer than
    /// the path up to this segment (else no longer prefix can be a key).
    #[inline]
    fn segment(
        &self,
        q: &Query<'_>,
        me: &Seg,
        later: &[Seg],
        prefixes: bool,
        out: &mut Vec<u32>,
    ) -> bool {
        let (hay, f) = (q.hay, q.f);
        let (Some(oseg), Some(sseg)) = (hay.get(me.o..me.oe), f.get(me.s..me.se)) else {
            return false;
        };
        if !self.name.is_empty() {
            if let (Some(es), _) = self.name.get(me.hash, sseg) {
                for (e, _) in es {
                    if e.folded || *e.text == *oseg {
                        out.push(e.id);
                    }
                }
            }
        }
        if !self.ext.is_empty() && me.code != NO_EXT {
            let ext = me.dot.and_then(|d| f.get(d..me.se)).unwrap_or_default();
            if let (Some(es), _) = self.ext.get(me.code, ext) {
                for (e, _) in es {
                    let against = if e.folded { sseg } else { oseg };
                    if against.ends_with(&e.text) {
                        out.push(e.id);
                    }
                }
            }
        }
        if !prefixes || self.prefix.is_empty() {
            return false;
        }
        // The path up to this segment's `/` (the terminator after the
        // last one).
        let (Some(op), Some(sp)) = (hay.get(..me.oe), f.get(..me.se)) else {
            return false;
        };
        let (es, longer) = self.prefix.get(me.chain, sp);
        let Some(es) = es else {
            return longer;
        };
        let (rest, frest) = (
            hay.get(me.oe + 1..).unwrap_or_default(),
            f.get(me.se + 1..).unwrap_or_default(),
        );
        let case_ok = |e: &Entry| e.folded || *e.text == *op;
        // Coded entries are looked up by the codes of the later segments
        // when the query indexes them.
        let indexed = !later.is_empty() || rest.is_empty();
        let split = if indexed {
            es.partition_point(|(_, c)| *c == NO_CODE)
        } else {
            es.len()
        };
        let (plain, coded) = es.split_at(split.min(es.len()));
        for (e, _) in plain {
            if case_ok(e) && tail_fits(&e.tail, e.folded, rest, frest) {
                out.push(e.id);
            }
        }
        if coded.is_empty() {
            return longer;
        }
        for (k, sg) in later.iter().enumerate() {
            let code = sg.code;
            if code == NO_EXT {
                continue;
            }
            let from = coded.partition_point(|(_, c)| *c < code);
            for (e, c) in coded.get(from..).unwrap_or_default() {
                // The run of this code.
                if *c != code {
                    break;
                }
                let t = match &e.tail {
                    Tail::Child(t) if k == 0 => t,
                    Tail::Deep(t) => t,
                    _ => continue,
                };
                let seg = if e.folded {
                    f.get(sg.s..sg.se)
                } else {
                    hay.get(sg.o..sg.oe)
                };
                if case_ok(e) && seg.is_some_and(|x| x.ends_with(t)) {
                    out.push(e.id);
                }
            }
        }
        longer
    }
}

/// Segments a query indexes for the tails of prefix rules; a deeper path
/// is checked segment by segment, its tails by splitting.
const MAX_SEGS: usize = 16;

/// One segment of a query: its bounds in the path as it is (`o..oe`) and
/// folded (`s..se`), where its last `.` is in the folded path, and its
/// hashes: of its folded text, of the folded path up to it (chained), and
/// its extension code.
#[derive(Clone, Copy, Debug, Default)]
struct Seg {
    o: usize,
    oe: usize,
    s: usize,
    se: usize,
    dot: Option<usize>,
    hash: u64,
    chain: u64,
    code: u64,
}

/// The bytes of `w` equal to `b`: the high bit of each set, the others
/// clear (exact: no carry crosses a byte).
#[inline]
fn byte_mask(w: u64, b: u8) -> u64 {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    let x = w ^ (0x0101_0101_0101_0101 * u64::from(b));
    !(((x & LOW7) + LOW7) | x | LOW7)
}

/// A query's path as it is and folded.
struct Query<'a> {
    hay: &'a [u8],
    f: &'a [u8],
    /// Both have their segments at the same offsets.
    same: bool,
}

impl Query<'_> {
    /// Fills `segs` with the path's segments; `None` when it has more.
    fn segments(&self, segs: &mut [Seg; MAX_SEGS]) -> Option<usize> {
        let mut n = 0usize;
        let mut prev: Option<Seg> = None;
        loop {
            let at = self.segment(prev.as_ref());
            *segs.get_mut(n)? = at;
            n += 1;
            if at.se >= self.f.len() {
                return Some(n);
            }
            prev = Some(at);
        }
    }

    /// [`Query::segments`] when both forms have their segments at the
    /// same offsets: the `/` and `.` of the folded path found eight bytes
    /// at a time.
    fn segments_ascii(&self, segs: &mut [Seg; MAX_SEGS]) -> Option<usize> {
        let f = self.f;
        let mut n = 0usize;
        let mut start = 0usize;
        let mut dot = None;
        let mut before = CHAIN_START;
        let mut words = f.chunks_exact(8);
        let last = words
            .remainder()
            .iter()
            .rev()
            .fold(0u64, |w, &b| w << 8 | u64::from(b));
        let words = (&mut words)
            .map(|c| {
                let mut w = [0u8; 8];
                w.copy_from_slice(c);
                u64::from_le_bytes(w)
            })
            .chain(std::iter::once(last));
        for (ci, w) in words.enumerate() {
            let slashes = byte_mask(w, b'/');
            let mut m = slashes | byte_mask(w, b'.');
            while m != 0 {
                let bit = m.trailing_zeros();
                m &= m - 1;
                let i = ci * 8 + (bit / 8) as usize;
                if slashes & (1 << bit) == 0 {
                    dot = Some(i);
                    continue;
                }
                let at = self.plain_segment(start, i, dot, before);
                *segs.get_mut(n)? = at;
                n += 1;
                before = at.chain;
                start = i + 1;
                dot = None;
            }
        }
        *segs.get_mut(n)? = self.plain_segment(start, f.len(), dot, before);
        Some(n + 1)
    }

    /// The segment `start..end` of both forms, its last `.` at `dot`,
    /// after the prefix of chained hash `before`.
    #[inline]
    fn plain_segment(&self, start: usize, end: usize, dot: Option<usize>, before: u64) -> Seg {
        let hash = hash_key(self.f.get(start..end).unwrap_or_default());
        Seg {
            o: start,
            oe: end,
            s: start,
            se: end,
            dot,
            hash,
            chain: chain(before, hash),
            code: code_of_ext(dot.and_then(|d| self.f.get(d..end))),
        }
    }

    /// The segment after `prev` (the first one when `None`).
    #[inline]
    fn segment(&self, prev: Option<&Seg>) -> Seg {
        let (o, s, before) = match prev {
            Some(p) => (p.oe + 1, p.se + 1, p.chain),
            None => (0, 0, CHAIN_START),
        };
        // The segment's end and its last `.`, in one scan.
        let mut se = self.f.len();
        let mut dot = None;
        for (i, &b) in self.f.get(s..).unwrap_or_default().iter().enumerate() {
            if b == b'/' {
                se = s + i;
                break;
            }
            if b == b'.' {
                dot = Some(s + i);
            }
        }
        let oe = if self.same {
            se
        } else {
            self.hay
                .get(o..)
                .and_then(|r| r.iter().position(|&b| b == b'/'))
                .map_or(self.hay.len(), |i| o + i)
        };
        let text = self.f.get(s..se).unwrap_or_default();
        let hash = hash_key(text);
        Seg {
            o,
            oe,
            s,
            se,
            dot,
            hash,
            chain: chain(before, hash),
            code: code_of_ext(dot.and_then(|d| self.f.get(d..se))),
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
}
