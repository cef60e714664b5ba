//! `toolgate export claude --policy policy.toml [--into .claude/settings.json]`:
//! a tuff policy as Claude Code's native `permissions.deny` / `permissions.ask`
//! rules, printed or merged idempotently into a settings file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Map, Value};

use crate::rule::tuff::{Subject, TuffPolicy, TuffRule};
use crate::{Effect, Error};

/// Harnesses a policy can be exported to.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Claude Code's `permissions` block.
    Claude,
}

/// Arguments of `export`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The harness whose native settings to write.
    #[arg(value_enum)]
    pub target: Target,
    /// The tuff policy (policy.toml).
    #[arg(long, value_name = "FILE")]
    pub policy: PathBuf,
    /// Merge into this settings file (created if missing; other keys and
    /// rules kept, rules already present not added twice) instead of
    /// printing the permissions block.
    #[arg(long, value_name = "FILE")]
    pub into: Option<PathBuf>,
}

/// Reads and validates a tuff policy file.
pub fn load_tuff(path: &Path) -> Result<TuffPolicy, Error> {
    crate::rule::tuff::load_installed_policy(path)
}

/// `(` `)` `\` escaped for a rule specifier (SPEC §2).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '(' | ')' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A tuff path pattern as a Claude `/x` path (relative to the project):
/// `.env` → `/**/.env`, `secrets/**` → `/secrets/**`, `infra/prod/` →
/// `/infra/prod/**`.
fn claude_path(pattern: &str) -> String {
    let mut p = pattern;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    let (body, dir) = match p.strip_suffix('/') {
        Some(b) => (b.trim_end_matches('/'), true),
        None => (p, false),
    };
    let mut out = if body.contains('/') {
        format!("/{body}")
    } else {
        format!("/**/{body}")
    };
    if dir {
        out.push_str("/**");
    }
    escape(&out)
}

/// The native Claude Code rules a tuff rule compiles to.
pub fn claude_rules(rule: &TuffRule) -> Vec<String> {
    match &rule.subject {
        Subject::Command(words) => {
            let words: Vec<String> = words.iter().map(|w| escape(w)).collect();
            vec![format!("Bash({} *)", words.join(" "))]
        }
        Subject::Read(p) => p
            .iter()
            .map(|p| format!("Read({})", claude_path(p)))
            .collect(),
        Subject::Edit(p) => p
            .iter()
            .map(|p| format!("Edit({})", claude_path(p)))
            .collect(),
        Subject::Mcp { server, tool } => vec![format!("mcp__{server}__{tool}")],
    }
}

/// The `permissions` block of a policy: `{"deny": [...], "ask": [...]}`
/// (a list only when it has rules), each in rule order without repeats.
pub fn permissions(policy: &TuffPolicy) -> Map<String, Value> {
    let mut out = Map::new();
    for (effect, key) in [(Effect::Deny, "deny"), (Effect::Ask, "ask")] {
        let mut list: Vec<String> = Vec::new();
        for r in policy.rules.iter().filter(|r| r.effect == effect) {
            for c in claude_rules(r) {
                if !list.contains(&c) {
                    list.push(c);
                }
            }
        }
        if !list.is_empty() {
            out.insert(key.into(), list.into_iter().map(Value::String).collect());
        }
    }
    out
}

/// Merges `perms` into the settings `settings`: each rule is appended to
/// its list unless already there; every other key is kept. The count of
/// rules added, or an error naming what is not of the expected shape.
pub fn merge(settings: &mut Value, perms: &Map<String, Value>) -> Result<usize, String> {
    let Value::Object(top) = settings else {
        return Err("the settings file is not a json object".into());
    };
    let block = top
        .entry("permissions")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(block) = block else {
        return Err("permissions is not an object".into());
    };
    let mut added = 0;
    for (key, rules) in perms {
        let list = block
            .entry(key.as_str())
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(list) = list else {
            return Err(format!("permissions.{key} is not an array"));
        };
        for r in rules.as_array().into_iter().flatten() {
            if !list.contains(r) {
                list.push(r.clone());
                added += 1;
            }
        }
    }
    Ok(added)
}

fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("toolgate: {msg}");
    ExitCode::from(2)
}

/// Runs `export`.
pub fn run(args: Args) -> ExitCode {
    let Target::Claude = args.target;
    let policy = match load_tuff(&args.policy) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let perms = permissions(&policy);
    let Some(into) = args.into else {
        let block = serde_json::json!({ "permissions": perms });
        return match serde_json::to_string_pretty(&block) {
            Ok(s) => match super::emit(&(s + "\n")) {
                Ok(()) => ExitCode::SUCCESS,
                Err(()) => ExitCode::from(2),
            },
            Err(e) => fail(format!("cannot write json: {e}")),
        };
    };
    let shown = into.display().to_string();
    let mut settings = match std::fs::read_to_string(&into) {
        Ok(text) => match serde_json::from_str(&crate::policy::jsonc::reduce(&text).text) {
            Ok(v) => v,
            Err(e) => return fail(format!("{shown}: not valid json: {e}")),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Value::Object(Map::new()),
        Err(e) => {
            return fail(format!(
                "{shown}: cannot read the settings: {}",
                crate::rule::tuff::io_clause(&e)
            ));
        }
    };
    let added = match merge(&mut settings, &perms) {
        Ok(n) => n,
        Err(e) => return fail(format!("{shown}: {e}")),
    };
    if added == 0 {
        return match super::emit(&format!("{shown}: up to date\n")) {
            Ok(()) => ExitCode::SUCCESS,
            Err(()) => ExitCode::from(2),
        };
    }
    if let Some(dir) = into.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Err(e) = std::fs::create_dir_all(dir) {
            return fail(format!("{shown}: cannot create its directory: {e}"));
        }
    }
    let text = match serde_json::to_string_pretty(&settings) {
        Ok(s) => s + "\n",
        Err(e) => return fail(format!("cannot write json: {e}")),
    };
    if let Err(e) = std::fs::write(&into, text) {
        return fail(format!(
            "{shown}: cannot write: {}",
            crate::rule::tuff::io_clause(&e)
        ));
    }
    let s = if added == 1 { "" } else { "s" };
    match super::emit(&format!("{shown}: added {added} rule{s}\n")) {
        Ok(()) => ExitCode::SUCCESS,
        Err(()) => ExitCode::from(2),
    }
}
