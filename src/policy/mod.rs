//! Policy sources: Claude Code settings files (one file, or the hierarchy
//! of a project discovered and merged as Claude Code does), tuff
//! `policy.toml` policies, and rules given on the command line — loaded
//! into one ordered list of [`Rule`]s, each keeping where it came from.
//!
//! ```no_run
//! use toolgate::policy::{ClaudeRoots, LoadedPolicy};
//! use toolgate::Effect;
//!
//! // One file (a Claude settings `.json` or a tuff `policy.toml`).
//! let policy = LoadedPolicy::from_file("project/.claude/settings.json".as_ref())?;
//!
//! // The settings hierarchy of a project, plus a rule of one's own.
//! let mut policy = LoadedPolicy::new();
//! policy
//!     .add_claude_settings(&ClaudeRoots::system("/home/me/project".into()))?
//!     .add_rule(Effect::Deny, "Bash(git push --force *)")?;
//! for warning in policy.warnings() {
//!     eprintln!("warning: {warning}");
//! }
//! # Ok::<(), toolgate::Error>(())
//! ```
//!
//! # Order and provenance
//!
//! Policy order is sources in load order, then, within a Claude settings
//! file, the lists `allow`, `ask`, `deny`, each in its own order (tuff: the
//! rules in file order). Every rule keeps its source's name, its list and
//! its 0-based index within the list as written — entries that were dropped
//! still count — so messages point at the file as it is. [`LoadedPolicy::source_of`]
//! gives the [`Source`] of a rule, and with it the root that the rule's
//! [`Anchor::Source`](crate::rule::Anchor::Source) patterns are relative to.
//!
//! # What fails the load and what is only a warning (SPEC §13)
//!
//! Dropping an allow rule can only narrow what is allowed, so a malformed or
//! unsupported allow rule is dropped with a [`Warning`]. A malformed deny or
//! ask rule would widen it, so it fails the whole load with an [`Error`]
//! naming the file, the list, the index and the column. So does a file that
//! does not parse, and a tuff policy that fails tuff's validation. Every
//! method that adds a source either adds all of it or, on error, nothing.

pub mod cache;
pub mod image;
pub(crate) mod jsonc;
mod settings;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, ErrorKind, Location};
use crate::rule::tuff::{self, TuffPolicy};
use crate::rule::{Effect, List, Rule};

pub use image::{DecidingImage, PolicyImage, Probe};
pub use settings::ClaudeRoots;

/// The name of the source of rules given on the command line.
pub const COMMAND_LINE: &str = "<command line>";

/// What kind of source a set of rules came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceKind {
    /// Managed settings: `managed-settings.json` or a file of
    /// `managed-settings.d/`.
    Managed,
    /// User settings: `~/.claude/settings.json`.
    User,
    /// Shared project settings: `<project>/.claude/settings.json`.
    Project,
    /// Local project settings: `<project>/.claude/settings.local.json`.
    Local,
    /// A Claude settings file given by path (`--policy FILE.json`).
    Settings,
    /// A tuff policy given by path (`--policy policy.toml`).
    Tuff,
    /// An installed tuff policy (`--tuff ID`).
    TuffInstalled,
    /// Rules given on the command line (`--allow/--ask/--deny RULE`).
    CommandLine,
}

impl SourceKind {
    /// `"managed"`, `"user"`, `"project"`, `"local"`, `"settings"`,
    /// `"tuff"`, `"tuff-installed"` or `"command-line"`.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Managed => "managed",
            SourceKind::User => "user",
            SourceKind::Project => "project",
            SourceKind::Local => "local",
            SourceKind::Settings => "settings",
            SourceKind::Tuff => "tuff",
            SourceKind::TuffInstalled => "tuff-installed",
            SourceKind::CommandLine => "command-line",
        }
    }

    /// Precedence of the source's scalar settings (`defaultMode`): managed
    /// over files given by path over local over project over user.
    fn mode_rank(self) -> u8 {
        match self {
            SourceKind::Managed => 4,
            SourceKind::Settings => 3,
            SourceKind::Local => 2,
            SourceKind::Project => 1,
            _ => 0,
        }
    }
}

/// The directory a source's `/x` paths (and a tuff policy's patterns) are
/// relative to (SPEC §4.1, §13).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SourceRoot {
    /// A fixed directory (absolute).
    Dir(PathBuf),
    /// The session's project directory, known only when a call is
    /// evaluated (rules on the command line, a tuff policy given by path).
    Project,
}

impl SourceRoot {
    /// The directory itself: `project` (the session's project directory)
    /// for [`SourceRoot::Project`].
    pub fn resolve<'a>(&'a self, project: &'a Path) -> &'a Path {
        match self {
            SourceRoot::Dir(d) => d,
            SourceRoot::Project => project,
        }
    }
}

/// One source of a [`LoadedPolicy`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// The name rules carry in their provenance: the file's path as it
    /// was given or found, or [`COMMAND_LINE`].
    pub name: Arc<str>,
    /// The file, if the source is one.
    pub path: Option<PathBuf>,
    /// What kind of source it is.
    pub kind: SourceKind,
    /// What its `/x` paths are relative to.
    pub root: SourceRoot,
    /// A tuff policy's `id`.
    pub tuff_id: Option<String>,
}

/// Claude Code's permission modes (SPEC §9.3). `auto` and `manual` read
/// as [`PermissionMode::Default`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PermissionMode {
    /// `default` (also `auto`, `manual`).
    Default,
    /// `acceptEdits`.
    AcceptEdits,
    /// `plan`.
    Plan,
    /// `dontAsk`.
    DontAsk,
    /// `bypassPermissions`.
    BypassPermissions,
}

impl PermissionMode {
    /// The mode's name as settings files write it.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::DontAsk => "dontAsk",
            PermissionMode::BypassPermissions => "bypassPermissions",
        }
    }
}

impl std::str::FromStr for PermissionMode {
    type Err = Error;
    fn from_str(s: &str) -> Result<PermissionMode, Error> {
        Ok(match s {
            "default" | "auto" | "manual" => PermissionMode::Default,
            "acceptEdits" => PermissionMode::AcceptEdits,
            "plan" => PermissionMode::Plan,
            "dontAsk" => PermissionMode::DontAsk,
            "bypassPermissions" => PermissionMode::BypassPermissions,
            _ => {
                return Err(Error::new(
                    ErrorKind::Call,
                    format!(
                        "unknown permission mode {s:?}: expected default, acceptEdits, plan, \
                         dontAsk, bypassPermissions, auto or manual"
                    ),
                ));
            }
        })
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An entry of a settings file's `additionalDirectories`, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdditionalDirectory {
    /// The directory as written: absolute, `~/…` (the home directory) or
    /// relative (to the session's project directory); see
    /// [`AdditionalDirectory::resolve`].
    pub path: String,
    /// The index in [`LoadedPolicy::sources`] of the file that names it.
    pub source: usize,
}

impl AdditionalDirectory {
    /// The directory made absolute: `~` and `~/x` against `home`, a
    /// relative path against `project`. Not normalised.
    pub fn resolve(&self, project: &Path, home: &Path) -> PathBuf {
        if self.path == "~" {
            home.to_path_buf()
        } else if let Some(rest) = self.path.strip_prefix("~/") {
            home.join(rest)
        } else {
            project.join(&self.path)
        }
    }
}

/// A problem that did not fail the load (an allow rule dropped, a setting
/// ignored, comments tolerated). Located and rendered like an [`Error`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning(Error);

impl Warning {
    pub(crate) fn new(error: Error) -> Warning {
        Warning(error)
    }

    /// The one-clause message, without location.
    pub fn message(&self) -> &str {
        self.0.message()
    }

    /// Where the problem is.
    pub fn location(&self) -> &Location {
        self.0.location()
    }

    /// The warning as an [`Error`] (for a caller that treats warnings as
    /// errors).
    pub fn as_error(&self) -> &Error {
        &self.0
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The rules of every source given, in policy order, with their sources,
/// the settings that bear on evaluation, and the warnings of the load.
///
/// Not to be confused with the compiled matcher: a `LoadedPolicy` is plain
/// data, the input of compilation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadedPolicy {
    rules: Vec<Rule>,
    rule_sources: Vec<usize>,
    sources: Vec<Source>,
    warnings: Vec<Warning>,
    /// (rank, mode, source) of the `defaultMode` in force.
    default_mode: Option<(u8, PermissionMode, usize)>,
    additional_directories: Vec<AdditionalDirectory>,
    disable_bypass: bool,
    command_line: Option<usize>,
    command_line_counts: [usize; 3],
    /// Every file the load read or looked for, in order.
    probes: Vec<Probe>,
}

impl LoadedPolicy {
    /// An empty policy: no rules, no sources.
    pub fn new() -> LoadedPolicy {
        LoadedPolicy::default()
    }

    /// The policy of one file (see [`LoadedPolicy::add_file`]).
    pub fn from_file(path: &Path) -> Result<LoadedPolicy, Error> {
        let mut p = LoadedPolicy::new();
        p.add_file(path)?;
        Ok(p)
    }

    /// The Claude settings hierarchy of a project (see
    /// [`LoadedPolicy::add_claude_settings`]).
    pub fn discover(roots: &ClaudeRoots) -> Result<LoadedPolicy, Error> {
        let mut p = LoadedPolicy::new();
        p.add_claude_settings(roots)?;
        Ok(p)
    }

    /// Adds a file given by path: a tuff policy when its name ends in
    /// `.toml`, else a Claude settings file (JSON, or JSONC with a warning:
    /// its `permissions` block, or a bare `{"allow", "ask", "deny"}`). A
    /// settings file at `<project>/.claude/settings*.json` has `/x` paths
    /// relative to `<project>`, any other to its own directory; a tuff
    /// policy's patterns are relative to the session's project directory.
    ///
    /// A precompiled image (`toolgate compile`) is recognised by its first
    /// bytes and added as [`LoadedPolicy::add_image`] does.
    pub fn add_file(&mut self, path: &Path) -> Result<&mut LoadedPolicy, Error> {
        if image::file_is_image(path) {
            return self.add_image(path);
        }
        let name = path.display().to_string();
        let text = read_file(path, &name)?;
        if path.extension().is_some_and(|e| e == "toml") {
            self.add_tuff_text(
                &text,
                &name,
                Some(path),
                SourceKind::Tuff,
                SourceRoot::Project,
            )?;
        } else {
            let root = SourceRoot::Dir(settings_root(path));
            self.add_settings_text(&text, &name, Some(path), SourceKind::Settings, root)?;
        }
        self.probes.push(Probe::read(path, &text));
        Ok(self)
    }

    /// Adds the policy of a precompiled image (its sources, rules,
    /// warnings and settings, as they were loaded when it was compiled).
    /// An image that is stale, foreign or corrupt is an error naming it.
    pub fn add_image(&mut self, path: &Path) -> Result<&mut LoadedPolicy, Error> {
        let image = PolicyImage::read(path)?;
        image.check_fresh(&path.display().to_string())?;
        let (other, _) = image.into_parts();
        self.append(other, path)?;
        Ok(self)
    }

    /// Appends the sources of `other` after this policy's.
    fn append(&mut self, other: LoadedPolicy, path: &Path) -> Result<(), Error> {
        if self.command_line.is_some() && other.command_line.is_some() {
            return Err(Error::new(
                ErrorKind::Policy,
                "the image holds rules given on the command line, and so does this command: \
                 give them when compiling the image",
            )
            .with_source(path.display().to_string()));
        }
        let off = self.sources.len();
        self.sources.extend(other.sources);
        self.rules.extend(other.rules);
        self.rule_sources
            .extend(other.rule_sources.into_iter().map(|i| i + off));
        self.warnings.extend(other.warnings);
        if let Some((rank, mode, src)) = other.default_mode {
            if self.default_mode.is_none_or(|(r, _, _)| rank >= r) {
                self.default_mode = Some((rank, mode, src + off));
            }
        }
        self.additional_directories
            .extend(
                other
                    .additional_directories
                    .into_iter()
                    .map(|d| AdditionalDirectory {
                        path: d.path,
                        source: d.source + off,
                    }),
            );
        self.disable_bypass |= other.disable_bypass;
        if let Some(c) = other.command_line {
            self.command_line = Some(c + off);
            self.command_line_counts = other.command_line_counts;
        }
        self.probes.extend(other.probes);
        Ok(())
    }

    /// Adds the Claude settings text `text` of the source `name`, of kind
    /// `kind` with root `root` (for tests and embedders that hold the text).
    pub fn add_settings_text(
        &mut self,
        text: &str,
        name: &str,
        path: Option<&Path>,
        kind: SourceKind,
        root: SourceRoot,
    ) -> Result<&mut LoadedPolicy, Error> {
        let mut next = self.clone();
        let file = settings::SettingsFile::parse(text, name, kind)?;
        next.push_settings(file, name, path, kind, root, false)?;
        *self = next;
        Ok(self)
    }

    /// Adds the settings hierarchy of a project, in Claude Code's order:
    /// managed `managed-settings.json`, then `managed-settings.d/*.json` in
    /// name order, then `~/.claude/settings.json`,
    /// `<project>/.claude/settings.json` and
    /// `<project>/.claude/settings.local.json`. Missing files are skipped.
    /// When managed settings set `allowManagedPermissionRulesOnly`, the
    /// rules of the other files are ignored (with a warning each); their
    /// other settings still count.
    pub fn add_claude_settings(&mut self, roots: &ClaudeRoots) -> Result<&mut LoadedPolicy, Error> {
        let mut next = self.clone();
        let mut managed_only = false;
        let files = roots.files()?;
        if let Some(dir) = &roots.managed_dir {
            let drop_ins = dir.join(settings::DROP_INS);
            let names = files
                .iter()
                .filter(|f| f.path.parent() == Some(&drop_ins))
                .filter_map(|f| Some(f.path.file_name()?.to_str()?.to_string()))
                .collect();
            next.probes.push(Probe::Listing {
                dir: std::path::absolute(&drop_ins).unwrap_or(drop_ins),
                names,
            });
        }
        for found in files {
            let name = found.path.display().to_string();
            let Some(text) = read_optional(&found.path, &name)? else {
                next.probes.push(Probe::missing(&found.path));
                continue;
            };
            next.probes.push(Probe::read(&found.path, &text));
            let file = settings::SettingsFile::parse(&text, &name, found.kind)?;
            let is_managed = found.kind == SourceKind::Managed;
            if is_managed && file.managed_only {
                managed_only = true;
            }
            let skip_rules = managed_only && !is_managed;
            next.push_settings(
                file,
                &name,
                Some(&found.path),
                found.kind,
                found.root,
                skip_rules,
            )?;
        }
        *self = next;
        Ok(self)
    }

    /// Adds a tuff policy given by path (its patterns are relative to the
    /// session's project directory).
    pub fn add_tuff_file(&mut self, path: &Path) -> Result<&mut LoadedPolicy, Error> {
        let name = path.display().to_string();
        let text = read_file(path, &name)?;
        self.add_tuff_text(
            &text,
            &name,
            Some(path),
            SourceKind::Tuff,
            SourceRoot::Project,
        )?;
        self.probes.push(Probe::read(path, &text));
        Ok(self)
    }

    /// Adds the installed tuff policy `id`: the record
    /// `<dir_prefix>/policies/<id>/policy.toml` in the nearest directory at
    /// or above one of `starts` (tried in order); its patterns are relative
    /// to that directory.
    pub fn add_installed_tuff(
        &mut self,
        starts: &[PathBuf],
        dir_prefix: &Path,
        id: &str,
    ) -> Result<&mut LoadedPolicy, Error> {
        if !tuff::valid_policy_id(id) {
            return Err(Error::new(
                ErrorKind::Policy,
                format!("{id:?} cannot name a tuff policy: an id is one plain path component"),
            ));
        }
        let record = tuff::installed_record(dir_prefix, id);
        // Relative starts are made absolute, so that the search climbs.
        let starts: Vec<PathBuf> = starts
            .iter()
            .map(|s| std::path::absolute(s).unwrap_or_else(|_| s.clone()))
            .collect();
        let Some(root) = tuff::find_policy_root(&starts, dir_prefix, id) else {
            let starts: Vec<String> = starts.iter().map(|s| s.display().to_string()).collect();
            return Err(Error::new(
                ErrorKind::Policy,
                format!(
                    "no installed tuff policy {id:?}: no {} at or above {}",
                    record.display(),
                    starts.join(", ")
                ),
            ));
        };
        let path = root.join(&record);
        let name = path.display().to_string();
        let text = read_file(&path, &name)?;
        // The places searched before the one found: a record appearing in
        // one of them would be found instead.
        let mut missing = Vec::new();
        for start in &starts {
            for dir in start.ancestors() {
                if dir == root {
                    break;
                }
                missing.push(Probe::missing(&dir.join(&record)));
            }
            if start.ancestors().any(|d| d == root) {
                break;
            }
        }
        let found = Probe::read(&path, &text);
        let root = SourceRoot::Dir(root);
        self.add_tuff_text(&text, &name, Some(&path), SourceKind::TuffInstalled, root)?;
        self.probes.extend(missing);
        self.probes.push(found);
        Ok(self)
    }

    /// Adds the tuff policy text `text` of the source `name`.
    pub fn add_tuff_text(
        &mut self,
        text: &str,
        name: &str,
        path: Option<&Path>,
        kind: SourceKind,
        root: SourceRoot,
    ) -> Result<&mut LoadedPolicy, Error> {
        let policy = TuffPolicy::parse(text, name)?;
        let name: Arc<str> = Arc::from(name);
        let index = self.sources.len();
        self.sources.push(Source {
            name: name.clone(),
            path: path.map(Path::to_path_buf),
            kind,
            root,
            tuff_id: policy.id.clone(),
        });
        for rule in policy.to_rules(&name) {
            self.rules.push(rule);
            self.rule_sources.push(index);
        }
        Ok(self)
    }

    /// Adds a rule given on the command line (`--allow/--ask/--deny RULE`),
    /// in the `claude-code` dialect; its source is [`COMMAND_LINE`], its
    /// index counts the rules of its effect given so far, and its `/x` paths
    /// are relative to the session's project directory. A malformed allow
    /// rule is dropped with a warning; a malformed deny or ask rule is an
    /// error.
    pub fn add_rule(&mut self, effect: Effect, text: &str) -> Result<&mut LoadedPolicy, Error> {
        let list = list_of(effect);
        let slot = match list {
            List::Allow => 0,
            List::Ask => 1,
            _ => 2,
        };
        let index = self.command_line_counts[slot];
        let name: Arc<str> = Arc::from(COMMAND_LINE);
        let parsed = settings::parse_rule(text, list, index, &name)?;
        self.command_line_counts[slot] += 1;
        let source = match self.command_line {
            Some(s) => s,
            None => {
                self.sources.push(Source {
                    name,
                    path: None,
                    kind: SourceKind::CommandLine,
                    root: SourceRoot::Project,
                    tuff_id: None,
                });
                self.command_line = Some(self.sources.len() - 1);
                self.sources.len() - 1
            }
        };
        match parsed {
            settings::Parsed::Rule(rule) => {
                self.rules.push(*rule);
                self.rule_sources.push(source);
            }
            settings::Parsed::Dropped(w) => self.warnings.push(w),
        }
        Ok(self)
    }

    fn push_settings(
        &mut self,
        file: settings::SettingsFile,
        name: &str,
        path: Option<&Path>,
        kind: SourceKind,
        root: SourceRoot,
        skip_rules: bool,
    ) -> Result<(), Error> {
        let index = self.sources.len();
        let name: Arc<str> = Arc::from(name);
        self.sources.push(Source {
            name: name.clone(),
            path: path.map(Path::to_path_buf),
            kind,
            root,
            tuff_id: None,
        });
        self.warnings.extend(file.warnings);
        if skip_rules {
            if file.lists.iter().any(|(_, entries)| !entries.is_empty()) {
                self.warnings.push(Warning::new(
                    Error::new(
                        ErrorKind::Policy,
                        "rules ignored: managed settings set allowManagedPermissionRulesOnly",
                    )
                    .with_source(&*name),
                ));
            }
        } else {
            for (list, entries) in &file.lists {
                for (i, entry) in entries.iter().enumerate() {
                    let parsed = match entry {
                        serde_json::Value::String(text) => {
                            settings::parse_rule(text, *list, i, &name)?
                        }
                        other => settings::not_a_string(other, *list, i, &name)?,
                    };
                    match parsed {
                        settings::Parsed::Rule(rule) => {
                            self.rules.push(*rule);
                            self.rule_sources.push(index);
                        }
                        settings::Parsed::Dropped(w) => self.warnings.push(w),
                    }
                }
            }
        }
        if let Some(mode) = file.default_mode {
            // Claude Code ignores `auto` from project and local files.
            let ignored = mode.1 && matches!(kind, SourceKind::Project | SourceKind::Local);
            let rank = kind.mode_rank();
            if !ignored && self.default_mode.is_none_or(|(r, _, _)| rank >= r) {
                self.default_mode = Some((rank, mode.0, index));
            }
        }
        self.disable_bypass |= file.disable_bypass;
        self.additional_directories
            .extend(
                file.additional_directories
                    .into_iter()
                    .map(|path| AdditionalDirectory {
                        path,
                        source: index,
                    }),
            );
        Ok(())
    }

    /// The rules, in policy order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The rules, in policy order, taken out of the policy.
    pub fn into_rules(self) -> Vec<Rule> {
        self.rules
    }

    /// Every file the load read (with the checksum of its text) or looked
    /// for and did not find, and every directory it listed, in order: what
    /// a precompiled image of this policy must find unchanged.
    pub fn probes(&self) -> &[Probe] {
        &self.probes
    }

    /// The sources, in load order.
    pub fn sources(&self) -> &[Source] {
        &self.sources
    }

    /// The source of the rule at `rule_index` in [`LoadedPolicy::rules`].
    pub fn source_of(&self, rule_index: usize) -> Option<&Source> {
        self.sources.get(*self.rule_sources.get(rule_index)?)
    }

    /// The warnings of the load, in the order they arose.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// The settings' `defaultMode`, from the highest-precedence source that
    /// sets it (managed, files given by path — the last of them —, local,
    /// project, user), as written (`bypassPermissions` included; see
    /// [`LoadedPolicy::effective_mode`]).
    pub fn default_mode(&self) -> Option<PermissionMode> {
        self.default_mode.map(|(_, m, _)| m)
    }

    /// The mode to evaluate in: `requested` (a call's own mode or
    /// `--mode`), else [`LoadedPolicy::default_mode`]; a
    /// `bypassPermissions` becomes `default` when a source set
    /// `disableBypassPermissionsMode: "disable"`.
    pub fn effective_mode(&self, requested: Option<PermissionMode>) -> Option<PermissionMode> {
        let mode = requested.or(self.default_mode());
        match mode {
            Some(PermissionMode::BypassPermissions) if self.disable_bypass => {
                Some(PermissionMode::Default)
            }
            m => m,
        }
    }

    /// Every source's `additionalDirectories`, concatenated in load order.
    pub fn additional_directories(&self) -> &[AdditionalDirectory] {
        &self.additional_directories
    }

    /// Whether some source set `disableBypassPermissionsMode: "disable"`.
    pub fn disable_bypass(&self) -> bool {
        self.disable_bypass
    }
}

/// The list a rule of `effect` is given in.
fn list_of(effect: Effect) -> List {
    match effect {
        Effect::Allow => List::Allow,
        Effect::Ask => List::Ask,
        Effect::Deny => List::Deny,
    }
}

/// The root of a settings file given by path: `<project>` for
/// `<project>/.claude/settings*.json`, else the file's directory; made
/// absolute against the current directory.
fn settings_root(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = abs.parent().map(Path::to_path_buf).unwrap_or_default();
    let is_settings = abs
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("settings") && n.ends_with(".json"));
    if is_settings && dir.file_name().is_some_and(|n| n == ".claude") {
        if let Some(project) = dir.parent() {
            return project.to_path_buf();
        }
    }
    dir
}

fn read_file(path: &Path, name: &str) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(|e| {
        Error::new(
            ErrorKind::Io,
            format!("cannot read the policy: {}", tuff::io_clause(&e)),
        )
        .with_source(name)
    })
}

/// A discovered file: its text, or `None` when it does not exist.
fn read_optional(path: &Path, name: &str) -> Result<Option<String>, Error> {
    match std::fs::read_to_string(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        other => other.map(Some).map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot read the settings: {}", tuff::io_clause(&e)),
            )
            .with_source(name)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_roots() {
        let root = settings_root(Path::new("/p/.claude/settings.local.json"));
        assert_eq!(root, PathBuf::from("/p"));
        let root = settings_root(Path::new("/p/.claude/other.json"));
        assert_eq!(root, PathBuf::from("/p/.claude"));
        let root = settings_root(Path::new("/p/conf/settings.json"));
        assert_eq!(root, PathBuf::from("/p/conf"));
    }

    #[test]
    fn roots_resolve() {
        let project = Path::new("/p");
        assert_eq!(SourceRoot::Project.resolve(project), Path::new("/p"));
        let dir = SourceRoot::Dir("/home/u/.claude".into());
        assert_eq!(dir.resolve(project), Path::new("/home/u/.claude"));
    }

    #[test]
    fn modes() {
        assert_eq!(
            "auto".parse::<PermissionMode>().unwrap(),
            PermissionMode::Default
        );
        assert_eq!(
            "acceptEdits".parse::<PermissionMode>().unwrap(),
            PermissionMode::AcceptEdits
        );
        assert!("yolo".parse::<PermissionMode>().is_err());
    }

    proptest::proptest! {
        #[test]
        fn any_settings_text_loads_or_errs_without_panic(text in "[{}\\[\\]\":, a-z()*/\n]{0,80}") {
            let mut p = LoadedPolicy::new();
            let before = p.clone();
            if p.add_settings_text(&text, "s.json", None, SourceKind::Settings, SourceRoot::Project).is_err() {
                proptest::prop_assert_eq!(p, before);
            }
        }
    }
}
