//! Differential tests: every compiled matcher — each strategy, each
//! fallback, dense and sparse tables, the forms loaded back from bytes —
//! returns exactly the set of rules the reference matcher returns, on
//! random rules × inputs.

mod common;

use proptest::prelude::*;
use std::sync::Arc;
use toolgate::compile::{AnchorDirs, AnchorKey, Config, Kind, Matches, Policy};
use toolgate::reference;
use toolgate::rule::{
    Anchor, CommandForm, CommandPattern, DomainLabel, DomainPattern, GlobPiece, PathPattern,
    SegPiece, Segment, ToolMatch,
};
use toolgate::{Dialect, Effect, List, Pattern, Provenance, Rule};

/// The configurations under test: each forces a different strategy mix.
fn configs() -> Vec<(&'static str, Config)> {
    vec![
        ("default", Config::new()),
        // Every latching pattern alone; tight latch limit.
        (
            "latch-1",
            Config::new()
                .path_table_min(0)
                .latch_group_size(1)
                .fwd_group_size(1)
                .latch_size_limit(64 << 10)
                // Patterns that multiply states (`*!???`) in automata
                // too, against the small limit.
                .blowup_limit(16),
        ),
        // Every pattern that multiplies states in the fallback.
        ("blowup-0", Config::new().path_table_min(0).blowup_limit(0)),
        // Automata too small for anything: split down to single rules, then
        // the per-rule fallback.
        (
            "split",
            Config::new()
                .path_table_min(0)
                .dfa_size_limit(1)
                .latch_size_limit(1)
                .split_budget(64),
        ),
        // No rule routed by its leading words: literal-led rules in the
        // automata chosen by first byte; no path rule matched by hash
        // lookups.
        ("unrouted", Config::new().route_depth(0).path_tables(false)),
        // Routed by up to 8 leading words, one pattern to an automaton.
        (
            "routed-1",
            Config::new()
                .path_table_min(0)
                .route_depth(8)
                .path_route_depth(8)
                .route_pack_size(1),
        ),
        // Every automaton kept as a sparse table.
        (
            "sparse",
            Config::new()
                .path_table_min(0)
                .sparse_above(0)
                .route_sparse_above(0)
                .path_route_depth(2),
        ),
        // No automaton and no path table at all: everything in the
        // fallback.
        (
            "fallback",
            Config::new()
                .dfa_size_limit(1)
                .latch_size_limit(1)
                .split_budget(0)
                .path_tables(false),
        ),
        // The lazy engine: regex rules compiled on first need, skipped by
        // their literal prefix or suffix.
        ("lazy", Config::one_shot()),
    ]
}

/// Every matcher of `rules`: one per configuration, and the default one
/// loaded back from its image.
fn policies(rules: &[Rule]) -> Vec<(String, Policy)> {
    let mut out = Vec::new();
    for (name, cfg) in configs() {
        let p = Policy::builder()
            .configure(cfg)
            .build(rules.to_vec())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        if name == "default" || name == "sparse" || name == "lazy" || name == "routed-1" {
            let bytes = p.matchers_to_bytes();
            let loaded = Policy::from_image(rules.to_vec(), &bytes).expect("image loads");
            out.push((format!("{name} image"), loaded));
        }
        out.push((name.to_string(), p));
    }
    out
}

fn rule(i: usize, effect: Effect, tool: ToolMatch, pattern: Pattern) -> Rule {
    Rule {
        text: format!("rule {i}"),
        effect,
        dialect: Dialect::Strict,
        tool,
        pattern,
        provenance: Provenance {
            source: Arc::from(if i % 3 == 0 { "a.json" } else { "b.json" }),
            list: List::Deny,
            index: i,
        },
        reason: None,
    }
}

fn effect() -> impl Strategy<Value = Effect> {
    prop_oneof![Just(Effect::Deny), Just(Effect::Ask), Just(Effect::Allow)]
}

/// Input positions (in `rules`) of the matches, sorted.
fn positions(p: &Policy, m: &Matches) -> Vec<usize> {
    let mut v: Vec<usize> = m
        .ids()
        .iter()
        .map(|&id| p.input_index(id).expect("id in range"))
        .collect();
    v.sort_unstable();
    v
}

fn check_sorted_and_winner(p: &Policy, m: &Matches) -> Result<(), TestCaseError> {
    prop_assert!(
        m.ids().windows(2).all(|w| w[0] < w[1]),
        "ids not sorted/unique"
    );
    if let Some(w) = m.winner() {
        // The winner has the highest-precedence effect among the matches,
        // and is first in policy order among those.
        let wr = p.rule(w).expect("winner");
        for &id in m.ids() {
            let r = p.rule(id).expect("rule");
            prop_assert!(wr.effect <= r.effect);
            if r.effect == wr.effect {
                prop_assert!(p.input_index(w) <= p.input_index(id));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Generators

/// Characters that exercise escaping, separators and case folding.
const CMD_CHARS: &[char] = &[
    'a', 'b', 'A', ' ', '-', '.', '/', ':', '*', '\\', '(', '|', '$', '\n', 'k', 'K', '\u{212A}',
    's', 'ſ', 'é', 'É',
];

fn text_from(chars: &'static [char], max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(chars), 0..=max)
        .prop_map(|v| v.into_iter().collect())
}

fn nonempty_from(chars: &'static [char], max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(chars), 1..=max)
        .prop_map(|v| v.into_iter().collect())
}

/// Merges adjacent literals (the IR never holds two in a row).
fn merge(pieces: Vec<GlobPiece>) -> Vec<GlobPiece> {
    let mut out: Vec<GlobPiece> = Vec::new();
    for p in pieces {
        if let (GlobPiece::Literal(b), Some(GlobPiece::Literal(a))) = (&p, out.last_mut()) {
            a.push_str(b);
            continue;
        }
        out.push(p);
    }
    out
}

fn glob(chars: &'static [char], question: bool) -> impl Strategy<Value = Vec<GlobPiece>> {
    let piece = prop_oneof![
        4 => nonempty_from(chars, 3).prop_map(GlobPiece::Literal),
        2 => Just(GlobPiece::Star),
        1 => Just(GlobPiece::Question),
    ];
    prop::collection::vec(piece, 0..6).prop_map(move |v| {
        merge(
            v.into_iter()
                .map(|p| {
                    if !question && p == GlobPiece::Question {
                        GlobPiece::Star
                    } else {
                        p
                    }
                })
                .collect(),
        )
    })
}

fn command_form() -> impl Strategy<Value = CommandForm> {
    prop_oneof![
        1 => text_from(CMD_CHARS, 5).prop_map(CommandForm::Exact),
        1 => text_from(CMD_CHARS, 5).prop_map(CommandForm::Prefix),
        4 => glob(CMD_CHARS, false).prop_map(CommandForm::Glob),
        1 => glob(CMD_CHARS, false).prop_map(CommandForm::PrefixGlob),
    ]
}

fn command_pattern() -> impl Strategy<Value = CommandPattern> {
    (command_form(), prop::bool::weighted(0.2)).prop_map(|(form, ci)| CommandPattern {
        form,
        case_insensitive: ci,
    })
}

/// A text that often matches `pattern`: its pieces with the wildcards
/// filled in.
fn instance(pieces: &[GlobPiece], fill: &[String]) -> String {
    let mut s = String::new();
    for (i, p) in pieces.iter().enumerate() {
        match p {
            GlobPiece::Literal(l) => s.push_str(l),
            GlobPiece::Star => s.push_str(&fill[i % fill.len()]),
            GlobPiece::Question => s.push('a'),
        }
    }
    s
}

const SEG_CHARS: &[char] = &[
    'a', 'b', 'A', '.', '-', 'k', 'K', 'é', 'É', ' ', 's', '\u{212A}', 'ſ',
];

fn seg_piece() -> impl Strategy<Value = SegPiece> {
    prop_oneof![
        4 => nonempty_from(SEG_CHARS, 3).prop_map(SegPiece::Literal),
        2 => Just(SegPiece::Star),
        1 => Just(SegPiece::Question),
        1 => (
            any::<bool>(),
            prop::collection::vec(
                (prop::sample::select(SEG_CHARS), prop::sample::select(SEG_CHARS)),
                0..3
            )
        )
            .prop_map(|(negated, ranges)| SegPiece::Class { negated, ranges }),
    ]
}

fn merge_seg(pieces: Vec<SegPiece>) -> Vec<SegPiece> {
    let mut out: Vec<SegPiece> = Vec::new();
    for p in pieces {
        if let (SegPiece::Literal(b), Some(SegPiece::Literal(a))) = (&p, out.last_mut()) {
            a.push_str(b);
            continue;
        }
        out.push(p);
    }
    out
}

fn segment() -> impl Strategy<Value = Segment> {
    prop_oneof![
        1 => Just(Segment::DoubleStar),
        4 => prop::collection::vec(seg_piece(), 1..4).prop_map(|v| Segment::Pieces(merge_seg(v))),
    ]
}

fn anchor() -> impl Strategy<Value = Anchor> {
    prop_oneof![
        1 => Just(Anchor::Root),
        1 => Just(Anchor::Home),
        1 => Just(Anchor::Source),
        3 => Just(Anchor::Project)
    ]
}

fn path_pattern() -> impl Strategy<Value = PathPattern> {
    (
        anchor(),
        prop::collection::vec(segment(), 1..4),
        any::<bool>(),
        prop::bool::weighted(0.3),
    )
        .prop_map(|(anchor, segments, anchored, ci)| PathPattern {
            anchor,
            segments,
            anchored,
            case_insensitive: ci,
        })
}

fn rel_path() -> impl Strategy<Value = String> {
    prop::collection::vec(nonempty_from(SEG_CHARS, 4), 1..5).prop_map(|v| {
        let v: Vec<String> = v.into_iter().filter(|s| s != "." && s != "..").collect();
        v.join("/")
    })
}

/// A path that often matches `p`: its segments instantiated.
fn path_instance(p: &PathPattern, extra: &[String]) -> String {
    let mut segs: Vec<String> = Vec::new();
    if !p.anchored {
        segs.push(extra[0].clone());
    }
    for (i, s) in p.segments.iter().enumerate() {
        match s {
            Segment::DoubleStar => segs.push(extra[i % extra.len()].clone()),
            Segment::Pieces(ps) => {
                let mut t = String::new();
                for piece in ps {
                    match piece {
                        SegPiece::Literal(l) => t.push_str(l),
                        SegPiece::Star => t.push_str(&extra[(i + 1) % extra.len()]),
                        SegPiece::Question => t.push('b'),
                        SegPiece::Class { ranges, .. } => {
                            t.push(ranges.first().map_or('a', |r| r.0))
                        }
                    }
                }
                if t.is_empty() {
                    t.push('a');
                }
                segs.push(t);
            }
        }
    }
    if extra.len() > 1 {
        segs.push(extra[1].clone());
    }
    segs.retain(|s| !s.is_empty() && !s.contains('/') && s != "." && s != "..");
    segs.join("/")
}

const HOST_CHARS: &[char] = &['a', 'b', 'c', '-', '1'];

fn domain_pattern() -> impl Strategy<Value = DomainPattern> {
    let label = prop_oneof![
        3 => nonempty_from(HOST_CHARS, 2).prop_map(DomainLabel::Literal),
        1 => Just(DomainLabel::Star),
    ];
    prop_oneof![
        1 => Just(DomainPattern::Any),
        8 => (any::<bool>(), prop::collection::vec(label, 1..4))
            .prop_map(|(subdomains, labels)| DomainPattern::Host { subdomains, labels }),
    ]
}

fn host() -> impl Strategy<Value = String> {
    prop::collection::vec(nonempty_from(HOST_CHARS, 2), 1..5).prop_map(|v| v.join("."))
}

const TOOL_CHARS: &[char] = &['m', 'c', 'p', '_', 'a', 'b', 'T'];

fn tool_match() -> impl Strategy<Value = ToolMatch> {
    prop_oneof![
        nonempty_from(TOOL_CHARS, 4).prop_map(ToolMatch::Name),
        Just(ToolMatch::Name("Agent".into())),
        nonempty_from(TOOL_CHARS, 2).prop_map(ToolMatch::McpServer),
        glob(TOOL_CHARS, true).prop_map(ToolMatch::Glob),
    ]
}

fn tool_name() -> impl Strategy<Value = String> {
    prop_oneof![
        nonempty_from(TOOL_CHARS, 8),
        (nonempty_from(TOOL_CHARS, 2), text_from(TOOL_CHARS, 3))
            .prop_map(|(s, t)| format!("mcp__{s}__{t}")),
        Just("Task".to_string()),
        Just("Agent".to_string()),
    ]
}

// ---------------------------------------------------------------------------
// Properties

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        failure_persistence: None,
        .. ProptestConfig::default()
    })]

    #[test]
    fn commands(
        pats in prop::collection::vec((command_pattern(), effect()), 1..12),
        texts in prop::collection::vec(text_from(CMD_CHARS, 8), 0..10),
        fill in prop::collection::vec(text_from(CMD_CHARS, 4), 1..4),
    ) {
        let rules: Vec<Rule> = pats.iter().enumerate().map(|(i, (p, e))| {
            rule(i, *e, ToolMatch::Name("Bash".into()), Pattern::Command(p.clone()))
        }).collect();
        let mut inputs = texts.clone();
        for (p, _) in &pats {
            match &p.form {
                CommandForm::Glob(g) | CommandForm::PrefixGlob(g) => {
                    inputs.push(instance(g, &fill));
                    inputs.push(instance(g, &fill).to_uppercase());
                    inputs.push(format!("{} {}", instance(g, &fill), fill[0]));
                }
                CommandForm::Exact(s) | CommandForm::Prefix(s) => {
                    inputs.push(s.clone());
                    inputs.push(s.to_lowercase());
                    inputs.push(format!("{s} {}", fill[0]));
                }
            }
        }
        let mut m = Matches::new();
        for (name, policy) in policies(&rules) {
            for text in &inputs {
                let want: Vec<usize> = pats.iter().enumerate()
                    .filter(|(_, (p, _))| reference::command_matches(p, text))
                    .map(|(i, _)| i).collect();
                policy.find(Kind::Command, Some("Bash"), text, &mut m);
                check_sorted_and_winner(&policy, &m)?;
                prop_assert_eq!(positions(&policy, &m), want, "{} on {:?}", name, text);
            }
        }
    }

    #[test]
    fn paths(
        pats in prop::collection::vec((path_pattern(), effect()), 1..10),
        rels in prop::collection::vec(rel_path(), 0..8),
        extra in prop::collection::vec(nonempty_from(SEG_CHARS, 3), 2..4),
    ) {
        let rules: Vec<Rule> = pats.iter().enumerate().map(|(i, (p, e))| {
            rule(i, *e, ToolMatch::Name("Read".into()), Pattern::Path(p.clone()))
        }).collect();
        let mut inputs = rels.clone();
        for (p, _) in &pats {
            let s = path_instance(p, &extra);
            if !s.is_empty() {
                // Its leading segments too (a directory rule's own
                // directory), and its case variants.
                for (i, _) in s.match_indices('/') {
                    inputs.push(s[..i].to_string());
                }
                inputs.push(s.to_uppercase());
                inputs.push(s.to_lowercase().replace('k', "\u{212A}").replace('s', "ſ"));
                inputs.push(s);
            }
        }
        let key_of = |i: usize, a: Anchor| match a {
            Anchor::Root => AnchorKey::Root,
            Anchor::Home => AnchorKey::Home,
            Anchor::Project => AnchorKey::Project,
            Anchor::Source => AnchorKey::Source(rules[i].provenance.source.clone()),
        };
        let keys = [
            AnchorKey::Root, AnchorKey::Home, AnchorKey::Project,
            AnchorKey::Source(Arc::from("a.json")), AnchorKey::Source(Arc::from("b.json")),
        ];
        // Anchor directories nested in one another, as real ones are.
        let sources = [("a.json", "/h/u/p/.claude"), ("b.json", "/h/u/p")];
        let dirs = AnchorDirs { home: Some("/h/u"), project: Some("/h/u/p"), sources: &sources };
        let dir_of = |k: &AnchorKey| match k {
            AnchorKey::Root => "/",
            AnchorKey::Home => "/h/u",
            AnchorKey::Project => "/h/u/p",
            AnchorKey::Source(s) if &**s == "a.json" => "/h/u/p/.claude",
            AnchorKey::Source(_) => "/h/u/p",
        };
        let mut m = Matches::new();
        for (name, policy) in policies(&rules) {
            let pm = policy.path_matcher(Kind::Read).expect("read matcher");
            for rel in inputs.iter().filter(|r| !r.is_empty()) {
                // Per anchor group, relative paths.
                for key in &keys {
                    let want: Vec<usize> = pats.iter().enumerate()
                        .filter(|(i, (p, _))| key_of(*i, p.anchor) == *key
                            && reference::path_matches(p, rel))
                        .map(|(i, _)| i).collect();
                    pm.find_relative(key, rel, &mut m);
                    prop_assert_eq!(positions(&policy, &m), want, "{} {:?} on {:?}", name, key, rel);
                }
                // One query over every group, from an absolute path.
                for base in ["/h/u/p", "/h/u/p/.claude", "/h/u", "/x"] {
                    let abs = format!("{base}/{rel}");
                    let want: Vec<usize> = pats.iter().enumerate()
                        .filter(|(i, (p, _))| {
                            let dir = dir_of(&key_of(*i, p.anchor));
                            toolgate::paths::relative_to(&abs, dir)
                                .is_some_and(|r| reference::path_matches(p, &r))
                        })
                        .map(|(i, _)| i).collect();
                    policy.find_path(Kind::Read, Some("Read"), &abs, &dirs, &mut m);
                    check_sorted_and_winner(&policy, &m)?;
                    prop_assert_eq!(positions(&policy, &m), want, "{} on {:?}", name, abs);
                }
            }
        }
    }

    #[test]
    fn domains(
        pats in prop::collection::vec((domain_pattern(), effect()), 1..10),
        hosts in prop::collection::vec(host(), 1..10),
    ) {
        let rules: Vec<Rule> = pats.iter().enumerate().map(|(i, (p, e))| {
            rule(i, *e, ToolMatch::Name("WebFetch".into()), Pattern::Domain(p.clone()))
        }).collect();
        let mut inputs = hosts.clone();
        for (p, _) in &pats {
            if let DomainPattern::Host { labels, subdomains } = p {
                let mut s: Vec<String> = labels.iter().map(|l| match l {
                    DomainLabel::Literal(x) => x.clone(),
                    DomainLabel::Star => "zz".to_string(),
                }).collect();
                if *subdomains { s.insert(0, hosts[0].clone()); }
                inputs.push(s.join("."));
            }
        }
        let mut m = Matches::new();
        for (name, policy) in policies(&rules) {
            for h in &inputs {
                let want: Vec<usize> = pats.iter().enumerate()
                    .filter(|(_, (p, _))| reference::domain_matches(p, h))
                    .map(|(i, _)| i).collect();
                policy.find(Kind::Domain, Some("WebFetch"), h, &mut m);
                prop_assert_eq!(positions(&policy, &m), want, "{} on {:?}", name, h);
            }
        }
    }

    #[test]
    fn tools(
        pats in prop::collection::vec((tool_match(), effect()), 1..10),
        names in prop::collection::vec(tool_name(), 1..10),
    ) {
        let rules: Vec<Rule> = pats.iter().enumerate()
            .map(|(i, (t, e))| rule(i, *e, t.clone(), Pattern::Any)).collect();
        let mut m = Matches::new();
        for (name, policy) in policies(&rules) {
            for n in &names {
                let want: Vec<usize> = pats.iter().enumerate()
                    .filter(|(_, (t, _))| reference::tool_matches(t, n))
                    .map(|(i, _)| i).collect();
                policy.find(Kind::Tool, None, n, &mut m);
                prop_assert_eq!(positions(&policy, &m), want, "{} on {:?}", name, n);
            }
        }
    }

    #[test]
    fn single_rule_helpers(p in command_pattern(), text in text_from(CMD_CHARS, 8)) {
        prop_assert_eq!(
            toolgate::compile::command_matches(&p, &text).expect("compiles"),
            reference::command_matches(&p, &text)
        );
    }
}

/// `match_rule` (the compiled engine) agrees with the reference on whole
/// calls, for every kind of rule and both dialects.
#[test]
fn match_rule_agrees_with_reference() {
    use toolgate::{MatchContext, ToolCall};
    let cases: &[(&str, serde_json::Value)] = &[
        (
            "Bash(npm run *)",
            serde_json::json!({"tool": "Bash", "input": {"command": "npm run build"}}),
        ),
        (
            "Bash(npm run *)",
            serde_json::json!({"tool": "Bash", "input": {"command": "npm test"}}),
        ),
        (
            "Bash(ls:*)",
            serde_json::json!({"tool": "Bash", "input": {"command": "lsof"}}),
        ),
        (
            "Bash(* --force)",
            serde_json::json!({"tool": "Bash", "input": {"command": "git push --force"}}),
        ),
        (
            "Bash(*rm -rf*)",
            serde_json::json!({"tool": "Bash", "input": {"command": "sudo rm -rf /"}}),
        ),
        (
            "Read(./src/**)",
            serde_json::json!({"tool": "Read", "input": {"file_path": "src/a/b.ts"}}),
        ),
        (
            "Read(./src/**)",
            serde_json::json!({"tool": "Read", "input": {"file_path": "lib/x.ts"}}),
        ),
        (
            "Read(.env)",
            serde_json::json!({"tool": "Read", "input": {"file_path": "a/b/.env"}}),
        ),
        (
            "Read(.env)",
            serde_json::json!({"tool": "Grep", "input": {"path": "a/.ENV"}}),
        ),
        (
            "Read(//etc/shadow)",
            serde_json::json!({"tool": "Read", "input": {"file_path": "/etc/shadow"}}),
        ),
        (
            "Read(~/.ssh/**)",
            serde_json::json!({"tool": "Read", "input": {"file_path": "~/.ssh/id_rsa"}}),
        ),
        (
            "Edit(/docs/*.md)",
            serde_json::json!({"tool": "Edit", "input": {"file_path": "docs/a.md"}}),
        ),
        (
            "WebFetch(domain:*.example.com)",
            serde_json::json!({"tool": "WebFetch", "input": {"url": "https://a.b.example.com/x"}}),
        ),
        (
            "WebFetch(domain:example.com)",
            serde_json::json!({"tool": "WebFetch", "input": {"url": "https://www.example.com/"}}),
        ),
        (
            "mcp__github__*",
            serde_json::json!({"tool": "mcp__github__create_issue", "input": {}}),
        ),
        (
            "mcp__github",
            serde_json::json!({"tool": "mcp__gitlab__x", "input": {}}),
        ),
        (
            "Agent(Explore)",
            serde_json::json!({"tool": "Task", "input": {"subagent_type": "Explore"}}),
        ),
        (
            "Read",
            serde_json::json!({"tool": "Read", "input": {"file_path": "x"}}),
        ),
    ];
    let mut failures = Vec::new();
    for dialect in [Dialect::Strict, Dialect::ClaudeCode] {
        for effect in [Effect::Deny, Effect::Allow] {
            for (text, call) in cases {
                let call = ToolCall::from_json(call).expect("call");
                let Ok(rule) = toolgate::rule::claude::parse_rule(
                    text,
                    effect,
                    dialect,
                    Provenance::standalone(List::Deny),
                ) else {
                    continue;
                };
                let ctx = MatchContext::new();
                let want = reference::match_rule(&rule, &call, &ctx).map_err(|e| e.to_string());
                let got =
                    toolgate::compile::match_rule(&rule, &call, &ctx).map_err(|e| e.to_string());
                if want != got {
                    failures.push(format!(
                        "{dialect:?} {effect:?} {text} {call:?}: {got:?} vs {want:?}"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The path shapes matched by hash lookups (literal prefixes, any-depth
/// names and extensions), case-sensitive and case-insensitive side by side
/// in one table, against the reference on paths that differ only in case
/// or stop at a directory.
#[test]
fn path_tables_agree_with_reference() {
    let specs: &[(&str, Effect)] = &[
        ("Read(**/*.rs)", Effect::Allow),
        ("Read(**/*.Test.TS)", Effect::Deny),
        ("Read(**/*.tar.gz)", Effect::Allow),
        ("Read(*.md)", Effect::Allow),
        ("Read(**/Makefile)", Effect::Allow),
        ("Read(**/secret.KEY)", Effect::Deny),
        ("Read(kube)", Effect::Deny),
        ("Read(./src/**)", Effect::Allow),
        ("Read(./docs/a.md)", Effect::Allow),
        ("Read(./Build/**)", Effect::Deny),
        ("Read(./Ks/x/**)", Effect::Allow),
        ("Read(./ks/**)", Effect::Deny),
        ("Read(./é/**)", Effect::Deny),
        // Case-insensitive and not ASCII: in an automaton walked only for
        // the first bytes it can take, which include the leads of `K`
        // KELVIN SIGN and `ſ` LONG S.
        ("Read(./kö/x)", Effect::Deny),
        ("Read(./ſé/x)", Effect::Deny),
        // Case-insensitive, beyond ASCII only characters without case
        // forms: tabled.
        ("Read(./テスト/x)", Effect::Deny),
        ("Read(./k…/**)", Effect::Deny),
        ("Read(**/日本.Md)", Effect::Deny),
        ("Read(**/*.日本)", Effect::Deny),
        ("Read(./d/*.テ)", Effect::Deny),
        ("Read(./d/**/*.Sテ)", Effect::Deny),
        ("Read(./src/*.ts)", Effect::Allow),
        ("Read(./a/b/*.md)", Effect::Allow),
        ("Read(./Lib/**/*.Rs)", Effect::Deny),
        ("Read(./lib/**/*.rs)", Effect::Allow),
        ("Read(./src/**/*.test.ts)", Effect::Ask),
        // Prefix keys several segments deep: a query stops looking up
        // longer prefixes once no key continues the one it has.
        ("Read(./p/q/r/s/**)", Effect::Allow),
        ("Read(./p/Q/r/**)", Effect::Deny),
        ("Read(./p/q/*.md)", Effect::Allow),
        (
            "Read(./a/B.rs/a/B.rs/a/B.rs/a/B.rs/a/B.rs/a/B.rs/a/B.rs/a/B.rs/a/**)",
            Effect::Allow,
        ),
    ];
    // One prefix with tails of many extensions: more codes than a group's
    // 64 code bits, so that some share a bit.
    let many: Vec<String> = (0..80)
        .flat_map(|i| [format!("Read(./m/**/*.x{i})"), format!("Read(./m/*.Y{i})")])
        .collect();
    let rules: Vec<Rule> = specs
        .iter()
        .map(|(text, effect)| (*text, *effect))
        .chain(many.iter().map(|t| (t.as_str(), Effect::Allow)))
        .enumerate()
        .map(|(i, (text, effect))| common::claude_rule(text, effect, i))
        .collect();
    let paths = [
        "main.rs",
        "src",
        "src/main.rs",
        "src/MAIN.RS",
        "a/b.test.ts",
        "a/B.TEST.TS",
        "a/b.\u{212A}ey",
        "x/secret.key",
        "x/SECRET.\u{212A}EY",
        "x/ſecret.key/y",
        "x/b.Test.TS.bak",
        "x.tar.gz",
        "x.TAR.gz",
        "tar.gz",
        ".md",
        "a/b.md/c",
        "Makefile",
        "a/makefile",
        "a/Makefile/b",
        "KUBE",
        "a/\u{212A}ube/b",
        "docs/a.md",
        "docs/a.md/x",
        "docs/A.md",
        "docs",
        "build",
        "build/x",
        "BUILD/x/y",
        "Ks/x",
        "Ks/x/y",
        "ks/x/y",
        "\u{212A}s/x/y",
        "é/a",
        "É/a",
        "kö/x",
        "KÖ/x/y",
        "\u{212A}ö/x",
        "kö",
        "ko/x",
        "sé/x",
        "Sé/X",
        "ſÉ/x",
        "ſé/y",
        "テスト/x",
        "テスト/X/y",
        "テスト/xy",
        "k…/a",
        "\u{212A}…/a",
        "K…",
        "a/日本.md",
        "a/日本.MD/b",
        "a/日本.m",
        "a/x.日本",
        "x.日本/b",
        "d/a.テ",
        "D/b.テ/c",
        "d/b/c.テ",
        "d/b/c.sテ",
        "d/b/c.ſテ",
        "d/b/c.Sテ",
        "src/x.ts",
        "src/a/x.ts",
        "src/.ts",
        "src/X.TS",
        "src/a/b.test.ts",
        "src/b.test.ts/c",
        "a/b/c.md",
        "a/b/c.md/d",
        "a/b",
        "lib",
        "lib/a/b/c.rs",
        "LIB/x.RS",
        "Lib/x.rs/y",
        "lib/a.rsx",
        "lib/a.rs",
        "p/q/r/s",
        "p/q/r/s/t",
        "p/q/r/x/t",
        "p/q/x/s/t",
        "p/x/r/s/t",
        "P/Q/R/x",
        "p/q/R/x",
        "p/q/x.md",
        "p/q/r/x.md",
        "P/q/r/x.md",
        // Lengths around a word (a query reads its path eight bytes at a
        // time, the last word overlapping the one before), capitals and a
        // non-ASCII byte only in that last word.
        "a",
        "abcdefgh",
        "src/abcd.rs",
        "src/abcd.ts",
        "src/mainfile.RS",
        "src/mainfile.TS",
        "docs/abcdefg.md",
        "lib/abcdefgh/a.Rs",
        "src/x.tsé",
        "src/é.ts",
        "p/q/abcdefgh.md",
    ];
    // Deep paths (a query once indexed only 16 segments), and folded
    // ones whose folds change their length.
    let deep = |head: &str, n: usize, last: &str| {
        let mut p = head.to_string();
        for i in 0..n {
            p.push_str(if i % 2 == 0 { "/a" } else { "/B.rs" });
        }
        p.push('/');
        p.push_str(last);
        p
    };
    let deep_paths = [
        deep("lib", 40, "x.rs"),
        deep("lib", 10, "x.rs"),
        deep("LIB", 13, "x.RS"),
        deep("src", 12, "b.test.ts"),
        deep("LIB", 40, "x.RS"),
        deep("lib", 40, "x.rsx"),
        deep("src", 31, "b.test.ts"),
        deep("src", 33, "b.test.ts"),
        deep("\u{212A}s/x", 34, "y"),
        deep("a/b", 35, "c.md"),
        deep("a", 17, "x"),
        deep("a", 16, "x"),
        deep("a", 15, "x"),
        deep("A", 17, "x"),
        "lib/\u{212A}/ſ/a.rs".to_string(),
        "LIB/\u{212A}/ſ/a.RS".to_string(),
    ];
    let many_paths: Vec<String> = (0..90)
        .flat_map(|i| {
            [
                format!("m/a.x{i}"),
                format!("m/b/c.x{i}/d"),
                format!("m/a.Y{i}"),
                format!("m/a.y{i}"),
                format!("m/b/c.Y{i}"),
            ]
        })
        .collect();
    let paths: Vec<&str> = paths
        .iter()
        .copied()
        .chain(deep_paths.iter().map(String::as_str))
        .chain(many_paths.iter().map(String::as_str))
        .collect();
    let mut failures = Vec::new();
    let mut m = Matches::new();
    for (name, policy) in policies(&rules) {
        let pm = policy.path_matcher(Kind::Read).expect("read matcher");
        // Tables apply from `path_table_min` rules on (1,000 by default,
        // 0 in the configurations that exercise them).
        let tabled: usize = pm.groups().map(|(_, k)| k.shape().tabled_rules).sum();
        let expect_tables = matches!(
            name.split(' ').next().unwrap_or(""),
            "latch-1" | "blowup-0" | "split" | "routed-1" | "sparse"
        );
        if (tabled > 0) != expect_tables {
            failures.push(format!("{name}: {tabled} rules in path tables"));
        }
        for &rel in &paths {
            let want: Vec<usize> = rules
                .iter()
                .enumerate()
                .filter(|(_, r)| match &r.pattern {
                    Pattern::Path(p) => reference::path_matches(p, rel),
                    _ => false,
                })
                .map(|(i, _)| i)
                .collect();
            pm.find_relative(&AnchorKey::Project, rel, &mut m);
            let got = positions(&policy, &m);
            if got != want {
                failures.push(format!("{name} on {rel:?}: got {got:?}, want {want:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Compares every configuration's command matches of `texts` with the
/// reference's, rule by rule; each difference is pushed to `failures`.
fn check_commands<'t>(
    rules: &[Rule],
    texts: impl Iterator<Item = &'t str> + Clone,
    failures: &mut Vec<String>,
) {
    let mut m = Matches::new();
    for (name, policy) in policies(rules) {
        for text in texts.clone() {
            let want: Vec<usize> = rules
                .iter()
                .enumerate()
                .filter(|(_, r)| match &r.pattern {
                    Pattern::Command(p) => reference::command_matches(p, text),
                    _ => false,
                })
                .map(|(i, _)| i)
                .collect();
            policy.find(Kind::Command, Some("Bash"), text, &mut m);
            let got = positions(&policy, &m);
            if got != want {
                failures.push(format!("{name} on {text:?}: {got:?}, want {want:?}"));
            }
        }
    }
}

/// Word-prefix rules (`L:*`, `L *`, a literal then a space and a star) are
/// matched by the lookup of a query's leading words, without an automaton:
/// against the reference on texts that stop at the prefix, continue it
/// without a space, hold it with doubled spaces, another case or another
/// whitespace, or hold it deeper than the words a query looks up.
#[test]
fn word_prefix_rules_agree_with_reference() {
    let shallow = [
        "Bash(git:*)",
        "Bash(git commit:*)",
        "Bash(ls *)",
        "Bash(:*)",
        "Bash(é x:*)",
        "Bash(git :*)",
        "Bash(make *)",
    ];
    let deeper = [
        "Bash(npm run build:*)",
        "Bash(git  push:*)",
        "Bash(git  :*)",
        "Bash(git commit -m *)",
        "Bash(git commit*)",
        "Bash(git commit)",
        "Bash(ls -la)",
        "Bash(a b c:*)",
        "Bash(* --force)",
    ];
    let texts = [
        "",
        " ",
        "  ",
        "git",
        "git ",
        "git  ",
        "gi",
        "gitx",
        "git x",
        " git",
        "GIT commit",
        "git\tcommit",
        "git commit",
        "git commit ",
        "git commitx",
        "git commit -m x",
        "git  commit",
        "git  push",
        "git  push x",
        "git push",
        "npm run build",
        "npm run build x",
        "npm run buildx",
        "npm run",
        "é x",
        "é x y",
        "é xy",
        "é",
        "ls",
        "ls ",
        "ls -la",
        "ls -la x",
        "lsof",
        "a b c",
        "a b c d",
        "a b",
        "make",
        "make all --force",
        "maker",
    ];
    // `Bash(:*)` does not parse: the empty prefix is made directly.
    let make = |specs: &[&str]| -> Vec<Rule> {
        specs
            .iter()
            .enumerate()
            .map(|(i, text)| match *text {
                "Bash(:*)" => rule(
                    i,
                    Effect::Allow,
                    ToolMatch::Name("Bash".into()),
                    Pattern::Command(CommandPattern {
                        form: CommandForm::Prefix(String::new()),
                        case_insensitive: false,
                    }),
                ),
                _ => common::claude_rule(text, Effect::Allow, i),
            })
            .collect()
    };
    let specs: Vec<&str> = shallow.iter().chain(&deeper).copied().collect();
    let rules = make(&specs);
    let mut failures = Vec::new();
    let mut m = Matches::new();
    check_commands(&rules, texts.iter().copied(), &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The shallow rules alone need no automaton (so the lookups above were
    // what matched them).
    let rules = make(&shallow);
    for image in [false, true] {
        let mut policy = Policy::new(rules.clone()).expect("compiles");
        if image {
            let bytes = policy.matchers_to_bytes();
            policy = Policy::from_image(rules.clone(), &bytes).expect("image loads");
        }
        let shape = policy.matcher(Kind::Command).expect("matcher").shape();
        assert_eq!((shape.automata, shape.fallback_rules), (0, 0), "{shape:?}");
        for text in ["git", "git x", "é x y", "ls", "ls -l", "make x", " x"] {
            policy.find(Kind::Command, Some("Bash"), text, &mut m);
            assert_eq!(m.len(), 1, "{text:?}");
        }
    }
}

/// Contains rules (`*x*`): a walk of their unanchored automaton jumps over
/// the bytes that cannot start a match. Against the reference on texts
/// whose match starts at the first or the last possible byte, overlaps a
/// false start, or differs in case (the folds of `k` and `s` included):
/// one, three and many bytes that can start a match.
#[test]
fn contains_rules_agree_with_reference() {
    let glob = |text: &str| {
        let mut pieces = vec![GlobPiece::Star];
        for (i, part) in text.split('?').enumerate() {
            if i > 0 {
                pieces.push(GlobPiece::Question);
            }
            if !part.is_empty() {
                pieces.push(GlobPiece::Literal(part.to_string()));
            }
        }
        pieces.push(GlobPiece::Star);
        pieces
    };
    let sets: [&[(&str, bool)]; 4] = [
        &[("--force", false), ("--dry-run", false), ("-rf", false)],
        &[("kelvin", true), ("--x", false)],
        &[("ss", true), ("a?b", false), ("é", false), ("--", false)],
        &[
            ("ab", false),
            ("cd", false),
            ("ef", false),
            ("g h", false),
            ("xyz", true),
        ],
    ];
    let texts = [
        "",
        "-",
        "--",
        "---force",
        "--force",
        "git push --force",
        "git push --forc",
        "git push -- force",
        "git push --forcex",
        "rm -r -rf",
        "rm -r -f",
        "x--dry-ru--dry-run",
        "KELVIN",
        "\u{212A}elvin",
        "a \u{212A}ELVIn b",
        "kelvi",
        "a--x",
        "SS",
        "ſs",
        "ſ",
        "a-b",
        "axb",
        "ab",
        "é",
        "e\u{301}",
        "cdef",
        "g h",
        "gh",
        "XyZ",
        "xy",
    ];
    let mut failures = Vec::new();
    for specs in sets {
        let rules: Vec<Rule> = specs
            .iter()
            .enumerate()
            .map(|(i, (text, ci))| {
                rule(
                    i,
                    Effect::Allow,
                    ToolMatch::Name("Bash".into()),
                    Pattern::Command(CommandPattern {
                        form: CommandForm::Glob(glob(text)),
                        case_insensitive: *ci,
                    }),
                )
            })
            .collect();
        check_commands(&rules, texts.iter().copied(), &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Rules that are literals joined by stars and end with a literal
/// (`git * --force`, `a *b* c`) are found by their last literal in the
/// reverse automaton and checked on the text. Against the reference on
/// texts where the literals overlap, repeat, stand in another order or
/// are missing, beside a suffix rule of the same last literal and a rule
/// whose other pattern (`P *`) is not checked.
#[test]
fn star_literal_rules_agree_with_reference() {
    let specs = [
        "Bash(git * --force)",
        "Bash(git commit *--amend* x)",
        "Bash(a*b*c)",
        "Bash(x * x)",
        "Bash(aa*aa)",
        "Bash(* --force)",
        "Bash(p*q*r*s)",
        "Bash(é * É)",
        "Bash(git * --Force)",
    ];
    let texts = [
        "git push --force",
        "git --force",
        "git  --force",
        "git push --force x",
        "git push --Force",
        "GIT push --force",
        "x --force",
        "git commit --amend x",
        "git commit  --amend  x",
        "git commit x --amend",
        "git commit --amen x",
        "git commit --amend x x",
        "abc",
        "ac",
        "abbc",
        "acbc",
        "cba",
        "x x",
        "x  x",
        "x y x",
        "aa",
        "aaa",
        "aaaa",
        "pqrs",
        "prqs",
        "pqqrrs",
        "ps",
        "é É",
        "é  É",
        "éÉ",
        "",
    ];
    let rules: Vec<Rule> = specs
        .iter()
        .enumerate()
        .map(|(i, text)| common::claude_rule(text, Effect::Allow, i))
        .chain([rule(
            specs.len(),
            Effect::Deny,
            ToolMatch::Name("Bash".into()),
            Pattern::Command(CommandPattern {
                form: CommandForm::PrefixGlob(vec![
                    GlobPiece::Literal("x ".into()),
                    GlobPiece::Star,
                    GlobPiece::Literal(" x".into()),
                ]),
                case_insensitive: false,
            }),
        )])
        .collect();
    let mut failures = Vec::new();
    let mut texts: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
    texts.push("x y x z".into());
    check_commands(&rules, texts.iter().map(String::as_str), &mut failures);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Without the suffix rule, the default matcher holds one automaton (the
    // reverse one) for all of them.
    let rules: Vec<Rule> = rules
        .into_iter()
        .filter(|r| r.text != "Bash(* --force)")
        .collect();
    let policy = Policy::new(rules).expect("compiles");
    let shape = policy.matcher(Kind::Command).expect("matcher").shape();
    assert_eq!(
        (shape.automata, shape.reverse_automata),
        (2, 1),
        "{shape:?}"
    );
}
