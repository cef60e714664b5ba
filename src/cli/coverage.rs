//! `toolgate coverage --policy policy.toml [--harness claude|cursor|codex]
//! [--json]`: for each rule of a tuff policy, whether the harness enforces it
//! with a native setting, only through the toolgate hook, or both.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{Value, json};

use crate::Effect;
use crate::policy_eval::PolicyHookUse;
use crate::rule::tuff::{Subject, TuffPolicy, TuffRule};

/// Harnesses whose coverage can be reported.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Harness {
    /// Claude Code: native `permissions` rules, plus the `PreToolUse` hook.
    Claude,
    /// Cursor: `beforeShellExecution`, `beforeReadFile`, `beforeMCPExecution`.
    Cursor,
    /// Codex: the `PreToolUse` hook.
    Codex,
}

impl Harness {
    fn as_str(self) -> &'static str {
        match self {
            Harness::Claude => "claude",
            Harness::Cursor => "cursor",
            Harness::Codex => "codex",
        }
    }
}

/// Arguments of `coverage`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The tuff policy (policy.toml).
    #[arg(long, value_name = "FILE")]
    pub policy: PathBuf,
    /// The harness to report on.
    #[arg(long, value_enum, default_value = "claude")]
    pub harness: Harness,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// How `harness` enforces `rule`: the hook's use, the native settings it
/// has, and what a person should know.
pub fn rule_coverage(harness: Harness, rule: &TuffRule) -> (PolicyHookUse, Vec<String>, String) {
    let ask_note = |note: &str| {
        if rule.effect == Effect::Ask {
            format!("{note}; this harness cannot ask, so the hook denies")
        } else {
            note.to_string()
        }
    };
    match (harness, &rule.subject) {
        (Harness::Claude, Subject::Mcp { .. }) => (
            PolicyHookUse::Never,
            super::export::claude_rules(rule),
            "the native rule matches the tool name exactly".into(),
        ),
        (Harness::Claude, Subject::Command(_)) => (
            PolicyHookUse::Optional,
            super::export::claude_rules(rule),
            "the hook also catches the forms the native rule misses: options before the \
             subcommand, a path to the program, sh -c '...', wrappers, substitutions"
                .into(),
        ),
        (Harness::Claude, Subject::Read(_) | Subject::Edit(_)) => (
            PolicyHookUse::Optional,
            super::export::claude_rules(rule),
            "the hook also catches files that shell commands name".into(),
        ),
        (Harness::Cursor, Subject::Command(_)) => (
            PolicyHookUse::Required,
            Vec::new(),
            "beforeShellExecution".into(),
        ),
        (Harness::Cursor, Subject::Read(_)) => (
            PolicyHookUse::Required,
            Vec::new(),
            if rule.effect == Effect::Ask {
                "beforeShellExecution; beforeReadFile cannot ask, so the hook denies there".into()
            } else {
                "beforeReadFile and beforeShellExecution".into()
            },
        ),
        (Harness::Cursor, Subject::Edit(_)) => (
            PolicyHookUse::Required,
            Vec::new(),
            "beforeShellExecution only: Cursor's own file edits reach no hook".into(),
        ),
        (Harness::Cursor, Subject::Mcp { .. }) => (
            PolicyHookUse::Required,
            Vec::new(),
            "beforeMCPExecution".into(),
        ),
        (Harness::Codex, Subject::Command(_) | Subject::Read(_) | Subject::Edit(_)) => (
            PolicyHookUse::Required,
            Vec::new(),
            ask_note("PreToolUse on shell commands"),
        ),
        (Harness::Codex, Subject::Mcp { .. }) => (
            PolicyHookUse::Required,
            Vec::new(),
            ask_note("PreToolUse on MCP tools"),
        ),
    }
}

fn policy_name(policy: &TuffPolicy, path: &std::path::Path) -> String {
    policy
        .id
        .clone()
        .unwrap_or_else(|| path.display().to_string())
}

/// The report as text.
pub fn render_text(policy: &TuffPolicy, name: &str, harness: Harness) -> String {
    let mut out = format!("policy {name}, harness {}\n", harness.as_str());
    for (i, rule) in policy.rules.iter().enumerate() {
        let (hook, native, note) = rule_coverage(harness, rule);
        let _ = writeln!(out, "rule {}: {}", i + 1, rule.describe());
        let _ = writeln!(out, "  hook: {hook}");
        if !native.is_empty() {
            let _ = writeln!(out, "  native: {}", native.join(", "));
        }
        let _ = writeln!(out, "  note: {note}");
    }
    out
}

/// The report as JSON.
pub fn render_json(policy: &TuffPolicy, name: &str, harness: Harness) -> Value {
    let rules: Vec<Value> = policy
        .rules
        .iter()
        .enumerate()
        .map(|(i, rule)| {
            let (hook, native, note) = rule_coverage(harness, rule);
            json!({
                "rule": i + 1,
                "effect": rule.effect.to_string(),
                "description": rule.describe(),
                "hook": hook.as_str(),
                "native": native,
                "note": note,
            })
        })
        .collect();
    json!({ "policy": name, "harness": harness.as_str(), "rules": rules })
}

/// Runs `coverage`.
pub fn run(args: Args) -> ExitCode {
    let policy = match super::export::load_tuff(&args.policy) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("toolgate: {e}");
            return ExitCode::from(2);
        }
    };
    let name = policy_name(&policy, &args.policy);
    if args.json {
        match serde_json::to_string_pretty(&render_json(&policy, &name, args.harness)) {
            Ok(s) => {
                if super::emit(&(s + "\n")).is_err() {
                    return ExitCode::from(2);
                }
            }
            Err(e) => {
                eprintln!("toolgate: cannot write json: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        if super::emit(&render_text(&policy, &name, args.harness)).is_err() {
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}
