//! The `matchers` fuzz property, shared with the main package's regression
//! tests (which include this file): rules compiled with every strategy
//! configuration (and loaded back from the image bytes) return, for every
//! input and every tool kind, exactly the rules the reference matcher
//! returns.
//!
//! A case is a list of rule texts (with effect, dialect and source) and a
//! list of inputs; every input is asked of every kind it can stand for: a
//! command text, a relative path (under each anchor directory), a host, a
//! tool name, an input field's value. A case is written as JSON lines
//! ([`case_text`]), which is also the reproducer a mismatch prints.

use serde_json::{Value, json};
use std::sync::Arc;
use toolgate::compile::{AnchorDirs, Config, Kind, Matches, Policy};
use toolgate::rule::claude::parse_rule;
use toolgate::rule::{Anchor, EDIT_TOOLS, Pattern, READ_TOOLS};
use toolgate::{Dialect, Effect, List, Provenance, Rule, reference};

/// One rule of a case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    /// The rule text.
    pub text: String,
    /// Its list.
    pub effect: Effect,
    /// Its dialect.
    pub dialect: Dialect,
    /// Its source (`a.json` or `b.json`: `/x` rules of each are relative
    /// to a different directory).
    pub source: String,
}

/// The configurations under test: each forces a different strategy mix.
/// The last three are cheap to build (tight size limits, or no shared
/// automaton at all): the fuzz target compiles most of its cases with one
/// of them, so that it runs many cases a second and still reaches the
/// dense automata.
pub fn configs() -> Vec<(&'static str, Config)> {
    vec![
        ("default", Config::new()),
        (
            "latch-1",
            Config::new()
                .path_table_min(0)
                .latch_group_size(1)
                .latch_size_limit(64 << 10),
        ),
        (
            "split",
            Config::new()
                .path_table_min(0)
                .dfa_size_limit(1)
                .latch_size_limit(1)
                .split_budget(64),
        ),
        (
            "fallback",
            Config::new()
                .dfa_size_limit(1)
                .latch_size_limit(1)
                .split_budget(0)
                .path_tables(false),
        ),
        // Every pattern that multiplies states (`*!???`) in the fallback.
        ("blowup-0", Config::new().path_table_min(0).blowup_limit(0)),
        ("one-shot", Config::one_shot()),
        (
            "small",
            Config::new()
                .path_table_min(0)
                .dfa_size_limit(64 << 10)
                .latch_size_limit(16 << 10)
                .split_budget(2)
                // Patterns that multiply states (`*!???`) in automata
                // too, against these small limits.
                .blowup_limit(16),
        ),
        (
            "small-latch-1",
            Config::new()
                .path_table_min(0)
                .latch_group_size(1)
                .dfa_size_limit(64 << 10)
                .latch_size_limit(16 << 10),
        ),
    ]
}

/// The configurations whose matchers are also written to an image and
/// loaded back (`one-shot`: the deferred rules, globs stored as their
/// literals).
const IMAGED: &[&str] = &["default", "small", "one-shot"];

/// The rules of the specs that parse, in order.
pub fn rules_of(specs: &[Spec]) -> Vec<Rule> {
    specs
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let list = match s.effect {
                Effect::Deny => List::Deny,
                Effect::Ask => List::Ask,
                Effect::Allow => List::Allow,
            };
            let prov = Provenance {
                source: Arc::from(s.source.as_str()),
                list,
                index: i,
            };
            parse_rule(&s.text, s.effect, s.dialect, prov).ok()
        })
        .collect()
}

/// The anchor directories of every query: nested in one another, as real
/// ones are.
const HOME: &str = "/h/u";
const PROJECT: &str = "/h/u/p";
const SOURCES: [(&str, &str); 2] = [("a.json", "/h/u/p/.claude"), ("b.json", "/h/u/p")];
const BASES: [&str; 4] = ["/h/u/p", "/h/u/p/.claude", "/h/u", "/x"];

fn anchor_dir(rule: &Rule, a: Anchor) -> &'static str {
    match a {
        Anchor::Root => "/",
        Anchor::Home => HOME,
        Anchor::Project => PROJECT,
        Anchor::Source => SOURCES
            .iter()
            .find(|(n, _)| *n == &*rule.provenance.source)
            .map_or("/nowhere", |(_, d)| *d),
    }
}

/// A normalised relative path: non-empty segments, none `.` or `..`.
fn is_rel_path(s: &str) -> bool {
    !s.is_empty()
        && s.split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
}

/// A host as the domain matchers take it: ASCII lower case, no trailing dot.
fn is_host(s: &str) -> bool {
    !s.is_empty()
        && !s.ends_with('.')
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
}

/// Input positions of the matches, sorted; checks ids sorted and unique.
fn positions(p: &Policy, m: &Matches) -> Result<Vec<usize>, String> {
    if !m.ids().windows(2).all(|w| w[0] < w[1]) {
        return Err(format!("ids not sorted and unique: {:?}", m.ids()));
    }
    if m.winner() != m.ids().first().copied() {
        return Err(format!(
            "winner {:?} is not the smallest id of {:?}",
            m.winner(),
            m.ids()
        ));
    }
    let mut v = Vec::new();
    for &id in m.ids() {
        v.push(
            p.input_index(id)
                .ok_or_else(|| format!("id {id} out of range"))?,
        );
    }
    v.sort_unstable();
    Ok(v)
}

fn want(rules: &[Rule], keep: impl Fn(&Rule) -> bool) -> Vec<usize> {
    rules
        .iter()
        .enumerate()
        .filter(|(_, r)| keep(r))
        .map(|(i, _)| i)
        .collect()
}

/// Every matcher of `rules` for the configurations named `which` (all when
/// `None`), and those of [`IMAGED`] loaded back from their image.
fn policies(rules: &[Rule], which: Option<&[&str]>) -> Result<Vec<(String, Policy)>, String> {
    let mut out = Vec::new();
    for (name, cfg) in configs() {
        if which.is_some_and(|w| !w.contains(&name)) {
            continue;
        }
        let p = Policy::builder()
            .configure(cfg)
            .build(rules.to_vec())
            .map_err(|e| format!("{name}: build failed: {e}"))?;
        if IMAGED.contains(&name) {
            let bytes = p.matchers_to_bytes();
            let loaded = Policy::from_image(rules.to_vec(), &bytes)
                .map_err(|e| format!("{name}: image does not load: {e}"))?;
            out.push((format!("{name} image"), loaded));
        }
        out.push((name.to_string(), p));
    }
    Ok(out)
}

/// Runs one case with every configuration; `Err` names the first
/// disagreement. Returns the number of queries compared.
pub fn check_matchers(specs: &[Spec], inputs: &[String]) -> Result<usize, String> {
    check_matchers_in(specs, inputs, None)
}

/// Runs one case with the configurations named `which` (all when `None`).
pub fn check_matchers_in(
    specs: &[Spec],
    inputs: &[String],
    which: Option<&[&str]>,
) -> Result<usize, String> {
    let rules = rules_of(specs);
    if rules.is_empty() {
        return Ok(0);
    }
    let mut fields: Vec<&str> = Vec::new();
    for r in &rules {
        if let Pattern::Field { field, .. } = &r.pattern {
            if !fields.contains(&field.as_str()) {
                fields.push(field);
            }
        }
    }
    let dirs = AnchorDirs {
        home: Some(HOME),
        project: Some(PROJECT),
        sources: &SOURCES,
    };
    let mut m = Matches::new();
    let mut queries = 0;
    let policies = policies(&rules, which)?;
    // Each query: what it asks, its input, and the reference's answer,
    // computed once and put to every matcher.
    let mut asked: Vec<(String, String, Option<Kind>, Vec<usize>)> = Vec::new();
    for s in inputs {
        asked.clear();
        let w = want(
            &rules,
            |r| matches!(&r.pattern, Pattern::Command(p) if reference::command_matches(p, s)),
        );
        asked.push(("command".into(), s.clone(), Some(Kind::Command), w));
        let w = want(&rules, |r| {
            r.pattern == Pattern::Any && reference::tool_matches(&r.tool, s)
        });
        asked.push(("tool".into(), s.clone(), Some(Kind::Tool), w));
        for &f in &fields {
            let mut input = serde_json::Map::new();
            input.insert(f.to_string(), Value::String(s.clone()));
            let w = want(&rules, |r| {
                matches!(&r.pattern, Pattern::Field { field, form }
                    if field == f && reference::field_matches(f, form, &input))
            });
            asked.push((format!("field {f}"), s.clone(), None, w));
        }
        if is_host(s) {
            let w = want(
                &rules,
                |r| matches!(&r.pattern, Pattern::Domain(d) if reference::domain_matches(d, s)),
            );
            asked.push(("host".into(), s.clone(), Some(Kind::Domain), w));
        }
        if is_rel_path(s) {
            for base in BASES {
                let abs = format!("{base}/{s}");
                // The path relative to each anchor directory, worked out
                // once: a handful of directories serve every rule.
                let mut rels: Vec<(&str, Option<String>)> = Vec::new();
                let mut rel_to = |dir: &'static str| -> Option<String> {
                    if let Some((_, r)) = rels.iter().find(|(d, _)| *d == dir) {
                        return r.clone();
                    }
                    let r = toolgate::paths::relative_to(&abs, dir);
                    rels.push((dir, r.clone()));
                    r
                };
                for (kind, tools) in [(Kind::Read, READ_TOOLS), (Kind::Edit, EDIT_TOOLS)] {
                    let mut w = Vec::new();
                    for (i, r) in rules.iter().enumerate() {
                        if let Pattern::Path(p) = &r.pattern {
                            if tools.iter().any(|t| r.governs(t))
                                && rel_to(anchor_dir(r, p.anchor))
                                    .is_some_and(|rel| reference::path_matches(p, &rel))
                            {
                                w.push(i);
                            }
                        }
                    }
                    asked.push((
                        format!("{} path", kind.as_str()),
                        abs.clone(),
                        Some(kind),
                        w,
                    ));
                }
            }
        }
        for (name, policy) in &policies {
            for (what, input, kind, w) in &asked {
                match kind {
                    Some(k @ (Kind::Read | Kind::Edit)) => {
                        policy.find_path(*k, None, input, &dirs, &mut m)
                    }
                    Some(k) => policy.find(*k, None, input, &mut m),
                    None => {
                        let f = what.strip_prefix("field ").unwrap_or(what);
                        policy.find_field(None, f, input, &mut m)
                    }
                }
                queries += 1;
                let got = positions(policy, &m)?;
                if &got != w {
                    return Err(format!(
                        "{name}: {what} {input:?}: compiled {got:?}, reference {w:?} (rule positions)"
                    ));
                }
            }
        }
    }
    Ok(queries)
}

/// A case as JSON lines: one `{"rule", "effect", "dialect", "source"}` per
/// rule, one `{"input"}` per input.
pub fn case_text(specs: &[Spec], inputs: &[String]) -> String {
    let mut out = String::new();
    for s in specs {
        let line = json!({
            "rule": s.text,
            "effect": s.effect.as_str(),
            "dialect": s.dialect.as_str(),
            "source": s.source,
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    for i in inputs {
        out.push_str(&json!({ "input": i }).to_string());
        out.push('\n');
    }
    out
}

/// Reads a case written by [`case_text`].
pub fn parse_case(text: &str) -> Result<(Vec<Spec>, Vec<String>), String> {
    let mut specs = Vec::new();
    let mut inputs = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let v: Value = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", n + 1))?;
        let field = |k: &str| v.get(k).and_then(Value::as_str);
        if let Some(i) = field("input") {
            inputs.push(i.to_string());
            continue;
        }
        let effect = match field("effect") {
            Some("deny") => Effect::Deny,
            Some("ask") => Effect::Ask,
            Some("allow") => Effect::Allow,
            other => return Err(format!("line {}: bad effect {other:?}", n + 1)),
        };
        let dialect = field("dialect")
            .unwrap_or("")
            .parse()
            .map_err(|e| format!("line {}: {e}", n + 1))?;
        specs.push(Spec {
            text: field("rule")
                .ok_or_else(|| format!("line {}: no rule", n + 1))?
                .to_string(),
            effect,
            dialect,
            source: field("source").unwrap_or("a.json").to_string(),
        });
    }
    Ok((specs, inputs))
}
