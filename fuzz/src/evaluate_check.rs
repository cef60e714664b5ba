//! The `evaluate` fuzz property, shared with the main package's regression
//! tests (which include this file): for a policy (a Claude settings file
//! and a tuff policy) and a list of calls, the engine
//! ([`toolgate::eval::Evaluator`]) and the reference evaluator
//! ([`toolgate::reference_eval::ReferenceEvaluator`]) give every call the
//! same verdict and the same deciding rule (its position in policy order
//! and how it matched), or both refuse it. Above all, the engine never
//! allows a call the reference denies or asks about.
//!
//! A case is written as JSON lines ([`case_text`]), which is also the
//! reproducer a disagreement prints.

use serde_json::{Value, json};
use toolgate::ToolCall;
use toolgate::compile::Config;
use toolgate::eval::{Decision, EvalContext, Evaluator, Verdict};
use toolgate::policy::{LoadedPolicy, PermissionMode, SourceKind, SourceRoot};
use toolgate::reference_eval::ReferenceEvaluator;

/// The project directory of every case; the settings file lives in its
/// `.claude/`.
pub const PROJECT: &str = "/p";
/// The home directory of every case.
pub const HOME: &str = "/home/u";

/// One case: a policy, the context, and the calls asked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EvalCase {
    /// The settings file's text (`{"permissions": {...}}`), if any.
    pub settings: Option<String>,
    /// The tuff `policy.toml` text, if any.
    pub tuff: Option<String>,
    /// The working directory.
    pub cwd: String,
    /// The permission mode, if any.
    pub mode: Option<String>,
    /// The engine's matcher configuration: `one-shot`, `default` or
    /// `small` (dense automata under a tight size limit).
    pub config: String,
    /// The calls, as `{"tool", "input"}`.
    pub calls: Vec<Value>,
}

/// The engine configuration a case names.
pub fn config(name: &str) -> Result<Config, String> {
    Ok(match name {
        "one-shot" => Config::one_shot(),
        "default" => Config::new(),
        "small" => Config::new()
            .dfa_size_limit(256 << 10)
            .latch_size_limit(64 << 10)
            .split_budget(2),
        other => return Err(format!("unknown configuration {other:?}")),
    })
}

/// The policy of a case; `Err` when a file does not load (the case then
/// tests nothing).
pub fn policy(case: &EvalCase) -> Result<LoadedPolicy, String> {
    let mut p = LoadedPolicy::new();
    if let Some(s) = &case.settings {
        p.add_settings_text(
            s,
            "/p/.claude/settings.json",
            None,
            SourceKind::Settings,
            SourceRoot::Dir(PROJECT.into()),
        )
        .map_err(|e| e.to_string())?;
    }
    if let Some(t) = &case.tuff {
        p.add_tuff_text(
            t,
            "/p/policy.toml",
            None,
            SourceKind::Tuff,
            SourceRoot::Project,
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(p)
}

fn key(d: &Decision) -> (Verdict, Option<(usize, String)>) {
    (d.verdict, d.rule.map(|r| (r.index, format!("{:?}", r.how))))
}

/// Runs one case; `Err` names every disagreement. Returns the number of
/// calls compared.
pub fn check_evaluate(case: &EvalCase) -> Result<usize, String> {
    let Ok(policy) = policy(case) else {
        return Ok(0);
    };
    let engine = Evaluator::with_config(&policy, config(&case.config)?)
        .map_err(|e| format!("the policy does not compile: {e}"))?;
    let reference = ReferenceEvaluator::new(&policy);
    let mode = match &case.mode {
        None => None,
        Some(m) => Some(
            m.parse::<PermissionMode>()
                .map_err(|e| format!("mode {m:?}: {e}"))?,
        ),
    };
    let ctx = EvalContext::new(&case.cwd)
        .and_then(|c| c.with_project_dir(PROJECT))
        .and_then(|c| c.with_home(HOME))
        .map_err(|e| format!("context: {e}"))?
        .with_mode(mode);
    let ctx = engine
        .with_policy_dirs(ctx)
        .map_err(|e| format!("context: {e}"))?;
    let mut failures = Vec::new();
    let mut compared = 0;
    for v in &case.calls {
        let Ok(call) = ToolCall::from_json(v) else {
            continue;
        };
        compared += 1;
        let a = engine.evaluate(&call, &ctx);
        let b = reference.evaluate(&call, &ctx);
        match (&a, &b) {
            (Ok(a), Ok(b)) => {
                if a.verdict == Verdict::Allow && b.verdict != Verdict::Allow {
                    failures.push(format!(
                        "UNSAFE ALLOW: call {v}: engine allows by {:?}, reference {} by {:?}",
                        a.rule_text(),
                        b.verdict,
                        b.rule_text()
                    ));
                } else if key(a) != key(b) {
                    failures.push(format!(
                        "call {v}:\n  engine    {} {:?} {:?} ({})\n  reference {} {:?} {:?} ({})",
                        a.verdict,
                        a.rule.map(|r| r.index),
                        a.rule_text(),
                        a.reason(),
                        b.verdict,
                        b.rule.map(|r| r.index),
                        b.rule_text(),
                        b.reason(),
                    ));
                }
            }
            (Err(_), Err(_)) => {}
            _ => failures.push(format!(
                "call {v}: engine {:?}, reference {:?}",
                a.as_ref().map(|d| d.verdict).map_err(|e| e.to_string()),
                b.as_ref().map(|d| d.verdict).map_err(|e| e.to_string()),
            )),
        }
    }
    if failures.is_empty() {
        Ok(compared)
    } else {
        Err(failures.join("\n"))
    }
}

/// A case as JSON lines: `{"settings"}` and `{"tuff"}` (the files' text,
/// when present), `{"cwd", "mode", "config"}`, then one `{"call"}` per
/// call.
pub fn case_text(case: &EvalCase) -> String {
    let mut out = String::new();
    if let Some(s) = &case.settings {
        out.push_str(&json!({ "settings": s }).to_string());
        out.push('\n');
    }
    if let Some(t) = &case.tuff {
        out.push_str(&json!({ "tuff": t }).to_string());
        out.push('\n');
    }
    let ctx = json!({"cwd": case.cwd, "mode": case.mode, "config": case.config});
    out.push_str(&ctx.to_string());
    out.push('\n');
    for c in &case.calls {
        out.push_str(&json!({ "call": c }).to_string());
        out.push('\n');
    }
    out
}

/// Reads a case written by [`case_text`].
pub fn parse_case(text: &str) -> Result<EvalCase, String> {
    let mut case = EvalCase {
        cwd: PROJECT.to_string(),
        config: "one-shot".to_string(),
        ..EvalCase::default()
    };
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let v: Value = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", n + 1))?;
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        if let Some(c) = v.get("call") {
            case.calls.push(c.clone());
        } else if let Some(t) = s("settings") {
            case.settings = Some(t);
        } else if let Some(t) = s("tuff") {
            case.tuff = Some(t);
        } else if let Some(cwd) = s("cwd") {
            case.cwd = cwd;
            case.mode = s("mode");
            if let Some(c) = s("config") {
                case.config = c;
            }
        } else {
            return Err(format!("line {}: not a case line", n + 1));
        }
    }
    Ok(case)
}
