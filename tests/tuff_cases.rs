//! The tuff case file (tests/data/tuff/commands.toml) through
//! `policy_eval::evaluate`, the `Evaluator`, and `policy_eval::command_matches`.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use toolgate::eval::How;
use toolgate::policy_eval::{self, EvalContext, PolicyAction, PolicyConfig};
use toolgate::rule::tuff::TuffPolicy;
use toolgate::{Effect, Evaluator, ToolCall};

const ROOT: &str = "/repo";

fn policy_text(case: &toml::Table) -> String {
    let mut rule = toml::Table::new();
    rule.insert("effect".into(), "deny".into());
    for key in ["command", "read", "edit"] {
        if let Some(v) = case.get(key) {
            rule.insert(key.into(), v.clone());
        }
    }
    let mut policy = toml::Table::new();
    policy.insert("rules".into(), toml::Value::Array(vec![rule.into()]));
    let mut top = toml::Table::new();
    top.insert("policy".into(), policy.into());
    toml::to_string(&top).expect("policy serialises")
}

fn action(case: &toml::Table) -> (PolicyAction, ToolCall) {
    let s = |k: &str| case.get(k).and_then(toml::Value::as_str).map(String::from);
    let (action, call) = if let Some(c) = s("shell") {
        (
            PolicyAction::Shell(c.clone()),
            json!({"tool": "Bash", "input": {"command": c}}),
        )
    } else if let Some(p) = s("read_path") {
        (
            PolicyAction::Read(p.clone()),
            json!({"tool": "Read", "input": {"file_path": p}}),
        )
    } else if let Some(p) = s("edit_path") {
        (
            PolicyAction::Edit(p.clone()),
            json!({"tool": "Edit", "input": {"file_path": p}}),
        )
    } else {
        panic!("case without an action: {case:?}");
    };
    (action, ToolCall::from_json(&call).expect("call"))
}

/// Literal argvs of every invocation the shell reader finds.
fn argvs(command: &str) -> Vec<Vec<String>> {
    let reading = toolgate::shell::read(command);
    let reduction = toolgate::shell::reduce::invocations(&reading);
    reduction
        .invocations
        .iter()
        .map(|i| i.words.iter().map(|w| w.text().to_string()).collect())
        .collect()
}

#[test]
fn tuff_cases() {
    let text = std::fs::read_to_string("tests/data/tuff/commands.toml").expect("case file");
    let file: toml::Table = toml::from_str(&text).expect("case file parses");
    let cases = file["case"].as_array().expect("[[case]]");
    assert!(cases.len() >= 40, "case file truncated");
    let ctx = EvalContext {
        root: Path::new(ROOT),
        cwd: Path::new(ROOT),
    };
    let mut failures = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        let case = case.as_table().expect("case table");
        let expect = case["expect"].as_str().expect("expect");
        let (act, call) = action(case);
        let label = format!("case {} ({act:?}, expect {expect})", n + 1);
        let tuff = TuffPolicy::parse(&policy_text(case), "policy.toml").expect("policy");

        // policy_eval::evaluate
        let config = PolicyConfig::from(tuff.clone());
        let got = match policy_eval::evaluate("p", &config, std::slice::from_ref(&act), ctx) {
            Ok(None) => "none",
            Ok(Some(d)) if d.effect == Effect::Deny => "deny",
            Ok(Some(_)) => "ask",
            Err(e) => {
                failures.push(format!("{label}: policy_eval error {e}"));
                continue;
            }
        };
        if got != expect {
            failures.push(format!("{label}: policy_eval::evaluate gave {got}"));
        }

        // The evaluator.
        let engine = Evaluator::from_rules(tuff.to_rules(&Arc::from("policy.toml"))).unwrap();
        let ectx = toolgate::EvalContext::new(ROOT).unwrap();
        let d = engine.evaluate(&call, &ectx).expect("evaluates");
        let got = match d.rule {
            None => "none",
            Some(r) if r.rule.effect == Effect::Deny && r.how == How::Matches => "deny",
            Some(_) => "ask",
        };
        if got != expect {
            failures.push(format!("{label}: Evaluator gave {got} ({:?})", d.verdict));
        }

        // command_matches on each invocation.
        if let (Some(rule), PolicyAction::Shell(cmd)) = (case.get("command"), &act) {
            if expect == "ask" {
                continue;
            }
            let rule: Vec<String> = rule
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_str().unwrap().to_string())
                .collect();
            let any = argvs(cmd)
                .iter()
                .any(|argv| policy_eval::command_matches(&rule, argv));
            if any != (expect == "deny") {
                failures.push(format!("{label}: command_matches gave {any}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
