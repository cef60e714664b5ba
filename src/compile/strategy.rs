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
//!
//! Building a DFA costs, per state, the number of NFA states alive in it.
//! Anchored groups stay cheap (a trie's states hold few patterns each);
//! an unanchored group holds every pattern's start in every state, so
//! those groups are kept to `fwd_group_size` patterns. A DFA whose dense
//! table exceeds `sparse_above` bytes is kept sparse.
//!
//! Literal-led patterns whose literal holds a separator are routed (see
//! [`super::route`]): packed by shape into automata reached through their
//! keys, whole families of keys with the same first word together.

use super::Config;
use super::lower::{Lowered, Place, Shape};
use super::matcher::{Auto, KindMatcher, Literals, Slow, Table, Walk};
use super::route::{ByteMap, Hit, RouteKey, route_key, word_prefix};
use super::table;
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

/// Why an automaton was not built.
enum DfaError {
    /// The NFA or the DFA would exceed its size limit.
    Size,
    /// Anything else (one lowercase clause).
    Other(String),
}

fn build_dfa(
    res: &[&str],
    walk: Walk,
    limit: usize,
    cfg: &Config,
) -> Result<dense::DFA<Vec<u32>>, DfaError> {
    let rev = walk.reversed();
    // Only `Float` automata are searched unanchored (their shared
    // "anywhere" prefix); the others are smaller without that start.
    let start = if walk == Walk::Float {
        StartKind::Unanchored
    } else {
        StartKind::Anchored
    };
    // The NFA is built here, not by the DFA builder, to tell a size limit
    // hit while building it from a rule that does not compile.
    let nfa = thompson::Compiler::new()
        .syntax(syntax_config())
        .configure(
            thompson::Config::new()
                .utf8(false)
                .reverse(rev)
                .which_captures(thompson::WhichCaptures::None)
                .nfa_size_limit(Some(cfg.nfa_size_limit)),
        )
        .build_many(res)
        .map_err(|e| match e.size_limit() {
            Some(_) => DfaError::Size,
            None => DfaError::Other(e.to_string()),
        })?;
    dense::Builder::new()
        .configure(
            dense::Config::new()
                .match_kind(MatchKind::All)
                .start_kind(start)
                .minimize(false)
                .accelerate(false)
                .byte_classes(true)
                .dfa_size_limit(Some(limit))
                .determinize_size_limit(Some(limit)),
        )
        .build_from_nfa(&nfa)
        .map_err(|e| {
            if e.is_size_limit_exceeded() {
                DfaError::Size
            } else {
                DfaError::Other(e.to_string())
            }
        })
}

/// Builds the bounded fallback for one rule.
pub(crate) fn build_slow(
    re: &str,
    walk: Walk,
    id: u32,
    cfg: &Config,
) -> Result<Slow, BuildFailure> {
    use super::lower::ANY_RUN;
    let full = match walk {
        Walk::Fwd => re.to_string(),
        Walk::Float => format!("{ANY_RUN}(?:{re})"),
        Walk::Rev => format!("{ANY_RUN}(?:{re})$"),
        Walk::Seg => format!("{}(?:{re})", super::glob::SEGS),
        // The regex ends with the `/` ending a segment.
        Walk::SegRev => format!("{ANY_RUN}(?:{re})"),
    };
    let regex = meta::Builder::new()
        .configure(
            meta::Config::new()
                .match_kind(MatchKind::All)
                .utf8_empty(false)
                .nfa_size_limit(Some(cfg.nfa_size_limit))
                .hybrid_cache_capacity(cfg.fallback_cache)
                // Only the lazy DFA (and the PikeVM it falls back on) is
                // ever needed here: the searches ask whether and where a
                // match ends, never for groups. Building the full DFA,
                // the one-pass and backtracking engines and a prefilter
                // too took about half of a one-shot hook's first
                // decision (≈ 95 µs of 199 µs for the rule it compiled).
                .dfa(false)
                .onepass(false)
                .backtrack(false)
                .auto_prefilter(false),
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
        walk,
        id,
    })
}

/// The walk of each place, by its index in `build`.
const WALKS: [Walk; 5] = [Walk::Fwd, Walk::Float, Walk::Rev, Walk::Seg, Walk::SegRev];

/// `(rule ids, regex, first byte, route key)`: identical regexes merged.
/// The route key is an index into the build's keys.
type Merged<'a> = (Vec<u32>, &'a str, Option<u8>, Option<usize>);

/// `(rule id, regex, first byte, route key)`.
type Pat<'a> = (u32, &'a str, Option<u8>, Option<usize>);

struct Group<'a> {
    walk: Walk,
    limit: usize,
    pats: Vec<Merged<'a>>,
    /// Walked only for haystacks whose first byte some pattern starts with.
    dispatch: bool,
    /// Reached through the route keys of its patterns.
    routed: bool,
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
    let mut exact: ByteMap<Vec<u32>> = ByteMap::default();
    // [place][shape]
    let mut by: [[Vec<Pat<'_>>; 3]; 5] = Default::default();
    // Routed forward patterns, by shape, and their keys.
    let mut routed: [Vec<Pat<'_>>; 3] = Default::default();
    let mut keys: Vec<RouteKey> = Vec::new();
    // Word-prefix rules by key (see `word_prefix`).
    let mut words: ByteMap<Vec<u32>> = ByteMap::default();
    let mut key_index: HashMap<RouteKey, usize> = HashMap::new();
    let sep = term.unwrap_or(b' ');
    m.routes.sep = sep;
    let depth = if term == Some(b'/') {
        cfg.path_route_depth
    } else {
        cfg.route_depth
    };
    m.routes.depth = u8::try_from(depth).unwrap_or(u8::MAX);
    let mut tabled = Vec::new();
    // Patterns of a bounded blow-up, by place, with it.
    let mut wild: [Vec<(Pat<'_>, u32)>; 5] = Default::default();
    let tables = cfg.path_tables && lowered.len() >= cfg.path_table_min;
    // Rules with a suffix pattern of their own: their other patterns are
    // never checked suffixes (a checked rule has one reverse pattern).
    let suffixed: std::collections::HashSet<u32> = lowered
        .iter()
        .filter(|(_, l)| {
            matches!(
                l,
                Lowered::Regex {
                    place: Place::Rev,
                    ..
                }
            )
        })
        .map(|(id, _)| *id)
        .collect();
    for (id, l) in lowered {
        m.id_bound = m.id_bound.max(id.saturating_add(1));
        match l {
            Lowered::Always => m.always.push(*id),
            Lowered::Never => {}
            Lowered::Exact(s) => exact
                .entry(s.as_bytes().to_vec().into_boxed_slice())
                .or_default()
                .push(*id),
            Lowered::Regex {
                place,
                shape,
                first,
                re,
                blowup,
            } => {
                let p = match place {
                    Place::Fwd => 0,
                    Place::Float => 1,
                    Place::Rev => 2,
                    Place::Seg => 3,
                    Place::SegRev => 4,
                };
                let s = match shape {
                    Shape::Pure => 0,
                    Shape::Tracking => 1,
                    Shape::Latching => 2,
                };
                if term == Some(b'/') && tables {
                    let walk = match place {
                        Place::Fwd => Some(Walk::Fwd),
                        Place::Seg => Some(Walk::Seg),
                        Place::SegRev => Some(Walk::SegRev),
                        Place::Float | Place::Rev => None,
                    };
                    if let Some(t) = walk.and_then(|w| table::classify(re, w, *shape, *id)) {
                        tabled.push(t);
                        continue;
                    }
                }
                // Patterns whose shape multiplies states (`*!???`): over
                // the limit alone, straight to the fallback (building
                // their automaton would take seconds before any limit
                // stops it); under it, in automata of their own.
                if *blowup > 0 {
                    if *blowup > cfg.blowup_limit {
                        m.slow.push(build_slow(re, WALKS[p], *id, cfg)?);
                    } else {
                        wild[p].push(((*id, re.as_str(), *first, None), *blowup));
                    }
                    continue;
                }
                // Literals between stars, ending with a literal (`git * x`,
                // `a *b* c`): the last literal in the reverse automaton,
                // the rest checked on the haystack when it matches.
                if p == 0
                    && s != 0
                    && term.is_none()
                    && !suffixed.contains(id)
                    && !m.checks.contains_key(id)
                {
                    if let Some((lits, last)) = star_literals(re) {
                        m.checks.insert(*id, lits);
                        by[2][0].push((*id, last, None, None));
                        continue;
                    }
                }
                if p == 0 && s == 0 && term.is_none() {
                    if let Some((key, whole)) = word_prefix(re, sep, depth) {
                        if whole {
                            exact.entry(key.clone()).or_default().push(*id);
                        }
                        words.entry(key).or_default().push(*id);
                        continue;
                    }
                }
                if p == 0 {
                    if let Some(k) = route_key(re, sep, depth) {
                        let next = keys.len();
                        let ki = *key_index.entry(k.clone()).or_insert(next);
                        if ki == next {
                            keys.push(k);
                        }
                        routed[s].push((*id, re.as_str(), None, Some(ki)));
                        continue;
                    }
                }
                by[p][s].push((*id, re.as_str(), *first, None));
            }
        }
    }
    m.exact = exact;
    m.tables = table::PathTables::build(tabled);
    let mut groups = Vec::new();
    // Identical regexes (a rule read in two dialects, or twice) are
    // compiled once, for all their rules.
    let by = by.map(|shapes| shapes.map(merge));
    let routed = routed.map(merge);
    for (s, mut pats) in routed.into_iter().enumerate() {
        // Consecutive keys share automata (a query walks only those its
        // keys lead to); latching patterns whose literal prefixes nest
        // are bounded per automaton, as below.
        let order = |p: &Merged<'_>| {
            let k = keys.get(p.3.unwrap_or(0));
            let word = k.map(|k| k.key.split(|&b| b == sep).next().unwrap_or(&[]));
            (k.map(|k| k.folded), word, k.map(|k| &k.key))
        };
        pats.sort_by(|a, b| (order(a), a.1).cmp(&(order(b), b.1)));
        let (cap, conflicts_allowed) = match s {
            0 => (cfg.route_pack_size, usize::MAX),
            1 => (cfg.route_pack_size.min(cfg.fwd_group_size), usize::MAX),
            _ => (
                cfg.route_pack_size.min(cfg.fwd_group_size),
                cfg.latch_group_size.max(1),
            ),
        };
        for c in pack(pats, &keys, sep, cap.max(1), conflicts_allowed) {
            groups.push(Group {
                walk: Walk::Fwd,
                limit: cfg.dfa_size_limit,
                pats: c,
                dispatch: false,
                routed: true,
            });
        }
    }
    for (p, shapes) in by.into_iter().enumerate() {
        let walk = match p {
            1 => Walk::Float,
            2 => Walk::Rev,
            3 => Walk::Seg,
            4 => Walk::SegRev,
            _ => Walk::Fwd,
        };
        for (s, mut pats) in shapes.into_iter().enumerate() {
            if pats.is_empty() {
                continue;
            }
            if s == 0 {
                // Pure patterns never multiply: one automaton. Except
                // unanchored ones: every state of their automaton holds
                // every pattern's start, so building it costs patterns ×
                // states; they are chunked to keep that bounded.
                let chunk = if walk == Walk::Float {
                    cfg.fwd_group_size.max(1)
                } else {
                    usize::MAX
                };
                for c in pats.chunks(chunk) {
                    groups.push(Group {
                        walk,
                        limit: cfg.dfa_size_limit,
                        pats: c.to_vec(),
                        dispatch: false,
                        routed: false,
                    });
                }
                continue;
            }
            // Tracking and latching patterns multiply the states of those
            // alive beside them. Forward (literal-led) ones are alive beside
            // each other only when one's literal prefix (up to its first
            // wildcard) is a prefix of the other's: each automaton takes a
            // bounded number of such conflicting patterns, and any number of
            // others (up to `fwd_group_size`), all starting with the same
            // byte, so that it is walked only for haystacks starting so.
            // Other places (`*a*b*`) all conflict: a few per automaton.
            if p != 0 {
                for c in pats.chunks(cfg.latch_group_size.max(1)) {
                    groups.push(Group {
                        walk,
                        limit: cfg.latch_size_limit,
                        pats: c.to_vec(),
                        dispatch: false,
                        routed: false,
                    });
                }
                continue;
            }
            let conflicts_allowed = if s == 1 {
                usize::MAX
            } else {
                cfg.latch_group_size.max(1)
            };
            pats.sort_by(|a, b| (a.2.is_none(), a.2, a.1).cmp(&(b.2.is_none(), b.2, b.1)));
            let mut chunks: Vec<Vec<Merged<'_>>> = Vec::new();
            let mut open_from = 0;
            for pat in pats {
                // Chunks of an earlier first byte are closed.
                if chunks[open_from..]
                    .first()
                    .and_then(|c| c.first())
                    .is_some_and(|q| q.2 != pat.2)
                {
                    open_from = chunks.len();
                }
                let lit = literal_prefix(pat.1);
                let slot = chunks[open_from..].iter().position(|c| {
                    c.len() < cfg.fwd_group_size.max(1)
                        && c.iter()
                            .filter(|q| {
                                let l = literal_prefix(q.1);
                                l.starts_with(lit) || lit.starts_with(l)
                            })
                            .count()
                            < conflicts_allowed
                });
                match slot {
                    Some(i) => chunks[open_from + i].push(pat),
                    None => chunks.push(vec![pat]),
                }
            }
            for c in chunks {
                // The conflict bound is the guard here; the limit only a
                // safety net (long literal rules make big, linear tries).
                groups.push(Group {
                    walk,
                    limit: cfg.dfa_size_limit,
                    pats: c,
                    dispatch: true,
                    routed: false,
                });
            }
        }
    }
    for (p, pats) in wild.into_iter().enumerate() {
        // Packed in order, their blow-ups summing to at most the limit.
        let mut open: Vec<Pat<'_>> = Vec::new();
        let mut sum = 0u32;
        let mut packs = Vec::new();
        for (pat, b) in pats {
            if !open.is_empty()
                && (sum.saturating_add(b) > cfg.blowup_limit || open.len() >= cfg.fwd_group_size)
            {
                packs.push(std::mem::take(&mut open));
                sum = 0;
            }
            sum = sum.saturating_add(b);
            open.push(pat);
        }
        if !open.is_empty() {
            packs.push(open);
        }
        for pats in packs {
            groups.push(Group {
                walk: WALKS[p],
                limit: cfg.latch_size_limit,
                pats: merge(pats),
                dispatch: p == 0,
                routed: false,
            });
        }
    }
    let mut budget = cfg.split_budget;
    let mut work = groups;
    let mut route_map: HashMap<usize, Vec<u32>> = HashMap::new();
    while let Some(g) = work.pop() {
        let res: Vec<&str> = g.pats.iter().map(|p| p.1).collect();
        let first = first_bytes(&g);
        let built = build_dfa(&res, g.walk, g.limit, cfg);
        match built {
            Ok(dfa) => {
                let ids: Box<[Box<[u32]>]> = g
                    .pats
                    .iter()
                    .map(|p| p.0.clone().into_boxed_slice())
                    .collect();
                let sparse_above = if g.routed {
                    cfg.route_sparse_above
                } else {
                    cfg.sparse_above
                };
                let table = if dfa.memory_usage() > sparse_above {
                    dfa.to_sparse()
                        .map(Table::Sparse)
                        .unwrap_or(Table::Dense(dfa))
                } else {
                    Table::Dense(dfa)
                };
                let mut auto =
                    Auto::new(table, g.walk, ids, first).ok_or_else(|| BuildFailure {
                        id: g
                            .pats
                            .first()
                            .and_then(|p| p.0.first().copied())
                            .unwrap_or(0),
                        message: "automaton has no anchored start state".to_string(),
                    })?;
                if g.routed {
                    let at = m.routes.autos.len() as u32;
                    for p in &g.pats {
                        let ix = route_map.entry(p.3.unwrap_or(0)).or_default();
                        if ix.last() != Some(&at) {
                            ix.push(at);
                        }
                    }
                    m.routes.autos.push(auto);
                } else {
                    // Paths: the forward automata beside the tables hold
                    // few rules, starting with few bytes. (Commands'
                    // undispatched ones start with most letters: a filter
                    // there costs more than it skips.)
                    if term == Some(b'/') {
                        auto.derive_first(term);
                    }
                    m.autos.push(auto);
                }
            }
            Err(DfaError::Size) if g.pats.len() > 1 && budget > 0 => {
                budget -= 1;
                let (a, b) = g.pats.split_at(g.pats.len() / 2);
                work.push(Group {
                    walk: g.walk,
                    limit: g.limit,
                    pats: a.to_vec(),
                    dispatch: g.dispatch,
                    routed: g.routed,
                });
                work.push(Group {
                    walk: g.walk,
                    limit: g.limit,
                    pats: b.to_vec(),
                    dispatch: g.dispatch,
                    routed: g.routed,
                });
            }
            Err(DfaError::Size) => {
                for (ids, re, _, _) in &g.pats {
                    for id in ids {
                        m.slow.push(build_slow(re, g.walk, *id, cfg)?);
                    }
                }
            }
            Err(DfaError::Other(e)) => {
                // Not a size problem: find the rule that causes it.
                if g.pats.len() == 1 {
                    return Err(BuildFailure {
                        id: g.pats[0].0.first().copied().unwrap_or(0),
                        message: format!("rule does not compile: {e}"),
                    });
                }
                for p in &g.pats {
                    work.push(Group {
                        walk: g.walk,
                        limit: g.limit,
                        pats: vec![p.clone()],
                        dispatch: g.dispatch,
                        routed: g.routed,
                    });
                }
            }
        }
    }
    for (ki, ix) in route_map {
        if let Some(k) = keys.get(ki) {
            let map = if k.folded {
                &mut m.routes.folded
            } else {
                &mut m.routes.exact
            };
            map.insert(
                k.key.clone(),
                Hit {
                    autos: ix.into_boxed_slice(),
                    ids: Box::default(),
                },
            );
        }
    }
    for (key, ids) in words {
        m.routes.exact.entry(key).or_default().ids = ids.into_boxed_slice();
    }
    // Walk literal-led automata first: they die earliest.
    m.autos.sort_by_key(|a| {
        (
            a.first.is_some(),
            a.walk.to_byte(),
            std::cmp::Reverse(a.ids.len()),
        )
    });
    Ok(m)
}

/// The literals of a forward regex in matching form that is two or more
/// literals joined by runs of any bytes and ends with `$` (a glob of
/// literals and stars, led and ended by a literal), and the last literal as
/// written; `None` for any other regex.
fn star_literals(re: &str) -> Option<(Literals, &str)> {
    use super::lower::{ANY_RUN, push_literal};
    let body = re.strip_suffix('$')?;
    let mut lits = Vec::new();
    let mut last = "";
    for part in body.split(ANY_RUN) {
        let (lit, _) = super::lazy::literal_ends(part);
        let mut written = String::with_capacity(part.len());
        push_literal(&mut written, &lit);
        if part.is_empty() || written != part {
            return None;
        }
        lits.push(lit.into_bytes().into_boxed_slice());
        last = part;
    }
    (lits.len() >= 2).then(|| (lits.into_boxed_slice(), last))
}

/// The first bytes of a dispatched group's patterns (`None`: walk always).
fn first_bytes(g: &Group<'_>) -> Option<[u64; 4]> {
    if !g.dispatch {
        return None;
    }
    let mut set = [0u64; 4];
    for (_, _, first, _) in &g.pats {
        let b = (*first)?;
        set[usize::from(b >> 6)] |= 1 << (b & 63);
    }
    Some(set)
}

/// The literal text a regex starts with, as written (up to its first group
/// or class: literals are always escaped, so neither starts one).
fn literal_prefix(re: &str) -> &str {
    re.find(['(', '[', '$']).map_or(re, |i| &re[..i])
}

/// Merges identical regexes (a rule read in two dialects, or twice): each
/// is compiled once, for all its rules.
fn merge(pats: Vec<Pat<'_>>) -> Vec<Merged<'_>> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut out: Vec<Merged<'_>> = Vec::new();
    for (id, re, first, key) in pats {
        match index.get(re).and_then(|&i| out.get_mut(i)) {
            Some(m) => m.0.push(id),
            None => {
                index.insert(re, out.len());
                out.push((vec![id], re, first, key));
            }
        }
    }
    out
}

/// Packs routed patterns (sorted by key) into automata. Pure and tracking
/// patterns: whole families (keys of the same first word, which one query
/// may all look up) to an automaton, consecutive families together up to
/// `cap` patterns, so that a query walks one automaton per shape. Latching
/// patterns: at most `conflicts_allowed` whose literal prefixes nest with a
/// new one's (see the latching bound in `build`).
fn pack<'a>(
    pats: Vec<Merged<'a>>,
    keys: &[RouteKey],
    sep: u8,
    cap: usize,
    conflicts_allowed: usize,
) -> Vec<Vec<Merged<'a>>> {
    let mut packs: Vec<Vec<Merged<'a>>> = Vec::new();
    if conflicts_allowed == usize::MAX {
        let family = |p: &Merged<'_>| {
            keys.get(p.3.unwrap_or(0)).map(|k| {
                let word = k.key.split(|&b| b == sep).next().unwrap_or(&[]);
                (k.folded, word.to_vec())
            })
        };
        let mut last = None;
        for pat in pats {
            let f = family(&pat);
            let new_family = f != last;
            last = f;
            match packs.last_mut() {
                Some(c) if !new_family || c.len() < cap => c.push(pat),
                _ => packs.push(vec![pat]),
            }
        }
        return packs;
    }
    // Only the last few packs are searched for room, which keeps packing
    // linear (keys come in order, so related ones are close).
    const OPEN: usize = 8;
    for pat in pats {
        let lit = literal_prefix(pat.1);
        let from = packs.len().saturating_sub(OPEN);
        let slot = packs[from..].iter().position(|c| {
            c.len() < cap
                && c.iter()
                    .filter(|q| {
                        let l = literal_prefix(q.1);
                        l.starts_with(lit) || lit.starts_with(l)
                    })
                    .count()
                    < conflicts_allowed
        });
        match slot.and_then(|i| packs.get_mut(from + i)) {
            Some(c) => c.push(pat),
            None => packs.push(vec![pat]),
        }
    }
    packs
}
