//! Sorting lowered patterns into strategies and building their automata
//! within the size limits.
//!
//! A DFA over *all* of a real policy's rules blows up: a `*x*` rule doubles
//! the states, a `*x` rule multiplies every other rule's states (BENCHMARKS.md
//! and the research notes it cites). So patterns are grouped by shape
//! ([`Place`], latching or not), each group gets its own DFA, and latching
//! patterns are compiled a few at a time. A group whose DFA would exceed the
//! size limit is split in two and retried, up to a budget of failed
//! attempts; what still does not fit is matched rule by rule by a bounded
//! engine ([`meta::Regex`]: a lazy DFA with a fixed cache, then a PikeVM),
//! with the same answers.

use super::Config;
use super::lower::{Lowered, Place};
use super::matcher::{Auto, KindMatcher, Slow};
use regex_automata::dfa::{StartKind, dense};
use regex_automata::nfa::thompson;
use regex_automata::util::syntax;
use regex_automata::{MatchKind, meta};
use std::collections::HashMap;

/// Why a kind's matcher could not be built.
#[derive(Debug)]
pub(crate) struct BuildFailure {
    /// The rule that could not be compiled.
    pub(crate) id: u32,
    /// What went wrong (one lowercase clause).
    pub(crate) message: String,
}

fn syntax_config() -> syntax::Config {
    syntax::Config::new().utf8(false).unicode(true)
}

// The error is regex-automata's own, returned once per build attempt.
#[allow(clippy::result_large_err)]
fn build_dfa(
    res: &[&str],
    rev: bool,
    limit: usize,
    cfg: &Config,
) -> Result<dense::DFA<Vec<u32>>, regex_automata::dfa::dense::BuildError> {
    dense::Builder::new()
        .configure(
            dense::Config::new()
                .match_kind(MatchKind::All)
                .start_kind(StartKind::Anchored)
                .minimize(false)
                .accelerate(false)
                .byte_classes(true)
                .dfa_size_limit(Some(limit))
                .determinize_size_limit(Some(limit)),
        )
        .syntax(syntax_config())
        .thompson(
            thompson::Config::new()
                .utf8(false)
                .reverse(rev)
                .nfa_size_limit(Some(cfg.nfa_size_limit)),
        )
        .build_many(res)
}

/// Builds the bounded fallback for one rule.
pub(crate) fn build_slow(re: &str, rev: bool, id: u32, cfg: &Config) -> Result<Slow, BuildFailure> {
    let full = if rev {
        format!("{}(?:{re})$", super::lower::ANY_RUN)
    } else {
        re.to_string()
    };
    let regex = meta::Builder::new()
        .configure(
            meta::Config::new()
                .match_kind(MatchKind::All)
                .utf8_empty(false)
                .nfa_size_limit(Some(cfg.nfa_size_limit))
                .hybrid_cache_capacity(cfg.fallback_cache),
        )
        .syntax(syntax_config())
        .build(&full)
        .map_err(|e| BuildFailure {
            id,
            message: format!("rule does not compile within the size limits: {e}"),
        })?;
    Ok(Slow {
        re: regex,
        src: re.to_string(),
        rev,
        id,
    })
}

struct Group<'a> {
    rev: bool,
    limit: usize,
    pats: Vec<(u32, &'a str)>,
}

/// Builds the matcher of one kind from `(rule id, lowered pattern)` pairs.
pub(crate) fn build(
    lowered: &[(u32, Lowered)],
    term: Option<u8>,
    cfg: &Config,
) -> Result<KindMatcher, BuildFailure> {
    let mut m = KindMatcher {
        term,
        ..KindMatcher::default()
    };
    let mut exact: HashMap<Box<[u8]>, Vec<u32>> = HashMap::new();
    let mut plain: [Vec<(u32, &str)>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    let mut latching: [Vec<(u32, &str)>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for (id, l) in lowered {
        m.id_bound = m.id_bound.max(id.saturating_add(1));
        match l {
            Lowered::Always => m.always.push(*id),
            Lowered::Never => {}
            Lowered::Exact(s) => exact
                .entry(s.as_bytes().to_vec().into_boxed_slice())
                .or_default()
                .push(*id),
            Lowered::Regex { place, latch, re } => {
                let slot = match place {
                    Place::Fwd => 0,
                    Place::Float => 1,
                    Place::Rev => 2,
                };
                if *latch {
                    latching[slot].push((*id, re.as_str()));
                } else {
                    plain[slot].push((*id, re.as_str()));
                }
            }
        }
    }
    m.exact = exact;
    let mut groups = Vec::new();
    for (slot, pats) in plain.into_iter().enumerate() {
        if !pats.is_empty() {
            groups.push(Group {
                rev: slot == 2,
                limit: cfg.dfa_size_limit,
                pats,
            });
        }
    }
    for (slot, pats) in latching.into_iter().enumerate() {
        for chunk in pats.chunks(cfg.latch_group_size.max(1)) {
            groups.push(Group {
                rev: slot == 2,
                limit: cfg.latch_size_limit,
                pats: chunk.to_vec(),
            });
        }
    }
    let mut budget = cfg.split_budget;
    let mut work = groups;
    while let Some(g) = work.pop() {
        let res: Vec<&str> = g.pats.iter().map(|p| p.1).collect();
        match build_dfa(&res, g.rev, g.limit, cfg) {
            Ok(dfa) => {
                let ids: Box<[u32]> = g.pats.iter().map(|p| p.0).collect();
                let auto = Auto::new(dfa, g.rev, ids).ok_or_else(|| BuildFailure {
                    id: g.pats.first().map_or(0, |p| p.0),
                    message: "automaton has no anchored start state".to_string(),
                })?;
                m.autos.push(auto);
            }
            Err(e) if e.is_size_limit_exceeded() && g.pats.len() > 1 && budget > 0 => {
                budget -= 1;
                let (a, b) = g.pats.split_at(g.pats.len() / 2);
                work.push(Group {
                    rev: g.rev,
                    limit: g.limit,
                    pats: a.to_vec(),
                });
                work.push(Group {
                    rev: g.rev,
                    limit: g.limit,
                    pats: b.to_vec(),
                });
            }
            Err(e) if e.is_size_limit_exceeded() => {
                for (id, re) in &g.pats {
                    m.slow.push(build_slow(re, g.rev, *id, cfg)?);
                }
            }
            Err(e) => {
                // Not a size problem: find the rule that causes it.
                if g.pats.len() == 1 {
                    return Err(BuildFailure {
                        id: g.pats[0].0,
                        message: format!("rule does not compile: {e}"),
                    });
                }
                for p in &g.pats {
                    work.push(Group {
                        rev: g.rev,
                        limit: g.limit,
                        pats: vec![*p],
                    });
                }
            }
        }
    }
    // Walk literal-led automata first: they die earliest.
    m.autos
        .sort_by_key(|a| (a.rev, std::cmp::Reverse(a.ids.len())));
    Ok(m)
}
