//! What `lint` reads: the rule entries of a policy, in policy order, as
//! written — so that rules a loader would refuse or drop can be reported
//! instead of stopping the run.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::{Finding, Kind, RuleRef};
use crate::error::Error;
use crate::policy::{ClaudeRoots, LoadedPolicy};
use crate::rule::{Dialect, Effect, List, Provenance, Rule};

/// One entry of a rule list.
#[derive(Clone, Debug)]
pub(crate) enum Entry {
    /// A Claude Code rule string and what parsing it gave.
    Text {
        at: RuleRef,
        parsed: Result<Rule, Error>,
    },
    /// A list entry that is not a string.
    NotString { at: RuleRef },
    /// A rule that arrived parsed (a tuff policy's).
    Parsed(Rule),
}

/// The rules to lint, in policy order, as their sources wrote them.
///
/// Claude Code rule strings are kept as text (a malformed one becomes a
/// finding, not a failed load); tuff policies arrive as rules (a tuff
/// policy that fails its own validation is one finding for the file).
#[derive(Clone, Debug, Default)]
pub struct LintInput {
    pub(crate) entries: Vec<Entry>,
    load_errors: Vec<(Arc<str>, Error)>,
}

fn effect_of(list: List) -> Effect {
    match list {
        List::Allow => Effect::Allow,
        List::Ask => Effect::Ask,
        _ => Effect::Deny,
    }
}

impl LintInput {
    /// Nothing to lint yet.
    pub fn new() -> LintInput {
        LintInput::default()
    }

    /// Adds the Claude Code rule string `text` at `list[index]` of `source`
    /// (read in the `claude-code` dialect).
    pub fn add_rule_text(&mut self, source: &str, list: List, index: usize, text: &str) {
        let at = RuleRef {
            text: text.to_string(),
            source: Arc::from(source),
            list,
            index,
        };
        let provenance = Provenance {
            source: at.source.clone(),
            list,
            index,
        };
        let parsed =
            crate::rule::claude::parse_rule(text, effect_of(list), Dialect::ClaudeCode, provenance);
        self.entries.push(Entry::Text { at, parsed });
    }

    /// Adds the `allow`, `ask` and `deny` lists of a settings value: its
    /// `permissions` object, or a bare `{"allow", "ask", "deny"}`.
    pub fn add_settings_value(&mut self, source: &str, value: &Value) {
        let block = match value.get("permissions") {
            Some(p) => p,
            None => value,
        };
        let Some(block) = block.as_object() else {
            self.add_load_error(
                source,
                Error::new(
                    crate::ErrorKind::Policy,
                    "the permissions block is not an object",
                )
                .with_source(source),
            );
            return;
        };
        for list in [List::Allow, List::Ask, List::Deny] {
            match block.get(list.as_str()) {
                None | Some(Value::Null) => {}
                Some(Value::Array(entries)) => self.add_list(source, list, entries),
                Some(other) => self.add_load_error(
                    source,
                    Error::new(
                        crate::ErrorKind::Policy,
                        format!("permissions.{} is not an array: {other}", list.as_str()),
                    )
                    .with_source(source),
                ),
            }
        }
    }

    /// Adds one list's entries as written.
    pub fn add_list(&mut self, source: &str, list: List, entries: &[Value]) {
        for (index, entry) in entries.iter().enumerate() {
            match entry {
                Value::String(text) => self.add_rule_text(source, list, index, text),
                other => self.entries.push(Entry::NotString {
                    at: RuleRef {
                        text: other.to_string(),
                        source: Arc::from(source),
                        list,
                        index,
                    },
                }),
            }
        }
    }

    /// Adds rules that arrived parsed (a tuff policy's).
    pub fn add_rules(&mut self, rules: impl IntoIterator<Item = Rule>) {
        self.entries.extend(rules.into_iter().map(Entry::Parsed));
    }

    /// Records a source that could not be read or parsed as a whole.
    pub fn add_load_error(&mut self, source: &str, error: Error) {
        self.load_errors.push((Arc::from(source), error));
    }

    /// Adds a file given by path: a tuff policy when its name ends in
    /// `.toml`, else a Claude settings file (JSON or JSONC).
    pub fn add_file(&mut self, path: &Path) {
        let name = path.display().to_string();
        if path.extension().is_some_and(|e| e == "toml") {
            match LoadedPolicy::new().add_tuff_file(path) {
                Ok(p) => self.add_rules(p.rules().iter().cloned()),
                Err(e) => self.add_load_error(&name, e),
            }
            return;
        }
        let parsed = std::fs::read_to_string(path).ok().and_then(|text| {
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text).to_string();
            let reduced = crate::policy::jsonc::reduce(&text);
            serde_json::from_str::<Value>(&reduced.text).ok()
        });
        match parsed {
            Some(value) => self.add_settings_value(&name, &value),
            // The loader says what is wrong, where.
            None => match LoadedPolicy::from_file(path) {
                Err(e) => self.add_load_error(&name, e),
                // A precompiled image: its rules as they were loaded.
                Ok(p) if crate::policy::image::file_is_image(path) => {
                    self.add_rules(p.rules().iter().cloned())
                }
                Ok(_) => self.add_load_error(
                    &name,
                    Error::new(crate::ErrorKind::Policy, "cannot read the settings file")
                        .with_source(&*name),
                ),
            },
        }
    }

    /// Adds the Claude Code settings hierarchy of a project (the files
    /// that exist, in load order).
    pub fn add_claude_settings(&mut self, roots: &ClaudeRoots) {
        match roots.files() {
            Ok(files) => {
                for found in files {
                    if found.path.is_file() {
                        self.add_file(&found.path);
                    }
                }
            }
            Err(e) => self.add_load_error("<settings>", e),
        }
    }

    /// Adds the installed tuff policy `id` (see
    /// [`LoadedPolicy::add_installed_tuff`]).
    pub fn add_installed_tuff(
        &mut self,
        starts: &[std::path::PathBuf],
        dir_prefix: &Path,
        id: &str,
    ) {
        match LoadedPolicy::new().add_installed_tuff(starts, dir_prefix, id) {
            Ok(p) => self.add_rules(p.rules().iter().cloned()),
            Err(e) => self.add_load_error(&format!("tuff policy {id}"), e),
        }
    }

    /// The rules that parsed, in policy order.
    pub(crate) fn rules(&self) -> Vec<Rule> {
        self.entries
            .iter()
            .filter_map(|e| match e {
                Entry::Text { parsed: Ok(r), .. } | Entry::Parsed(r) => Some(r.clone()),
                _ => None,
            })
            .collect()
    }

    /// Each rule's place in policy order, by (source, list, index).
    pub(crate) fn positions(&self) -> HashMap<(Arc<str>, List, usize), usize> {
        let mut out = HashMap::new();
        for (i, e) in self.entries.iter().enumerate() {
            let key = match e {
                Entry::Text { at, .. } | Entry::NotString { at } => {
                    (at.source.clone(), at.list, at.index)
                }
                Entry::Parsed(r) => (
                    r.provenance.source.clone(),
                    r.provenance.list,
                    r.provenance.index,
                ),
            };
            out.entry(key).or_insert(i);
        }
        out
    }

    pub(crate) fn load_findings(&self) -> Vec<Finding> {
        self.load_errors
            .iter()
            .map(|(source, e)| {
                let at = RuleRef {
                    text: String::new(),
                    source: source.clone(),
                    list: List::Rules,
                    index: 0,
                };
                let mut msg = e.message().to_string();
                if let Some(item) = &e.location().item {
                    msg = format!("{item}: {msg}");
                }
                Finding::new(Kind::LoadError, at, msg)
                    .fix("fix the file: toolgate (and Claude Code) refuse it as a whole")
            })
            .collect()
    }
}
