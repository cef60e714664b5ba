//! [`KindMatcher`]: the compiled rules of one tool kind, queried in one pass
//! per haystack.

use super::Matches;
use regex_automata::dfa::{Automaton, dense};
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::{Anchored, Input, meta};
use std::collections::HashMap;

/// One multi-pattern DFA and the rule id of each of its patterns.
#[derive(Clone, Debug)]
pub(crate) struct Auto {
    pub(crate) dfa: dense::DFA<Vec<u32>>,
    pub(crate) start: StateID,
    /// Walked from the last byte to the first.
    pub(crate) rev: bool,
    /// Pattern id → rule id.
    pub(crate) ids: Box<[u32]>,
}

impl Auto {
    /// Wraps a built DFA; `None` when it has no anchored start state
    /// (never the case for DFAs built by this module).
    pub(crate) fn new(dfa: dense::DFA<Vec<u32>>, rev: bool, ids: Box<[u32]>) -> Option<Auto> {
        let start = dfa
            .start_state(&start::Config::new().anchored(Anchored::Yes))
            .ok()?;
        if dfa.pattern_len() != ids.len() {
            return None;
        }
        Some(Auto {
            dfa,
            start,
            rev,
            ids,
        })
    }

    #[inline]
    fn collect(&self, s: StateID, out: &mut Vec<u32>) {
        for i in 0..self.dfa.match_len(s) {
            if let Some(&id) = self.ids.get(self.dfa.match_pattern(s, i).as_usize()) {
                out.push(id);
            }
        }
    }

    /// Collects the rules whose regex matches a prefix of `hay` followed by
    /// `term` (a suffix of `hay`, when reversed).
    #[inline]
    fn walk(&self, hay: &[u8], term: Option<u8>, out: &mut Vec<u32>) {
        let dfa = &self.dfa;
        let mut s = self.start;
        if self.rev {
            for &b in hay.iter().rev() {
                s = dfa.next_state(s, b);
                if dfa.is_special_state(s) {
                    if dfa.is_dead_state(s) {
                        return;
                    }
                    if dfa.is_match_state(s) {
                        self.collect(s, out);
                    }
                }
            }
        } else {
            for &b in hay.iter().chain(term.as_ref()) {
                s = dfa.next_state(s, b);
                if dfa.is_special_state(s) {
                    if dfa.is_dead_state(s) {
                        return;
                    }
                    if dfa.is_match_state(s) {
                        self.collect(s, out);
                    }
                }
            }
        }
        s = dfa.next_eoi_state(s);
        if dfa.is_match_state(s) {
            self.collect(s, out);
        }
    }
}

/// A rule whose automaton would not fit the size limits, matched on its own
/// by a bounded engine (a lazy DFA with a fixed cache, then a PikeVM).
#[derive(Clone, Debug)]
pub(crate) struct Slow {
    pub(crate) re: meta::Regex,
    /// The regex in matching form (kept for serialization).
    pub(crate) src: String,
    pub(crate) rev: bool,
    pub(crate) id: u32,
}

/// The compiled rules of one tool kind: a query returns every rule whose
/// pattern matches the haystack.
///
/// Built by [`super::Policy`] (or [`super::KindMatcher::build`]); its
/// strategies are those of [`super::lower`]: a hash map of exact literals,
/// a forward DFA of literal-led patterns, a reverse DFA of suffix
/// patterns, a forward DFA of "contains" patterns, small DFAs of latching
/// patterns, and — only for rules that would not fit the size limits — a
/// bounded per-rule fallback.
#[derive(Clone, Debug, Default)]
pub struct KindMatcher {
    /// A byte that follows every haystack (paths: `/`).
    pub(crate) term: Option<u8>,
    pub(crate) always: Vec<u32>,
    pub(crate) exact: HashMap<Box<[u8]>, Vec<u32>>,
    pub(crate) autos: Vec<Auto>,
    pub(crate) slow: Vec<Slow>,
    /// Largest rule id + 1 (for validation).
    pub(crate) id_bound: u32,
}

impl KindMatcher {
    /// Appends the ids of every rule that matches `hay` to `out.ids`
    /// (unsorted, possibly repeated).
    pub(crate) fn find_into(&self, hay: &[u8], out: &mut Matches) {
        out.ids.extend_from_slice(&self.always);
        if !self.exact.is_empty() {
            if let Some(ids) = self.exact.get(hay) {
                out.ids.extend_from_slice(ids);
            }
        }
        for a in &self.autos {
            a.walk(hay, self.term, &mut out.ids);
        }
        if !self.slow.is_empty() {
            out.buf.clear();
            out.buf.extend_from_slice(hay);
            if let Some(t) = self.term {
                out.buf.push(t);
            }
            for s in &self.slow {
                let h: &[u8] = if s.rev { hay } else { &out.buf };
                if s.re.is_match(Input::new(h).anchored(Anchored::Yes)) {
                    out.ids.push(s.id);
                }
            }
        }
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
            && self.autos.is_empty()
            && self.slow.is_empty()
    }

    /// Heap bytes held by the automata and tables (approximate).
    pub fn memory_usage(&self) -> usize {
        let autos: usize = self
            .autos
            .iter()
            .map(|a| a.dfa.memory_usage() + a.ids.len() * 4)
            .sum();
        let exact: usize = self
            .exact
            .iter()
            .map(|(k, v)| k.len() + v.len() * 4 + 48)
            .sum();
        autos + exact + self.always.len() * 4 + self.slow.len() * 1024
    }

    /// How the rules were split: `(automata, fallback rules, exact
    /// literals, always-matching rules)`.
    pub fn shape(&self) -> MatcherShape {
        MatcherShape {
            automata: self.autos.len(),
            reverse_automata: self.autos.iter().filter(|a| a.rev).count(),
            automaton_patterns: self.autos.iter().map(|a| a.ids.len()).sum(),
            fallback_rules: self.slow.len(),
            exact_literals: self.exact.len(),
            always: self.always.len(),
        }
    }
}

/// How a [`KindMatcher`]'s rules were split among its strategies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MatcherShape {
    /// Number of DFAs.
    pub automata: usize,
    /// Of which walked backwards (suffix patterns).
    pub reverse_automata: usize,
    /// Patterns compiled into DFAs.
    pub automaton_patterns: usize,
    /// Rules matched by the bounded per-rule fallback.
    pub fallback_rules: usize,
    /// Distinct exact literals in the hash map.
    pub exact_literals: usize,
    /// Rules that match every haystack.
    pub always: usize,
}
