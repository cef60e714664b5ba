//! Speed of `policy_eval::evaluate` on tuff policies of 200 and 2,000
//! command rules (the distinct first two or three words of tldr commands),
//! one tldr command per call, cycled. Before timing, every command's
//! decision is checked against a loop over the rules with
//! `policy_eval::command_matches` on each invocation the shell reader finds.
//!
//! Run: `cargo bench --bench tuff`.

#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use toolgate::Effect;
use toolgate::policy_eval::{self, EvalContext, PolicyAction, PolicyConfig};

fn corpus_lines(name: &str) -> Option<Vec<String>> {
    let dir = std::env::var_os("TOOLGATE_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora"));
    match std::fs::read_to_string(dir.join(name)) {
        Ok(t) => Some(t.lines().map(str::to_string).collect()),
        Err(_) => {
            eprintln!("skipping the tuff bench: {name} is absent");
            None
        }
    }
}

fn policy_text(rules: &[Vec<String>]) -> String {
    let mut text = String::from("id = \"bench\"\ntype = \"policy\"\n");
    for (i, r) in rules.iter().enumerate() {
        let effect = if i % 3 == 0 { "ask" } else { "deny" };
        let words: Vec<String> = r.iter().map(|w| format!("{w:?}")).collect();
        text.push_str(&format!(
            "\n[[policy.rules]]\neffect = \"{effect}\"\ncommand = [{}]\n",
            words.join(", ")
        ));
    }
    text
}

/// The naive answer: the first deny rule any literal invocation matches,
/// else the first ask rule (rule number, from 1).
fn naive(rules: &[Vec<String>], command: &str) -> Option<(Effect, usize)> {
    let reading = toolgate::shell::read(command);
    let reduction = toolgate::shell::reduce::invocations(&reading);
    let argvs: Vec<Vec<String>> = reduction
        .invocations
        .iter()
        // Wrappers' own argvs meet token rules too (every rule here denies
        // or asks): a rule naming `sudo` matches `sudo x`.
        .filter(|i| i.role != toolgate::shell::reduce::Role::NoProgram)
        .map(|i| i.words.iter().map(|w| w.text().to_string()).collect())
        .collect();
    let hit = |i: usize| {
        argvs
            .iter()
            .any(|a| policy_eval::command_matches(&rules[i], a))
    };
    let effect = |i: usize| {
        if i % 3 == 0 {
            Effect::Ask
        } else {
            Effect::Deny
        }
    };
    (0..rules.len())
        .find(|&i| effect(i) == Effect::Deny && hit(i))
        .or_else(|| (0..rules.len()).find(|&i| effect(i) == Effect::Ask && hit(i)))
        .map(|i| (effect(i), i + 1))
}

fn bench(c: &mut Criterion) {
    let Some(commands) = corpus_lines("tldr-commands.txt") else {
        return;
    };
    let ctx = EvalContext {
        root: Path::new("/repo"),
        cwd: Path::new("/repo"),
    };
    let actions: Vec<[PolicyAction; 1]> = commands
        .iter()
        .map(|c| [PolicyAction::Shell(c.clone())])
        .collect();
    for n in [200, 2000] {
        let rules = common::tuff_token_rules(&commands, n);
        assert_eq!(rules.len(), n);
        let policy = PolicyConfig::parse(&policy_text(&rules), "bench.toml").unwrap();
        let mut decided = 0;
        for (cmd, a) in commands.iter().zip(&actions) {
            let got = policy_eval::evaluate("bench", &policy, a, ctx).unwrap();
            let want = naive(&rules, cmd);
            let got_key = got.as_ref().map(|d| (d.effect, d.rule));
            // A dynamic word may make a rule ask where the literal loop
            // sees nothing; every literal match must agree.
            if want.is_some() || got_key.is_some_and(|(e, _)| e == Effect::Deny) {
                assert_eq!(got_key, want, "{n} rules: {cmd}");
            }
            decided += got.is_some() as usize;
        }
        eprintln!(
            "{n} rules: {decided} of {} commands decided",
            commands.len()
        );
        let mut i = 0;
        c.bench_function(&format!("policy_eval::evaluate, tldr, {n} rules"), |b| {
            b.iter(|| {
                i = (i + 1) % actions.len();
                black_box(policy_eval::evaluate("bench", &policy, &actions[i], ctx).unwrap())
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
