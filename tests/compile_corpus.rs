//! Differential tests on real data: the rules of the shared corpora, parsed
//! in both dialects with both effects, compiled into one policy, against
//! real commands and paths. Every compiled matcher returns exactly the
//! reference's set of rules. All mismatches are collected and reported at
//! once.

mod common;

use std::sync::Arc;
use toolgate::compile::{AnchorKey, Config, Kind, Matches, Policy};
use toolgate::reference;
use toolgate::rule::claude::parse_rule;
use toolgate::rule::{
    Anchor, CommandForm, CommandPattern, DomainLabel, DomainPattern, GlobPiece, PathPattern,
    SegPiece, Segment,
};
use toolgate::{Dialect, Effect, List, Pattern, Provenance, Rule};

const READ_TOOLS: &[&str] = &["Read", "Glob", "Grep", "LSP", "NotebookRead"];
const EDIT_TOOLS: &[&str] = &["Edit", "Write", "MultiEdit", "NotebookEdit"];

fn corpus_rules() -> Option<Vec<Rule>> {
    let lines = common::corpus_lines("rules.txt")?;
    // A third of the lines keeps the debug-build test quick;
    // TOOLGATE_FULL_CORPUS=1 takes them all.
    let step = if std::env::var("TOOLGATE_FULL_CORPUS").is_ok_and(|v| v == "1") {
        1
    } else {
        3
    };
    let lines = sample(lines, step);
    let mut rules = Vec::new();
    for dialect in [Dialect::Strict, Dialect::ClaudeCode] {
        for effect in [Effect::Deny, Effect::Allow] {
            for (i, line) in lines.iter().enumerate() {
                let list = if effect == Effect::Deny {
                    List::Deny
                } else {
                    List::Allow
                };
                let prov = Provenance {
                    source: Arc::from(if i % 2 == 0 { "a.json" } else { "b.json" }),
                    list,
                    index: i,
                };
                if let Ok(r) = parse_rule(line, effect, dialect, prov) {
                    rules.push(r);
                }
            }
        }
    }
    Some(rules)
}

/// Every `step`-th line, so the test stays quick in debug builds.
fn sample(lines: Vec<String>, step: usize) -> Vec<String> {
    lines.into_iter().step_by(step.max(1)).collect()
}

fn positions(p: &Policy, m: &Matches) -> Vec<usize> {
    let mut v: Vec<usize> = m.ids().iter().filter_map(|&id| p.input_index(id)).collect();
    v.sort_unstable();
    v
}

fn key_of(r: &Rule, a: Anchor) -> AnchorKey {
    match a {
        Anchor::Root => AnchorKey::Root,
        Anchor::Home => AnchorKey::Home,
        Anchor::Project => AnchorKey::Project,
        Anchor::Source => AnchorKey::Source(r.provenance.source.clone()),
    }
}

/// A necessary condition for a case-sensitive command pattern to match
/// (its leading literal starts the text, its trailing literal ends it), so
/// the slow reference runs only where it can say yes. The reference still
/// decides every candidate.
fn could_match_command(p: &CommandPattern, text: &str) -> bool {
    if p.case_insensitive {
        return true;
    }
    let pieces = match &p.form {
        CommandForm::Exact(s) => return s == text,
        CommandForm::Prefix(s) => return text.starts_with(s.as_str()),
        CommandForm::Glob(g) | CommandForm::PrefixGlob(g) => g,
    };
    if let Some(GlobPiece::Literal(l)) = pieces.first() {
        if !text.starts_with(l.as_str()) {
            return false;
        }
    }
    if let (CommandForm::Glob(_), Some(GlobPiece::Literal(l))) = (&p.form, pieces.last()) {
        if !text.ends_with(l.as_str()) {
            return false;
        }
    }
    pieces.iter().all(|x| match x {
        GlobPiece::Literal(l) => text.contains(l.as_str()),
        _ => true,
    })
}

/// A necessary condition for a case-sensitive path pattern to match: each
/// of its literals occurs in the path.
/// Case-insensitive ones too, when path and literal are ASCII (ASCII
/// letters fold to ASCII letters only, except `k` and `s`, whose folds `K`
/// and `ſ` are not ASCII — so a non-ASCII path skips the filter).
fn could_match_path(p: &PathPattern, rel: &str) -> bool {
    let ci = p.case_insensitive;
    if ci && !rel.is_ascii() {
        return true;
    }
    let low = rel.to_ascii_lowercase();
    p.segments.iter().all(|s| match s {
        Segment::DoubleStar => true,
        Segment::Pieces(ps) => ps.iter().all(|x| match x {
            SegPiece::Literal(l) if ci => !l.is_ascii() || low.contains(&l.to_ascii_lowercase()),
            SegPiece::Literal(l) => rel.contains(l.as_str()),
            _ => true,
        }),
    })
}

#[test]
fn corpus_rules_commands_paths_tools_domains() {
    let Some(rules) = corpus_rules() else { return };
    let Some(tldr) = common::corpus_lines("tldr-commands.txt") else {
        return;
    };
    let Some(approved) = common::corpus_lines("agent-approved-bash-commands.txt") else {
        return;
    };
    let Some(paths) = common::corpus_lines("paths.txt") else {
        return;
    };
    let mut commands = sample(tldr, 200);
    commands.extend(sample(approved, 16));
    // Rule texts themselves make good near-miss commands.
    for r in rules.iter().step_by(83) {
        if let Some(spec) = r
            .text
            .strip_prefix("Bash(")
            .and_then(|s| s.strip_suffix(')'))
        {
            commands.push(spec.to_string());
            commands.push(spec.replace(":*", " --x"));
        }
    }
    let paths = sample(paths, 120);
    let t = std::time::Instant::now();

    // The reference's answers, once per input.
    let by_kind = |f: &dyn Fn(&Pattern) -> bool| -> Vec<usize> {
        rules
            .iter()
            .enumerate()
            .filter(|(_, r)| f(&r.pattern))
            .map(|(i, _)| i)
            .collect()
    };
    let command_rules = by_kind(&|p| matches!(p, Pattern::Command(_)));
    let path_rules = by_kind(&|p| matches!(p, Pattern::Path(_)));
    let want_commands: Vec<Vec<usize>> = commands
        .iter()
        .map(|text| {
            command_rules
                .iter()
                .copied()
                .filter(|&i| match &rules[i].pattern {
                    Pattern::Command(p) => {
                        could_match_command(p, text) && reference::command_matches(p, text)
                    }
                    _ => false,
                })
                .collect()
        })
        .collect();
    // Path rules matching each path, before grouping by kind and anchor.
    let want_paths: Vec<Vec<usize>> = paths
        .iter()
        .map(|rel| {
            path_rules
                .iter()
                .copied()
                .filter(|&i| match &rules[i].pattern {
                    Pattern::Path(p) => could_match_path(p, rel) && reference::path_matches(p, rel),
                    _ => false,
                })
                .collect()
        })
        .collect();
    let mut tools: Vec<String> = vec!["Task".into(), "Agent".into(), "mcp__x__y".into()];
    let mut hosts: Vec<String> = vec!["example.com".into()];
    for r in &rules {
        if let Some((t, _)) = r.text.split_once('(') {
            tools.push(t.to_string());
        } else {
            tools.push(r.text.clone());
            tools.push(format!("{}_x", r.text));
        }
        if let Pattern::Domain(DomainPattern::Host { labels, .. }) = &r.pattern {
            let h: Vec<String> = labels
                .iter()
                .map(|l| match l {
                    DomainLabel::Literal(s) => s.clone(),
                    DomainLabel::Star => "x".into(),
                })
                .collect();
            hosts.push(h.join("."));
            hosts.push(format!("www.{}", h.join(".")));
        }
    }
    tools.sort();
    tools.dedup();
    hosts.sort();
    hosts.dedup();
    eprintln!(
        "{} rules, {} commands, {} paths, {} tools, {} hosts; reference {:?}",
        rules.len(),
        commands.len(),
        paths.len(),
        tools.len(),
        hosts.len(),
        t.elapsed()
    );

    let t = std::time::Instant::now();
    let policies: Vec<(&str, Policy)> = {
        let default = Policy::new(rules.clone()).expect("corpus compiles");
        let image =
            Policy::from_image(rules.clone(), &default.matchers_to_bytes()).expect("image loads");
        let split = Policy::builder()
            .configure(
                Config::new()
                    .path_table_min(0)
                    .dfa_size_limit(256 << 10)
                    .latch_group_size(1)
                    .split_budget(6),
            )
            .build(rules.clone())
            .expect("corpus compiles with small limits");
        let sparse = Policy::builder()
            .configure(
                Config::new()
                    .path_table_min(0)
                    .sparse_above(0)
                    .route_sparse_above(0)
                    .path_route_depth(2),
            )
            .build(rules.clone())
            .expect("corpus compiles with sparse tables");
        let sparse_image = Policy::from_image(rules.clone(), &sparse.matchers_to_bytes())
            .expect("sparse image loads");
        let lazy = Policy::builder()
            .configure(Config::one_shot())
            .build(rules.clone())
            .expect("corpus builds lazily");
        let unrouted = Policy::builder()
            .configure(Config::new().route_depth(0).path_tables(false))
            .build(rules.clone())
            .expect("corpus compiles unrouted");
        let routed_deep = Policy::builder()
            .configure(
                Config::new()
                    .path_table_min(0)
                    .route_depth(6)
                    .path_route_depth(6)
                    .route_pack_size(8),
            )
            .build(rules.clone())
            .expect("corpus compiles routed by six words");
        vec![
            ("default", default),
            ("image", image),
            ("split", split),
            ("sparse", sparse),
            ("sparse image", sparse_image),
            ("lazy", lazy),
            ("unrouted", unrouted),
            ("routed by six words", routed_deep),
        ]
    };
    eprintln!("compiled in {:?}", t.elapsed());

    let mut failures = Vec::new();
    let mut m = Matches::new();
    let mut matched = 0usize;
    for (name, policy) in &policies {
        for (text, want) in commands.iter().zip(&want_commands) {
            policy.find(Kind::Command, None, text, &mut m);
            let got = positions(policy, &m);
            matched += got.len();
            if &got != want {
                failures.push(format!(
                    "{name} command {text:?}: got {got:?}, want {want:?}"
                ));
            }
        }
        for (kind, tools) in [(Kind::Read, READ_TOOLS), (Kind::Edit, EDIT_TOOLS)] {
            let pm = policy.path_matcher(kind).expect("path kind");
            for (rel, all) in paths.iter().zip(&want_paths) {
                for (key, _) in pm.groups() {
                    let want: Vec<usize> = all
                        .iter()
                        .copied()
                        .filter(|&i| {
                            let r = &rules[i];
                            matches!(&r.pattern, Pattern::Path(p) if key_of(r, p.anchor) == *key)
                                && tools.iter().any(|t| r.governs(t))
                        })
                        .collect();
                    pm.find_relative(key, rel, &mut m);
                    let got = positions(policy, &m);
                    matched += got.len();
                    if got != want {
                        failures.push(format!(
                            "{name} {kind:?} {key:?} {rel:?}: got {got:?}, want {want:?}"
                        ));
                    }
                }
            }
        }
        for t in &tools {
            let want: Vec<usize> = rules
                .iter()
                .enumerate()
                .filter(|(_, r)| {
                    matches!(r.pattern, Pattern::Any) && reference::tool_matches(&r.tool, t)
                })
                .map(|(i, _)| i)
                .collect();
            policy.find(Kind::Tool, None, t, &mut m);
            let got = positions(policy, &m);
            if got != want {
                failures.push(format!("{name} tool {t:?}: got {got:?}, want {want:?}"));
            }
        }
        for h in &hosts {
            let want: Vec<usize> = rules
                .iter()
                .enumerate()
                .filter(|(_, r)| match &r.pattern {
                    Pattern::Domain(d) => reference::domain_matches(d, h),
                    _ => false,
                })
                .map(|(i, _)| i)
                .collect();
            policy.find(Kind::Domain, None, h, &mut m);
            let got = positions(policy, &m);
            if got != want {
                failures.push(format!("{name} host {h:?}: got {got:?}, want {want:?}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The inputs do reach the rules (the test could fail).
    assert!(
        matched > 1000,
        "only {matched} matches: inputs miss the rules"
    );
}
