//! `Evaluator::decide` (the brief decision the hook and `toolgate eval`
//! print) against `Evaluator::evaluate` (the full one): the same verdict,
//! the same deciding rule (position and how it matched) and the same
//! reason, byte for byte, over every case of the evaluation case files
//! (`tests/data/eval/`) and over real policies × real commands and paths;
//! and the brief decision carries no action reports. All mismatches are
//! listed at once.

mod common;

use serde_json::{Value as Json, json};
use std::path::PathBuf;
use toml::Value;
use toolgate::ToolCall;
use toolgate::eval::{EvalContext, Evaluator};
use toolgate::policy::{LoadedPolicy, PermissionMode, SourceKind, SourceRoot};

/// Compares the two decisions of one call; a mismatch is pushed to
/// `failures` with `label`.
fn compare(
    engine: &Evaluator,
    call: &ToolCall,
    ctx: &EvalContext,
    label: &str,
    failures: &mut Vec<String>,
) {
    match (engine.evaluate(call, ctx), engine.decide(call, ctx)) {
        (Ok(full), Ok(brief)) => {
            let key = |d: &toolgate::eval::Decision<'_>| {
                (
                    d.verdict,
                    d.rule.map(|r| (r.index, r.how)),
                    d.reason(),
                    d.incomplete.clone(),
                )
            };
            if key(&full) != key(&brief) {
                failures.push(format!(
                    "{label}:\n  full  {:?}\n  brief {:?}",
                    key(&full),
                    key(&brief)
                ));
            }
            if !brief.actions.is_empty() {
                failures.push(format!("{label}: the brief decision lists actions"));
            }
        }
        (Err(a), Err(b)) if a.to_string() == b.to_string() => {}
        (a, b) => failures.push(format!(
            "{label}: full {:?}, brief {:?}",
            a.map(|d| d.verdict),
            b.map(|d| d.verdict)
        )),
    }
}

#[test]
fn brief_and_full_agree_on_the_case_files() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/eval");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the case directory reads")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    let mut compared = 0;
    for path in &files {
        let file = path.file_name().unwrap_or_default().to_string_lossy();
        let text = std::fs::read_to_string(path).expect("a case file reads");
        let doc: Value = match toml::from_str(&text) {
            Ok(d) => d,
            Err(e) => {
                failures.push(format!("{file}: not TOML: {e}"));
                continue;
            }
        };
        let engine = match common::eval_case_policy(&doc, &file).and_then(|p| {
            Evaluator::new(&p).map_err(|e| format!("{file}: policy does not compile: {e}"))
        }) {
            Ok(e) => e,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        let cases = doc.get("case").and_then(Value::as_array);
        for (i, case) in cases.into_iter().flatten().enumerate() {
            let label = format!("{file} case {i}");
            let setup =
                common::eval_case_context(doc.get("context"), case).and_then(|(ctx, mode)| {
                    let ctx = engine
                        .with_policy_dirs(ctx.with_mode(engine.effective_mode(mode)))
                        .map_err(|e| e.to_string())?;
                    Ok((ctx, common::eval_case_call(case)?))
                });
            match setup {
                Ok((ctx, call)) => {
                    compare(&engine, &call, &ctx, &label, &mut failures);
                    compared += 1;
                }
                Err(e) => failures.push(format!("{label}: {e}")),
            }
        }
    }
    assert!(compared > 300, "only {compared} cases compared");
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn brief_and_full_agree_on_real_policies_and_commands() {
    let (Some(policies), Some(commands), Some(paths)) = (
        common::corpus_lines("claude-policies.jsonl"),
        common::corpus_lines("tldr-commands.txt"),
        common::corpus_lines("paths.txt"),
    ) else {
        return;
    };
    let mut calls: Vec<ToolCall> = commands
        .iter()
        .step_by(13)
        .map(|c| json!({"tool": "Bash", "input": {"command": c}}))
        .chain(paths.iter().step_by(17).flat_map(|p| {
            [
                json!({"tool": "Read", "input": {"file_path": p}}),
                json!({"tool": "Edit", "input": {"file_path": p}}),
            ]
        }))
        .filter_map(|v| ToolCall::from_json(&v).ok())
        .collect();
    calls.push(
        ToolCall::from_json(&json!({"tool": "WebFetch", "input": {"url": "https://x.example"}}))
            .expect("a call"),
    );
    let mut failures = Vec::new();
    let mut compared = 0;
    // Every tenth policy of the corpus, without a mode and in `default`.
    for line in policies.iter().step_by(10) {
        let Ok(v) = serde_json::from_str::<Json>(line) else {
            continue;
        };
        let text =
            json!({"permissions": {"allow": v["allow"], "ask": v["ask"], "deny": v["deny"]}})
                .to_string();
        let mut policy = LoadedPolicy::new();
        if policy
            .add_settings_text(
                &text,
                "/repo/.claude/settings.json",
                None,
                SourceKind::Settings,
                SourceRoot::Dir("/repo".into()),
            )
            .is_err()
        {
            continue;
        }
        let Ok(engine) = Evaluator::new(&policy) else {
            continue;
        };
        let base = EvalContext::new("/repo")
            .unwrap()
            .with_home("/home/me")
            .unwrap();
        for (m, ctx) in [
            ("no mode", base.clone()),
            ("default", base.with_mode(Some(PermissionMode::Default))),
        ] {
            for call in &calls {
                let label = format!("policy {compared}, {m}, {call:?}");
                compare(&engine, call, &ctx, &label, &mut failures);
            }
        }
        compared += 1;
    }
    assert!(compared >= 10, "only {compared} policies compared");
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
