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
//! rules (BENCHMARKS.md, "Compiled matchers").
//!
//! Case-insensitive rules are tabled when their literal is ASCII, under
//! its ASCII lower case; a table holding any sets `folds`, and then every
//! key (case-sensitive ones too) is stored folded and the query folds its
//! path once (ASCII letters, `K` KELVIN SIGN → `k`, `ſ` LONG S → `s`, see
//! [`super::route`]), each case-sensitive entry comparing its text with
//! the path as it is. Folding keeps every `/` where it is (the two
//! non-ASCII folds are of multi-byte characters without a `/` byte), so the
//! segments of the folded path are those of the path.

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

/// One shape's table.
#[derive(Clone, Debug, Default)]
pub(crate) struct Table {
    /// Keys are folded (some entry is case-insensitive).
    pub(crate) folds: bool,
    /// Key → its entries, each with the [`ext_code`] of its tail (prefix
    /// rules whose tail is a segment ending: a query compares it with
    /// its segments' codes before comparing text; [`NO_CODE`] otherwise).
    pub(crate) map: ByteMap<Box<[(Entry, u64)]>>,
}

/// The code of a tail that is not filtered by extension.
const NO_CODE: u64 = 0;
/// The code of a segment without a `.`.
const NO_EXT: u64 = 1;

/// A filter code of a segment's final extension (from its last `.`,
/// `text` folded when the table is): a segment that ends with a tail
/// holding a `.` has the tail's final extension, so equal codes are
/// necessary for a match, and the text comparison that decides is done
/// only for them. Never [`NO_CODE`]; [`NO_EXT`] without a `.`.
#[inline]
fn ext_code(text: &[u8]) -> u64 {
    code_of_ext(final_ext(text))
}

/// [`ext_code`] of a final extension found already.
#[inline]
fn code_of_ext(ext: Option<&[u8]>) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let Some(ext) = ext else {
        return NO_EXT;
    };
    let mut h = super::route::FastHash::default().build_hasher();
    h.write(ext);
    h.finish().max(2)
}

impl Table {
    fn key(&self, text: &[u8], kind: TableKind) -> Vec<u8> {
        let k = match kind {
            TableKind::Ext => final_ext(text).unwrap_or(text),
            _ => text,
        };
        if self.folds {
            let mut out = Vec::with_capacity(k.len());
            fold_into(k, &mut out);
            out
        } else {
            k.to_vec()
        }
    }

    /// Builds a table of `entries`.
    fn build(entries: Vec<Entry>, kind: TableKind) -> Table {
        let mut t = Table {
            folds: entries.iter().any(|e| e.folded),
            map: ByteMap::default(),
        };
        let mut grouped: ByteMap<Vec<(Entry, u64)>> = ByteMap::default();
        for e in entries {
            let code = match &e.tail {
                Tail::Child(x) | Tail::Deep(x) if x.contains(&b'.') => {
                    // Tails of folded entries are folded already.
                    let mut f = Vec::new();
                    if t.folds {
                        fold_into(x, &mut f);
                    } else {
                        f.extend_from_slice(x);
                    }
                    ext_code(&f)
                }
                _ => NO_CODE,
            };
            grouped
                .entry(t.key(&e.text, kind).into_boxed_slice())
                .or_default()
                .push((e, code));
        }
        // Uncoded entries first, then by code (a query searches them by
        // code); stable, so images are written in a fixed order.
        t.map = grouped
            .into_iter()
            .map(|(k, mut v)| {
                v.sort_by_key(|(_, c)| *c);
                (k, v.into_boxed_slice())
            })
            .collect();
        t
    }

    /// Rebuilds the map from entries read back from an image (keys are
    /// derived, never read).
    pub(crate) fn from_entries(entries: Vec<Entry>, kind: TableKind) -> Table {
        Table::build(entries, kind)
    }

    /// Every entry, in a stable order (for images).
    pub(crate) fn entries(&self) -> Vec<&Entry> {
        let mut keys: Vec<_> = self.map.iter().collect();
        keys.sort_by(|a, b| a.0.cmp(b.0));
        keys.into_iter()
            .flat_map(|(_, v)| v.iter().map(|(e, _)| e))
            .collect()
    }

    fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    fn len(&self) -> usize {
        self.map.values().map(|v| v.len()).sum()
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

    /// Appends the ids of the tabled rules matching `hay` (a relative path;
    /// the matching form is `hay` followed by `/`); `fold` is scratch.
    #[inline]
    pub(crate) fn find_into(&self, hay: &[u8], fold: &mut Vec<u8>, out: &mut Vec<u32>) {
        let folds = self.prefix.folds || self.name.folds || self.ext.folds;
        fold.clear();
        if folds {
            fold_into(hay, fold);
        }
        let f: &[u8] = if folds { fold } else { hay };
        // Folding changes lengths only for the two non-ASCII folds: an
        // ASCII path has its segments at the same offsets folded.
        let same = !folds || hay.len() == f.len();
        // Every segment's bounds, as it is and folded, up to `MAX_SEGS`.
        let mut segs = [Seg::default(); MAX_SEGS];
        let mut n = 0usize;
        let mut all = true;
        let (mut o, mut s) = (0usize, 0usize);
        loop {
            // The segment's end and its last `.`, in one scan.
            let mut oe = hay.len();
            let mut dot = None;
            for (i, &b) in hay.get(o..).unwrap_or_default().iter().enumerate() {
                if b == b'/' {
                    oe = o + i;
                    break;
                }
                if b == b'.' {
                    dot = Some(o + i);
                }
            }
            let se = if same {
                oe
            } else {
                f.get(s..)
                    .and_then(|r| r.iter().position(|&b| b == b'/'))
                    .map_or(f.len(), |i| s + i)
            };
            match segs.get_mut(n) {
                Some(slot) => {
                    *slot = Seg {
                        o,
                        oe,
                        s,
                        se,
                        dot,
                        scanned: same,
                        code: NO_CODE,
                    };
                    n += 1;
                }
                None => all = false,
            }
            if oe >= hay.len() {
                break;
            }
            o = oe + 1;
            s = se + 1;
        }
        let q = Query { hay, f };
        if all {
            for j in 0..n {
                self.segment(&q, j, &mut segs[..n], true, out);
            }
        } else {
            // A deeper path than the index holds: segment by segment, the
            // tails checked by splitting the rest.
            let (mut o, mut s) = (0usize, 0usize);
            loop {
                let oe = hay
                    .get(o..)
                    .and_then(|r| r.iter().position(|&b| b == b'/'))
                    .map_or(hay.len(), |i| o + i);
                let se = f
                    .get(s..)
                    .and_then(|r| r.iter().position(|&b| b == b'/'))
                    .map_or(f.len(), |i| s + i);
                let mut one = [Seg {
                    o,
                    oe,
                    s,
                    se,
                    dot: None,
                    scanned: false,
                    code: NO_CODE,
                }];
                self.segment(&q, 0, &mut one, false, out);
                if oe >= hay.len() {
                    break;
                }
                o = oe + 1;
                s = se + 1;
            }
        }
    }

    /// The lookups of segment `j` of `segs`: its name, its extension, and
    /// the path up to its end. Prefix rules' tails are checked against the
    /// later segments of `segs` when it holds any, else by splitting the
    /// rest of the path.
    #[inline]
    fn segment(
        &self,
        q: &Query<'_>,
        j: usize,
        segs: &mut [Seg],
        indexed: bool,
        out: &mut Vec<u32>,
    ) {
        let Some(&me) = segs.get(j) else {
            return;
        };
        let Seg { o, oe, s, se, .. } = me;
        let (hay, f) = (q.hay, q.f);
        let (Some(oseg), Some(sseg)) = (hay.get(o..oe), f.get(s..se)) else {
            return;
        };
        if !self.name.is_empty() {
            let key = if self.name.folds { sseg } else { oseg };
            if let Some(es) = self.name.map.get(key) {
                for (e, _) in es.iter() {
                    if e.folded || !self.name.folds || *e.text == *oseg {
                        out.push(e.id);
                    }
                }
            }
        }
        if !self.ext.is_empty() {
            let ext = if self.ext.folds {
                me.ext(f, true)
            } else {
                me.ext(hay, false)
            };
            if let Some(es) = ext.and_then(|k| self.ext.map.get(k)) {
                for (e, _) in es.iter() {
                    let against = if e.folded { sseg } else { oseg };
                    if against.ends_with(&e.text) {
                        out.push(e.id);
                    }
                }
            }
        }
        if self.prefix.is_empty() {
            return;
        }
        // The path up to this segment's `/` (the terminator after the
        // last one).
        let (Some(op), Some(sp)) = (hay.get(..oe), f.get(..se)) else {
            return;
        };
        let key = if self.prefix.folds { sp } else { op };
        let Some(es) = self.prefix.map.get(key) else {
            return;
        };
        let (rest, frest) = (
            hay.get(oe + 1..).unwrap_or_default(),
            f.get(se + 1..).unwrap_or_default(),
        );
        let case_ok = |e: &Entry| e.folded || !self.prefix.folds || *e.text == *op;
        // Coded entries are looked up by the codes of the later segments
        // when `segs` holds them all.
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
            return;
        }
        for k in j + 1..segs.len() {
            let Some(sg) = segs.get_mut(k) else { break };
            if sg.code == NO_CODE {
                sg.code = code_of_ext(if self.prefix.folds {
                    sg.ext(f, true)
                } else {
                    sg.ext(hay, false)
                });
            }
            let code = sg.code;
            let from = coded.partition_point(|(_, c)| *c < code);
            for (e, c) in coded.get(from..).unwrap_or_default() {
                // The run of this code.
                if *c != code {
                    break;
                }
                let t = match &e.tail {
                    Tail::Child(t) if k == j + 1 => t,
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
    }
}

/// Segments a query indexes for the tails of prefix rules; a deeper path
/// is checked segment by segment, its tails by splitting.
const MAX_SEGS: usize = 16;

/// One segment of a query: its bounds in the path as it is (`o..oe`) and
/// folded (`s..se`), and its extension code once computed.
#[derive(Clone, Copy, Debug, Default)]
struct Seg {
    o: usize,
    oe: usize,
    s: usize,
    se: usize,
    /// Where its last `.` is (at the same offset in both forms), when
    /// `scanned`.
    dot: Option<usize>,
    scanned: bool,
    code: u64,
}

impl Seg {
    /// Its final extension in `text` (the path as it is or folded).
    #[inline]
    fn ext<'t>(&self, text: &'t [u8], folded: bool) -> Option<&'t [u8]> {
        match self.dot {
            Some(d) if self.scanned => text.get(d..self.oe),
            None if self.scanned => None,
            _ => {
                let seg = if folded {
                    text.get(self.s..self.se)
                } else {
                    text.get(self.o..self.oe)
                };
                seg.and_then(final_ext)
            }
        }
    }
}

/// A query's path as it is and folded.
struct Query<'a> {
    hay: &'a [u8],
    f: &'a [u8],
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
