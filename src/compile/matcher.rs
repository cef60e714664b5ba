//! [`KindMatcher`]: the compiled rules of one tool kind, queried in one pass
//! per haystack.

use super::Matches;
use super::image::SharedExact;
use super::route::{ByteMap, FastHash, Routes};
use super::table::PathTables;
use regex_automata::dfa::{Automaton, dense, sparse};
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, Input, meta};
use std::collections::HashMap;

/// How an automaton is walked over a haystack (see [`super::lower::Place`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Walk {
    /// Forward from the first byte, then the terminator.
    Fwd,
    /// Backward from the last byte (no terminator).
    Rev,
    /// Forward from the start of every `/`-separated segment.
    Seg,
    /// Backward from the `/` (or terminator) ending every segment.
    SegRev,
    /// Forward from the unanchored start: a match anywhere.
    Float,
}

impl Walk {
    /// Whether the automaton is built from the reversed regex.
    pub(crate) fn reversed(self) -> bool {
        matches!(self, Walk::Rev | Walk::SegRev)
    }

    /// The byte that stands for this walk in an image.
    pub(crate) fn to_byte(self) -> u8 {
        match self {
            Walk::Fwd => 0,
            Walk::Rev => 1,
            Walk::Seg => 2,
            Walk::SegRev => 3,
            Walk::Float => 4,
        }
    }

    /// The walk an image byte stands for.
    pub(crate) fn from_byte(b: u8) -> Option<Walk> {
        Some(match b {
            0 => Walk::Fwd,
            1 => Walk::Rev,
            2 => Walk::Seg,
            3 => Walk::SegRev,
            4 => Walk::Float,
            _ => return None,
        })
    }
}

/// The separator of the segments a `Seg`/`SegRev` walk restarts at.
const SEP: u8 = b'/';

/// A DFA's transition table: dense (one slot per byte class and state,
/// fastest to walk) for small automata, sparse (only the transitions a
/// state has) for large ones, which are mostly long literal tries whose
/// dense tables would be almost all dead slots.
#[derive(Clone, Debug)]
pub(crate) enum Table {
    /// A dense table.
    Dense(dense::DFA<Vec<u32>>),
    /// A sparse table.
    Sparse(sparse::DFA<Vec<u8>>),
}

impl Table {
    fn pattern_len(&self) -> usize {
        match self {
            Table::Dense(d) => d.pattern_len(),
            Table::Sparse(d) => d.pattern_len(),
        }
    }

    fn start(&self, walk: Walk) -> Option<StateID> {
        let anchored = if walk == Walk::Float {
            Anchored::No
        } else {
            Anchored::Yes
        };
        let cfg = start::Config::new().anchored(anchored);
        match self {
            Table::Dense(d) => d.start_state(&cfg).ok(),
            Table::Sparse(d) => d.start_state(&cfg).ok(),
        }
    }

    /// Heap bytes of the table.
    pub(crate) fn memory_usage(&self) -> usize {
        match self {
            Table::Dense(d) => d.memory_usage(),
            Table::Sparse(d) => d.memory_usage(),
        }
    }

    /// `(kind, little-endian serialization)`: kind 0 dense (the bytes are
    /// to be loaded 4-byte aligned), 1 sparse.
    pub(crate) fn to_bytes(&self) -> (u8, Vec<u8>) {
        match self {
            Table::Dense(d) => {
                let (mut bytes, pad) = d.to_bytes_little_endian();
                bytes.drain(..pad.min(bytes.len()));
                (0, bytes)
            }
            Table::Sparse(d) => (1, d.to_bytes_little_endian()),
        }
    }

    /// Loads a table written by [`Table::to_bytes`], validating it
    /// (regex-automata's safe `from_bytes`); `bytes` of a dense table must
    /// be 4-byte aligned.
    pub(crate) fn from_bytes(kind: u8, bytes: &[u8]) -> Result<Table, String> {
        let bad = |e: regex_automata::util::wire::DeserializeError| {
            format!("image holds an invalid automaton: {e}")
        };
        match kind {
            0 => Ok(Table::Dense(
                dense::DFA::from_bytes(bytes).map_err(bad)?.0.to_owned(),
            )),
            1 => Ok(Table::Sparse(
                sparse::DFA::from_bytes(bytes).map_err(bad)?.0.to_owned(),
            )),
            _ => Err("image holds an automaton of an unknown kind".to_string()),
        }
    }
}

/// One multi-pattern DFA and the rule id of each of its patterns.
#[derive(Clone, Debug)]
pub(crate) struct Auto {
    pub(crate) table: Table,
    pub(crate) start: StateID,
    /// How it is walked.
    pub(crate) walk: Walk,
    /// Pattern id → rule ids.
    pub(crate) ids: Box<[Box<[u32]>]>,
    /// When set, the automaton can only match haystacks whose first byte
    /// is in this set (a bitmap), and is not walked for others.
    pub(crate) first: Option<[u64; 4]>,
    /// For a `Float` automaton: the bytes that take its start state
    /// elsewhere (derived from the table, not stored in an image).
    pub(crate) leave: Leave,
}

/// The bytes that take an unanchored automaton out of its start state.
/// Every other byte leads from the start state back to it (no match can
/// start there), so a walk in the start state jumps to the next of these
/// bytes instead of stepping through the others one by one.
#[derive(Clone, Debug)]
pub(crate) enum Leave {
    /// Not used: the automaton is anchored, or its start state is a match
    /// state, or every byte leaves it.
    Never,
    /// At most three bytes (searched with `memchr`).
    Few(Box<[u8]>),
    /// More (a bitmap).
    Many([u64; 4]),
}

impl Leave {
    /// The bytes leaving `start` of `table`, for a walk of kind `walk`.
    fn of(table: &Table, start: StateID, walk: Walk) -> Leave {
        if walk != Walk::Float {
            return Leave::Never;
        }
        match table {
            Table::Dense(d) => Leave::of_dfa(d, start),
            Table::Sparse(d) => Leave::of_dfa(d, start),
        }
    }

    fn of_dfa<A: Automaton>(dfa: &A, start: StateID) -> Leave {
        if dfa.is_special_state(start) {
            return Leave::Never;
        }
        let mut set = [0u64; 4];
        let mut few = Vec::new();
        for b in 0..=255u8 {
            if dfa.next_state(start, b) != start {
                set[usize::from(b >> 6)] |= 1 << (b & 63);
                few.push(b);
            }
        }
        match few.len() {
            256 => Leave::Never,
            1..=3 => Leave::Few(few.into_boxed_slice()),
            _ => Leave::Many(set),
        }
    }

    /// The position of the first byte of `hay` that leaves the start
    /// state, `None` when there is none.
    #[inline]
    fn find(&self, hay: &[u8]) -> Option<usize> {
        match self {
            Leave::Never => (!hay.is_empty()).then_some(0),
            Leave::Few(bytes) => bstr::ByteSlice::find_byteset(hay, bytes),
            Leave::Many(set) => hay
                .iter()
                .position(|&b| set[usize::from(b >> 6)] & (1 << (b & 63)) != 0),
        }
    }
}

/// Collects the rule ids of every pattern the match state `s` reports.
#[inline]
fn collect<A: Automaton>(dfa: &A, s: StateID, ids: &[Box<[u32]>], out: &mut Vec<u32>) {
    for i in 0..dfa.match_len(s) {
        if let Some(ids) = ids.get(dfa.match_pattern(s, i).as_usize()) {
            out.extend_from_slice(ids);
        }
    }
}

/// Steps `dfa` from `s` over `bytes`, collecting the patterns of every
/// match state reached; `None` once it dies.
#[inline]
fn steps<A: Automaton>(
    dfa: &A,
    mut s: StateID,
    ids: &[Box<[u32]>],
    bytes: impl Iterator<Item = u8>,
    out: &mut Vec<u32>,
) -> Option<StateID> {
    for b in bytes {
        s = dfa.next_state(s, b);
        if dfa.is_special_state(s) {
            if dfa.is_dead_state(s) {
                return None;
            }
            if dfa.is_match_state(s) {
                collect(dfa, s, ids, out);
            }
        }
    }
    Some(s)
}

/// Steps the unanchored `dfa` from its start state over `hay`, jumping over
/// the bytes that leave the start state as it is (see [`Leave`]);
/// `None` once it dies.
#[inline]
fn float_steps<A: Automaton>(
    dfa: &A,
    start: StateID,
    ids: &[Box<[u32]>],
    leave: &Leave,
    hay: &[u8],
    out: &mut Vec<u32>,
) -> Option<StateID> {
    let mut s = start;
    let mut i = 0;
    loop {
        if s == start {
            match hay.get(i..).and_then(|rest| leave.find(rest)) {
                Some(j) => i += j,
                None => return Some(s),
            }
        }
        let Some(&b) = hay.get(i) else {
            return Some(s);
        };
        i += 1;
        s = dfa.next_state(s, b);
        if dfa.is_special_state(s) {
            if dfa.is_dead_state(s) {
                return None;
            }
            if dfa.is_match_state(s) {
                collect(dfa, s, ids, out);
            }
        }
    }
}

/// One run of `dfa` from `start` over `bytes`, then `term` when given, then
/// the end of input: collects every pattern matching a prefix of them.
#[inline]
fn run<A: Automaton>(
    dfa: &A,
    start: StateID,
    ids: &[Box<[u32]>],
    bytes: impl Iterator<Item = u8>,
    term: Option<u8>,
    out: &mut Vec<u32>,
) {
    let s = steps(dfa, start, ids, bytes, out);
    finish(dfa, s, ids, term, out);
}

/// The end of a run that reached `s` (`None`: died): `term` when given,
/// then the end of input.
#[inline]
fn finish<A: Automaton>(
    dfa: &A,
    s: Option<StateID>,
    ids: &[Box<[u32]>],
    term: Option<u8>,
    out: &mut Vec<u32>,
) {
    let Some(mut s) = s else {
        return;
    };
    if let Some(t) = term {
        match steps(dfa, s, ids, std::iter::once(t), out) {
            Some(next) => s = next,
            None => return,
        }
    }
    s = dfa.next_eoi_state(s);
    if dfa.is_match_state(s) {
        collect(dfa, s, ids, out);
    }
}

/// The first bytes of the haystacks an anchored forward `dfa` can match,
/// read off its start state: every byte that does not lead from `start` to
/// the dead state. `None` when a haystack without a first byte could match
/// (the start state's `term` transition is not dead, or its end of input is
/// a match), as such a haystack is not walked once a set is given.
fn live_first<A: Automaton>(dfa: &A, start: StateID, term: Option<u8>) -> Option<[u64; 4]> {
    if dfa.is_special_state(start) {
        return None;
    }
    let mut set = [0u64; 4];
    for b in 0..=255u8 {
        if !dfa.is_dead_state(dfa.next_state(start, b)) {
            set[usize::from(b >> 6)] |= 1 << (b & 63);
        }
    }
    let t_live = term.is_some_and(|t| set[usize::from(t >> 6)] & (1 << (t & 63)) != 0);
    if t_live || dfa.is_match_state(dfa.next_eoi_state(start)) {
        return None;
    }
    Some(set)
}

impl Auto {
    /// For a forward automaton walked for every haystack, the set of first
    /// bytes it can match (see [`live_first`]), so that a haystack starting
    /// with any other byte is not walked: literal-led patterns that are not
    /// dispatched by a literal first byte (case-insensitive ones) get a
    /// filter too. Leaves other automata as they are.
    pub(crate) fn derive_first(&mut self, term: Option<u8>) {
        if self.walk != Walk::Fwd || self.first.is_some() {
            return;
        }
        self.first = match &self.table {
            Table::Dense(d) => live_first(d, self.start, term),
            Table::Sparse(d) => live_first(d, self.start, term),
        };
    }

    /// Wraps a built DFA; `None` when it has no start state for its walk or
    /// its pattern count is not that of `ids` (never the case for DFAs
    /// built by this module).
    pub(crate) fn new(
        table: Table,
        walk: Walk,
        ids: Box<[Box<[u32]>]>,
        first: Option<[u64; 4]>,
    ) -> Option<Auto> {
        let start = table.start(walk)?;
        if table.pattern_len() != ids.len() {
            return None;
        }
        let leave = Leave::of(&table, start, walk);
        Some(Auto {
            table,
            start,
            walk,
            ids,
            first,
            leave,
        })
    }

    #[inline]
    fn run(&self, bytes: impl Iterator<Item = u8>, term: Option<u8>, out: &mut Vec<u32>) {
        match &self.table {
            Table::Dense(d) => run(d, self.start, &self.ids, bytes, term, out),
            Table::Sparse(d) => run(d, self.start, &self.ids, bytes, term, out),
        }
    }

    /// Collects the rules whose regex matches `hay` followed by `term` as
    /// its walk says: a prefix (forward), a suffix of `hay` (backward), a
    /// prefix from some segment start, a suffix up to some segment end.
    #[inline]
    pub(crate) fn walk(&self, hay: &[u8], term: Option<u8>, out: &mut Vec<u32>) {
        match self.walk {
            Walk::Fwd => self.run(hay.iter().copied(), term, out),
            Walk::Float => match &self.table {
                _ if matches!(self.leave, Leave::Never) => self.run(hay.iter().copied(), term, out),
                Table::Dense(d) => {
                    let s = float_steps(d, self.start, &self.ids, &self.leave, hay, out);
                    finish(d, s, &self.ids, term, out);
                }
                Table::Sparse(d) => {
                    let s = float_steps(d, self.start, &self.ids, &self.leave, hay, out);
                    finish(d, s, &self.ids, term, out);
                }
            },
            Walk::Rev => self.run(hay.iter().rev().copied(), None, out),
            Walk::Seg => {
                self.run(hay.iter().copied(), term, out);
                for (i, &b) in hay.iter().enumerate() {
                    if b == SEP {
                        if let Some(rest) = hay.get(i + 1..).filter(|r| !r.is_empty()) {
                            self.run(rest.iter().copied(), term, out);
                        }
                    }
                }
            }
            Walk::SegRev => {
                for (i, &b) in hay.iter().enumerate() {
                    if b == SEP {
                        if let Some(head) = hay.get(..=i) {
                            self.run(head.iter().rev().copied(), None, out);
                        }
                    }
                }
                if let Some(t) = term {
                    self.run(
                        std::iter::once(t).chain(hay.iter().rev().copied()),
                        None,
                        out,
                    );
                }
            }
        }
    }
}

/// The literals of a rule checked on the haystack (see [`fits`]).
pub(crate) type Literals = Box<[Box<[u8]>]>;

/// Whether `hay` is `lits` joined by any texts: it starts with the first,
/// ends with the last (the two not overlapping), and holds the others in
/// order in between (each found leftmost, after the one before).
pub(crate) fn fits(lits: &[Box<[u8]>], hay: &[u8]) -> bool {
    let [first, mid @ .., last] = lits else {
        return false;
    };
    if hay.len() < first.len() + last.len() || !hay.starts_with(first) || !hay.ends_with(last) {
        return false;
    }
    let mut rest = hay
        .get(first.len()..hay.len() - last.len())
        .unwrap_or_default();
    for l in mid {
        match bstr::ByteSlice::find(rest, l) {
            Some(i) => rest = rest.get(i + l.len()..).unwrap_or_default(),
            None => return false,
        }
    }
    true
}

/// A rule whose automaton would not fit the size limits, matched on its own
/// by a bounded engine (a lazy DFA with a fixed cache, then a PikeVM).
#[derive(Clone, Debug)]
pub(crate) struct Slow {
    pub(crate) re: meta::Regex,
    /// The regex in matching form (kept for serialization).
    pub(crate) src: String,
    /// The walk its automaton would have had.
    pub(crate) walk: Walk,
    pub(crate) id: u32,
}

/// The compiled rules of one tool kind: a query returns every rule whose
/// pattern matches the haystack.
///
/// Built by [`super::Policy`]; its strategies (chosen by each rule's
/// shape) are: a hash map of exact literals, hash tables of path rules
/// tied to segment boundaries (literal prefixes, any-depth names and
/// extensions),
/// forward DFAs of literal-led patterns (those whose literal holds a
/// separator reached through a hash of the haystack's leading words, the
/// others chosen by first byte; word-prefix patterns such as `git push:*`
/// matched by that hash alone), a reverse DFA of suffix
/// patterns (which also finds literals joined by stars, `git * --force`,
/// by their last literal, the others then checked on the haystack), unanchored DFAs of "contains" patterns, DFAs of any-depth
/// path patterns walked from every segment start (or backwards from every
/// segment end), small DFAs of latching patterns, and — only for rules
/// that would not fit the size limits — a bounded per-rule fallback. Large
/// DFAs are kept as sparse tables.
#[derive(Clone, Debug, Default)]
pub struct KindMatcher {
    /// A byte that follows every haystack (paths: `/`).
    pub(crate) term: Option<u8>,
    pub(crate) always: Vec<u32>,
    pub(crate) exact: ByteMap<Vec<u32>>,
    /// Exact literals left in an image the matcher was read from.
    pub(crate) exact_shared: SharedExact,
    /// Path rules matched by hash lookups (see the `table` module).
    pub(crate) tables: PathTables,
    /// Literal-led automata reached by the haystack's leading words.
    pub(crate) routes: Routes,
    pub(crate) autos: Vec<Auto>,
    pub(crate) slow: Vec<Slow>,
    /// Rules whose pattern is literals joined by stars (`git * x`): the
    /// reverse automata (or the fallback) hold their last literal, and a
    /// rule they find matches when the haystack also fits these literals
    /// (see [`fits`]).
    pub(crate) checks: HashMap<u32, Literals, FastHash>,
    /// Largest rule id + 1 (for validation).
    pub(crate) id_bound: u32,
}

impl KindMatcher {
    /// Appends the ids of every rule that matches `hay` to `out.ids`
    /// (unsorted, possibly repeated).
    pub(crate) fn find_into(&self, hay: &[u8], out: &mut Matches) {
        if !self.always.is_empty() {
            out.ids.extend_from_slice(&self.always);
        }
        if !self.exact.is_empty() {
            if let Some(ids) = self.exact.get(hay) {
                out.ids.extend_from_slice(ids);
            }
        }
        if !self.exact_shared.is_empty() {
            self.exact_shared.find_into(hay, &mut out.ids);
        }
        if !self.tables.is_empty() {
            self.tables.find_into(hay, &mut out.path, &mut out.ids);
        }
        if !self.routes.is_empty() {
            self.routes
                .find_into(hay, self.term, &mut out.fold, &mut out.ids);
        }
        let b0 = hay.first().copied();
        for a in &self.autos {
            if let Some(set) = &a.first {
                match b0 {
                    Some(b) if set[usize::from(b >> 6)] & (1 << (b & 63)) != 0 => {}
                    _ => continue,
                }
            }
            let at = out.ids.len();
            a.walk(hay, self.term, &mut out.ids);
            if a.walk == Walk::Rev && !self.checks.is_empty() {
                self.check_from(at, hay, &mut out.ids);
            }
        }
        if !self.slow.is_empty() {
            out.buf.clear();
            out.buf.extend_from_slice(hay);
            if let Some(t) = self.term {
                out.buf.push(t);
            }
            for s in &self.slow {
                let h: &[u8] = if s.walk == Walk::Rev { hay } else { &out.buf };
                if s.re.is_match(Input::new(h).anchored(Anchored::Yes))
                    && (s.walk != Walk::Rev || self.checks.get(&s.id).is_none_or(|l| fits(l, hay)))
                {
                    out.ids.push(s.id);
                }
            }
        }
    }

    /// Keeps of `ids[at..]` (found by a reverse automaton) the rules that
    /// need no check and those whose literals `hay` fits.
    fn check_from(&self, at: usize, hay: &[u8], ids: &mut Vec<u32>) {
        let mut keep = at;
        for i in at..ids.len() {
            let Some(&id) = ids.get(i) else { break };
            if self.checks.get(&id).is_none_or(|l| fits(l, hay)) {
                if let Some(slot) = ids.get_mut(keep) {
                    *slot = id;
                }
                keep += 1;
            }
        }
        ids.truncate(keep);
    }

    /// Every rule id that matches `hay`, sorted, in `out` (cleared first).
    pub fn find(&self, hay: &str, out: &mut Matches) {
        out.ids.clear();
        self.find_into(hay.as_bytes(), out);
        out.finish();
    }

    /// Whether no rule is compiled in.
    pub fn is_empty(&self) -> bool {
        self.always.is_empty()
            && self.exact.is_empty()
            && self.exact_shared.is_empty()
            && self.tables.is_empty()
            && self.autos.is_empty()
            && self.routes.is_empty()
            && self.slow.is_empty()
            && self.checks.is_empty()
    }

    /// Heap bytes held by the automata and tables (approximate).
    pub fn memory_usage(&self) -> usize {
        let autos: usize = self
            .autos
            .iter()
            .chain(&self.routes.autos)
            .map(|a| a.table.memory_usage() + a.ids.iter().map(|x| 16 + x.len() * 4).sum::<usize>())
            .sum();
        let exact: usize = self
            .exact
            .iter()
            .map(|(k, v)| k.len() + v.len() * 4 + 48)
            .sum();
        let keys: usize = self
            .routes
            .exact
            .iter()
            .chain(&self.routes.folded)
            .map(|(k, v)| k.len() + (v.autos.len() + v.ids.len()) * 4 + 48)
            .sum();
        let tables = self.tables.memory_usage();
        let checks: usize = self
            .checks
            .values()
            .map(|l| 32 + l.iter().map(|x| 16 + x.len()).sum::<usize>())
            .sum();
        autos + exact + keys + tables + checks + self.always.len() * 4 + self.slow.len() * 1024
    }

    /// How the rules were split: `(automata, fallback rules, exact
    /// literals, always-matching rules)`.
    pub fn shape(&self) -> MatcherShape {
        MatcherShape {
            automata: self.autos.len() + self.routes.autos.len(),
            routed_automata: self.routes.autos.len(),
            route_keys: self.routes.exact.len() + self.routes.folded.len(),
            reverse_automata: self.autos.iter().filter(|a| a.walk.reversed()).count(),
            automaton_patterns: self
                .autos
                .iter()
                .chain(&self.routes.autos)
                .map(|a| a.ids.len())
                .sum(),
            fallback_rules: self.slow.len(),
            exact_literals: self.exact.len() + self.exact_shared.len(),
            tabled_rules: self.tables.len(),
            always: self.always.len(),
        }
    }
}

/// How a [`KindMatcher`]'s rules were split among its strategies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MatcherShape {
    /// Number of DFAs.
    pub automata: usize,
    /// Of which reached through the leading words of a haystack.
    pub routed_automata: usize,
    /// Keys (leading words) that lead to them.
    pub route_keys: usize,
    /// Of which walked backwards (suffix patterns).
    pub reverse_automata: usize,
    /// Patterns compiled into DFAs.
    pub automaton_patterns: usize,
    /// Rules matched by the bounded per-rule fallback.
    pub fallback_rules: usize,
    /// Distinct exact literals in the hash map.
    pub exact_literals: usize,
    /// Path rules matched by hash lookups: literal path prefixes
    /// (`dir/**`, exact paths), any-depth names (`**/name`) and
    /// extensions (`**/*.ext`).
    pub tabled_rules: usize,
    /// Rules that match every haystack.
    pub always: usize,
}
