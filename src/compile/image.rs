//! Compiled matchers as bytes, and back, with validation.
//!
//! # Format (version 9)
//!
//! ```text
//! magic    8 bytes  "toolgate"
//! kind     8 bytes  "matcher\0" (one KindMatcher), "policy\0\0" (a
//!                   policy's matchers) or "compiled" (a whole precompiled
//!                   policy, `crate::policy::image`)
//! version  u32 LE   9
//! reserved u32 LE   0
//! length   u64 LE   payload length
//! checksum u64 LE   of the payload (see `checksum`)
//! payload
//! ```
//!
//! Version 3 holds sparse tables and every walk (version 2 had one or the
//! other) and the deferred rules of the lazy engine with their walk.
//! Version 4 adds the routed automata of each matcher and their keys.
//! Version 5 stores a precompiled policy's rules in precedence order,
//! each with its place in policy order (`crate::policy::image`).
//! It also adds, at the end of each matcher, its path tables (prefix,
//! name, extension): each a count and, per entry, the rule id, a flag
//! byte (bit 0: case-insensitive; bits 1–2: what a prefix rule asks of
//! the rest of the path — nothing, something, a next segment ending with
//! a text, some later segment ending with it), the text and that text
//! (empty for the first two); the hash keys are derived from the texts
//! when loading.
//!
//! Version 6 stores a deferred rule that is literals and runs of any
//! bytes (see `lazy`) as a glob: after its walk, a form byte (0: a regex,
//! its text follows; 1: a glob, its tail byte follows — 0 nothing, 1 one
//! more byte, 2 the end, 3 a space or the end — and then its literals,
//! each a u32 length and its bytes, as one byte string), then the literal
//! that must fit. A glob's literals are raw bytes, compared as they are:
//! neither a regex to compile nor text to check as UTF-8.
//!
//! Version 7 changes only the fingerprint of the rules: it is taken with
//! their `Hash` instead of over their formatted text.
//!
//! Version 8 gives each routing key, after the indices of its automata,
//! the ids of the word-prefix rules it matches outright (see `route`),
//! and ends each matcher with its checked rules (literals joined by stars,
//! found by their last literal): a count and, per rule, its id, the count
//! of its literals (at least two) and each literal (not empty).
//!
//! Version 9 lays out the same bytes; a case-insensitive path-table text
//! may now hold characters beyond ASCII that have no other case forms
//! (an image of version 8 rejected them).
//!
//! All integers are little-endian; each DFA is a kind byte (dense or
//! sparse) and regex-automata's own little-endian serialization, 8-byte
//! aligned within the payload. Loading
//! checks the header and the checksum, then every DFA with regex-automata's
//! validating (safe) `from_bytes`, then that every rule id is in range, so a
//! stale, foreign, truncated or corrupt image is an [`ErrorKind::Image`]
//! error, never a panic. An image built on a big-endian machine does not
//! load on a little-endian one, and the other way round.

use super::lazy::{LazyBuilder, LazyRules, Tail as GlobTail};
use super::matcher::{Auto, KindMatcher, Slow, Table, Walk};
use super::route::{ByteMap, Hit, Routes};
use super::table::{Entry, PathTables, Table as PathTable, TableKind, Tail};
use super::{AnchorKey, Config, Deferred, PathMatcher, Policy};
use crate::error::{Error, ErrorKind};
use crate::rule::{Effect, Pattern, Rule};
use std::collections::HashMap;
use std::sync::Arc;

/// The kind of a rule's pattern, known without the pattern itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PatternKind {
    /// [`Pattern::Any`].
    Any,
    /// [`Pattern::Command`].
    Command,
    /// [`Pattern::Path`].
    Path,
    /// [`Pattern::Domain`].
    Domain,
    /// [`Pattern::Field`].
    Field,
    /// [`Pattern::Tokens`].
    Tokens,
    /// [`Pattern::Opaque`].
    Opaque,
}

impl PatternKind {
    /// The kind of `p`.
    pub(crate) fn of(p: &Pattern) -> PatternKind {
        match p {
            Pattern::Any => PatternKind::Any,
            Pattern::Command(_) => PatternKind::Command,
            Pattern::Path(_) => PatternKind::Path,
            Pattern::Domain(_) => PatternKind::Domain,
            Pattern::Field { .. } => PatternKind::Field,
            Pattern::Tokens(_) => PatternKind::Tokens,
            Pattern::Opaque(_) => PatternKind::Opaque,
        }
    }
}

/// Rules kept in an image and decoded when first asked for (see
/// `crate::policy::image`): the effect and pattern kind of every rule are
/// known without decoding it.
pub(crate) trait RuleSource: std::fmt::Debug + Send + Sync {
    /// How many rules there are.
    fn len(&self) -> usize;
    /// The effect and pattern kind of the rule with this id.
    fn head(&self, id: u32) -> Option<(Effect, PatternKind)>;
    /// The rule with this id, decoded on first use.
    fn rule(&self, id: u32) -> Option<&Rule>;
    /// Every rule, in id order (decoded on first use, all at once).
    fn all(&self) -> &[Rule];
}

/// The rules of a compiled policy, by id (deny, ask, allow; each in policy
/// order): held, or read from an image rule by rule when first asked for.
#[derive(Clone, Debug)]
pub(crate) enum RuleTable {
    /// Rules held.
    Owned(Vec<Rule>),
    /// Rules of an image, decoded on first use.
    Image(Arc<dyn RuleSource>),
}

impl Default for RuleTable {
    fn default() -> RuleTable {
        RuleTable::Owned(Vec::new())
    }
}

impl RuleTable {
    /// How many rules there are.
    pub(crate) fn len(&self) -> usize {
        match self {
            RuleTable::Owned(v) => v.len(),
            RuleTable::Image(s) => s.len(),
        }
    }

    /// The rule with this id.
    pub(crate) fn get(&self, id: u32) -> Option<&Rule> {
        match self {
            RuleTable::Owned(v) => v.get(id as usize),
            RuleTable::Image(s) => s.rule(id),
        }
    }

    /// The effect and pattern kind of the rule with this id, without
    /// decoding it.
    pub(crate) fn head(&self, id: u32) -> Option<(Effect, PatternKind)> {
        match self {
            RuleTable::Owned(v) => v
                .get(id as usize)
                .map(|r| (r.effect, PatternKind::of(&r.pattern))),
            RuleTable::Image(s) => s.head(id),
        }
    }

    /// Every rule, in id order.
    pub(crate) fn all(&self) -> &[Rule] {
        match self {
            RuleTable::Owned(v) => v,
            RuleTable::Image(s) => s.all(),
        }
    }
}

const MAGIC: &[u8; 8] = b"toolgate";
const KIND_MATCHER: &[u8; 8] = b"matcher\0";
const KIND_POLICY: &[u8; 8] = b"policy\0\0";
/// A whole precompiled policy (`crate::policy::image`).
pub(crate) const KIND_COMPILED: &[u8; 8] = b"compiled";
const VERSION: u32 = 9;
const HEADER: usize = 8 + 8 + 4 + 4 + 8 + 8;

pub(crate) fn image_error(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::Image, msg)
}

/// Why a piece of an image does not decode: most often a fixed clause.
/// The readers return it rather than an [`Error`] so that every byte,
/// integer and string read returns a value of two words (an `Error` is
/// some 130 bytes, and decoding a policy reads tens of thousands of
/// values); it becomes an [`ErrorKind::Image`] error where decoding ends.
#[derive(Debug)]
pub(crate) enum Bad {
    /// The message of the image error.
    Clause(&'static str),
    /// An error made already.
    Full(Box<Error>),
}

impl From<Bad> for Error {
    fn from(b: Bad) -> Error {
        match b {
            Bad::Clause(c) => image_error(c),
            Bad::Full(e) => *e,
        }
    }
}

impl From<Error> for Bad {
    fn from(e: Error) -> Bad {
        Bad::Full(Box::new(e))
    }
}

/// A 64-bit checksum over four interleaved lanes (fast enough to check a
/// 40 MB image in a few milliseconds). Written here because none of the
/// crates the project may use offers a checksum.
pub(crate) fn checksum(data: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h: [u64; 4] = [
        K ^ data.len() as u64,
        0x243F_6A88_85A3_08D3,
        0x1319_8A2E_0370_7344,
        0xA409_3822_299F_31D0,
    ];
    let word = |b: &[u8]| {
        let mut w = [0u8; 8];
        w[..b.len()].copy_from_slice(b);
        u64::from_le_bytes(w)
    };
    let mut chunks = data.chunks_exact(32);
    for c in &mut chunks {
        for (i, lane) in h.iter_mut().enumerate() {
            *lane = (*lane ^ word(&c[i * 8..i * 8 + 8]))
                .wrapping_mul(K)
                .rotate_left(29);
        }
    }
    for (i, b) in chunks.remainder().chunks(8).enumerate() {
        h[i] = (h[i] ^ word(b)).wrapping_mul(K).rotate_left(29);
    }
    let mut x = h[0];
    for lane in &h[1..] {
        x = (x ^ lane.rotate_left(17)).wrapping_mul(K);
    }
    x ^ (x >> 31)
}

/// Little-endian writer of an image payload.
#[derive(Default)]
pub(crate) struct Writer {
    pub(crate) buf: Vec<u8>,
}

impl Writer {
    pub(crate) fn u8(&mut self, x: u8) {
        self.buf.push(x);
    }
    pub(crate) fn u32(&mut self, x: u32) {
        self.buf.extend_from_slice(&x.to_le_bytes());
    }
    pub(crate) fn u64(&mut self, x: u64) {
        self.buf.extend_from_slice(&x.to_le_bytes());
    }
    pub(crate) fn len(&mut self, x: usize) {
        self.u32(x as u32);
    }
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.len(b.len());
        self.buf.extend_from_slice(b);
    }
    fn ids(&mut self, ids: &[u32]) {
        self.len(ids.len());
        for &i in ids {
            self.u32(i);
        }
    }
    fn align8(&mut self) {
        while self.buf.len() % 8 != 0 {
            self.buf.push(0);
        }
    }
}

/// Validating reader of an image payload.
pub(crate) struct Reader<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], Bad> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or(Bad::Clause("image is truncated"))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    pub(crate) fn u8(&mut self) -> Result<u8, Bad> {
        Ok(self.take(1)?[0])
    }
    pub(crate) fn u32(&mut self) -> Result<u32, Bad> {
        let mut w = [0u8; 4];
        w.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(w))
    }
    pub(crate) fn u64(&mut self) -> Result<u64, Bad> {
        let mut w = [0u8; 8];
        w.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(w))
    }
    pub(crate) fn len(&mut self) -> Result<usize, Bad> {
        let n = self.u32()? as usize;
        // Every counted item takes at least one byte.
        if n > self.buf.len() - self.pos.min(self.buf.len()) {
            return Err(Bad::Clause("image is truncated"));
        }
        Ok(n)
    }
    pub(crate) fn bytes(&mut self) -> Result<&'a [u8], Bad> {
        let n = self.len()?;
        self.take(n)
    }
    fn ids(&mut self, bound: u32) -> Result<Vec<u32>, Bad> {
        let n = self.len()?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            let id = self.u32()?;
            if id >= bound {
                return Err(Bad::Clause("image names a rule id out of range"));
            }
            v.push(id);
        }
        Ok(v)
    }
    /// A list of rule ids left where it is, each checked to be below
    /// `bound`: its bytes (4 a rule id) and its length.
    fn ids_in_place(&mut self, bound: u32) -> Result<(&'a [u8], usize), Bad> {
        let n = self.len()?;
        let bytes = self.take(n.checked_mul(4).ok_or(Bad::Clause("image is truncated"))?)?;
        for id in bytes.chunks_exact(4) {
            if u32::from_le_bytes([id[0], id[1], id[2], id[3]]) >= bound {
                return Err(Bad::Clause("image names a rule id out of range"));
            }
        }
        Ok((bytes, n))
    }
    pub(crate) fn str(&mut self) -> Result<&'a str, Bad> {
        std::str::from_utf8(self.bytes()?).map_err(|_| Bad::Clause("image holds invalid UTF-8"))
    }
    fn align8(&mut self) -> Result<(), Bad> {
        let pad = (8 - self.pos % 8) % 8;
        self.take(pad).map(|_| ())
    }
}

fn write_matcher(w: &mut Writer, m: &KindMatcher) {
    match m.term {
        None => {
            w.u8(0);
            w.u8(0);
        }
        Some(t) => {
            w.u8(1);
            w.u8(t);
        }
    }
    w.u32(m.id_bound);
    w.ids(&m.always);
    let mut exact: std::collections::BTreeMap<&[u8], Vec<u32>> = Default::default();
    for (k, ids) in m
        .exact
        .iter()
        .map(|(k, ids)| (&k[..], ids.clone()))
        .chain(m.exact_shared.iter())
    {
        exact.entry(k).or_default().extend(ids);
    }
    w.len(exact.len());
    for (k, ids) in exact {
        w.bytes(k);
        w.ids(&ids);
    }
    write_autos(w, &m.autos);
    w.u8(m.routes.sep);
    w.u8(m.routes.depth);
    write_autos(w, &m.routes.autos);
    for map in [&m.routes.exact, &m.routes.folded] {
        let mut keys: Vec<_> = map.iter().collect();
        keys.sort_by(|a, b| a.0.cmp(b.0));
        w.len(keys.len());
        for (k, hit) in keys {
            w.bytes(k);
            w.ids(&hit.autos);
            w.ids(&hit.ids);
        }
    }
    w.len(m.slow.len());
    for s in &m.slow {
        w.u8(s.walk.to_byte());
        w.u32(s.id);
        w.bytes(s.src.as_bytes());
    }
    for t in [&m.tables.prefix, &m.tables.name, &m.tables.ext] {
        let entries = t.entries();
        w.len(entries.len());
        for e in entries {
            w.u32(e.id);
            let (tail, tail_text): (u8, &[u8]) = match &e.tail {
                Tail::Free => (0, &[]),
                Tail::More => (1, &[]),
                Tail::Child(t) => (2, t),
                Tail::Deep(t) => (3, t),
            };
            w.u8(u8::from(e.folded) | tail << 1);
            w.bytes(&e.text);
            w.bytes(tail_text);
        }
    }
    let mut checks: Vec<_> = m.checks.iter().collect();
    checks.sort_by_key(|(id, _)| **id);
    w.len(checks.len());
    for (id, lits) in checks {
        w.u32(*id);
        w.len(lits.len());
        for l in lits.iter() {
            w.bytes(l);
        }
    }
}

fn write_autos(w: &mut Writer, autos: &[Auto]) {
    w.len(autos.len());
    for a in autos {
        w.u8(a.walk.to_byte());
        w.len(a.ids.len());
        for ids in a.ids.iter() {
            w.ids(ids);
        }
        match &a.first {
            None => w.u8(0),
            Some(set) => {
                w.u8(1);
                for x in set {
                    w.buf.extend_from_slice(&x.to_le_bytes());
                }
            }
        }
        let (kind, dfa) = a.table.to_bytes();
        w.u8(kind);
        w.len(dfa.len());
        w.align8();
        w.buf.extend_from_slice(&dfa);
    }
}

/// Copies `src` to 8-byte-aligned memory when it is not already aligned.
fn load_table(kind: u8, src: &[u8]) -> Result<Table, Error> {
    if src.as_ptr().align_offset(8) == 0 {
        return Table::from_bytes(kind, src).map_err(image_error);
    }
    let mut v = vec![0u8; src.len() + 8];
    let off = v.as_ptr().align_offset(8);
    let dst = v
        .get_mut(off..off.saturating_add(src.len()))
        .ok_or_else(|| image_error("cannot align an automaton"))?;
    dst.copy_from_slice(src);
    Table::from_bytes(kind, dst).map_err(image_error)
}

fn read_walk(r: &mut Reader<'_>) -> Result<Walk, Bad> {
    Walk::from_byte(r.u8()?).ok_or(Bad::Clause("image has an invalid walk"))
}

/// Reads a matcher; with `shared` (the buffer `r` reads from, kept with
/// the matcher), its exact literals are left there.
fn read_matcher(
    r: &mut Reader<'_>,
    rules: u32,
    cfg: &Config,
    shared: Option<&Arc<Vec<u8>>>,
) -> Result<KindMatcher, Bad> {
    let term = match (r.u8()?, r.u8()?) {
        (0, _) => None,
        (1, t) => Some(t),
        _ => return Err(Bad::Clause("image has an invalid terminator")),
    };
    let id_bound = r.u32()?;
    if id_bound > rules {
        return Err(Bad::Clause("image names a rule id out of range"));
    }
    let always = r.ids(id_bound)?;
    let n = r.len()?;
    let mut exact = ByteMap::default();
    let mut exact_shared = SharedExact::default();
    match shared {
        Some(buf) => exact_shared = SharedExact::read(r, n, id_bound, buf)?,
        None => {
            exact.reserve(n);
            let mut last: Option<&[u8]> = None;
            for _ in 0..n {
                let k = r.bytes()?;
                if last.is_some_and(|l| l >= k) {
                    return Err(Bad::Clause(EXACT_ORDER));
                }
                last = Some(k);
                let ids = r.ids(id_bound)?;
                exact.insert(k.into(), ids);
            }
        }
    }
    let autos = read_autos(r, id_bound)?;
    let sep = r.u8()?;
    let depth = r.u8()?;
    let routed = read_autos(r, id_bound)?;
    let mut maps: [ByteMap<Hit>; 2] = Default::default();
    for map in &mut maps {
        let n = r.len()?;
        map.reserve(n);
        for _ in 0..n {
            let k = r.bytes()?.to_vec().into_boxed_slice();
            let autos = r.ids(u32::try_from(routed.len()).unwrap_or(u32::MAX))?;
            let ids = r.ids(id_bound)?;
            map.insert(
                k,
                Hit {
                    autos: autos.into_boxed_slice(),
                    ids: ids.into_boxed_slice(),
                },
            );
        }
    }
    let [exact_keys, folded_keys] = maps;
    let n = r.len()?;
    let mut slow = Vec::with_capacity(n);
    for _ in 0..n {
        let walk = read_walk(r)?;
        let id = r.u32()?;
        if id >= id_bound {
            return Err(Bad::Clause("image names a rule id out of range"));
        }
        let src = r.str()?;
        let s: Slow = super::strategy::build_slow(src, walk, id, cfg).map_err(|f| {
            image_error(format!(
                "image holds a rule that does not compile: {}",
                f.message
            ))
        })?;
        slow.push(s);
    }
    let mut tables = Vec::new();
    for kind in [TableKind::Prefix, TableKind::Name, TableKind::Ext] {
        let n = r.len()?;
        let mut entries = Vec::with_capacity(n);
        for _ in 0..n {
            let id = r.u32()?;
            if id >= id_bound {
                return Err(Bad::Clause("image names a rule id out of range"));
            }
            let flags = r.u8()?;
            let text = r.bytes()?;
            let tail_text = r.bytes()?;
            let folded = flags & 1 != 0;
            // A case-insensitive text is its own fold (see `table`).
            let lower = |t: &[u8]| {
                !t.iter().any(u8::is_ascii_uppercase) && super::table::caseless_beyond_ascii(t)
            };
            let tail = match flags >> 1 {
                0 => Tail::Free,
                1 => Tail::More,
                2 => Tail::Child(tail_text.into()),
                3 => Tail::Deep(tail_text.into()),
                _ => return Err(Bad::Clause("image holds an invalid path table")),
            };
            let tail_ok = match &tail {
                Tail::Free | Tail::More => tail_text.is_empty(),
                Tail::Child(t) | Tail::Deep(t) => {
                    kind == TableKind::Prefix
                        && !t.is_empty()
                        && !t.contains(&b'/')
                        && (!folded || lower(t))
                }
            };
            let valid = tail_ok
                && !text.is_empty()
                && (!folded || lower(text))
                && (kind != TableKind::Ext || text.contains(&b'.'));
            if !valid {
                return Err(Bad::Clause("image holds an invalid path table"));
            }
            entries.push(Entry {
                id,
                text: text.into(),
                folded,
                tail,
            });
        }
        tables.push(PathTable::from_entries(entries, kind));
    }
    let n = r.len()?;
    let mut checks = HashMap::default();
    for _ in 0..n {
        let id = r.u32()?;
        let k = r.len()?;
        if id >= id_bound || k < 2 {
            return Err(Bad::Clause("image holds an invalid literal check"));
        }
        let mut lits = Vec::with_capacity(k);
        for _ in 0..k {
            let l = r.bytes()?;
            if l.is_empty() {
                return Err(Bad::Clause("image holds an invalid literal check"));
            }
            lits.push(l.into());
        }
        if checks.insert(id, lits.into_boxed_slice()).is_some() {
            return Err(Bad::Clause("image holds an invalid literal check"));
        }
    }
    let mut tables = tables.into_iter();
    let tables = PathTables {
        prefix: tables.next().unwrap_or_default(),
        name: tables.next().unwrap_or_default(),
        ext: tables.next().unwrap_or_default(),
    };
    Ok(KindMatcher {
        term,
        always,
        exact,
        exact_shared,
        tables,
        routes: Routes {
            sep,
            depth,
            exact: exact_keys,
            folded: folded_keys,
            autos: routed,
        },
        autos,
        slow,
        checks,
        id_bound,
    })
}

fn read_autos(r: &mut Reader<'_>, id_bound: u32) -> Result<Vec<Auto>, Bad> {
    let n = r.len()?;
    let mut autos = Vec::with_capacity(n);
    for _ in 0..n {
        let walk = read_walk(r)?;
        let n = r.len()?;
        let mut ids = Vec::with_capacity(n);
        for _ in 0..n {
            ids.push(r.ids(id_bound)?.into_boxed_slice());
        }
        let ids = ids.into_boxed_slice();
        let first = match r.u8()? {
            0 => None,
            1 => {
                let mut set = [0u64; 4];
                for x in &mut set {
                    let mut w = [0u8; 8];
                    w.copy_from_slice(r.take(8)?);
                    *x = u64::from_le_bytes(w);
                }
                Some(set)
            }
            _ => return Err(Bad::Clause("image has an invalid dispatch set")),
        };
        let kind = r.u8()?;
        let len = r.len()?;
        r.align8()?;
        let dfa = load_table(kind, r.take(len)?)?;
        let auto = Auto::new(dfa, walk, ids, first).ok_or(Bad::Clause(
            "image holds an automaton that does not fit its rules",
        ))?;
        autos.push(auto);
    }
    Ok(autos)
}

pub(crate) fn frame(kind: &[u8; 8], payload: Vec<u8>) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(kind);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    out
}

pub(crate) fn unframe<'a>(kind: &[u8; 8], bytes: &'a [u8]) -> Result<&'a [u8], Error> {
    unframe_with(kind, bytes, true)
}

/// [`unframe`]; without `verify`, the checksum is not computed (for bytes
/// that lie in an image whose own checksum, checked already, covers them).
fn unframe_with<'a>(kind: &[u8; 8], bytes: &'a [u8], verify: bool) -> Result<&'a [u8], Error> {
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err(image_error("not a toolgate image"));
    }
    if &bytes[8..16] != kind {
        return Err(image_error("image holds another kind of object"));
    }
    let mut r = Reader {
        buf: &bytes[16..HEADER],
        pos: 0,
    };
    let version = r.u32()?;
    if version != VERSION {
        return Err(image_error(format!(
            "image format version {version} is not supported (expected {VERSION})"
        )));
    }
    let _reserved = r.u32()?;
    let mut w = [0u8; 8];
    w.copy_from_slice(r.take(8)?);
    let len = u64::from_le_bytes(w);
    w.copy_from_slice(r.take(8)?);
    let sum = u64::from_le_bytes(w);
    let payload = &bytes[HEADER..];
    if payload.len() as u64 != len {
        return Err(image_error("image is truncated or has trailing bytes"));
    }
    if verify && checksum(payload) != sum {
        return Err(image_error(
            "image checksum does not match: the image is corrupt",
        ));
    }
    Ok(payload)
}

impl KindMatcher {
    /// Serializes the matcher (see the format in the module source).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer::default();
        write_matcher(&mut w, self);
        frame(KIND_MATCHER, w.buf)
    }

    /// Loads a matcher written by [`KindMatcher::to_bytes`], validating it;
    /// `rules` is the number of rules of its policy (every id must be
    /// below it).
    pub fn from_bytes(bytes: &[u8], rules: u32) -> Result<KindMatcher, Error> {
        let payload = unframe(KIND_MATCHER, bytes)?;
        let mut r = Reader {
            buf: payload,
            pos: 0,
        };
        let m = read_matcher(&mut r, rules, &Config::new(), None)?;
        if r.pos != payload.len() {
            return Err(image_error("image has trailing bytes"));
        }
        Ok(m)
    }
}

fn write_lazy(w: &mut Writer, l: &LazyRules) {
    match l.term {
        None => {
            w.u8(0);
            w.u8(0);
        }
        Some(t) => {
            w.u8(1);
            w.u8(t);
        }
    }
    w.len(l.rules.len());
    for r in &l.rules {
        w.u32(r.id);
        w.u8(r.walk.to_byte());
        match LazyRules::glob_tail(r) {
            None => w.u8(0),
            Some(t) => {
                w.u8(1);
                w.u8(t.to_byte());
            }
        }
        w.bytes(l.text(r));
        w.bytes(l.lit(r));
    }
}

/// Reads deferred rules. Their literals are read as recorded (the payload
/// is checksummed, and a literal can only narrow when its rule is tried,
/// never what the rule matches); whether they fail closed comes from the
/// rules' effects. With `shared` (the buffer `r` reads from, kept with the
/// rules), their texts are left there.
fn read_lazy(
    r: &mut Reader<'_>,
    rules: &RuleTable,
    shared: Option<&Arc<Vec<u8>>>,
) -> Result<LazyRules, Bad> {
    let term = match (r.u8()?, r.u8()?) {
        (0, _) => None,
        (1, t) => Some(t),
        _ => return Err(Bad::Clause("image has an invalid terminator")),
    };
    let n = r.len()?;
    let mut out = match shared {
        Some(buf) => LazyBuilder::sharing(term, buf, n),
        None => LazyBuilder::new(term, &Config::new()),
    };
    for _ in 0..n {
        let id = r.u32()?;
        let walk = Walk::from_byte(r.u8()?).ok_or(Bad::Clause("image holds an unknown walk"))?;
        let glob = match r.u8()? {
            0 => None,
            1 => Some(GlobTail::from_byte(r.u8()?).ok_or(Bad::Clause(BAD_GLOB))?),
            _ => return Err(Bad::Clause(BAD_GLOB)),
        };
        let (effect, _) = rules
            .head(id)
            .ok_or(Bad::Clause("image names a rule id out of range"))?;
        let fail_closed = effect != Effect::Allow;
        match glob {
            None => {
                let src = r.str()?;
                let lit = r.bytes()?;
                out.push(id, walk, src, Some(lit), fail_closed)
                    .ok_or(Bad::Clause("image holds a deferred rule that is too long"))?;
            }
            Some(tail) => {
                let pieces = r.bytes()?;
                let lit = r.bytes()?;
                out.push_glob(id, walk, tail, pieces, lit, fail_closed)
                    .ok_or(Bad::Clause(BAD_GLOB))?;
            }
        }
    }
    Ok(out.finish())
}

/// Why a deferred rule stored as a glob is refused.
const BAD_GLOB: &str = "image holds an invalid deferred glob";

/// Why exact literals that are not strictly increasing are refused (the
/// image writes them sorted, and a lookup in place searches them so).
const EXACT_ORDER: &str = "image holds its exact literals out of order";

/// The exact literals of a matcher read from an image that is kept as long
/// as the matcher: each entry points into the image (its key and its rule
/// ids) instead of being copied into a hash map, and a key is found by a
/// binary search (the image holds them sorted, which loading checks).
#[derive(Clone, Debug, Default)]
pub(crate) struct SharedExact {
    buf: Arc<Vec<u8>>,
    /// `(key start, key length, ids start, id count)`, by key, strictly
    /// increasing.
    entries: Box<[(usize, usize, usize, usize)]>,
}

impl SharedExact {
    /// Reads `n` entries from `r`, whose bytes lie in `buf`: every rule id
    /// below `id_bound`, the keys strictly increasing.
    fn read(
        r: &mut Reader<'_>,
        n: usize,
        id_bound: u32,
        buf: &Arc<Vec<u8>>,
    ) -> Result<SharedExact, Bad> {
        let at = |part: &[u8]| {
            (part.as_ptr() as usize)
                .checked_sub(buf.as_ptr() as usize)
                .filter(|&a| a.checked_add(part.len()).is_some_and(|e| e <= buf.len()))
                .ok_or(Bad::Clause("image matchers lie outside the image"))
        };
        let mut entries = Vec::with_capacity(n);
        let mut last: Option<&[u8]> = None;
        for _ in 0..n {
            let key = r.bytes()?;
            if last.is_some_and(|l| l >= key) {
                return Err(Bad::Clause(EXACT_ORDER));
            }
            last = Some(key);
            let (ids, count) = r.ids_in_place(id_bound)?;
            entries.push((at(key)?, key.len(), at(ids)?, count));
        }
        Ok(SharedExact {
            buf: Arc::clone(buf),
            entries: entries.into_boxed_slice(),
        })
    }

    /// Whether there is no entry.
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many keys there are.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    fn key(&self, &(at, len, _, _): &(usize, usize, usize, usize)) -> &[u8] {
        self.buf.get(at..at.saturating_add(len)).unwrap_or_default()
    }

    fn ids(&self, &(_, _, at, n): &(usize, usize, usize, usize)) -> impl Iterator<Item = u32> {
        self.buf
            .get(at..at.saturating_add(n.saturating_mul(4)))
            .unwrap_or_default()
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Appends the ids of the rules whose literal is `hay`.
    #[inline]
    pub(crate) fn find_into(&self, hay: &[u8], out: &mut Vec<u32>) {
        if let Ok(i) = self.entries.binary_search_by(|e| self.key(e).cmp(hay)) {
            if let Some(e) = self.entries.get(i) {
                out.extend(self.ids(e));
            }
        }
    }

    /// Every key and its rule ids.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&[u8], Vec<u32>)> {
        self.entries
            .iter()
            .map(|e| (self.key(e), self.ids(e).collect()))
    }
}

/// A fingerprint of an ordered rule list: what an image was built from.
/// Taken with the rules' own `Hash` (effect, dialect, tool, pattern and
/// source, each rule as a whole), through [`FingerprintHasher`], which
/// writes every integer little-endian and at 64 bits, so a fingerprint is
/// the same on every platform for one build (formatting the rules, as
/// before, took a quarter of loading 10,000 rules).
fn fingerprint(rules: &[Rule]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = FingerprintHasher::default();
    h.write_u64(rules.len() as u64);
    for r in rules {
        r.effect.hash(&mut h);
        r.dialect.hash(&mut h);
        r.tool.hash(&mut h);
        r.pattern.hash(&mut h);
        r.provenance.source.hash(&mut h);
    }
    h.finish()
}

/// The hasher of [`fingerprint`]: two lanes of multiply-rotate over 8-byte
/// words (the standard library's `DefaultHasher` is not promised stable,
/// and hashing here must not depend on the platform's integer width or
/// byte order).
#[derive(Default)]
struct FingerprintHasher {
    a: u64,
    b: u64,
    n: u64,
}

impl FingerprintHasher {
    #[inline]
    fn word(&mut self, w: u64) {
        const K1: u64 = 0x9E37_79B9_7F4A_7C15;
        const K2: u64 = 0xC2B2_AE3D_27D4_EB4F;
        self.a = (self.a ^ w).wrapping_mul(K1).rotate_left(29);
        self.b = (self.b.rotate_left(23) ^ w ^ self.n).wrapping_mul(K2);
        self.n = self.n.wrapping_add(1);
    }
}

impl std::hash::Hasher for FingerprintHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.word(bytes.len() as u64);
        let mut words = bytes.chunks_exact(8);
        for c in &mut words {
            self.word(<[u8; 8]>::try_from(c).map_or(0, u64::from_le_bytes));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let w = rest.iter().rev().fold(0u64, |w, &b| w << 8 | u64::from(b));
            self.word(w);
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.word(u64::from(i));
    }
    fn write_u16(&mut self, i: u16) {
        self.word(u64::from(i));
    }
    fn write_u32(&mut self, i: u32) {
        self.word(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.word(i);
    }
    fn write_u128(&mut self, i: u128) {
        self.word(i as u64);
        self.word((i >> 64) as u64);
    }
    fn write_usize(&mut self, i: usize) {
        self.word(i as u64);
    }
    fn write_i8(&mut self, i: i8) {
        self.word(i as u64);
    }
    fn write_i16(&mut self, i: i16) {
        self.word(i as u64);
    }
    fn write_i32(&mut self, i: i32) {
        self.word(i as u64);
    }
    fn write_i64(&mut self, i: i64) {
        self.word(i as u64);
    }
    fn write_i128(&mut self, i: i128) {
        self.write_u128(i as u128);
    }
    fn write_isize(&mut self, i: isize) {
        self.word(i as u64);
    }
    fn finish(&self) -> u64 {
        let x = (self.a ^ self.b.rotate_left(17)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x ^ (x >> 31)
    }
}

fn write_key(w: &mut Writer, k: &AnchorKey) {
    match k {
        AnchorKey::Root => w.u8(0),
        AnchorKey::Home => w.u8(1),
        AnchorKey::Project => w.u8(2),
        AnchorKey::Source(s) => {
            w.u8(3);
            w.bytes(s.as_bytes());
        }
    }
}

fn read_key(r: &mut Reader<'_>) -> Result<AnchorKey, Bad> {
    Ok(match r.u8()? {
        0 => AnchorKey::Root,
        1 => AnchorKey::Home,
        2 => AnchorKey::Project,
        3 => AnchorKey::Source(Arc::from(r.str()?)),
        _ => return Err(Bad::Clause("image has an invalid anchor")),
    })
}

impl Policy {
    /// Serializes the compiled matchers (not the rules: loading takes the
    /// same rule list again and checks that it is the one the image was
    /// built from).
    pub fn matchers_to_bytes(&self) -> Vec<u8> {
        self.matchers_to_bytes_with(true)
    }

    /// [`Policy::matchers_to_bytes`]; without `with_fingerprint` the
    /// fingerprint of the rules is left 0, for an image whose loader reads
    /// the rules from the same checksummed bytes and does not compare it
    /// ([`Policy::from_image_checked`] without `check_rules`).
    pub(crate) fn matchers_to_bytes_with(&self, with_fingerprint: bool) -> Vec<u8> {
        let mut w = Writer::default();
        let fp = if with_fingerprint {
            fingerprint(self.rules.all())
        } else {
            0
        };
        w.buf.extend_from_slice(&fp.to_le_bytes());
        w.len(self.rules.len());
        let none = LazyRules::default();
        write_matcher(&mut w, &self.command);
        write_lazy(&mut w, &self.deferred.command);
        for pm in [&self.read, &self.edit] {
            w.len(pm.groups.len());
            for (i, (k, m)) in pm.groups.iter().enumerate() {
                write_key(&mut w, k);
                write_matcher(&mut w, m);
                write_lazy(&mut w, pm.lazy.get(i).unwrap_or(&none));
            }
        }
        write_matcher(&mut w, &self.domain);
        write_lazy(&mut w, &self.deferred.domain);
        write_matcher(&mut w, &self.tool);
        write_lazy(&mut w, &self.deferred.tool);
        w.len(self.fields.len());
        for (i, (f, m)) in self.fields.iter().enumerate() {
            w.bytes(f.as_bytes());
            write_matcher(&mut w, m);
            write_lazy(&mut w, self.deferred.fields.get(i).unwrap_or(&none));
        }
        w.ids(&self.tokens);
        frame(KIND_POLICY, w.buf)
    }

    /// Loads the matchers of `rules` (in policy order, as given to
    /// [`Policy::new`]) from an image written by
    /// [`Policy::matchers_to_bytes`]; fails when the image is stale (built
    /// from other rules), foreign or corrupt.
    pub fn from_image(rules: Vec<Rule>, bytes: &[u8]) -> Result<Policy, Error> {
        Policy::from_image_checked(rules, bytes, true)
    }

    /// [`Policy::from_image`]; without `check_rules`, the fingerprint of
    /// the rules is not compared, nor the matchers' own checksum computed
    /// (for a caller that read `rules` and `bytes` from the same
    /// checksummed image, written with them by this build).
    pub(crate) fn from_image_checked(
        rules: Vec<Rule>,
        bytes: &[u8],
        check_rules: bool,
    ) -> Result<Policy, Error> {
        let (rules, order) = Policy::number(rules)?;
        Policy::from_image_numbered(RuleTable::Owned(rules), order, bytes, check_rules, None)
    }

    /// [`Policy::from_image_checked`] of rules numbered already: `rules`
    /// in precedence order (deny, ask, allow, each in policy order) and
    /// `order` the place of each in policy order, as [`Policy::number`]
    /// gives them (an image stores its rules so, and saves the copying and
    /// sorting). Refused unless they are exactly that. With `shared`, the
    /// buffer `bytes` lies in, kept as long as the policy: the matchers'
    /// exact literals and deferred rules are left there instead of being
    /// copied out (checked as when they are).
    pub(crate) fn from_image_numbered(
        rules: RuleTable,
        order: Vec<usize>,
        bytes: &[u8],
        check_rules: bool,
        shared: Option<&Arc<Vec<u8>>>,
    ) -> Result<Policy, Error> {
        if rules.len() >= u32::MAX as usize {
            return Err(Error::new(ErrorKind::Limit, "too many rules in one policy"));
        }
        let mut seen = vec![false; rules.len()];
        let mut last = None;
        for (id, &i) in order.iter().enumerate() {
            let Some((effect, _)) = rules.head(id as u32) else {
                return Err(image_error("image holds its rules out of order"));
            };
            let key = (effect, i);
            let fresh = seen.get_mut(i).is_some_and(|s| !std::mem::replace(s, true));
            if !fresh || last.is_some_and(|l| l >= key) {
                return Err(image_error("image holds its rules out of order"));
            }
            last = Some(key);
        }
        if order.len() != rules.len() {
            return Err(image_error("image holds its rules out of order"));
        }
        // Without `check_rules`, the matchers were read from the image the
        // rules were read from, whose checksum covers them.
        let payload = unframe_with(KIND_POLICY, bytes, check_rules)?;
        let mut r = Reader {
            buf: payload,
            pos: 0,
        };
        let mut w = [0u8; 8];
        w.copy_from_slice(r.take(8)?);
        let stale = check_rules && u64::from_le_bytes(w) != fingerprint(rules.all());
        if stale || r.len()? != rules.len() {
            return Err(image_error("image was built from other rules: rebuild it"));
        }
        let n = rules.len() as u32;
        let cfg = Config::new();
        let mut deferred = Deferred::default();
        let command = read_matcher(&mut r, n, &cfg, shared)?;
        deferred.command = read_lazy(&mut r, &rules, shared)?;
        let mut paths = Vec::new();
        for _ in 0..2 {
            let g = r.len()?;
            let mut groups = Vec::with_capacity(g);
            let mut lazy = Vec::with_capacity(g);
            for _ in 0..g {
                let k = read_key(&mut r)?;
                groups.push((k, read_matcher(&mut r, n, &cfg, shared)?));
                lazy.push(read_lazy(&mut r, &rules, shared)?);
            }
            if lazy.iter().all(LazyRules::is_empty) {
                lazy.clear();
            }
            paths.push(PathMatcher { groups, lazy });
        }
        let domain = read_matcher(&mut r, n, &cfg, shared)?;
        deferred.domain = read_lazy(&mut r, &rules, shared)?;
        let tool = read_matcher(&mut r, n, &cfg, shared)?;
        deferred.tool = read_lazy(&mut r, &rules, shared)?;
        let f = r.len()?;
        let mut fields = Vec::with_capacity(f);
        for _ in 0..f {
            let name = r.str()?.to_string();
            fields.push((name, read_matcher(&mut r, n, &cfg, shared)?));
            deferred.fields.push(read_lazy(&mut r, &rules, shared)?);
        }
        if deferred.fields.iter().all(LazyRules::is_empty) {
            deferred.fields.clear();
        }
        let tokens = r.ids(n)?;
        if r.pos != payload.len() {
            return Err(image_error("image has trailing bytes"));
        }
        let edit = paths.pop().unwrap_or_default();
        let read = paths.pop().unwrap_or_default();
        Ok(Policy {
            rules,
            order,
            command,
            read,
            edit,
            domain,
            tool,
            fields,
            tokens,
            deferred,
        })
    }
}
