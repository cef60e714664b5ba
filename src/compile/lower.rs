//! Every pattern kind → an exact literal or a regex in *matching form*,
//! with the strategy ([`Place`]) its shape calls for.
//!
//! # The matching form
//!
//! Every regex is searched anchored, and a rule matches as soon as its regex
//! matches a *prefix* of the haystack (for [`Place::Rev`], a suffix, the
//! haystack being walked backwards; for [`Place::Float`], a prefix of some
//! suffix: it is searched unanchored). A match ends the rule's thread in the
//! automaton, so a trailing `*` is dropped instead of being compiled into a
//! `.*` that would stay alive and multiply every other rule's states; a
//! pattern without a trailing `*` ends in `$`. Path patterns are lowered in
//! [`super::glob`].
//!
//! The shape decides the strategy, as measured (BENCHMARKS.md, "Compiled
//! matchers"): literal-led patterns share forward automata (reached by
//! their leading words or first byte, see `route`), suffix
//! patterns (`* --dry-run`, `*.example.com`) one reverse automaton,
//! "contains" patterns (`*--force*`) unanchored automata of their own,
//! any-depth path patterns automata walked at each segment (see
//! [`super::glob`]), exact literals a hash map; patterns that latch (a
//! literal between two stars) go into small groups of a bounded count.

use crate::rule::{CommandForm, CommandPattern, DomainLabel, DomainPattern, GlobPiece, ToolMatch};
use std::fmt::Write;

/// Where a lowered regex is searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Place {
    /// Forward from the start of the haystack; literal-led.
    Fwd,
    /// Forward from anywhere in the haystack (contains): the automaton
    /// is unanchored, its "anywhere" prefix shared by all its patterns.
    Float,
    /// Backward from the end of the haystack (suffix patterns).
    Rev,
    /// Forward from the start of every segment of a path (any-depth path
    /// patterns): the regex is anchored, and the walk restarts after each
    /// `/`.
    Seg,
    /// Backward from the end of every segment of a path, its `/` included
    /// (any-depth path patterns led by `*`, such as `**/*.ext`).
    SegRev,
}

/// How a pattern's threads live in an automaton, which decides how many
/// patterns can share one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Shape {
    /// No unbounded wildcard before the end: threads die early (a trie,
    /// or Aho-Corasick-like for `Float`). Linear in any number.
    Pure,
    /// One unbounded wildcard inside (`git * --force`): its thread stays
    /// alive tracking the rest, multiplying the states of patterns that
    /// share its prefix.
    Tracking,
    /// A literal between two unbounded wildcards (`*a*b*`): the automaton
    /// must remember it was seen; states double per such pattern.
    Latching,
}

/// A pattern in matching form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Lowered {
    /// Matches every haystack.
    Always,
    /// Matches no haystack.
    Never,
    /// Matches exactly this text (case-sensitive).
    Exact(String),
    /// A regex in matching form.
    Regex {
        /// Where it is searched.
        place: Place,
        /// How its threads live in an automaton.
        shape: Shape,
        /// The byte every match starts with, when there is one (forward
        /// literal-led, case-sensitive): automata are chosen by it.
        first: Option<u8>,
        /// The regex.
        re: String,
        /// How many times over, as a power of two, this pattern may
        /// multiply the states of an automaton it is in ([`blowup`]).
        blowup: u32,
    },
}

/// One piece of a pattern in the order its automaton walks it, for
/// [`blowup`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tick {
    /// An unbounded run (`*`).
    Run,
    /// A literal character (case-folded or not), or any piece that does
    /// not overlap the pieces around it (`/`, `**` in a path).
    Lit,
    /// Exactly one character, any (`?`).
    Any,
    /// Exactly one character of a class (`[a-z]`, `[!x]`).
    Class,
}

/// An estimate, as a power of two, of how many states a pattern adds to an
/// automaton, from its shape alone (no automaton is built).
///
/// After an unbounded run (`*`), the automaton must remember, for every
/// character position in reach of the pieces that follow, whether the
/// match could have started there. A run of literals is followed
/// Knuth–Morris–Pratt-like, in states linear in its length; a run of only
/// `?` is a counter. But a piece that tells characters apart followed by
/// one-character wildcards (`*!???`, `*a[bc]`) makes the automaton track
/// each of those positions separately: its states double with every such
/// wildcard (measured: `*!` and k `?` in one path segment, dense, 2^k ×
/// ~1.1 KiB; k = 11 took seconds to reach a 2 MiB limit). This counts,
/// per run after a `*`, the `?` and classes of the run when one of them
/// follows a discriminating piece, and sums over the runs; an
/// over-estimate errs towards the bounded fallback, never towards a
/// runaway build.
pub(crate) fn blowup(ticks: impl IntoIterator<Item = Tick>) -> u32 {
    let mut total = 0u32;
    let mut after_run = false;
    // Within the current run: wildcards, whether a discriminating piece
    // was seen, whether a wildcard followed one.
    let (mut wild, mut told, mut grows) = (0u32, false, false);
    for t in ticks {
        match t {
            Tick::Run => {
                if grows {
                    total = total.saturating_add(wild);
                }
                after_run = true;
                (wild, told, grows) = (0, false, false);
            }
            _ if !after_run => {}
            Tick::Lit => told = true,
            Tick::Any | Tick::Class => {
                wild = wild.saturating_add(1);
                grows |= told;
                told |= t == Tick::Class;
            }
        }
    }
    if grows {
        total = total.saturating_add(wild);
    }
    total
}

fn glob_ticks(pieces: &[GlobPiece]) -> Vec<Tick> {
    let mut out = Vec::new();
    for p in pieces {
        match p {
            GlobPiece::Star => out.push(Tick::Run),
            GlobPiece::Question => out.push(Tick::Any),
            GlobPiece::Literal(l) => out.extend(l.chars().map(|_| Tick::Lit)),
        }
    }
    out
}

/// `.*` over bytes: a run of any characters. Byte-level is exact: literals
/// are whole UTF-8 characters, so a run between two of them is a run of
/// whole characters, and the haystack is UTF-8.
pub(crate) const ANY_RUN: &str = "(?s-u:.)*";
/// Exactly one character (any, newline included).
const ANY_CHAR: &str = "(?s:.)";

/// Appends `s` as a literal: ASCII letters and digits as they are, every
/// other character as `\x{…}` (no character is ever special).
pub(crate) fn push_literal(re: &mut String, s: &str) {
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            re.push(c);
        } else {
            let _ = write!(re, "\\x{{{:X}}}", c as u32);
        }
    }
}

/// Appends a character class matching one character in `ranges` (or, when
/// `negated`, outside them), never `exclude`.
pub(crate) fn push_class(
    re: &mut String,
    negated: bool,
    ranges: &[(char, char)],
    exclude: Option<char>,
) {
    // A range whose ends are reversed matches nothing.
    let valid: Vec<(char, char)> = ranges.iter().copied().filter(|(a, b)| a <= b).collect();
    if negated {
        if valid.is_empty() && exclude.is_none() {
            // `[!]`: any one character.
            re.push_str(ANY_CHAR);
            return;
        }
        re.push_str("[^");
        for (a, b) in &valid {
            let _ = write!(re, "\\x{{{:X}}}-\\x{{{:X}}}", *a as u32, *b as u32);
        }
        if let Some(x) = exclude {
            let _ = write!(re, "\\x{{{:X}}}", x as u32);
        }
        re.push(']');
    } else if valid.is_empty() {
        // Matches nothing.
        re.push_str("[^\\x{0}-\\x{10FFFF}]");
    } else {
        re.push('[');
        for (a, b) in &valid {
            let _ = write!(re, "\\x{{{:X}}}-\\x{{{:X}}}", *a as u32, *b as u32);
        }
        if let Some(x) = exclude {
            let _ = write!(re, "&&[^\\x{{{:X}}}]", x as u32);
        }
        re.push(']');
    }
}

/// Lowers a command pattern (`Bash(…)`, `PowerShell(…)`).
pub(crate) fn lower_command(p: &CommandPattern) -> Vec<Lowered> {
    lower_form(&p.form, p.case_insensitive)
}

/// Lowers a command or field form (one rule may need two regexes).
pub(crate) fn lower_form(form: &CommandForm, case_insensitive: bool) -> Vec<Lowered> {
    match form {
        // `P` itself, or `P` followed by a space and anything.
        CommandForm::PrefixGlob(pieces) => {
            let mut spaced = pieces.clone();
            spaced.push(GlobPiece::Literal(" ".to_string()));
            spaced.push(GlobPiece::Star);
            vec![
                lower_glob(pieces, case_insensitive),
                lower_glob(&spaced, case_insensitive),
            ]
        }
        _ => vec![lower_form1(form, case_insensitive)],
    }
}

fn lower_form1(form: &CommandForm, case_insensitive: bool) -> Lowered {
    match form {
        CommandForm::Exact(s) => {
            if case_insensitive {
                let mut re = String::new();
                push_literal(&mut re, s);
                re.push('$');
                regex(Place::Fwd, 0, re, true)
            } else {
                Lowered::Exact(s.clone())
            }
        }
        CommandForm::Prefix(p) => {
            let mut re = String::new();
            push_literal(&mut re, p);
            re.push_str("(?:\\x{20}|$)");
            regex_first(Place::Fwd, 0, re, case_insensitive, p.bytes().next())
        }
        CommandForm::Glob(pieces) | CommandForm::PrefixGlob(pieces) => {
            lower_glob(pieces, case_insensitive)
        }
    }
}

/// Lowers a whole-string glob (`*` any run, `?` one character).
pub(crate) fn lower_glob(pieces: &[GlobPiece], case_insensitive: bool) -> Lowered {
    let mut body: &[GlobPiece] = pieces;
    let lead = body.first() == Some(&GlobPiece::Star);
    let trail = body.last() == Some(&GlobPiece::Star);
    while body.first() == Some(&GlobPiece::Star) {
        body = &body[1..];
    }
    while body.last() == Some(&GlobPiece::Star) {
        body = &body[..body.len() - 1];
    }
    if body.is_empty() {
        return if lead {
            Lowered::Always
        } else {
            Lowered::Exact(String::new())
        };
    }
    if !lead && !case_insensitive && body.iter().all(|p| matches!(p, GlobPiece::Literal(_))) {
        let mut s = String::new();
        for p in body {
            if let GlobPiece::Literal(l) = p {
                s.push_str(l);
            }
        }
        if !trail {
            return Lowered::Exact(s);
        }
    }
    // Runs of stars count once.
    let mut inner = 0usize;
    let mut re = String::new();
    let mut prev_star = false;
    for p in body {
        match p {
            GlobPiece::Literal(l) => {
                push_literal(&mut re, l);
                prev_star = false;
            }
            GlobPiece::Question => {
                re.push_str(ANY_CHAR);
                prev_star = false;
            }
            GlobPiece::Star => {
                if !prev_star {
                    inner += 1;
                    re.push_str(ANY_RUN);
                }
                prev_star = true;
            }
        }
    }
    let first = match body.first() {
        Some(GlobPiece::Literal(l)) => l.bytes().next(),
        _ => None,
    };
    // Suffix patterns are walked backwards; contains patterns from
    // anywhere (their leading `*` kept).
    let ticks = glob_ticks(pieces);
    let forward = blowup(ticks.iter().copied());
    let low = match (lead, trail) {
        (false, false) => {
            re.push('$');
            regex_first(Place::Fwd, inner, re, case_insensitive, first)
        }
        (false, true) => regex_first(Place::Fwd, inner, re, case_insensitive, first),
        (true, false) => regex(Place::Rev, inner, re, case_insensitive),
        (true, true) => regex(Place::Float, inner, re, case_insensitive),
    };
    match low {
        Lowered::Regex {
            place,
            shape,
            first,
            re,
            ..
        } => {
            let blowup = if place == Place::Rev {
                blowup(ticks.iter().rev().copied())
            } else {
                forward
            };
            Lowered::Regex {
                place,
                shape,
                first,
                re,
                blowup,
            }
        }
        other => other,
    }
}

fn regex(place: Place, inner: usize, re: String, case_insensitive: bool) -> Lowered {
    regex_first(place, inner, re, case_insensitive, None)
}

fn regex_first(
    place: Place,
    inner: usize,
    re: String,
    case_insensitive: bool,
    first: Option<u8>,
) -> Lowered {
    let shape = match (place, inner) {
        (_, 0) => Shape::Pure,
        (Place::Float, _) => Shape::Latching,
        (_, 1) => Shape::Tracking,
        _ => Shape::Latching,
    };
    let re = if case_insensitive {
        format!("(?i:{re})")
    } else {
        re
    };
    let first = if case_insensitive || place != Place::Fwd {
        None
    } else {
        first
    };
    Lowered::Regex {
        place,
        shape,
        first,
        re,
        blowup: 0,
    }
}

/// Lowers a tool-name match.
pub(crate) fn lower_tool(t: &ToolMatch) -> Lowered {
    match t {
        ToolMatch::Name(n) => Lowered::Exact(n.clone()),
        ToolMatch::McpServer(s) => {
            let mut re = String::new();
            push_literal(&mut re, "mcp__");
            push_literal(&mut re, s);
            re.push_str("(?:$|");
            push_literal(&mut re, "__");
            re.push(')');
            regex_first(Place::Fwd, 0, re, false, Some(b'm'))
        }
        ToolMatch::Glob(pieces) => lower_glob(pieces, false),
    }
}

/// `[^.]+`: one label, never empty (bytes; exact for the same reason as
/// [`ANY_RUN`]).
const LABEL: &str = "(?-u:[^.])+";

/// Lowers a domain pattern, matched against a host (ASCII lower case,
/// trailing `.` removed).
pub(crate) fn lower_domain(d: &DomainPattern) -> Lowered {
    match d {
        DomainPattern::Any => Lowered::Always,
        DomainPattern::Host { subdomains, labels } => {
            let all_literal = labels.iter().all(|l| matches!(l, DomainLabel::Literal(_)));
            if !subdomains && all_literal {
                let parts: Vec<&str> = labels
                    .iter()
                    .filter_map(|l| match l {
                        DomainLabel::Literal(s) => Some(s.as_str()),
                        DomainLabel::Star => None,
                    })
                    .collect();
                return Lowered::Exact(parts.join("."));
            }
            let mut re = String::new();
            if *subdomains {
                // One or more labels before: the host ends with `.LABELS`
                // (whatever precedes that dot splits into labels).
                re.push_str("\\x{2E}");
            }
            for (i, l) in labels.iter().enumerate() {
                if i > 0 {
                    re.push_str("\\x{2E}");
                }
                match l {
                    DomainLabel::Literal(s) => push_literal(&mut re, s),
                    DomainLabel::Star => re.push_str(LABEL),
                }
            }
            if *subdomains {
                regex(Place::Rev, 0, re, false)
            } else {
                re.push('$');
                regex(Place::Fwd, 0, re, false)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Tick, blowup};

    /// `*` → run, `?` → any, `[` → class, anything else a literal.
    fn est(s: &str) -> u32 {
        blowup(s.chars().map(|c| match c {
            '*' => Tick::Run,
            '?' => Tick::Any,
            '[' => Tick::Class,
            _ => Tick::Lit,
        }))
    }

    #[test]
    fn wildcards_after_a_discriminating_piece_count() {
        assert_eq!(est("*!???????????"), 11);
        assert_eq!(est("x*!??/"), 2);
        assert_eq!(est("*?!?"), 2);
        assert_eq!(est("*[[["), 3);
        assert_eq!(est("*a?*b??*c???*"), 6);
    }

    #[test]
    fn linear_shapes_count_nothing() {
        // Literals (Knuth–Morris–Pratt), counters of `?`, a literal after
        // the wildcards, wildcards before any star.
        assert_eq!(est("*abcdef*ghi"), 0);
        assert_eq!(est("*???????????/"), 0);
        assert_eq!(est("*??!"), 0);
        assert_eq!(est("a!???????*"), 0);
        assert_eq!(est("*["), 0);
        assert_eq!(est(""), 0);
    }
}
