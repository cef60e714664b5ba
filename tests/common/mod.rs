//! Helpers shared by the integration tests.
#![allow(dead_code)]

use serde_json::Value as Json;
use std::path::PathBuf;
use toml::Value;
use toolgate::ToolCall;
use toolgate::eval::EvalContext;
use toolgate::policy::{LoadedPolicy, PermissionMode, SourceKind, SourceRoot};

/// The path of a file of the shared corpora (`../shared/corpora/NAME`
/// beside the checkout), or `None` — with a message on stderr — when the
/// corpora are absent. With `TOOLGATE_REQUIRE_CORPORA=1` a missing corpus
/// fails the test instead.
pub fn corpus(name: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("TOOLGATE_CORPORA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora"));
    let path = dir.join(name);
    if path.exists() {
        return Some(path);
    }
    if std::env::var("TOOLGATE_REQUIRE_CORPORA").is_ok_and(|v| v == "1") {
        panic!(
            "corpus file {} is missing and TOOLGATE_REQUIRE_CORPORA=1",
            path.display()
        );
    }
    eprintln!(
        "skipping: corpus file {} is absent (set TOOLGATE_CORPORA to its folder)",
        path.display()
    );
    None
}

/// The lines of a corpus file, or `None` when it is absent (see [`corpus`]).
pub fn corpus_lines(name: &str) -> Option<Vec<String>> {
    let path = corpus(name)?;
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    Some(text.lines().map(str::to_string).collect())
}

/// The largest policy of `claude-policies.jsonl`'s `lines` (by rule count;
/// the first of them), loaded as the settings file `path` of a project at
/// `root`, and its rule count.
pub fn largest_corpus_policy(lines: &[String], path: &str, root: &str) -> (LoadedPolicy, usize) {
    let mut best: Option<(Json, usize)> = None;
    for line in lines {
        let Ok(v) = serde_json::from_str::<Json>(line) else {
            continue;
        };
        let n: usize = ["allow", "ask", "deny"]
            .iter()
            .map(|k| v[*k].as_array().map_or(0, Vec::len))
            .sum();
        if best.as_ref().is_none_or(|(_, m)| n > *m) {
            best = Some((v, n));
        }
    }
    let (v, n) = best.expect("a policy");
    let text = serde_json::json!(
        {"permissions": {"allow": v["allow"], "ask": v["ask"], "deny": v["deny"]}})
    .to_string();
    let mut p = LoadedPolicy::new();
    p.add_settings_text(
        &text,
        path,
        None,
        SourceKind::Settings,
        SourceRoot::Dir(root.into()),
    )
    .expect("the policy loads");
    (p, n)
}

/// A Claude Code rule of the given effect, parsed in the `claude-code`
/// dialect, as the `index`th entry of that effect's list in
/// `settings.json`.
pub fn claude_rule(text: &str, effect: toolgate::Effect, index: usize) -> toolgate::Rule {
    use toolgate::{Dialect, Effect, List, Provenance};
    let list = match effect {
        Effect::Deny => List::Deny,
        Effect::Ask => List::Ask,
        Effect::Allow => List::Allow,
    };
    let prov = Provenance {
        source: std::sync::Arc::from("settings.json"),
        list,
        index,
    };
    toolgate::rule::claude::parse_rule(text, effect, Dialect::ClaudeCode, prov)
        .expect("rule parses")
}

/// `n` distinct tuff token rules (`["git", "push"]`, `["tar", "xf", "a.tar"]`)
/// from the leading two or three words of `commands` that are plain
/// words; fewer when the commands run out.
pub fn tuff_token_rules(commands: &[String], n: usize) -> Vec<Vec<String>> {
    let simple = |w: &str| {
        !w.is_empty()
            && !w.starts_with('-')
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    };
    let mut rules: Vec<Vec<String>> = Vec::new();
    for (k, c) in commands.iter().enumerate() {
        let words: Vec<String> = c
            .split_whitespace()
            .take(2 + k % 2)
            .map(String::from)
            .collect();
        if words.len() >= 2 && words.iter().all(|w| simple(w)) && !rules.contains(&words) {
            rules.push(words);
            if rules.len() == n {
                break;
            }
        }
    }
    rules
}

fn toml_to_json(v: &Value) -> Json {
    serde_json::to_value(v).expect("a TOML value converts to JSON")
}

fn toml_str<'a>(t: &'a Value, key: &str) -> Option<&'a str> {
    t.get(key).and_then(Value::as_str)
}

/// The policy of an evaluation case file (`tests/data/eval/`): its `[[source]]` tables in order.
pub fn eval_case_policy(doc: &Value, file: &str) -> Result<LoadedPolicy, String> {
    let mut p = LoadedPolicy::new();
    for (i, src) in doc
        .get("source")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let name = toml_str(src, "name").map_or_else(|| format!("source{i}"), str::to_string);
        let root = match toml_str(src, "root") {
            Some(r) => SourceRoot::Dir(PathBuf::from(r)),
            None => SourceRoot::Project,
        };
        let r = if let Some(text) = toml_str(src, "tuff") {
            p.add_tuff_text(text, &name, None, SourceKind::Tuff, root)
                .map(|_| ())
        } else {
            let perms = |k: &str| -> Json { src.get(k).map_or(Json::Array(vec![]), toml_to_json) };
            let mut permissions = serde_json::json!({
                "allow": perms("allow"), "ask": perms("ask"), "deny": perms("deny"),
            });
            if let Some(dirs) = src.get("additional_directories") {
                permissions["additionalDirectories"] = toml_to_json(dirs);
            }
            if let Some(m) = toml_str(src, "default_mode") {
                permissions["defaultMode"] = Json::String(m.to_string());
            }
            let text = serde_json::json!({ "permissions": permissions }).to_string();
            p.add_settings_text(&text, &name, None, SourceKind::Settings, root)
                .map(|_| ())
        };
        r.map_err(|e| format!("{file}: source {i} does not load: {e}"))?;
    }
    Ok(p)
}

/// A case's context and mode (its keys, else the file's `[context]`).
pub fn eval_case_context(
    defaults: Option<&Value>,
    case: &Value,
) -> Result<(EvalContext, Option<PermissionMode>), String> {
    let get = |k: &str| toml_str(case, k).or_else(|| defaults.and_then(|d| toml_str(d, k)));
    let cwd = get("cwd").unwrap_or("/project");
    let mut ctx = EvalContext::new(cwd).map_err(|e| e.to_string())?;
    if let Some(p) = get("project_dir") {
        ctx = ctx.with_project_dir(p).map_err(|e| e.to_string())?;
    }
    if let Some(h) = get("home") {
        ctx = ctx.with_home(h).map_err(|e| e.to_string())?;
    }
    let dirs = case
        .get("additional_dirs")
        .or_else(|| defaults.and_then(|d| d.get("additional_dirs")));
    for d in dirs.and_then(Value::as_array).into_iter().flatten() {
        ctx = ctx
            .with_additional_dir(d.as_str().unwrap_or_default())
            .map_err(|e| e.to_string())?;
    }
    let mode = match get("mode") {
        Some(m) => Some(m.parse::<PermissionMode>().map_err(|e| e.to_string())?),
        None => None,
    };
    Ok((ctx, mode))
}

/// A case's call (`bash = "…"` or a `call` table).
pub fn eval_case_call(case: &Value) -> Result<ToolCall, String> {
    if let Some(cmd) = toml_str(case, "bash") {
        return ToolCall::from_json(
            &serde_json::json!({"tool": "Bash", "input": {"command": cmd}}),
        )
        .map_err(|e| e.to_string());
    }
    let call = case.get("call").ok_or("a case needs call or bash")?;
    let mut json = toml_to_json(call);
    if let Some(text) = toml_str(call, "input_json") {
        let input: Json = serde_json::from_str(text).map_err(|e| e.to_string())?;
        json["input"] = input;
        if let Some(o) = json.as_object_mut() {
            o.remove("input_json");
        }
    }
    ToolCall::from_json(&json).map_err(|e| e.to_string())
}
