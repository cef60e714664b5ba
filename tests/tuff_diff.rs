//! The engine against the reference evaluator on tuff policies of many
//! command rules (the distinct first two or three words of tldr commands,
//! as the `tuff` bench builds them) and real commands: the same verdict
//! and the same deciding rule (its position and how it matched), for
//! every command, dynamic words and dynamic program words included (where
//! every rule could match and the engine reports only the first beyond
//! the could-match budget). All mismatches are listed at once.

mod common;

use serde_json::json;
use toolgate::ToolCall;
use toolgate::eval::{EvalContext, Evaluator};
use toolgate::policy::{LoadedPolicy, SourceKind, SourceRoot};
use toolgate::reference_eval::ReferenceEvaluator;

/// A policy of `rules` (every third an ask, the rest deny), with a few
/// rules of options and letters besides.
fn policy_of(rules: &[Vec<String>]) -> LoadedPolicy {
    let mut text = String::from("id = \"diff\"\ntype = \"policy\"\n");
    let extra: &[&[&str]] = &[
        &["rm", "-rf"],
        &["git", "push", "--force"],
        &["git", "clean", "-fd"],
        &["chmod", "-R"],
        &["npm", "-g"],
        &["sudo"],
    ];
    let all = extra
        .iter()
        .map(|r| r.iter().map(|w| w.to_string()).collect::<Vec<_>>())
        .chain(rules.iter().cloned());
    for (i, r) in all.enumerate() {
        let effect = if i % 3 == 0 { "ask" } else { "deny" };
        let words: Vec<String> = r.iter().map(|w| format!("{w:?}")).collect();
        text.push_str(&format!(
            "\n[[policy.rules]]\neffect = \"{effect}\"\ncommand = [{}]\n",
            words.join(", ")
        ));
    }
    let mut p = LoadedPolicy::new();
    p.add_tuff_text(
        &text,
        "/repo/.claude/policies/diff/policy.toml",
        None,
        SourceKind::Tuff,
        SourceRoot::Project,
    )
    .expect("the policy loads");
    p
}

#[test]
fn engine_and_reference_agree_on_tldr_commands() {
    let Some(commands) = common::corpus_lines("tldr-commands.txt") else {
        return;
    };
    let ctx = EvalContext::new("/repo")
        .unwrap()
        .with_project_dir("/repo")
        .unwrap();
    let mut failures = Vec::new();
    let mut dynamic_program = 0;
    for (n, step) in [(200, 3), (2000, 5)] {
        let policy = policy_of(&common::tuff_token_rules(&commands, n));
        let engine = Evaluator::new(&policy).expect("the policy compiles");
        let reference = ReferenceEvaluator::new(&policy);
        let mut decided = 0;
        for c in commands.iter().step_by(step) {
            let call = ToolCall::from_json(&json!({"tool": "Bash", "input": {"command": c}}))
                .expect("a Bash call");
            let (Ok(a), Ok(b)) = (
                engine.evaluate(&call, &ctx),
                reference.evaluate(&call, &ctx),
            ) else {
                failures.push(format!("{n} rules: {c:?}: an error on one side"));
                continue;
            };
            let ka = (a.verdict, a.rule.map(|r| (r.index, r.how)));
            let kb = (b.verdict, b.rule.map(|r| (r.index, r.how)));
            if ka != kb {
                failures.push(format!(
                    "{n} rules: {c:?}: engine {ka:?} {:?}, reference {kb:?} {:?}",
                    a.rule_text(),
                    b.rule_text()
                ));
            }
            decided += usize::from(a.rule.is_some());
            // Calls where every rule could match (a dynamic program word).
            let could = |d: &toolgate::eval::Decision<'_>| {
                d.actions.iter().map(|r| r.matches.len()).max().unwrap_or(0)
            };
            if could(&b) > toolgate::eval::COULD_BUDGET {
                dynamic_program += 1;
                if could(&a) > toolgate::eval::COULD_BUDGET + 8 {
                    failures.push(format!(
                        "{n} rules: {c:?}: {} rules reported, over the budget",
                        could(&a)
                    ));
                }
            }
        }
        assert!(decided > n / 10, "{n} rules: only {decided} calls decided");
    }
    assert!(
        dynamic_program > 0,
        "no command where every rule could match"
    );
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
