//! `toolgate install claude` (SPEC §10.3, §11): merges the hook entry into
//! Claude Code's settings, idempotently, touching nothing else.
//!
//! The entry runs this very binary by its absolute path (a harness that
//! cannot start a hook lets the call through), with the policy options
//! given here (relative `--policy` files made absolute; no policy option
//! means `--claude-settings`). It is registered under
//! `hooks.PreToolUse` with the matcher `"*"` (every tool) and no
//! `timeout`, so Claude Code waits its default 600 s while the hook keeps
//! its own, much shorter, budget.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Map, Value, json};

use crate::cli::hook::{Harness, HookOpts};
use crate::policy::ClaudeRoots;

/// Arguments of `install`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The harness to install the hook into.
    #[arg(value_enum)]
    pub harness: Harness,
    /// Install into DIR/.claude/settings.json (default: the current
    /// directory's).
    #[arg(long, value_name = "DIR", conflicts_with = "user")]
    pub project: Option<PathBuf>,
    /// Install into the user's ~/.claude/settings.json.
    #[arg(long)]
    pub user: bool,
    /// Print the settings file that would be written, and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub opts: HookOpts,
}

/// What the merge did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The same entry was there already.
    Unchanged,
    /// An earlier toolgate entry got the new command.
    Updated,
    /// A new entry was appended.
    Added,
}

/// Runs `install`.
pub fn run(args: Args) -> ExitCode {
    match install(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            if !msg.is_empty() {
                eprintln!("toolgate: {msg}");
            }
            ExitCode::from(2)
        }
    }
}

fn install(args: &Args) -> Result<(), String> {
    let base = if args.user {
        std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .ok_or("--user needs $HOME to be set")?
    } else {
        let dir = args.project.clone().unwrap_or_else(|| PathBuf::from("."));
        std::path::absolute(&dir).map_err(|e| format!("cannot use {}: {e}", dir.display()))?
    };
    let mut opts = args.opts.clone();
    if opts.policy.is_empty() {
        opts.policy.claude_settings = true;
    }
    for p in &mut opts.policy.policy {
        *p = std::path::absolute(&*p).map_err(|e| format!("cannot use {}: {e}", p.display()))?;
    }
    if let Some(log) = &mut opts.log {
        *log =
            std::path::absolute(&*log).map_err(|e| format!("cannot use {}: {e}", log.display()))?;
    }
    check_policy(&opts, &base, args.user)?;
    let command = hook_command(args.harness, &opts)?;
    let (file, text, change) = match args.harness {
        Harness::Claude => {
            let file = base.join(".claude").join("settings.json");
            let (text, change) = install_claude(&file, &command)?;
            (file, text, change)
        }
        Harness::Codex => {
            let dir = match (args.user, std::env::var_os("CODEX_HOME")) {
                (true, Some(h)) if !h.is_empty() => PathBuf::from(h),
                _ => base.join(".codex"),
            };
            let file = dir.join("config.toml");
            let old = match std::fs::read_to_string(&file) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
                Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
            };
            let (text, change) = merge_codex(&old, &command)
                .map_err(|e| format!("cannot install into {}: {e}", file.display()))?;
            (file, text, change)
        }
        Harness::Cursor => {
            let file = base.join(".cursor").join("hooks.json");
            let (text, change) = install_cursor(&file, &command)?;
            (file, text, change)
        }
    };
    if args.dry_run {
        // `emit` has reported a write error already: an empty message.
        return super::emit(&text).map_err(|()| String::new());
    }
    if change != Change::Unchanged {
        write_atomically(&file, &text)?;
    }
    let what = match change {
        Change::Unchanged => "already installed in",
        Change::Updated => "updated the toolgate hook in",
        Change::Added => "installed the toolgate hook in",
    };
    super::emit(&format!("{what} {}\n  {command}\n", file.display())).map_err(|()| String::new())
}

/// The new text of Claude Code's settings file `file` with the hook.
fn install_claude(file: &Path, command: &str) -> Result<(String, Change), String> {
    let mut settings = match std::fs::read_to_string(file) {
        Ok(text) if text.trim().is_empty() => Value::Object(Map::new()),
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            format!(
                "cannot read {} as json ({e}); it is left as it is",
                file.display()
            )
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Value::Object(Map::new()),
        Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
    };
    let change = merge_claude(&mut settings, command)
        .map_err(|e| format!("cannot install into {}: {e}", file.display()))?;
    let text = serde_json::to_string_pretty(&settings)
        .map_err(|e| format!("cannot write json: {e}"))?
        + "\n";
    Ok((text, change))
}

/// Merges the hook entry running `command` into the text of a Codex
/// `config.toml`: unchanged when it is there, an earlier toolgate Codex
/// hook's command string replaced in place, else a
/// `[[hooks.PreToolUse]]` table with one command hook appended. The rest
/// of the text is kept byte for byte (the crate has no format-preserving
/// TOML editor, so the merge edits text and checks the result parses).
pub fn merge_codex(text: &str, command: &str) -> Result<(String, Change), String> {
    let doc: toml::Table =
        toml::from_str(text).map_err(|e| format!("it is not valid toml: {e}"))?;
    let mut present = false;
    let mut old = Vec::new();
    let groups = doc
        .get("hooks")
        .and_then(|h| h.get("PreToolUse"))
        .and_then(toml::Value::as_array);
    for g in groups.into_iter().flatten() {
        let hooks = g.get("hooks").and_then(toml::Value::as_array);
        for h in hooks.into_iter().flatten() {
            if let Some(c) = h.get("command").and_then(toml::Value::as_str) {
                if c == command {
                    present = true;
                } else if is_toolgate_hook(c, "codex") {
                    old.push(c.to_string());
                }
            }
        }
    }
    let quoted = toml::Value::String(command.to_string()).to_string();
    let (out, change) = if !old.is_empty() {
        let mut out = text.to_string();
        for o in &old {
            let q = toml::Value::String(o.clone()).to_string();
            if out.matches(&q).count() != 1 {
                return Err(format!(
                    "cannot update the earlier toolgate hook {o:?} in place; remove it and install again"
                ));
            }
            out = out.replacen(&q, &quoted, 1);
        }
        (out, Change::Updated)
    } else if present {
        return Ok((text.to_string(), Change::Unchanged));
    } else {
        let mut out = text.to_string();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str("[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\n");
        out.push_str(&format!("command = {quoted}\n"));
        (out, Change::Added)
    };
    toml::from_str::<toml::Table>(&out).map_err(|e| {
        format!("adding the hook would not give valid toml ({e}); the file is left as it is")
    })?;
    Ok((out, change))
}

/// The new text of Cursor's `hooks.json` with the hook registered for
/// `beforeShellExecution`, `beforeReadFile` and `beforeMCPExecution` (`command` plus
/// `--event EVENT`).
fn install_cursor(file: &Path, command: &str) -> Result<(String, Change), String> {
    let mut doc = match std::fs::read_to_string(file) {
        Ok(text) if text.trim().is_empty() => json!({"version": 1}),
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            format!(
                "cannot read {} as json ({e}); it is left as it is",
                file.display()
            )
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({"version": 1}),
        Err(e) => return Err(format!("cannot read {}: {e}", file.display())),
    };
    let change = merge_cursor(&mut doc, command)
        .map_err(|e| format!("cannot install into {}: {e}", file.display()))?;
    let text =
        serde_json::to_string_pretty(&doc).map_err(|e| format!("cannot write json: {e}"))? + "\n";
    Ok((text, change))
}

/// Merges the hook into a Cursor `hooks.json` document: for each of
/// `beforeShellExecution`, `beforeReadFile` and `beforeMCPExecution`,
/// `{"command": "<command>
/// --event EVENT", "failClosed": true}` is kept when there, replaces an
/// earlier toolgate Cursor hook of the event, else is appended. Every
/// other key keeps its value and its place.
pub fn merge_cursor(doc: &mut Value, command: &str) -> Result<Change, String> {
    let Value::Object(top) = doc else {
        return Err("the file is not a json object".into());
    };
    let hooks = top
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        return Err("its \"hooks\" is not an object".into());
    };
    let mut changes = Vec::new();
    for event in [
        "beforeShellExecution",
        "beforeReadFile",
        "beforeMCPExecution",
    ] {
        let ours = format!("{command} --event {event}");
        let list = hooks
            .entry(event)
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(list) = list else {
            return Err(format!("its \"hooks.{event}\" is not an array"));
        };
        let mut present = false;
        let mut updated = false;
        for h in list.iter_mut() {
            let Some(Value::String(c)) = h.get_mut("command") else {
                continue;
            };
            if *c == ours {
                present = true;
            } else if is_toolgate_hook(c, "cursor") && c.ends_with(&format!(" --event {event}")) {
                *c = ours.clone();
                updated = true;
            }
        }
        changes.push(if updated {
            Change::Updated
        } else if present {
            Change::Unchanged
        } else {
            list.push(json!({"command": ours, "failClosed": true}));
            Change::Added
        });
    }
    Ok(if changes.iter().all(|c| *c == Change::Unchanged) {
        Change::Unchanged
    } else if changes.contains(&Change::Added) {
        Change::Added
    } else {
        Change::Updated
    })
}

/// Loads the policy the hook will load, so that a hook that would refuse
/// every call is not installed. Installed tuff policies are looked up per
/// project, so a `--user` install does not look for them.
fn check_policy(opts: &HookOpts, base: &Path, user: bool) -> Result<(), String> {
    let mut p = opts.policy.clone();
    if user {
        p.tuff.clear();
        p.claude_settings = false;
    }
    let roots = ClaudeRoots::system(base.to_path_buf());
    let loaded = p
        .load_with(roots)
        .map_err(|e| format!("the hook's policy does not load, so it is not installed:\n{e}"))?;
    crate::eval::Evaluator::new(&loaded)
        .map_err(|e| format!("the hook's policy does not compile, so it is not installed:\n{e}"))?;
    Ok(())
}

/// The shell command Claude Code runs: this binary, absolute, and the
/// hook's options.
fn hook_command(harness: Harness, opts: &HookOpts) -> Result<String, String> {
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| format!("cannot find the running binary's path: {e}"))?;
    let exe = exe
        .to_str()
        .ok_or("the running binary's path is not valid utf-8")?
        .to_string();
    let mut words = vec![exe, "hook".to_string(), harness_name(harness).to_string()];
    let path = |p: &Path| -> Result<String, String> {
        p.to_str()
            .map(str::to_string)
            .ok_or_else(|| format!("{} is not valid utf-8", p.display()))
    };
    let pa = &opts.policy;
    if pa.claude_settings {
        words.push("--claude-settings".into());
    }
    for f in &pa.policy {
        words.push("--policy".into());
        words.push(path(f)?);
    }
    for id in &pa.tuff {
        words.push("--tuff".into());
        words.push(id.clone());
    }
    if !pa.tuff.is_empty() && pa.dir_prefix != Path::new(".claude") {
        words.push("--dir-prefix".into());
        words.push(path(&pa.dir_prefix)?);
    }
    for (flag, rules) in [
        ("--deny", &pa.deny),
        ("--ask", &pa.ask),
        ("--allow", &pa.allow),
    ] {
        for r in rules {
            words.push(flag.into());
            words.push(r.clone());
        }
    }
    if opts.no_cache {
        words.push("--no-cache".to_string());
    }
    if opts.no_allow {
        words.push("--no-allow".into());
    }
    if opts.budget_ms != 2000 {
        words.push("--budget-ms".into());
        words.push(opts.budget_ms.to_string());
    }
    if let Some(log) = &opts.log {
        words.push("--log".into());
        words.push(path(log)?);
    }
    Ok(words
        .iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" "))
}

fn harness_name(h: Harness) -> &'static str {
    match h {
        Harness::Claude => "claude",
        Harness::Codex => "codex",
        Harness::Cursor => "cursor",
    }
}

/// `w` as one POSIX shell word.
fn shell_quote(w: &str) -> String {
    let plain = !w.is_empty()
        && w.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./=:@%+,-".contains(&b));
    if plain {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', r"'\''"))
    }
}

/// Whether `command` is a toolgate Claude hook (`…/toolgate hook claude …`).
fn is_toolgate_claude(command: &str) -> bool {
    is_toolgate_hook(command, "claude")
}

/// Whether `command` is a toolgate hook for `harness`.
fn is_toolgate_hook(command: &str, harness: &str) -> bool {
    let command = command.trim_start();
    let (exe, rest) = match command.strip_prefix('\'') {
        Some(quoted) => match quoted.split_once('\'') {
            Some(split) => split,
            None => return false,
        },
        None => command.split_once(' ').unwrap_or((command, "")),
    };
    let mut words = rest.split_whitespace();
    let is_toolgate = Path::new(exe).file_name().is_some_and(|n| n == "toolgate");
    is_toolgate && words.next() == Some("hook") && words.next() == Some(harness)
}

/// Merges the hook entry running `command` into Claude Code settings:
/// unchanged when it is there, an earlier toolgate Claude hook updated in
/// place, else a new `{"matcher": "*", "hooks": [{"type": "command",
/// "command": …}]}` appended to `hooks.PreToolUse`. Every other key keeps
/// its value and its place.
pub fn merge_claude(settings: &mut Value, command: &str) -> Result<Change, String> {
    let Value::Object(top) = settings else {
        return Err("the settings are not a json object".into());
    };
    let hooks = top
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        return Err("its \"hooks\" is not an object".into());
    };
    let pre = hooks
        .entry("PreToolUse")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(groups) = pre else {
        return Err("its \"hooks.PreToolUse\" is not an array".into());
    };
    let mut present = false;
    let mut updated = false;
    for group in groups.iter_mut() {
        let Some(Value::Array(list)) = group.get_mut("hooks") else {
            continue;
        };
        for h in list.iter_mut() {
            let Some(Value::String(c)) = h.get_mut("command") else {
                continue;
            };
            if c == command {
                present = true;
            } else if is_toolgate_claude(c) {
                *c = command.to_string();
                updated = true;
            }
        }
    }
    if updated {
        return Ok(Change::Updated);
    }
    if present {
        return Ok(Change::Unchanged);
    }
    groups.push(json!({
        "matcher": "*",
        "hooks": [{"type": "command", "command": command}],
    }));
    Ok(Change::Added)
}

/// Writes `text` to `file` through a temporary file in the same directory
/// and a rename, so a reader never sees half a file.
fn write_atomically(file: &Path, text: &str) -> Result<(), String> {
    let dir = file.parent().ok_or("the settings file has no directory")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let tmp = dir.join(format!(".settings.json.toolgate-{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, file).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot replace {}: {e}", file.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_keeps_everything_else_and_is_idempotent() {
        let mut s: Value = serde_json::from_str(
            r#"{"z": 1, "hooks": {"PostToolUse": [], "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "/x/guard.sh"}]}]},
                "a": {"permissions": ["b", "a"]}}"#,
        )
        .unwrap();
        assert_eq!(
            merge_claude(&mut s, "/bin/toolgate hook claude --claude-settings"),
            Ok(Change::Added)
        );
        let once = s.clone();
        assert_eq!(
            merge_claude(&mut s, "/bin/toolgate hook claude --claude-settings"),
            Ok(Change::Unchanged)
        );
        assert_eq!(s, once);
        let keys: Vec<&String> = s.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["z", "hooks", "a"]);
        assert_eq!(s["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(
            s["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "/x/guard.sh"
        );
        assert_eq!(
            merge_claude(&mut s, "'/opt/my tools/toolgate' hook claude --no-allow"),
            Ok(Change::Updated)
        );
        assert_eq!(s["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn merge_refuses_odd_shapes() {
        for bad in [
            r#"[]"#,
            r#"{"hooks": []}"#,
            r#"{"hooks": {"PreToolUse": {}}}"#,
        ] {
            let mut s: Value = serde_json::from_str(bad).unwrap();
            assert!(
                merge_claude(&mut s, "toolgate hook claude").is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn codex_merge_appends_once_and_updates_in_place() {
        let text = "model = \"o3\"\n\n[features]\nx = true";
        let (once, c) = merge_codex(text, "/bin/toolgate hook codex --deny 'Bash(rm *)'").unwrap();
        assert_eq!(c, Change::Added);
        assert!(once.starts_with(text));
        let doc: toml::Table = toml::from_str(&once).unwrap();
        assert_eq!(
            doc["hooks"]["PreToolUse"][0]["hooks"][0]["command"].as_str(),
            Some("/bin/toolgate hook codex --deny 'Bash(rm *)'")
        );
        let (twice, c) =
            merge_codex(&once, "/bin/toolgate hook codex --deny 'Bash(rm *)'").unwrap();
        assert_eq!((twice.as_str(), c), (once.as_str(), Change::Unchanged));
        let (upd, c) = merge_codex(&once, "/bin/toolgate hook codex --no-allow").unwrap();
        assert_eq!(c, Change::Updated);
        assert!(upd.starts_with(text) && upd.contains("--no-allow") && !upd.contains("rm *"));
        assert!(merge_codex("hooks = 1", "/bin/toolgate hook codex").is_err());
        assert!(merge_codex("[x", "/bin/toolgate hook codex").is_err());
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("/usr/bin/toolgate"), "/usr/bin/toolgate");
        assert_eq!(shell_quote("Bash(rm *)"), "'Bash(rm *)'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn recognises_its_own_entries() {
        assert!(is_toolgate_claude("/a/b/toolgate hook claude --policy x"));
        assert!(is_toolgate_claude("'/a b/toolgate' hook claude"));
        assert!(!is_toolgate_claude("/a/b/toolgate hook cursor"));
        assert!(!is_toolgate_claude("/x/guard.sh"));
    }
}
