//! Rule shapes whose automata grow exponentially (a one-character wildcard
//! after a `*` and a character that tells positions apart: `*!???`) are
//! built without a runaway determinization: the ones over the blow-up
//! limit go straight to the bounded fallback. Every configuration answers
//! exactly as the reference does. (How long these builds take is measured
//! in `benches/matchers.rs`, compile group; a test asserts answers.)

mod common;

use toolgate::compile::{AnchorKey, Config, Kind, Matches, Policy};
use toolgate::reference;
use toolgate::{Effect, Pattern, Rule};

const READ_TOOLS: &[&str] = &["Read", "Glob", "Grep", "LSP", "NotebookRead"];
const EDIT_TOOLS: &[&str] = &["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// `(rule, effect, over the default blow-up limit)`. Deny rules are
/// case-insensitive in `claude-code` (and `Read` ones widened to edits).
const SPECS: &[(&str, Effect, bool)] = &[
    // A star, a character, eleven `?`: 2^11 × the states, case-folded.
    ("Read(É*!???????????)", Effect::Deny, true),
    ("Read(É*!???????????)", Effect::Allow, true),
    // The same led by the star: walked backwards, where it is linear.
    ("Read(*!???????????)", Effect::Allow, false),
    // Anchored, the wildcards between two stars.
    ("Edit(./src/*a????????*)", Effect::Allow, true),
    // Several stars with `?` between.
    ("Read(x*a?*b??*c???*d)", Effect::Deny, false),
    ("Read(./a*!??*!??*!??*!??)", Effect::Ask, true),
    // Anchored (it holds a `/`) and led by a star.
    ("Read(*!??*!??*!??*!??/y)", Effect::Ask, true),
    // At any depth and led by a star: walked backwards, where `??!` is
    // linear.
    ("Read(**/*!??*!??*!??x)", Effect::Deny, false),
    // Classes after a star, at any depth.
    ("Read(**/x*[ab]????????)", Effect::Allow, true),
    // Under the limit: into an automaton.
    ("Read(É*!?????)", Effect::Allow, false),
    // Case folds to ASCII (`K`, `ſ`) after the star.
    ("Edit(k*?ſ??????)", Effect::Deny, true),
    // Only `?` after the star: a counter, not a blow-up.
    ("Read(./d/*????????????)", Effect::Allow, false),
];

fn rules() -> Vec<Rule> {
    SPECS
        .iter()
        .enumerate()
        .map(|(i, (text, effect, _))| common::claude_rule(text, *effect, i))
        .collect()
}

/// A small deterministic generator (the inputs need not be random, only
/// varied).
struct Lcg(u64);

impl Lcg {
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        from[(self.0 >> 33) as usize % from.len()]
    }
}

/// Instances of a rule's body (stars and `?` filled, cases flipped, a
/// character dropped or added), and near misses.
fn inputs() -> Vec<String> {
    let mut g = Lcg(7);
    let mut out = Vec::new();
    for (text, _, _) in SPECS {
        let body = text
            .split_once('(')
            .and_then(|(_, b)| b.strip_suffix(')'))
            .unwrap_or("");
        let body = body.trim_start_matches("./").trim_start_matches("**/");
        for _ in 0..60 {
            let mut s = String::new();
            let mut chars = body.chars().peekable();
            while let Some(c) = chars.next() {
                match c {
                    '*' => s.push_str(g.pick(&["", "a", "!", "é!", "xx!a", "!!!", "a/b"])),
                    '?' => s.push_str(g.pick(&["a", "!", "é", "K", "ſ", "b", "/"])),
                    '[' => {
                        for d in chars.by_ref() {
                            if d == ']' {
                                break;
                            }
                        }
                        s.push_str(g.pick(&["a", "b", "A", "c"]));
                    }
                    'É' => s.push_str(g.pick(&["É", "é", "e"])),
                    'k' => s.push_str(g.pick(&["k", "K", "\u{212A}"])),
                    'ſ' => s.push_str(g.pick(&["ſ", "s", "S"])),
                    c => {
                        s.push(c);
                        s.push_str(g.pick(&["", "", "", "", "", "", "!", "?"]));
                    }
                }
            }
            let prefix = g.pick(&["", "", "src/", "d/", "x/y/"]);
            out.push(format!("{prefix}{s}"));
        }
    }
    out.sort();
    out.dedup();
    out.retain(|p| !p.is_empty() && !p.starts_with('/') && !p.ends_with('/') && !p.contains("//"));
    out
}

fn configs() -> Vec<(&'static str, Config)> {
    vec![
        ("default", Config::new()),
        // Every pattern with any blow-up in the fallback.
        ("blowup-0", Config::new().blowup_limit(0)),
        // Blow-ups allowed, against a small automaton limit: the groups
        // split, and what does not fit goes to the fallback.
        (
            "blowup-12",
            Config::new()
                .blowup_limit(12)
                .latch_size_limit(32 << 10)
                .split_budget(4),
        ),
    ]
}

/// Every configuration, and the images of two of them, answers each
/// input as the reference does, for the read and edit kinds.
#[test]
fn exponential_shapes_agree_with_reference() {
    let rules = rules();
    let inputs = inputs();
    let mut policies = Vec::new();
    for (name, cfg) in configs() {
        let p = Policy::builder()
            .configure(cfg)
            .build(rules.clone())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        if name != "blowup-12" {
            let loaded =
                Policy::from_image(rules.clone(), &p.matchers_to_bytes()).expect("image loads");
            policies.push((format!("{name} image"), loaded));
        }
        policies.push((name.to_string(), p));
    }
    let mut failures = Vec::new();
    let mut m = Matches::new();
    let mut matched = 0usize;
    for (name, policy) in &policies {
        for (kind, tools) in [(Kind::Read, READ_TOOLS), (Kind::Edit, EDIT_TOOLS)] {
            let pm = policy.path_matcher(kind).expect("path kind");
            for rel in &inputs {
                let want: Vec<usize> = rules
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| tools.iter().any(|t| r.governs(t)))
                    .filter(|(_, r)| match &r.pattern {
                        Pattern::Path(p) => reference::path_matches(p, rel),
                        _ => false,
                    })
                    .map(|(i, _)| i)
                    .collect();
                pm.find_relative(&AnchorKey::Project, rel, &mut m);
                let mut got: Vec<usize> = m
                    .ids()
                    .iter()
                    .map(|&id| policy.input_index(id).expect("id in range"))
                    .collect();
                got.sort_unstable();
                matched += got.len();
                if got != want {
                    failures.push(format!(
                        "{name} {kind:?} {rel:?}: got {got:?}, want {want:?}"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The inputs reach the rules: most of them are instances.
    assert!(matched > inputs.len(), "only {matched} matches");
}

/// The rules estimated over the default limit are in the fallback, no
/// others; with the limit at 0, every rule with any blow-up is.
#[test]
fn over_the_limit_go_to_the_fallback() {
    let rules = rules();
    let over = SPECS.iter().filter(|s| s.2).count();
    let fallback = |cfg: Config| -> usize {
        let p = Policy::builder()
            .configure(cfg)
            .build(rules.clone())
            .expect("builds");
        let read = p.path_matcher(Kind::Read).expect("read");
        read.groups()
            .map(|(_, k)| k.shape().fallback_rules)
            .sum::<usize>()
            + p.path_matcher(Kind::Edit)
                .expect("edit")
                .groups()
                .map(|(_, k)| k.shape().fallback_rules)
                .sum::<usize>()
    };
    // Each over-limit rule once per kind that it governs.
    let expected: usize = [READ_TOOLS, EDIT_TOOLS]
        .iter()
        .map(|tools| {
            rules
                .iter()
                .zip(SPECS)
                .filter(|(r, s)| s.2 && tools.iter().any(|t| r.governs(t)))
                .count()
        })
        .sum();
    assert!(over > 0);
    assert_eq!(fallback(Config::new()), expected);
    let with_any = fallback(Config::new().blowup_limit(0));
    assert!(with_any > expected, "{with_any}");
}
