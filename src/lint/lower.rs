//! Patterns lowered to regular expressions, and language inclusion decided
//! exactly on dense DFAs (for shadowed and redundant rules).
//!
//! Each lowering follows the semantics the IR's doc comments fix
//! ([`crate::rule::pattern`]); the reference matcher is the oracle the
//! tests compare it with. Inclusion `L(B) ⊆ L(A)` is decided on the
//! product of the two automata (and of the universe of well-formed
//! haystacks, for paths and hosts): B is included when no reachable
//! product state accepts B (and the universe) but not A.

use std::collections::HashSet;

use regex_automata::dfa::{Automaton, StartKind, dense};
use regex_automata::util::start;
use regex_automata::{Anchored, MatchKind};

use crate::reference::fold_char;
use crate::rule::{
    CommandForm, DomainLabel, DomainPattern, GlobPiece, PathPattern, SegPiece, Segment, ToolMatch,
};

/// What the strings of a language are: any text, a relative path (non-empty
/// segments joined by `/`) or a host (non-empty labels joined by `.`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Universe {
    /// Any text (commands, field values, tool names).
    Text,
    /// A relative path.
    Path,
    /// A host name.
    Host,
}

impl Universe {
    fn regex(self) -> Option<&'static str> {
        match self {
            Universe::Text => None,
            Universe::Path => Some("[^/]+(?:/[^/]+)*"),
            Universe::Host => Some("[^.]+(?:\\.[^.]+)*"),
        }
    }
}

/// A pattern lowered: the regex of the strings it matches, the literal
/// every one of them starts with (for pre-filtering pairs), and the
/// universe its strings live in.
#[derive(Clone, Debug)]
pub(crate) struct Lowered {
    /// The regex (unanchored text: the DFA is built anchored at both ends).
    pub regex: String,
    /// A literal every matching string starts with (case-folded when
    /// `folded`).
    pub prefix: String,
    /// Whether `prefix` is case-folded.
    pub folded: bool,
    /// What the strings are.
    pub universe: Universe,
}

impl Lowered {
    /// Whether the pre-filter lets the pair through: the two literal
    /// prefixes must be comparable (one a prefix of the other), or no
    /// string could be in both languages.
    pub fn may_overlap(&self, other: &Lowered) -> bool {
        if self.folded != other.folded {
            let a: String = self.prefix.chars().map(fold_char).collect();
            let b: String = other.prefix.chars().map(fold_char).collect();
            return a.starts_with(&b) || b.starts_with(&a);
        }
        self.prefix.starts_with(&other.prefix) || other.prefix.starts_with(&self.prefix)
    }
}

/// `c` written so that the regex parser reads it as itself.
fn push_char(out: &mut String, c: char) {
    if c.is_ascii_alphanumeric() || c == ' ' || c == '_' {
        out.push(c);
    } else {
        out.push_str(&format!("\\x{{{:X}}}", c as u32));
    }
}

fn push_literal(out: &mut String, s: &str) {
    for c in s.chars() {
        push_char(out, c);
    }
}

fn glob_regex(pieces: &[GlobPiece], out: &mut String) {
    for p in pieces {
        match p {
            GlobPiece::Literal(s) => push_literal(out, s),
            GlobPiece::Star => out.push_str(".*"),
            GlobPiece::Question => out.push('.'),
        }
    }
}

fn glob_prefix(pieces: &[GlobPiece]) -> String {
    match pieces.first() {
        Some(GlobPiece::Literal(s)) => s.clone(),
        _ => String::new(),
    }
}

fn flags(ci: bool) -> &'static str {
    if ci { "(?is)" } else { "(?s)" }
}

fn fold(s: &str, ci: bool) -> String {
    if ci {
        s.chars().map(fold_char).collect()
    } else {
        s.to_string()
    }
}

/// A command (or field) form (SPEC §3.1).
pub(crate) fn command(form: &CommandForm, ci: bool) -> Lowered {
    let mut re = String::from(flags(ci));
    let prefix = match form {
        CommandForm::Exact(s) => {
            push_literal(&mut re, s);
            s.clone()
        }
        CommandForm::Prefix(p) => {
            push_literal(&mut re, p);
            re.push_str("(?: .*)?");
            p.clone()
        }
        CommandForm::Glob(pieces) => {
            glob_regex(pieces, &mut re);
            glob_prefix(pieces)
        }
        CommandForm::PrefixGlob(pieces) => {
            re.push_str("(?:");
            glob_regex(pieces, &mut re);
            re.push_str(")(?: .*)?");
            glob_prefix(pieces)
        }
    };
    Lowered {
        regex: re,
        prefix: fold(&prefix, ci),
        folded: ci,
        universe: Universe::Text,
    }
}

fn seg_regex(pieces: &[SegPiece], out: &mut String) {
    for p in pieces {
        match p {
            SegPiece::Literal(s) => push_literal(out, s),
            SegPiece::Star => out.push_str("[^/]*"),
            SegPiece::Question => out.push_str("[^/]"),
            SegPiece::Class { negated, ranges } => {
                out.push('[');
                if *negated {
                    out.push('^');
                }
                out.push('/');
                for &(lo, hi) in ranges {
                    out.push_str(&format!("\\x{{{:X}}}-\\x{{{:X}}}", lo as u32, hi as u32));
                }
                if !*negated {
                    // `/` is never in a class: intersect it out.
                    out.push_str("&&[^/]");
                }
                out.push(']');
            }
        }
    }
}

/// A path pattern (SPEC §4.2), over paths relative to its anchor.
pub(crate) fn path(p: &PathPattern) -> Lowered {
    let mut re = String::from(flags(p.case_insensitive));
    if !p.anchored {
        re.push_str("(?:[^/]+/)*");
    }
    let n = p.segments.len();
    for (i, seg) in p.segments.iter().enumerate() {
        let last = i + 1 == n;
        match (seg, last) {
            (Segment::DoubleStar, false) => re.push_str("(?:[^/]+/)*"),
            (Segment::DoubleStar, true) => re.push_str("[^/]+(?:/[^/]+)*"),
            (Segment::Pieces(pieces), _) => {
                seg_regex(pieces, &mut re);
                if !last {
                    re.push('/');
                }
            }
        }
    }
    // A pattern that matches a directory covers what is inside it.
    re.push_str("(?:/[^/]+)*");
    let mut prefix = String::new();
    if p.anchored {
        for seg in &p.segments {
            match seg {
                Segment::Pieces(pieces) => {
                    let mut whole = true;
                    for piece in pieces {
                        match piece {
                            SegPiece::Literal(s) => prefix.push_str(s),
                            _ => {
                                whole = false;
                                break;
                            }
                        }
                    }
                    if !whole {
                        break;
                    }
                    prefix.push('/');
                }
                Segment::DoubleStar => break,
            }
        }
        // The last `/` pushed may not be there (`src` matches `src`).
        if prefix.ends_with('/') {
            prefix.pop();
        }
    }
    Lowered {
        regex: re,
        prefix: fold(&prefix, p.case_insensitive),
        folded: p.case_insensitive,
        universe: Universe::Path,
    }
}

/// A domain pattern (SPEC §5), over lower-case hosts.
pub(crate) fn domain(p: &DomainPattern) -> Lowered {
    let mut re = String::new();
    match p {
        DomainPattern::Any => re.push_str("(?s).*"),
        DomainPattern::Host { subdomains, labels } => {
            if *subdomains {
                re.push_str("(?:[^.]+\\.)+");
            }
            for (i, l) in labels.iter().enumerate() {
                if i > 0 {
                    re.push_str("\\.");
                }
                match l {
                    DomainLabel::Literal(s) => push_literal(&mut re, &s.to_ascii_lowercase()),
                    DomainLabel::Star => re.push_str("[^.]+"),
                }
            }
        }
    }
    Lowered {
        regex: re,
        prefix: String::new(),
        folded: false,
        universe: Universe::Host,
    }
}

/// The tool names a tool part matches (SPEC §6).
pub(crate) fn tool(t: &ToolMatch) -> Lowered {
    let mut re = String::from("(?s)");
    let prefix = match t {
        ToolMatch::Name(n) => {
            push_literal(&mut re, n);
            n.clone()
        }
        ToolMatch::McpServer(s) => {
            let base = format!("mcp__{s}");
            push_literal(&mut re, &base);
            re.push_str("(?:__.*)?");
            base
        }
        ToolMatch::Glob(pieces) => {
            glob_regex(pieces, &mut re);
            glob_prefix(pieces)
        }
    };
    Lowered {
        regex: re,
        prefix,
        folded: false,
        universe: Universe::Text,
    }
}

/// A DFA of a lowered pattern, anchored at both ends.
pub(crate) struct Dfa(dense::DFA<Vec<u32>>);

/// The most memory one DFA may take; a pattern beyond it is left
/// undecided (no finding).
const DFA_LIMIT: usize = 4 << 20;

impl Dfa {
    /// Builds the DFA of `regex` (matched as a whole string), or `None`
    /// when it does not build within the limits.
    pub fn new(regex: &str) -> Option<Dfa> {
        let cfg = dense::Config::new()
            .match_kind(MatchKind::All)
            .start_kind(StartKind::Anchored)
            .dfa_size_limit(Some(DFA_LIMIT))
            .determinize_size_limit(Some(DFA_LIMIT));
        dense::Builder::new()
            .configure(cfg)
            .build(&format!("^(?:{regex})$"))
            .ok()
            .map(Dfa)
    }

    /// The DFA of a universe, if it is not "any text".
    pub fn universe(u: Universe) -> Option<Dfa> {
        u.regex().and_then(Dfa::new)
    }
}

/// The most product states explored before a pair is left undecided.
const PRODUCT_LIMIT: usize = 100_000;

/// Whether every string `b` accepts (and `universe`, if given, accepts)
/// `a` accepts too. `None` when undecided within the limits.
pub(crate) fn includes(a: &Dfa, b: &Dfa, universe: Option<&Dfa>) -> Option<bool> {
    type Id = regex_automata::util::primitives::StateID;
    let (a, b) = (&a.0, &b.0);
    let u = universe.map(|u| &u.0);
    let sa = a
        .start_state(&start::Config::new().anchored(Anchored::Yes))
        .ok()?;
    let sb = b
        .start_state(&start::Config::new().anchored(Anchored::Yes))
        .ok()?;
    let su = match u {
        Some(u) => Some(
            u.start_state(&start::Config::new().anchored(Anchored::Yes))
                .ok()?,
        ),
        None => None,
    };
    // One byte of each class the three automata all agree on: bytes of one
    // class lead every automaton to the same state.
    let mut reps: Vec<u8> = Vec::new();
    let mut keys: HashSet<(u8, u8, u8)> = HashSet::new();
    for byte in 0..=255u8 {
        let key = (
            a.byte_classes().get(byte),
            b.byte_classes().get(byte),
            u.map_or(0, |u| u.byte_classes().get(byte)),
        );
        if keys.insert(key) {
            reps.push(byte);
        }
    }
    let mut seen: HashSet<(Id, Id, Option<Id>)> = HashSet::new();
    let mut stack = vec![(sa, sb, su)];
    seen.insert((sa, sb, su));
    while let Some((qa, qb, qu)) = stack.pop() {
        if seen.len() > PRODUCT_LIMIT {
            return None;
        }
        let b_accepts = b.is_match_state(b.next_eoi_state(qb));
        let u_accepts = match (u, qu) {
            (Some(u), Some(q)) => u.is_match_state(u.next_eoi_state(q)),
            _ => true,
        };
        if b_accepts && u_accepts && !a.is_match_state(a.next_eoi_state(qa)) {
            return Some(false);
        }
        for &byte in &reps {
            let nb = b.next_state(qb, byte);
            if b.is_dead_state(nb) || b.is_quit_state(nb) {
                continue;
            }
            let nu = match (u, qu) {
                (Some(u), Some(q)) => {
                    let n = u.next_state(q, byte);
                    if u.is_dead_state(n) || u.is_quit_state(n) {
                        continue;
                    }
                    Some(n)
                }
                _ => None,
            };
            let na = a.next_state(qa, byte);
            if a.is_quit_state(na) {
                return None;
            }
            if seen.insert((na, nb, nu)) {
                stack.push((na, nb, nu));
            }
        }
    }
    Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::claude::parse_rule;
    use crate::rule::{Dialect, Effect, List, Pattern, Provenance};

    fn lowered(rule: &str, effect: Effect) -> Lowered {
        let r = parse_rule(
            rule,
            effect,
            Dialect::ClaudeCode,
            Provenance::standalone(List::Deny),
        )
        .unwrap();
        match &r.pattern {
            Pattern::Command(c) => command(&c.form, c.case_insensitive),
            Pattern::Path(p) => path(p),
            Pattern::Domain(d) => domain(d),
            Pattern::Any => tool(&r.tool),
            other => panic!("no lowering for {other:?}"),
        }
    }

    fn incl(a: &str, ea: Effect, b: &str, eb: Effect) -> bool {
        let (la, lb) = (lowered(a, ea), lowered(b, eb));
        let u = Dfa::universe(lb.universe);
        includes(
            &Dfa::new(&la.regex).unwrap(),
            &Dfa::new(&lb.regex).unwrap(),
            u.as_ref(),
        )
        .unwrap()
    }

    #[test]
    fn command_inclusion() {
        let (d, a) = (Effect::Deny, Effect::Allow);
        assert!(incl("Bash(git *)", d, "Bash(git push:*)", a));
        assert!(incl("Bash(git:*)", d, "Bash(git push *)", a));
        assert!(!incl("Bash(git push *)", d, "Bash(git *)", a));
        assert!(!incl("Bash(git:*)", d, "Bash(gitk)", a));
        assert!(incl("Bash(*rm *)", d, "Bash(sudo rm -rf /)", a));
        assert!(incl("Bash(* --force*)", d, "Bash(git push --force)", a));
        assert!(!incl("Bash(npm run test:*)", d, "Bash(npm run test*)", a));
    }

    #[test]
    fn path_inclusion() {
        let (d, a) = (Effect::Deny, Effect::Allow);
        assert!(incl("Read(.env)", d, "Read(config/.env)", a));
        assert!(incl("Read(secrets/**)", d, "Read(secrets/a/*.key)", a));
        assert!(incl("Read(src)", d, "Read(src/**)", a));
        assert!(!incl("Read(src/**)", d, "Read(lib/x)", a));
        assert!(incl("Read(*.pem)", d, "Read(keys/server.PEM)", a));
        assert!(!incl("Read(*.pem)", a, "Read(keys/server.PEM)", a));
        assert!(incl("Read(**)", d, "Read(x/y)", a));
    }

    #[test]
    fn domain_and_tool_inclusion() {
        let (d, a) = (Effect::Deny, Effect::Allow);
        assert!(incl(
            "WebFetch(domain:*.example.com)",
            d,
            "WebFetch(domain:a.b.example.com)",
            a
        ));
        assert!(!incl(
            "WebFetch(domain:*.example.com)",
            d,
            "WebFetch(domain:example.com)",
            a
        ));
        assert!(incl("mcp__github", d, "mcp__github__get_issue", a));
        assert!(incl("mcp__*", d, "mcp__github__*", a));
        assert!(!incl("mcp__github__get_*", d, "mcp__github", a));
    }

    /// The path lowering agrees with the reference matcher on classes,
    /// `?`, `**` in the middle and case folding.
    #[test]
    fn path_lowering_matches_the_reference() {
        let rules = [
            "Read(src/[a-c]?.rs)",
            "Read(src/[!a]*.rs)",
            "Read(a/**/b)",
            "Read(**/x)",
            "Read(*.PEM)",
            "Read(docs/)",
        ];
        let paths = [
            "src/a1.rs",
            "src/d1.rs",
            "src/ab.rs",
            "src/x/a1.rs",
            "a/b",
            "a/x/y/b",
            "a/x/y/b/c",
            "x",
            "q/x",
            "k.pem",
            "k/K.Pem",
            "docs",
            "docs/a",
        ];
        for text in rules {
            for effect in [Effect::Deny, Effect::Allow] {
                let r = parse_rule(
                    text,
                    effect,
                    Dialect::ClaudeCode,
                    Provenance::standalone(List::Deny),
                )
                .unwrap();
                let Pattern::Path(p) = &r.pattern else {
                    panic!("{text} is not a path rule")
                };
                let dfa = Dfa::new(&path(p).regex).unwrap();
                for rel in paths {
                    let want = crate::reference::path_matches(p, rel);
                    let mut state = dfa
                        .0
                        .start_state(&start::Config::new().anchored(Anchored::Yes))
                        .unwrap();
                    for &b in rel.as_bytes() {
                        state = dfa.0.next_state(state, b);
                    }
                    let got = dfa.0.is_match_state(dfa.0.next_eoi_state(state));
                    assert_eq!(got, want, "{effect} {text} vs {rel}");
                }
            }
        }
    }

    #[test]
    fn prefix_filter_is_sound() {
        let a = lowered("Bash(git *)", Effect::Deny);
        let b = lowered("Bash(git push:*)", Effect::Allow);
        let c = lowered("Bash(npm *)", Effect::Allow);
        assert!(a.may_overlap(&b));
        assert!(!a.may_overlap(&c));
    }
}
