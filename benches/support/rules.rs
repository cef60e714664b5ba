//! The synthetic rule sets of the matcher benches, shared by
//! `benches/matchers.rs` and `examples/count_matchers.rs` (each includes
//! this file by `#[path]`), so that both measure the same rules and inputs.
//!
//! The sets are shaped like real rules (the shape mix of `rules.txt`,
//! words from tldr commands, real repository paths) and are the same on
//! every run: a seeded xorshift generator picks them.
#![allow(dead_code)]

use std::sync::Arc;
use toolgate::rule::claude::parse_rule;
use toolgate::{Dialect, Effect, List, Provenance, Rule};

/// The project directory the path queries are made in.
pub const PROJECT: &str = "/home/dev/project";
/// The command queried over and over (warm).
pub const WARM_COMMAND: &str = "git commit -m 'fix the build' --no-verify";
/// The path queried over and over (warm), relative to [`PROJECT`].
pub const WARM_PATH: &str = "src/components/button/index.test.tsx";

/// A small deterministic generator (xorshift), so every run builds the same
/// sets.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

/// A Claude Code rule of `effect` at position `i` of its list, or `None`
/// when the text does not parse.
pub fn parse(text: &str, effect: Effect, i: usize) -> Option<Rule> {
    let list = match effect {
        Effect::Deny => List::Deny,
        Effect::Ask => List::Ask,
        Effect::Allow => List::Allow,
    };
    let prov = Provenance {
        source: Arc::from("settings.json"),
        list,
        index: i,
    };
    parse_rule(text, effect, Dialect::ClaudeCode, prov).ok()
}

/// The rules of the policy with the most rules among the lines of
/// `claude-policies.jsonl`.
pub fn largest_policy(policies: &[String]) -> Vec<Rule> {
    let mut best: Option<serde_json::Value> = None;
    let mut best_n = 0;
    for line in policies {
        let v: serde_json::Value = serde_json::from_str(line).expect("policy line");
        let n: usize = ["allow", "ask", "deny"]
            .iter()
            .map(|k| v[k].as_array().map_or(0, Vec::len))
            .sum();
        if n > best_n {
            best_n = n;
            best = Some(v);
        }
    }
    let v = best.expect("a policy");
    let mut rules = Vec::new();
    for (key, effect) in [
        ("deny", Effect::Deny),
        ("ask", Effect::Ask),
        ("allow", Effect::Allow),
    ] {
        for (i, r) in v[key].as_array().into_iter().flatten().enumerate() {
            if let Some(r) = r.as_str().and_then(|t| parse(t, effect, i)) {
                rules.push(r);
            }
        }
    }
    rules
}

/// `n` command rules in the shape mix of the real Bash rules (exact 38%,
/// `P:*` 34%, `P *` 14%, `P*` 2%, one inner `*` 5%, several inner `*`s
/// 4.5%, `*x*` 1%, `* x` 0.5%, `w *` 1%; no `*a*b*`, which real policies
/// do not hold — the adversarial compile bench has them), words from tldr
/// commands.
pub fn command_rules(n: usize, tldr: &[String], seed: u64) -> Vec<Rule> {
    let mut rng = Rng(seed);
    let flags: Vec<&str> = tldr
        .iter()
        .flat_map(|c| c.split(' '))
        .filter(|w| w.starts_with("--") && w.len() > 3 && !w.contains('*'))
        .collect();
    let mut rules = Vec::new();
    let mut seen = std::collections::HashSet::new();
    while rules.len() < n {
        let cmd = rng.pick(tldr);
        if cmd.contains('*') || cmd.contains('(') || cmd.contains(')') {
            continue;
        }
        let w: Vec<&str> = cmd.split(' ').filter(|w| !w.is_empty()).collect();
        if w.len() < 2 {
            continue;
        }
        let p2 = format!("{} {}", w[0], w[1]);
        let r = rng.below(1000);
        let spec = if r < 380 {
            cmd.clone()
        } else if r < 720 {
            format!("{p2}:*")
        } else if r < 860 {
            format!("{p2} *")
        } else if r < 880 {
            format!("{p2}*")
        } else if r < 930 {
            format!("{} * {}", w[0], w[w.len() - 1])
        } else if r < 975 {
            format!("{p2} *{}* {}", rng.pick(&flags), w[w.len() - 1])
        } else if r < 985 {
            format!("*{}*", rng.pick(&flags))
        } else if r < 990 {
            format!("* {}", rng.pick(&flags))
        } else {
            format!("{} *", w[0])
        };
        let effect = if r % 10 == 0 {
            Effect::Deny
        } else {
            Effect::Allow
        };
        if !seen.insert(spec.clone()) {
            continue;
        }
        if let Some(rule) = parse(&format!("Bash({spec})"), effect, rules.len()) {
            rules.push(rule);
        }
    }
    rules
}

/// `n` path rules shaped like real ones: `dir/**` 35%, `**/*.ext` 15%,
/// `dir/*.ext` 15%, exact paths 10%, any-depth names 10%,
/// `dir/**/*.ext` 15%; one in five a deny rule (case-insensitive, widened).
pub fn path_rules(n: usize, paths: &[String], seed: u64) -> Vec<Rule> {
    let mut rng = Rng(seed);
    let mut rules = Vec::new();
    let mut seen = std::collections::HashSet::new();
    while rules.len() < n {
        let p = rng.pick(paths);
        let segs: Vec<&str> = p.split('/').collect();
        let name = segs[segs.len() - 1];
        let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("txt");
        let dir = segs[..segs.len() - 1].join("/");
        let depth = rng.below(3) + 1;
        let dirk = segs[..segs.len().saturating_sub(1).min(depth)].join("/");
        let r = rng.below(100);
        let spec = if r < 35 && !dirk.is_empty() {
            format!("{dirk}/**")
        } else if r < 50 {
            format!("**/*.{ext}{}", rng.below(50))
        } else if r < 65 && !dir.is_empty() {
            format!("{dir}/*.{ext}")
        } else if r < 75 {
            p.clone()
        } else if r < 85 {
            format!("{name}{}", rng.below(5))
        } else if !dirk.is_empty() {
            format!("{dirk}/**/*.{ext}")
        } else {
            continue;
        };
        if spec.contains(['(', ')', '[', '\\']) || !seen.insert(spec.clone()) {
            continue;
        }
        let effect = if r % 5 == 0 {
            Effect::Deny
        } else {
            Effect::Allow
        };
        let tool = if r % 2 == 0 { "Read" } else { "Edit" };
        if let Some(rule) = parse(&format!("{tool}(./{spec})"), effect, rules.len()) {
            rules.push(rule);
        }
    }
    rules
}

/// The benches' rule sets and never-seen inputs.
pub struct Data {
    /// Command rule sets by name: the real policy, 1,000 and 10,000 rules.
    pub sets: Vec<(String, Vec<Rule>)>,
    /// Path rule sets by name, likewise.
    pub path_sets: Vec<(String, Vec<Rule>)>,
    /// 5,000 commands no rule was made from, shuffled.
    pub novel_commands: Vec<String>,
    /// 5,000 relative paths no rule was made from, shuffled.
    pub novel_paths: Vec<String>,
}

/// The sets and inputs from the lines of `tldr-commands.txt`,
/// `paths.txt` and `claude-policies.jsonl`: rules from the even lines,
/// novel inputs from the odd ones.
pub fn data(tldr: &[String], paths: &[String], policies: &[String]) -> Data {
    let rule_cmds: Vec<String> = tldr.iter().step_by(2).cloned().collect();
    let mut novel_commands: Vec<String> = tldr.iter().skip(1).step_by(2).cloned().collect();
    let rule_paths: Vec<String> = paths.iter().step_by(2).cloned().collect();
    let mut novel_paths: Vec<String> = paths.iter().skip(1).step_by(2).cloned().collect();
    let mut rng = Rng(0x5eed);
    rng.shuffle(&mut novel_commands);
    rng.shuffle(&mut novel_paths);
    novel_commands.truncate(5000);
    novel_paths.truncate(5000);
    let real = largest_policy(policies);
    Data {
        sets: vec![
            ("real591".to_string(), real.clone()),
            ("1000".to_string(), command_rules(1000, &rule_cmds, 11)),
            ("10000".to_string(), command_rules(10000, &rule_cmds, 12)),
        ],
        path_sets: vec![
            ("real591".to_string(), real),
            ("1000".to_string(), path_rules(1000, &rule_paths, 21)),
            ("10000".to_string(), path_rules(10000, &rule_paths, 22)),
        ],
        novel_commands,
        novel_paths,
    }
}

/// The 10,000 rules the compile and load figures use: the first 7,000 of
/// the 10,000 command rules and the first 3,000 of the 10,000 path rules.
pub fn mixed_10000(d: &Data) -> Vec<Rule> {
    let mut all: Vec<Rule> = d.sets[2].1.clone();
    all.truncate(7000);
    all.extend(d.path_sets[2].1.iter().take(3000).cloned());
    all
}
