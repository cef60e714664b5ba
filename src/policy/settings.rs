//! Claude Code settings files: reading one (JSON, JSONC tolerated), its
//! `permissions` keys, its rule strings, and the discovery of a project's
//! settings hierarchy.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{PermissionMode, SourceKind, SourceRoot, Warning, jsonc};
use crate::error::{Error, ErrorKind};
use crate::rule::{Dialect, Effect, List, Provenance, Rule};

/// The directories Claude Code's settings hierarchy is found in. Every
/// root is a parameter, so that discovery can be tested; [`ClaudeRoots::system`]
/// gives the real ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaudeRoots {
    /// The directory of `managed-settings.json` and `managed-settings.d/`,
    /// or `None` for no managed settings.
    pub managed_dir: Option<PathBuf>,
    /// The home directory (user settings are `<home>/.claude/settings.json`),
    /// or `None` for no user settings.
    pub home: Option<PathBuf>,
    /// The project directory (`<project>/.claude/settings.json` and
    /// `settings.local.json`).
    pub project: PathBuf,
}

impl ClaudeRoots {
    /// The machine's roots for `project`: the platform's managed settings
    /// directory (`/etc/claude-code` on Linux, `/Library/Application
    /// Support/ClaudeCode` on macOS, `C:\Program Files\ClaudeCode` on
    /// Windows) and `$HOME` (`%USERPROFILE%` on Windows).
    pub fn system(project: PathBuf) -> ClaudeRoots {
        let managed_dir = if cfg!(target_os = "macos") {
            Some(PathBuf::from("/Library/Application Support/ClaudeCode"))
        } else if cfg!(windows) {
            Some(PathBuf::from(r"C:\Program Files\ClaudeCode"))
        } else {
            Some(PathBuf::from("/etc/claude-code"))
        };
        let home_var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
        let home = std::env::var_os(home_var)
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        ClaudeRoots {
            managed_dir,
            home,
            project,
        }
    }

    /// The candidate files in load order (they may not exist).
    pub(crate) fn files(&self) -> Result<Vec<Found>, Error> {
        let project = std::path::absolute(&self.project).unwrap_or_else(|_| self.project.clone());
        let in_project = SourceRoot::Dir(project.clone());
        let mut out = Vec::new();
        if let Some(dir) = &self.managed_dir {
            out.push(Found {
                path: dir.join("managed-settings.json"),
                kind: SourceKind::Managed,
                root: in_project.clone(),
            });
            let drop_ins = dir.join(DROP_INS);
            for name in drop_in_names(&drop_ins)? {
                out.push(Found {
                    path: drop_ins.join(name),
                    kind: SourceKind::Managed,
                    root: in_project.clone(),
                });
            }
        }
        if let Some(home) = &self.home {
            let claude = home.join(".claude");
            out.push(Found {
                path: claude.join("settings.json"),
                kind: SourceKind::User,
                root: SourceRoot::Dir(std::path::absolute(&claude).unwrap_or(claude)),
            });
        }
        let dot = self.project.join(".claude");
        out.push(Found {
            path: dot.join("settings.json"),
            kind: SourceKind::Project,
            root: in_project.clone(),
        });
        out.push(Found {
            path: dot.join("settings.local.json"),
            kind: SourceKind::Local,
            root: in_project,
        });
        Ok(out)
    }
}

/// The settings files of the drop-in directory `drop_ins`, by name, sorted
/// (none when it does not exist).
pub(crate) fn drop_in_names(drop_ins: &std::path::Path) -> Result<Vec<String>, Error> {
    let mut names = Vec::new();
    match std::fs::read_dir(drop_ins) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(Error::new(
                ErrorKind::Io,
                format!(
                    "cannot list the managed settings: {}",
                    crate::rule::tuff::io_clause(&e)
                ),
            )
            .with_source(drop_ins.display().to_string()));
        }
        Ok(entries) => {
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some(s) = name.to_str() else { continue };
                if s.ends_with(".json") && !s.starts_with('.') {
                    names.push(s.to_string());
                }
            }
        }
    }
    names.sort();
    Ok(names)
}

/// The directory of managed drop-in settings files.
pub(crate) const DROP_INS: &str = "managed-settings.d";

/// A settings file of the hierarchy.
pub(crate) struct Found {
    pub path: PathBuf,
    pub kind: SourceKind,
    pub root: SourceRoot,
}

/// What a settings file holds that matters here, before its rule strings
/// are parsed.
pub(crate) struct SettingsFile {
    /// `allow`, `ask`, `deny`, in that order, with their entries as written.
    pub lists: Vec<(List, Vec<Value>)>,
    /// `defaultMode`, and whether it was written `auto`.
    pub default_mode: Option<(PermissionMode, bool)>,
    pub additional_directories: Vec<String>,
    pub disable_bypass: bool,
    /// Top-level `allowManagedPermissionRulesOnly: true`.
    pub managed_only: bool,
    pub warnings: Vec<Warning>,
}

fn warn(msg: impl Into<String>, source: &str) -> Warning {
    Warning::new(Error::new(ErrorKind::Policy, msg).with_source(source))
}

fn warn_at(msg: impl Into<String>, source: &str, item: String) -> Warning {
    Warning::new(
        Error::new(ErrorKind::Policy, msg)
            .with_source(source)
            .with_item(item),
    )
}

impl SettingsFile {
    /// Reads a settings file's text. A file given by path (`kind`
    /// [`SourceKind::Settings`]) may be a bare `{"allow", "ask", "deny"}`
    /// block; a file of the hierarchy is read as Claude Code reads it.
    pub fn parse(text: &str, source: &str, kind: SourceKind) -> Result<SettingsFile, Error> {
        let (value, mut warnings) = read_json(text, source)?;
        let Value::Object(top) = value else {
            return Err(
                Error::new(ErrorKind::Policy, "a settings file must hold a json object")
                    .with_source(source),
            );
        };
        let bare_keys = ["allow", "ask", "deny"];
        let has_bare = bare_keys.iter().any(|k| top.contains_key(*k));
        let perms: Option<&Map<String, Value>> = match top.get("permissions") {
            Some(Value::Object(p)) => {
                if has_bare {
                    warnings.push(warn(
                        "top-level allow, ask and deny ignored: the file has a permissions block",
                        source,
                    ));
                }
                Some(p)
            }
            Some(_) => {
                return Err(
                    Error::new(ErrorKind::Policy, "permissions must be an object")
                        .with_source(source)
                        .with_item("permissions"),
                );
            }
            None if has_bare && kind == SourceKind::Settings => Some(&top),
            None => {
                if has_bare {
                    warnings.push(warn(
                        "top-level allow, ask and deny ignored: Claude Code reads them only \
                         inside permissions",
                        source,
                    ));
                }
                None
            }
        };

        let mut file = SettingsFile {
            lists: Vec::new(),
            default_mode: None,
            additional_directories: Vec::new(),
            disable_bypass: false,
            managed_only: false,
            warnings,
        };

        match top.get("allowManagedPermissionRulesOnly") {
            None => {}
            Some(Value::Bool(b)) if kind == SourceKind::Managed => file.managed_only = *b,
            Some(Value::Bool(_)) => file.warnings.push(warn_at(
                "allowManagedPermissionRulesOnly ignored: it is honoured in managed settings only",
                source,
                "allowManagedPermissionRulesOnly".into(),
            )),
            Some(_) => file.warnings.push(warn_at(
                "allowManagedPermissionRulesOnly ignored: it must be true or false",
                source,
                "allowManagedPermissionRulesOnly".into(),
            )),
        }

        let Some(perms) = perms else {
            return Ok(file);
        };
        // Items are named by their key path in the file.
        let prefix = if std::ptr::eq(perms, &top) {
            ""
        } else {
            "permissions."
        };
        let at = |key: &str| format!("{prefix}{key}");
        for list in [List::Allow, List::Ask, List::Deny] {
            match perms.get(list.as_str()) {
                None => {}
                Some(Value::Array(entries)) => file.lists.push((list, entries.clone())),
                Some(_) if list == List::Allow => file.warnings.push(warn_at(
                    "allow is not an array of rule strings: allow rules dropped",
                    source,
                    at("allow"),
                )),
                Some(_) => {
                    return Err(Error::new(
                        ErrorKind::Policy,
                        format!("{} must be an array of rule strings", list.as_str()),
                    )
                    .with_source(source)
                    .with_item(at(list.as_str())));
                }
            }
        }
        match perms.get("defaultMode") {
            None => {}
            Some(Value::String(m)) => match m.parse::<PermissionMode>() {
                Ok(mode) => file.default_mode = Some((mode, m == "auto")),
                Err(e) => file.warnings.push(warn_at(
                    format!("defaultMode ignored: {}", e.message()),
                    source,
                    at("defaultMode"),
                )),
            },
            Some(_) => file.warnings.push(warn_at(
                "defaultMode ignored: it must be a string",
                source,
                at("defaultMode"),
            )),
        }
        match perms.get("additionalDirectories") {
            None => {}
            Some(Value::Array(dirs)) => {
                for (i, d) in dirs.iter().enumerate() {
                    match d {
                        Value::String(d) => file.additional_directories.push(d.clone()),
                        _ => file.warnings.push(Warning::new(
                            Error::new(
                                ErrorKind::Policy,
                                "additional directory ignored: it must be a string",
                            )
                            .with_source(source)
                            .with_item(at(&format!("additionalDirectories[{i}]"))),
                        )),
                    }
                }
            }
            Some(_) => file.warnings.push(warn_at(
                "additionalDirectories ignored: it must be an array of strings",
                source,
                at("additionalDirectories"),
            )),
        }
        match perms.get("disableBypassPermissionsMode") {
            None => {}
            Some(Value::String(s)) if s == "disable" => file.disable_bypass = true,
            Some(other) => file.warnings.push(warn_at(
                format!(
                    "disableBypassPermissionsMode ignored: its one value is \"disable\", not {other}"
                ),
                source,
                at("disableBypassPermissionsMode"),
            )),
        }
        if !prefix.is_empty() && perms.contains_key("allowManagedPermissionRulesOnly") {
            file.warnings.push(warn_at(
                "permissions.allowManagedPermissionRulesOnly ignored: the key belongs at the top \
                 level of managed settings",
                source,
                at("allowManagedPermissionRulesOnly"),
            ));
        }
        Ok(file)
    }
}

/// A file's JSON, with a warning when it needed JSONC's comments or
/// trailing commas. A UTF-8 byte-order mark is skipped.
fn read_json(text: &str, source: &str) -> Result<(Value, Vec<Warning>), Error> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Ok((v, Vec::new()));
    }
    let reduced = jsonc::reduce(text);
    match serde_json::from_str::<Value>(&reduced.text) {
        Ok(v) => {
            let mut warnings = Vec::new();
            if let Some((at, what)) = reduced.first {
                let (line, line_text, column) = jsonc::position(text, at);
                warnings.push(Warning::new(
                    Error::new(
                        ErrorKind::Policy,
                        format!("{what} tolerated: the file is JSONC, not JSON"),
                    )
                    .with_source(source)
                    .with_item(format!("line {line}"))
                    .with_text(line_text, column),
                ));
            }
            Ok((v, warnings))
        }
        Err(e) => {
            let at = jsonc::offset_of(text, e.line(), e.column());
            let (line, line_text, column) = jsonc::position(text, at);
            let msg = e.to_string();
            let msg = match msg.rfind(" at line ") {
                Some(n) => msg[..n].to_string(),
                None => msg,
            };
            Err(
                Error::new(ErrorKind::Policy, format!("not valid json: {msg}"))
                    .with_source(source)
                    .with_item(format!("line {line}"))
                    .with_text(line_text, column),
            )
        }
    }
}

/// A rule string, parsed or dropped.
pub(crate) enum Parsed {
    /// The rule, kept.
    Rule(Box<Rule>),
    /// The rule was dropped, with this warning.
    Dropped(Warning),
}

fn effect_of(list: List) -> Effect {
    match list {
        List::Allow => Effect::Allow,
        List::Ask => Effect::Ask,
        _ => Effect::Deny,
    }
}

/// Parses the rule string `text` at `list[index]` of `source` in the
/// `claude-code` dialect: an error in an allow rule drops it with a
/// warning; in a deny or ask rule it fails the load, except a
/// `Tool(param:value)` rule on a primary field, which is ignored with a
/// warning.
pub(crate) fn parse_rule(
    text: &str,
    list: List,
    index: usize,
    source: &Arc<str>,
) -> Result<Parsed, Error> {
    let provenance = Provenance {
        source: source.clone(),
        list,
        index,
    };
    let item = provenance.item();
    let effect = effect_of(list);
    match crate::rule::claude::parse_rule(text, effect, Dialect::ClaudeCode, provenance) {
        Ok(rule) => Ok(Parsed::Rule(Box::new(rule))),
        Err(e) => {
            let e = e.with_source(&**source).with_item(item);
            if effect == Effect::Allow {
                Ok(Parsed::Dropped(Warning::new(suffixed(
                    &e,
                    "(allow rule dropped)",
                ))))
            } else if e.kind() == ErrorKind::Unsupported {
                Ok(Parsed::Dropped(Warning::new(suffixed(
                    &e,
                    "(rule ignored)",
                ))))
            } else {
                Err(e)
            }
        }
    }
}

/// A list entry that is not a string: dropped with a warning in an allow
/// list, an error in a deny or ask list.
pub(crate) fn not_a_string(
    value: &Value,
    list: List,
    index: usize,
    source: &Arc<str>,
) -> Result<Parsed, Error> {
    let e = Error::new(
        ErrorKind::Rule,
        format!("a rule must be a string, not {value}"),
    )
    .with_source(&**source)
    .with_item(format!("{}[{index}]", list.as_str()));
    if list == List::Allow {
        Ok(Parsed::Dropped(Warning::new(suffixed(
            &e,
            "(allow rule dropped)",
        ))))
    } else {
        Err(e)
    }
}

/// `e` with `; suffix` appended to its message, its location kept.
fn suffixed(e: &Error, suffix: &str) -> Error {
    let loc = e.location();
    let mut out = Error::new(e.kind(), format!("{} {suffix}", e.message()));
    if let Some(s) = &loc.source {
        out = out.with_source(s.clone());
    }
    if let Some(i) = &loc.item {
        out = out.with_item(i.clone());
    }
    if let (Some(t), Some(c)) = (&loc.text, loc.column) {
        out = out.with_text(t.clone(), c);
    }
    out
}
