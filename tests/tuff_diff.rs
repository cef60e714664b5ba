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

/// `policy_eval::evaluate` takes the strongest deny or ask rule without
/// building a decision; it must name the rule the full decision of the
/// same compiled rules names (a deny rule that only could match counting
/// as an ask), for every tldr command at 200 token rules with path rules
/// besides (so the files commands name meet rules too).
#[test]
fn policy_eval_names_the_rule_the_full_decision_names() {
    use std::path::Path;
    use std::sync::Arc;
    use toolgate::Effect;
    use toolgate::eval::How;
    use toolgate::policy_eval::{self, PolicyAction, PolicyConfig};

    let Some(commands) = common::corpus_lines("tldr-commands.txt") else {
        return;
    };
    let mut text = String::from("id = \"diff\"\ntype = \"policy\"\n");
    text.push_str(concat!(
        "\n[[policy.rules]]\neffect = \"ask\"\nread = [\"*.txt\", \"src/**\"]\n",
        "\n[[policy.rules]]\neffect = \"deny\"\nedit = [\"*.conf\", \"etc/**\"]\n",
        "\n[[policy.rules]]\neffect = \"deny\"\nread = [\".env\", \"*.pem\"]\n",
    ));
    for (i, r) in common::tuff_token_rules(&commands, 200).iter().enumerate() {
        let effect = if i % 3 == 0 { "ask" } else { "deny" };
        let words: Vec<String> = r.iter().map(|w| format!("{w:?}")).collect();
        text.push_str(&format!(
            "\n[[policy.rules]]\neffect = \"{effect}\"\ncommand = [{}]\n",
            words.join(", ")
        ));
    }
    let config = PolicyConfig::parse(&text, "policy.toml").expect("the policy loads");
    // The same rules, compiled as `policy_eval` compiles them.
    let source: Arc<str> = Arc::from("diff");
    let full = Evaluator::from_rules(config.policy().to_rules(&source)).expect("it compiles");
    let ctx = EvalContext::new("/repo")
        .unwrap()
        .with_project_dir("/repo")
        .unwrap();
    let tuff_ctx = policy_eval::EvalContext {
        root: Path::new("/repo"),
        cwd: Path::new("/repo"),
    };
    let (mut failures, mut decided, mut by_path) = (Vec::new(), 0, 0);
    for c in &commands {
        let call = ToolCall::from_json(&json!({"tool": "Bash", "input": {"command": c}}))
            .expect("a Bash call");
        let want = match full.evaluate(&call, &ctx) {
            Ok(d) => d.rule.and_then(|r| match (r.rule.effect, r.how) {
                (Effect::Allow, _) => None,
                (Effect::Deny, How::Matches) => Some((Effect::Deny, r.rule.provenance.index + 1)),
                _ => Some((Effect::Ask, r.rule.provenance.index + 1)),
            }),
            Err(e) => {
                failures.push(format!("{c:?}: the full decision failed: {e}"));
                continue;
            }
        };
        let action = [PolicyAction::Shell(c.clone())];
        let got = match policy_eval::evaluate("diff", &config, &action, tuff_ctx) {
            Ok(d) => d.map(|d| (d.effect, d.rule)),
            Err(e) => {
                failures.push(format!("{c:?}: policy_eval failed: {e}"));
                continue;
            }
        };
        if got != want {
            failures.push(format!("{c:?}: policy_eval {got:?}, the decision {want:?}"));
        }
        decided += usize::from(want.is_some());
        by_path += usize::from(want.is_some_and(|(_, n)| n <= 3));
    }
    assert!(decided > 300, "only {decided} commands decided");
    assert!(
        by_path > 10,
        "only {by_path} commands decided by path rules"
    );
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
