//! Shadowed and redundant rules, decided exactly on the patterns.
//!
//! Rule B is shadowed by rule A when A has higher precedence (a deny over
//! an ask or an allow, an ask over an allow), governs B's calls, and
//! matches every text B matches: B can never decide. With the same effect,
//! B is only redundant (a note). Pairs are pre-filtered by literal prefix;
//! an exact B is checked with the reference matcher on its one text; the
//! rest by language inclusion on DFAs ([`super::lower`]).

use std::collections::HashMap;

use super::lower::{self, Dfa, Lowered, Universe};
use super::{Finding, Kind, RuleRef};
use crate::reference;
use crate::rule::{
    Anchor, CommandForm, Dialect, DomainLabel, DomainPattern, Effect, GlobPiece, PathPattern,
    Pattern, Rule, SegPiece, Segment, ToolMatch,
};

/// Which rules can be compared: the same kind of haystack, in the same
/// frame (a path anchor, a field name).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Frame {
    /// Command text of `Bash` (or `PowerShell`) calls.
    Command(String),
    /// Paths relative to an anchor (`/x` rules: per source).
    Path(Anchor, Option<String>),
    /// Hosts.
    Host,
    /// One input field of one tool.
    Field(String, String),
    /// Tool names (bare rules).
    Tool,
}

struct Item<'a> {
    rule: &'a Rule,
    frame: Frame,
    /// The tool (family) the rule governs, for path rules: `Read` or
    /// `Edit`.
    family: String,
    lowered: Lowered,
    exact: Option<String>,
    /// Texts B matches, tried on A with the reference matcher before any
    /// automaton is built: one that A does not match settles the pair.
    samples: Vec<String>,
}

/// Wildcards filled three ways: empty, `x`, ` x`.
fn glob_fills(pieces: &[GlobPiece]) -> Vec<String> {
    ["", "x", " x"]
        .iter()
        .map(|fill| {
            pieces
                .iter()
                .map(|p| match p {
                    GlobPiece::Literal(s) => s.as_str(),
                    _ => fill,
                })
                .collect()
        })
        .collect()
}

fn form_samples(form: &CommandForm) -> Vec<String> {
    match form {
        CommandForm::Exact(s) => vec![s.clone()],
        CommandForm::Prefix(p) => vec![p.clone(), format!("{p} x")],
        CommandForm::Glob(pieces) => glob_fills(pieces),
        CommandForm::PrefixGlob(pieces) => {
            let mut v = glob_fills(pieces);
            v.extend(glob_fills(pieces).into_iter().map(|s| format!("{s} x")));
            v
        }
    }
}

fn path_samples(p: &PathPattern) -> Vec<String> {
    let mut segs: Vec<String> = Vec::new();
    let n = p.segments.len();
    for (i, seg) in p.segments.iter().enumerate() {
        match seg {
            Segment::DoubleStar if i + 1 < n => {}
            Segment::DoubleStar => segs.push("x".to_string()),
            Segment::Pieces(pieces) => {
                let mut s = String::new();
                for piece in pieces {
                    match piece {
                        SegPiece::Literal(l) => s.push_str(l),
                        SegPiece::Star | SegPiece::Question => s.push('x'),
                        SegPiece::Class {
                            negated: false,
                            ranges,
                        } => {
                            s.push(ranges.first().map_or('x', |r| r.0));
                        }
                        SegPiece::Class { negated: true, .. } => s.push('\u{1}'),
                    }
                }
                segs.push(s);
            }
        }
    }
    let base = segs.join("/");
    vec![base.clone(), format!("x/{base}"), format!("{base}/x")]
}

fn domain_samples(d: &DomainPattern) -> Vec<String> {
    match d {
        DomainPattern::Any => vec!["example.com".to_string()],
        DomainPattern::Host { subdomains, labels } => {
            let mut parts: Vec<String> = labels
                .iter()
                .map(|l| match l {
                    DomainLabel::Literal(s) => s.clone(),
                    DomainLabel::Star => "x".to_string(),
                })
                .collect();
            if *subdomains {
                parts.insert(0, "x".to_string());
            }
            vec![parts.join(".")]
        }
    }
}

fn tool_samples(t: &ToolMatch) -> Vec<String> {
    match t {
        ToolMatch::Name(n) => vec![n.clone()],
        ToolMatch::McpServer(s) => vec![format!("mcp__{s}"), format!("mcp__{s}__x")],
        ToolMatch::Glob(pieces) => glob_fills(pieces),
    }
}

/// Whether the rule's pattern matches `sample` (the reference matcher).
fn matches(rule: &Rule, sample: &str) -> bool {
    match &rule.pattern {
        Pattern::Command(c) => reference::command_matches(c, sample),
        Pattern::Path(p) => reference::path_matches(p, sample),
        Pattern::Domain(d) => reference::domain_matches(d, sample),
        Pattern::Field { form, .. } => {
            let mut input = serde_json::Map::new();
            input.insert("f".into(), serde_json::Value::String(sample.to_string()));
            reference::field_matches("f", form, &input)
        }
        Pattern::Any => reference::tool_matches(&rule.tool, sample),
        Pattern::Tokens(_) | Pattern::Opaque(_) => false,
    }
}

fn item(rule: &Rule) -> Option<Item<'_>> {
    let name = match &rule.tool {
        ToolMatch::Name(n) => n.clone(),
        _ => String::new(),
    };
    let (frame, lowered, exact) = match &rule.pattern {
        Pattern::Command(c) => {
            let exact = match &c.form {
                CommandForm::Exact(s) if !c.case_insensitive => Some(s.clone()),
                _ => None,
            };
            (
                Frame::Command(name.clone()),
                lower::command(&c.form, c.case_insensitive),
                exact,
            )
        }
        Pattern::Path(p) => {
            // A tuff policy's paths are relative to its project root, the
            // session's project (SPEC §13): the frame of `./x` rules.
            let anchor = if rule.dialect == Dialect::Tuff && p.anchor == Anchor::Source {
                Anchor::Project
            } else {
                p.anchor
            };
            let source = (anchor == Anchor::Source).then(|| rule.provenance.source.to_string());
            (Frame::Path(anchor, source), lower::path(p), None)
        }
        Pattern::Domain(d) => (Frame::Host, lower::domain(d), None),
        Pattern::Field { field, form } => {
            let exact = match form {
                CommandForm::Exact(s) => Some(s.clone()),
                _ => None,
            };
            (
                Frame::Field(name.clone(), field.clone()),
                lower::command(form, false),
                exact,
            )
        }
        Pattern::Any => (Frame::Tool, lower::tool(&rule.tool), None),
        Pattern::Tokens(_) | Pattern::Opaque(_) => return None,
    };
    let samples = match &rule.pattern {
        Pattern::Command(c) => form_samples(&c.form),
        Pattern::Field { form, .. } => form_samples(form),
        Pattern::Path(p) => path_samples(p),
        Pattern::Domain(d) => domain_samples(d),
        Pattern::Any => tool_samples(&rule.tool),
        Pattern::Tokens(_) | Pattern::Opaque(_) => Vec::new(),
    };
    let samples = samples.into_iter().filter(|s| matches(rule, s)).collect();
    Some(Item {
        rule,
        frame,
        family: name,
        lowered,
        exact,
        samples,
    })
}

/// Whether A governs every call B governs, in their frames.
fn governs(a: &Item<'_>, b: &Item<'_>) -> bool {
    match (&a.frame, &b.frame) {
        (Frame::Path(..), Frame::Path(..)) => {
            a.family == b.family
                // A Read deny also denies edits of the same path (SPEC §13).
                || (a.family == "Read" && a.rule.effect == Effect::Deny && b.family == "Edit")
        }
        (Frame::Command(x), Frame::Command(y)) => x == y,
        (fa, fb) => fa == fb,
    }
}

fn same_frame(a: &Item<'_>, b: &Item<'_>) -> bool {
    match (&a.frame, &b.frame) {
        (Frame::Path(x, s), Frame::Path(y, t)) => x == y && s == t,
        (fa, fb) => fa == fb,
    }
}

/// A bare `Tool` rule A that covers every call of B's tool.
fn bare_covers(a: &Rule, b: &Rule) -> bool {
    // An opaque specifier never matches: nothing to cover.
    if a.pattern != Pattern::Any || matches!(b.pattern, Pattern::Any | Pattern::Opaque(_)) {
        return false;
    }
    match &b.tool {
        ToolMatch::Name(n) => reference::tool_matches(&a.tool, n),
        _ => false,
    }
}

struct Dfas {
    cache: HashMap<String, Option<Dfa>>,
    universes: HashMap<Universe, Option<Dfa>>,
}

impl Dfas {
    fn get(&mut self, regex: &str) -> Option<&Dfa> {
        if !self.cache.contains_key(regex) {
            self.cache.insert(regex.to_string(), Dfa::new(regex));
        }
        self.cache.get(regex).and_then(Option::as_ref)
    }
}

/// Whether every text B matches, A matches (None: undecided).
fn included(a: &Item<'_>, b: &Item<'_>, dfas: &mut Dfas) -> Option<bool> {
    if !a.lowered.may_overlap(&b.lowered) {
        return Some(false);
    }
    if let Some(text) = &b.exact {
        // B holds this one text.
        return Some(matches(a.rule, text));
    }
    if b.samples.iter().any(|s| !matches(a.rule, s)) {
        return Some(false);
    }
    if a.exact.is_some() {
        // An exact A holds one text; a B that is not exact holds more.
        return Some(false);
    }
    let universe = b.lowered.universe;
    dfas.get(&a.lowered.regex)?;
    dfas.get(&b.lowered.regex)?;
    dfas.universes
        .entry(universe)
        .or_insert_with(|| Dfa::universe(universe));
    let da = dfas.cache.get(&a.lowered.regex)?.as_ref()?;
    let db = dfas.cache.get(&b.lowered.regex)?.as_ref()?;
    let du = dfas.universes.get(&universe).and_then(Option::as_ref);
    lower::includes(da, db, du)
}

/// Adds a finding for every rule that a rule of higher precedence shadows
/// (a warning), or that a rule of the same effect makes redundant (a note).
/// Identical rules are left to the duplicate checks.
pub(crate) fn shadowing(rules: &[Rule], out: &mut Vec<Finding>) {
    let items: Vec<Option<Item<'_>>> = rules.iter().map(item).collect();
    // Higher precedence first, then policy order.
    let mut order: Vec<usize> = (0..rules.len()).collect();
    order.sort_by_key(|&i| (rules[i].effect, i));
    let mut dfas = Dfas {
        cache: HashMap::new(),
        universes: HashMap::new(),
    };
    // Group by frame so each rule meets only its comparable rules.
    let mut by_frame: HashMap<Frame, Vec<usize>> = HashMap::new();
    for &i in &order {
        if let Some(it) = &items[i] {
            by_frame.entry(it.frame.clone()).or_default().push(i);
        }
    }
    let bare: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&i| rules[i].pattern == Pattern::Any)
        .collect();
    for (bi, b) in rules.iter().enumerate() {
        let mut found: Option<(usize, bool)> = None;
        // A bare rule of higher or equal precedence covers every call of
        // its tool.
        for &ai in &bare {
            let a = &rules[ai];
            if ai != bi && a.effect <= b.effect && bare_covers(a, b) {
                found = Some((ai, a.effect < b.effect));
                break;
            }
        }
        if found.is_none() {
            if let Some(ib) = &items[bi] {
                let candidates = by_frame.get(&ib.frame).map(Vec::as_slice).unwrap_or(&[]);
                for &ai in candidates {
                    let a = &rules[ai];
                    if ai == bi || a.effect > b.effect {
                        continue;
                    }
                    let Some(ia) = &items[ai] else { continue };
                    if !same_frame(ia, ib) || !governs(ia, ib) {
                        continue;
                    }
                    // Identical texts are duplicates, reported elsewhere.
                    if a.text == b.text {
                        continue;
                    }
                    if included(ia, ib, &mut dfas) != Some(true) {
                        continue;
                    }
                    if a.effect == b.effect && ai > bi {
                        // Of two rules with the same language, the later
                        // is the redundant one.
                        if included(ib, ia, &mut dfas) == Some(true) {
                            continue;
                        }
                    }
                    found = Some((ai, a.effect < b.effect));
                    break;
                }
            }
        }
        let Some((ai, shadowed)) = found else {
            continue;
        };
        let a = &rules[ai];
        let f = if shadowed {
            Finding::new(
                Kind::Shadowed,
                RuleRef::of(b),
                format!(
                    "never decides: the {} rule {} `{}` matches everything it matches",
                    a.effect,
                    a.provenance.item(),
                    a.text
                ),
            )
            .fix(format!(
                "remove it, or narrow {} if this {} was meant to win",
                a.provenance.item(),
                b.effect
            ))
        } else {
            Finding::new(
                Kind::Redundant,
                RuleRef::of(b),
                format!(
                    "{} `{}` already matches everything it matches",
                    a.provenance.item(),
                    a.text
                ),
            )
            .fix("remove it")
        };
        out.push(f.related(RuleRef::of(a)));
    }
}
