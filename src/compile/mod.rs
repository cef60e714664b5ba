//! Stage 2: the rules of a policy compiled into one matcher per tool kind.
//!
//! A [`Policy`] is built once from an ordered list of [`Rule`]s and holds
//! one [`KindMatcher`] per tool kind: commands, read paths, edit paths,
//! domains, tool names (and one per input field that field rules name). A
//! query walks one haystack once and returns every matching rule's id into
//! a caller-owned [`Matches`], without allocating once the scratch has
//! grown to its working size.
//!
//! # Rule ids and precedence
//!
//! Rules are numbered deny first, then ask, then allow, each in policy
//! order (SPEC §9.2). The deciding rule of a set of matches is therefore
//! its smallest id: [`Matches::winner`].
//!
//! ```
//! use toolgate::compile::{Kind, Matches, Policy};
//! use toolgate::rule::{CommandForm, CommandPattern, GlobPiece, ToolMatch};
//! use toolgate::{Dialect, Effect, List, Pattern, Provenance, Rule};
//!
//! let rule = |text: &str, effect, form| Rule {
//!     text: text.to_string(),
//!     effect,
//!     dialect: Dialect::ClaudeCode,
//!     tool: ToolMatch::Name("Bash".to_string()),
//!     pattern: Pattern::Command(CommandPattern { form, case_insensitive: false }),
//!     provenance: Provenance::standalone(List::Allow),
//!     reason: None,
//! };
//! let policy = Policy::new(vec![
//!     rule("Bash(git *)", Effect::Allow, CommandForm::Glob(vec![
//!         GlobPiece::Literal("git ".into()), GlobPiece::Star])),
//!     rule("Bash(git push:*)", Effect::Deny, CommandForm::Prefix("git push".into())),
//! ])?;
//! let mut m = Matches::new();
//! policy.find(Kind::Command, Some("Bash"), "git push origin", &mut m);
//! // Both match; the deny rule has the smaller id and decides.
//! assert_eq!(m.ids().len(), 2);
//! assert_eq!(policy.rule(m.winner().unwrap()).unwrap().text, "Bash(git push:*)");
//! # Ok::<(), toolgate::Error>(())
//! ```
//!
//! # Paths and anchors
//!
//! A path rule is relative to its anchor directory (SPEC §4.1): the root,
//! the home directory, its source's root, or the project directory. The
//! path matcher keeps one [`KindMatcher`] per anchor group, and a query
//! ([`Policy::find_path`]) takes the call's absolute, normalised path and
//! the anchor directories *of this query* ([`AnchorDirs`]: they change from
//! call to call — each call line has its own project and home), relativises
//! the path once per group and queries that group. A path outside a
//! group's directory matches none of its rules.
//!
//! # Strategies and limits
//!
//! See [`lower`](self) (shapes) and the `strategy` module (size limits,
//! splitting, the bounded fallback); the measurements that chose them are
//! in BENCHMARKS.md.

mod glob;
pub(crate) mod image;
mod lazy;
mod lower;
mod matcher;
mod route;
mod strategy;
mod table;

pub use matcher::{KindMatcher, MatcherShape};

use crate::error::{Error, ErrorKind};
use crate::rule::{Anchor, CommandForm, Effect, Pattern, Rule, ToolMatch};
use lazy::LazyRules;
use lower::Lowered;
use std::sync::Arc;

/// The tools whose calls carry a path that `Read(…)` rules see.
const READ_TOOLS: &[&str] = &["Read", "Glob", "Grep", "LSP", "NotebookRead"];
/// The tools whose calls carry a path that `Edit(…)` rules see.
const EDIT_TOOLS: &[&str] = &["Edit", "Write", "MultiEdit", "NotebookEdit"];

/// A tool kind: which haystack a query walks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Command text (`Bash(…)`, `PowerShell(…)` rules).
    Command,
    /// A path that is read (`Read(…)` rules).
    Read,
    /// A path that is edited or written (`Edit(…)` rules, and in
    /// `claude-code` `Read(…)` deny rules).
    Edit,
    /// A host (`WebFetch(domain:…)` rules).
    Domain,
    /// A tool name (bare rules, MCP server rules, tool-name globs).
    Tool,
}

impl Kind {
    /// `"command"`, `"read path"`, `"edit path"`, `"domain"`, `"tool name"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Command => "command",
            Kind::Read => "read path",
            Kind::Edit => "edit path",
            Kind::Domain => "domain",
            Kind::Tool => "tool name",
        }
    }
}

/// Size limits and strategy knobs, by value.
///
/// The defaults keep a 10,000-rule realistic policy in one automaton per
/// strategy and bound any build: an automaton that would exceed its limit
/// is split in two and retried, at most `split_budget` times per kind;
/// what still does not fit is matched rule by rule by a bounded engine.
#[derive(Clone, Debug)]
pub struct Config {
    dfa_size_limit: usize,
    latch_group_size: usize,
    fwd_group_size: usize,
    latch_size_limit: usize,
    split_budget: usize,
    nfa_size_limit: usize,
    fallback_cache: usize,
    sparse_above: usize,
    lazy: bool,
    route_depth: usize,
    path_route_depth: usize,
    route_pack_size: usize,
    route_sparse_above: usize,
    path_tables: bool,
    path_table_min: usize,
    blowup_limit: u32,
}

impl Default for Config {
    fn default() -> Config {
        Config::new()
    }
}

impl Config {
    /// The defaults: 48 MiB per automaton of patterns that cannot
    /// multiply states; literal-led patterns with inner wildcards up to 256
    /// to an automaton, of which at most 4 latching ones whose literal
    /// prefixes nest; other latching patterns 4 to an automaton; such
    /// automata at most 2 MiB;
    /// 8 splits per kind; 8 MiB per rule's NFA; a 2 MiB lazy-DFA cache per
    /// fallback rule; automata over 8 MiB kept as sparse tables;
    /// literal-led command (and other text) rules routed by up to 2 leading
    /// words, in automata of up to 4,096 patterns of one shape (whole
    /// families of keys of the same first word together), kept sparse over
    /// 2 MiB; path rules not routed (measured slower, see BENCHMARKS.md).
    pub fn new() -> Config {
        Config {
            dfa_size_limit: 48 << 20,
            latch_group_size: 4,
            fwd_group_size: 256,
            latch_size_limit: 2 << 20,
            split_budget: 8,
            nfa_size_limit: 8 << 20,
            fallback_cache: 2 << 20,
            sparse_above: 8 << 20,
            lazy: false,
            route_depth: 2,
            path_route_depth: 0,
            route_pack_size: 4096,
            route_sparse_above: 2 << 20,
            path_tables: true,
            path_table_min: 1000,
            blowup_limit: 6,
        }
    }

    /// For a process that answers one call and exits (a hook): the lazy
    /// engine ([`Config::lazy`]). Building a 591-rule policy so takes about
    /// a millisecond instead of seconds; a query compiles the few rules
    /// whose literal prefix fits its haystack (tens of microseconds each),
    /// which a single call hardly notices. The answers are the same (the
    /// differential tests run this configuration too).
    pub fn one_shot() -> Config {
        Config::new().lazy(true)
    }

    /// Compile no automaton when the policy is built: exact literals go
    /// into the hash map as usual, and every regex rule is compiled on its
    /// own, by the bounded per-rule engine, the first time a query's
    /// haystack starts (suffix rules: ends) with the rule's literal text.
    /// Rules whose literal does not fit are skipped by a byte comparison.
    /// Meant for a process that answers a handful of calls.
    pub fn lazy(mut self, yes: bool) -> Config {
        self.lazy = yes;
        self
    }

    /// Literal-led rules of the text kinds (commands, domains, tool names,
    /// fields) whose literal text holds a space are reached through a hash of their
    /// leading words, up to this many (0: none routed; see the `route`
    /// module), instead of being walked in automata chosen by first byte.
    pub fn route_depth(mut self, words: usize) -> Config {
        self.route_depth = words.min(usize::from(u8::MAX));
        self
    }

    /// How many routed patterns of one shape share an automaton (the
    /// automata of consecutive keys are packed together; a query walks
    /// only the ones its keys lead to).
    pub fn route_pack_size(mut self, n: usize) -> Config {
        self.route_pack_size = n.max(1);
        self
    }

    /// [`Config::route_depth`] for path rules (separator `/`).
    pub fn path_route_depth(mut self, segments: usize) -> Config {
        self.path_route_depth = segments.min(usize::from(u8::MAX));
        self
    }

    /// Routed automata whose dense tables take more heap bytes than this
    /// are kept as sparse tables (see [`Config::sparse_above`]).
    pub fn route_sparse_above(mut self, bytes: usize) -> Config {
        self.route_sparse_above = bytes;
        self
    }

    /// Path rules whose matching form is a literal tied to segment
    /// boundaries — literal prefixes (`dir/**`, an exact path), any-depth
    /// names (`**/name`) and extensions (`**/*.ext`) — are matched by hash
    /// lookups instead of automata (on by default; off, they go into
    /// automata like the others).
    pub fn path_tables(mut self, yes: bool) -> Config {
        self.path_tables = yes;
        self
    }

    /// The fewest path rules of one kind and anchor for which
    /// [`Config::path_tables`] applies (1,000 by default). Below it the
    /// tables cost more than they save: on the largest real policy (591
    /// rules) they doubled a Read call (415 ns → 805 ns CPU), while on
    /// 10,000-rule sets they cut compiling, the image and its load.
    pub fn path_table_min(mut self, rules: usize) -> Config {
        self.path_table_min = rules;
        self
    }

    /// The largest state blow-up, as a power of two, that patterns may
    /// bring into one automaton by their shape alone (6 by default, so
    /// 64×). A one-character wildcard after a `*` and a character that
    /// tells positions apart (`*!???`, `*a[bc]`) doubles the states of
    /// the automaton per wildcard, whatever else is in it, and building
    /// such an automaton takes seconds before a size limit stops it. A
    /// pattern estimated over this goes straight to the bounded per-rule
    /// fallback (same answers); patterns under it share automata only
    /// with each other, their estimates summing to at most this.
    pub fn blowup_limit(mut self, log2: u32) -> Config {
        self.blowup_limit = log2;
        self
    }

    /// See [`Config::route_depth`].
    pub fn get_route_depth(&self) -> usize {
        self.route_depth
    }

    /// See [`Config::lazy`].
    pub fn get_lazy(&self) -> bool {
        self.lazy
    }

    /// Heap bytes one automaton may take while it is built and once built.
    pub fn dfa_size_limit(mut self, bytes: usize) -> Config {
        self.dfa_size_limit = bytes;
        self
    }

    /// How many latching patterns (`*a*b*`) share one automaton.
    pub fn latch_group_size(mut self, n: usize) -> Config {
        self.latch_group_size = n.max(1);
        self
    }

    /// How many literal-led patterns with inner wildcards (`git * --force`)
    /// share one automaton (it is walked only for haystacks that start
    /// like one of them).
    pub fn fwd_group_size(mut self, n: usize) -> Config {
        self.fwd_group_size = n.max(1);
        self
    }

    /// The size limit of an automaton of tracking or latching patterns.
    pub fn latch_size_limit(mut self, bytes: usize) -> Config {
        self.latch_size_limit = bytes;
        self
    }

    /// How many times per kind an automaton over its limit is split and
    /// retried before its rules go to the per-rule fallback (0: never
    /// split).
    pub fn split_budget(mut self, n: usize) -> Config {
        self.split_budget = n;
        self
    }

    /// Heap bytes one rule's NFA may take; a rule over it fails the build.
    pub fn nfa_size_limit(mut self, bytes: usize) -> Config {
        self.nfa_size_limit = bytes;
        self
    }

    /// Automata whose dense tables take more heap bytes than this are
    /// kept as sparse tables (smaller, slower to walk per byte).
    pub fn sparse_above(mut self, bytes: usize) -> Config {
        self.sparse_above = bytes;
        self
    }

    /// The lazy-DFA cache of a fallback rule.
    pub fn fallback_cache(mut self, bytes: usize) -> Config {
        self.fallback_cache = bytes;
        self
    }

    /// See [`Config::dfa_size_limit`].
    pub fn get_dfa_size_limit(&self) -> usize {
        self.dfa_size_limit
    }

    /// See [`Config::latch_group_size`].
    pub fn get_latch_group_size(&self) -> usize {
        self.latch_group_size
    }

    /// See [`Config::split_budget`].
    pub fn get_split_budget(&self) -> usize {
        self.split_budget
    }
}

/// Caller-owned scratch and result of a query: the matching rule ids,
/// sorted, without repeats.
#[derive(Clone, Debug, Default)]
pub struct Matches {
    pub(crate) ids: Vec<u32>,
    pub(crate) buf: Vec<u8>,
    /// Scratch for case-folded route keys.
    pub(crate) fold: Vec<u8>,
    /// Scratch of the path tables' query.
    pub(crate) path: table::PathScratch,
}

impl Matches {
    /// Empty scratch.
    pub fn new() -> Matches {
        Matches::default()
    }

    /// The matching rule ids, ascending (so in precedence order).
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// The deciding rule: the smallest id (deny over ask over allow, then
    /// policy order).
    pub fn winner(&self) -> Option<u32> {
        self.ids.first().copied()
    }

    /// Whether no rule matched.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// How many rules matched.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Forgets the matches (keeps the capacity).
    pub fn clear(&mut self) {
        self.ids.clear();
    }

    pub(crate) fn finish(&mut self) {
        if self.ids.len() > 1 {
            self.ids.sort_unstable();
            self.ids.dedup();
        }
    }
}

/// Which directory a group of path rules is relative to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AnchorKey {
    /// `//x`: the filesystem root.
    Root,
    /// `~/x`: the home directory.
    Home,
    /// `./x`, `x`: the project directory.
    Project,
    /// `/x`: the root of the named policy source.
    Source(Arc<str>),
}

/// The directories anchors stand for in one query (absolute, normalised,
/// no trailing `/` except for `/` itself). An anchor whose directory is not
/// given matches nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnchorDirs<'a> {
    /// The home directory.
    pub home: Option<&'a str>,
    /// The session's project directory.
    pub project: Option<&'a str>,
    /// `(source name, root directory)` of each policy source with `/x`
    /// rules; the name is the rules' `provenance.source`.
    pub sources: &'a [(&'a str, &'a str)],
}

impl<'a> AnchorDirs<'a> {
    fn dir_of(&self, key: &AnchorKey) -> Option<&'a str> {
        match key {
            AnchorKey::Root => Some("/"),
            AnchorKey::Home => self.home,
            AnchorKey::Project => self.project,
            AnchorKey::Source(name) => self
                .sources
                .iter()
                .find(|(n, _)| *n == &**name)
                .map(|(_, d)| *d),
        }
    }
}

/// `abs` relative to `dir`, when it lies strictly inside it.
fn relative<'p>(abs: &'p str, dir: &str) -> Option<&'p str> {
    let rest = abs.strip_prefix(dir)?;
    if dir.ends_with('/') {
        return Some(rest).filter(|r| !r.is_empty());
    }
    rest.strip_prefix('/').filter(|r| !r.is_empty())
}

/// The path rules of one kind, one [`KindMatcher`] per anchor group.
#[derive(Clone, Debug, Default)]
pub struct PathMatcher {
    pub(crate) groups: Vec<(AnchorKey, KindMatcher)>,
    /// The deferred rules of each group, in the same order (empty unless
    /// built with [`Config::lazy`]).
    pub(crate) lazy: Vec<LazyRules>,
}

impl PathMatcher {
    /// Appends the ids of the rules matching the absolute path `abs`.
    fn find_into(&self, abs: &str, dirs: &AnchorDirs<'_>, out: &mut Matches) {
        for (i, (key, m)) in self.groups.iter().enumerate() {
            if let Some(rel) = dirs.dir_of(key).and_then(|d| relative(abs, d)) {
                m.find_into(rel.as_bytes(), out);
                if let Some(l) = self.lazy.get(i) {
                    l.find_into(rel.as_bytes(), out);
                }
            }
        }
    }

    /// Every rule of the `key` group that matches `rel` (normalised,
    /// relative to that group's directory; empty matches nothing), sorted,
    /// in `out` (cleared first).
    pub fn find_relative(&self, key: &AnchorKey, rel: &str, out: &mut Matches) {
        out.ids.clear();
        if !rel.is_empty() {
            for (i, (k, m)) in self.groups.iter().enumerate() {
                if k == key {
                    m.find_into(rel.as_bytes(), out);
                    if let Some(l) = self.lazy.get(i) {
                        l.find_into(rel.as_bytes(), out);
                    }
                }
            }
        }
        out.finish();
    }

    /// The anchor groups and their matchers.
    pub fn groups(&self) -> impl Iterator<Item = (&AnchorKey, &KindMatcher)> {
        self.groups.iter().map(|(k, m)| (k, m))
    }
}

/// Builds a [`Policy`] with a [`Config`].
#[derive(Clone, Debug, Default)]
pub struct Builder {
    config: Config,
}

impl Builder {
    /// A builder with the default [`Config`].
    pub fn new() -> Builder {
        Builder::default()
    }

    /// Sets the configuration.
    pub fn configure(&mut self, config: Config) -> &mut Builder {
        self.config = config;
        self
    }

    /// Compiles `rules`, given in policy order (files in load order, then
    /// list order).
    pub fn build(&self, rules: Vec<Rule>) -> Result<Policy, Error> {
        Policy::compile(rules, &self.config)
    }
}

/// A compiled policy: its rules, numbered by precedence, and one matcher
/// per tool kind.
#[derive(Clone, Debug)]
pub struct Policy {
    rules: image::RuleTable,
    order: Vec<usize>,
    command: KindMatcher,
    read: PathMatcher,
    edit: PathMatcher,
    domain: KindMatcher,
    tool: KindMatcher,
    fields: Vec<(String, KindMatcher)>,
    tokens: Vec<u32>,
    /// Rules compiled on first need ([`Config::lazy`]).
    deferred: Deferred,
}

/// The deferred rules of the text kinds (paths keep theirs per group).
#[derive(Clone, Debug, Default)]
pub(crate) struct Deferred {
    pub(crate) command: LazyRules,
    pub(crate) domain: LazyRules,
    pub(crate) tool: LazyRules,
    /// One per entry of `Policy::fields`, in the same order (or none).
    pub(crate) fields: Vec<LazyRules>,
}

/// Builds one kind's matcher: eagerly, or (with [`Config::lazy`]) its
/// exact literals now and its regex rules on first need.
fn build_kind(
    l: &[(u32, Lowered)],
    term: Option<u8>,
    config: &Config,
    rules: &[Rule],
) -> Result<(KindMatcher, LazyRules), strategy::BuildFailure> {
    if !config.lazy {
        return Ok((strategy::build(l, term, config)?, LazyRules::default()));
    }
    let mut now: Vec<(u32, Lowered)> = Vec::new();
    let mut later: Vec<(u32, matcher::Walk, &str)> = Vec::new();
    let mut bound = 0u32;
    for (id, low) in l {
        bound = bound.max(id.saturating_add(1));
        match low {
            Lowered::Regex { place, re, .. } => {
                let walk = match place {
                    lower::Place::Fwd => matcher::Walk::Fwd,
                    lower::Place::Float => matcher::Walk::Float,
                    lower::Place::Rev => matcher::Walk::Rev,
                    lower::Place::Seg => matcher::Walk::Seg,
                    lower::Place::SegRev => matcher::Walk::SegRev,
                };
                later.push((*id, walk, re))
            }
            other => now.push((*id, other.clone())),
        }
    }
    let fail_closed = |id: u32| {
        rules
            .get(id as usize)
            .is_none_or(|r| r.effect != crate::rule::Effect::Allow)
    };
    let (lazy, slow) = lazy::build(&later, term, fail_closed, config)?;
    let mut m = strategy::build(&now, term, config)?;
    m.slow.extend(slow);
    m.id_bound = m.id_bound.max(bound);
    Ok((m, lazy))
}

/// Where a rule goes.
struct Routed {
    command: Vec<(u32, Lowered)>,
    read: Vec<(AnchorKey, u32, Lowered)>,
    edit: Vec<(AnchorKey, u32, Lowered)>,
    domain: Vec<(u32, Lowered)>,
    tool: Vec<(u32, Lowered)>,
    fields: Vec<(String, u32, Lowered)>,
    tokens: Vec<u32>,
}

fn anchor_key(a: Anchor, rule: &Rule) -> AnchorKey {
    match a {
        Anchor::Root => AnchorKey::Root,
        Anchor::Home => AnchorKey::Home,
        Anchor::Project => AnchorKey::Project,
        Anchor::Source => AnchorKey::Source(rule.provenance.source.clone()),
    }
}

fn route(rules: &[Rule]) -> Routed {
    let mut r = Routed {
        command: Vec::new(),
        read: Vec::new(),
        edit: Vec::new(),
        domain: Vec::new(),
        tool: Vec::new(),
        fields: Vec::new(),
        tokens: Vec::new(),
    };
    for (i, rule) in rules.iter().enumerate() {
        let id = i as u32;
        match &rule.pattern {
            Pattern::Any => r.tool.push((id, lower::lower_tool(&rule.tool))),
            Pattern::Command(p) => {
                for l in lower::lower_command(p) {
                    r.command.push((id, l));
                }
            }
            Pattern::Path(p) => {
                let key = anchor_key(p.anchor, rule);
                let l = glob::lower_path(p);
                if READ_TOOLS.iter().any(|t| rule.governs(t)) {
                    r.read.push((key.clone(), id, l.clone()));
                }
                if EDIT_TOOLS.iter().any(|t| rule.governs(t)) {
                    r.edit.push((key, id, l));
                }
            }
            Pattern::Domain(d) => r.domain.push((id, lower::lower_domain(d))),
            Pattern::Field { field, form } => {
                for l in lower::lower_form(form, false) {
                    r.fields.push((field.clone(), id, l));
                }
            }
            Pattern::Tokens(_) => r.tokens.push(id),
            Pattern::Opaque(_) => {}
        }
    }
    r
}

impl Policy {
    /// Compiles `rules` (in policy order) with the default [`Config`].
    pub fn new(rules: Vec<Rule>) -> Result<Policy, Error> {
        Policy::compile(rules, &Config::new())
    }

    /// A builder, to set a [`Config`].
    pub fn builder() -> Builder {
        Builder::new()
    }

    /// Numbers the rules by precedence: `(rules in id order, id → position
    /// in the input)`.
    fn number(rules: Vec<Rule>) -> Result<(Vec<Rule>, Vec<usize>), Error> {
        if rules.len() >= u32::MAX as usize {
            return Err(Error::new(ErrorKind::Limit, "too many rules in one policy"));
        }
        // The indices in precedence order, each effect's in policy order:
        // one pass per effect (a sort compared them O(n log n) times), and
        // each rule moved once into its place (sorting the rules themselves
        // moved each many times).
        // The match is exhaustive, so an effect added later cannot be left
        // out of the passes.
        let rank = |e: Effect| match e {
            Effect::Deny => 0,
            Effect::Ask => 1,
            Effect::Allow => 2,
        };
        let mut order: Vec<usize> = Vec::with_capacity(rules.len());
        for pass in 0..3 {
            order.extend(
                rules
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| rank(r.effect) == pass)
                    .map(|(i, _)| i),
            );
        }
        let mut slots: Vec<Option<Rule>> = rules.into_iter().map(Some).collect();
        let rules = order
            .iter()
            .filter_map(|&i| slots.get_mut(i).and_then(Option::take))
            .collect();
        Ok((rules, order))
    }

    fn compile(rules: Vec<Rule>, config: &Config) -> Result<Policy, Error> {
        let (rules, order) = Policy::number(rules)?;
        let routed = route(&rules);
        let fail = |kind: &str, f: strategy::BuildFailure| -> Error {
            let mut e = Error::new(
                ErrorKind::Limit,
                format!("{kind} rule {}: {}", quote(&rules, f.id), f.message),
            );
            if let Some(rule) = rules.get(f.id as usize) {
                e = e
                    .with_source(rule.provenance.source.to_string())
                    .with_item(rule.provenance.item());
            }
            e
        };
        let one = |kind: Kind, l: &[(u32, Lowered)], term: Option<u8>| {
            build_kind(l, term, config, &rules).map_err(|f| fail(kind.as_str(), f))
        };
        let paths = |kind: Kind, l: &[(AnchorKey, u32, Lowered)]| -> Result<PathMatcher, Error> {
            let mut keys: Vec<&AnchorKey> = Vec::new();
            for (k, _, _) in l {
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
            let mut groups = Vec::new();
            let mut lazy = Vec::new();
            for k in keys {
                let part: Vec<(u32, Lowered)> = l
                    .iter()
                    .filter(|(kk, _, _)| kk == k)
                    .map(|(_, id, x)| (*id, x.clone()))
                    .collect();
                let (m, d) = one(kind, &part, Some(b'/'))?;
                groups.push((k.clone(), m));
                lazy.push(d);
            }
            if lazy.iter().all(LazyRules::is_empty) {
                lazy.clear();
            }
            Ok(PathMatcher { groups, lazy })
        };
        let mut deferred = Deferred::default();
        let (command, d) = one(Kind::Command, &routed.command, None)?;
        deferred.command = d;
        let read = paths(Kind::Read, &routed.read)?;
        let edit = paths(Kind::Edit, &routed.edit)?;
        let (domain, d) = one(Kind::Domain, &routed.domain, None)?;
        deferred.domain = d;
        let (tool, d) = one(Kind::Tool, &routed.tool, None)?;
        deferred.tool = d;
        let mut names: Vec<&String> = Vec::new();
        for (f, _, _) in &routed.fields {
            if !names.contains(&f) {
                names.push(f);
            }
        }
        let mut fields = Vec::new();
        for name in names {
            let part: Vec<(u32, Lowered)> = routed
                .fields
                .iter()
                .filter(|(f, _, _)| f == name)
                .map(|(_, id, l)| (*id, l.clone()))
                .collect();
            let (m, d) = build_kind(&part, None, config, &rules).map_err(|f| fail("field", f))?;
            fields.push((name.clone(), m));
            deferred.fields.push(d);
        }
        if deferred.fields.iter().all(LazyRules::is_empty) {
            deferred.fields.clear();
        }
        Ok(Policy {
            command,
            read,
            edit,
            domain,
            tool,
            fields,
            tokens: routed.tokens,
            rules: image::RuleTable::Owned(rules),
            order,
            deferred,
        })
    }

    /// The rules, in id order (deny, ask, allow; each in policy order).
    /// A policy loaded from an image decodes them all on the first call
    /// (see [`Policy::rule`]).
    pub fn rules(&self) -> &[Rule] {
        self.rules.all()
    }

    /// The rule with this id. A policy loaded from an image decodes a rule
    /// when it is first asked for.
    pub fn rule(&self, id: u32) -> Option<&Rule> {
        self.rules.get(id)
    }

    /// How many rules the policy has.
    pub fn rule_count(&self) -> usize {
        self.rules.len()
    }

    /// The effect and pattern kind of the rule with this id, without
    /// decoding a rule of an image.
    pub(crate) fn rule_head(&self, id: u32) -> Option<(crate::rule::Effect, image::PatternKind)> {
        self.rules.head(id)
    }

    /// The position in the input list of the rule with this id.
    pub fn input_index(&self, id: u32) -> Option<usize> {
        self.order.get(id as usize).copied()
    }

    /// The ids of the tuff command token rules, which match an invocation's
    /// words rather than a text and are not compiled.
    pub fn token_rules(&self) -> &[u32] {
        &self.tokens
    }

    /// The matcher of a text kind (`Command`, `Domain`, `Tool`); `None` for
    /// the path kinds (see [`Policy::path_matcher`]).
    pub fn matcher(&self, kind: Kind) -> Option<&KindMatcher> {
        match kind {
            Kind::Command => Some(&self.command),
            Kind::Domain => Some(&self.domain),
            Kind::Tool => Some(&self.tool),
            Kind::Read | Kind::Edit => None,
        }
    }

    /// The matcher of a path kind (`Read`, `Edit`).
    pub fn path_matcher(&self, kind: Kind) -> Option<&PathMatcher> {
        match kind {
            Kind::Read => Some(&self.read),
            Kind::Edit => Some(&self.edit),
            _ => None,
        }
    }

    fn governed(&self, tool: Option<&str>, out: &mut Matches) {
        if let Some(tool) = tool {
            let rules = &self.rules;
            out.ids
                .retain(|&id| rules.get(id).is_some_and(|r| r.governs(tool)));
        }
    }

    /// Every rule of a text kind (`Command`, `Domain`, `Tool`) that matches
    /// `hay` — a command text, a host (ASCII lower case, no trailing `.`),
    /// a tool name — and, when `tool` is given, governs calls of that tool,
    /// sorted into `out` (cleared first). A path kind matches nothing here
    /// (see [`Policy::find_path`]).
    ///
    /// For `Tool`, `Task` is read as `Agent`.
    pub fn find(&self, kind: Kind, tool: Option<&str>, hay: &str, out: &mut Matches) {
        out.ids.clear();
        match kind {
            Kind::Command => {
                self.command.find_into(hay.as_bytes(), out);
                self.deferred.command.find_into(hay.as_bytes(), out);
            }
            Kind::Domain => {
                self.domain.find_into(hay.as_bytes(), out);
                self.deferred.domain.find_into(hay.as_bytes(), out);
            }
            Kind::Tool => {
                let hay = if hay == "Task" { "Agent" } else { hay };
                self.tool.find_into(hay.as_bytes(), out);
                self.deferred.tool.find_into(hay.as_bytes(), out);
            }
            Kind::Read | Kind::Edit => {}
        }
        out.finish();
        self.governed(tool, out);
    }

    /// Every path rule of `kind` (`Read` or `Edit`) that matches the
    /// absolute, normalised path `abs` (no `.`/`..` segments, no repeated
    /// or trailing `/`) relative to its anchor in `dirs`, and governs
    /// `tool` when given, sorted into `out` (cleared first).
    pub fn find_path(
        &self,
        kind: Kind,
        tool: Option<&str>,
        abs: &str,
        dirs: &AnchorDirs<'_>,
        out: &mut Matches,
    ) {
        out.ids.clear();
        match kind {
            Kind::Read => self.read.find_into(abs, dirs, out),
            Kind::Edit => self.edit.find_into(abs, dirs, out),
            _ => {}
        }
        out.finish();
        self.governed(tool, out);
    }

    /// Every field rule on input field `field` whose form matches `value`
    /// (a string as it is, a number or boolean as its JSON text), and
    /// governs `tool` when given, sorted into `out` (cleared first).
    pub fn find_field(&self, tool: Option<&str>, field: &str, value: &str, out: &mut Matches) {
        out.ids.clear();
        for (i, (f, m)) in self.fields.iter().enumerate() {
            if f == field {
                m.find_into(value.as_bytes(), out);
                if let Some(l) = self.deferred.fields.get(i) {
                    l.find_into(value.as_bytes(), out);
                }
            }
        }
        out.finish();
        self.governed(tool, out);
    }
}

fn quote(rules: &[Rule], id: u32) -> String {
    rules
        .get(id as usize)
        .map_or_else(|| format!("#{id}"), |r| r.text.clone())
}

// ---------------------------------------------------------------------------
// One rule at a time (the `match-rules` mode): compile the pattern alone and
// query it.

fn single(l: Vec<Lowered>, term: Option<u8>) -> Result<KindMatcher, Error> {
    let pairs: Vec<(u32, Lowered)> = l.into_iter().map(|x| (0, x)).collect();
    strategy::build(&pairs, term, &Config::new())
        .map_err(|f| Error::new(ErrorKind::Limit, f.message))
}

fn single_hit(m: &KindMatcher, hay: &[u8]) -> bool {
    let mut out = Matches::new();
    m.find_into(hay, &mut out);
    !out.ids.is_empty()
}

/// Whether `text` matches a command pattern, by the compiled engine.
pub fn command_matches(p: &crate::rule::CommandPattern, text: &str) -> Result<bool, Error> {
    Ok(single_hit(
        &single(lower::lower_command(p), None)?,
        text.as_bytes(),
    ))
}

/// Whether a normalised path relative to the pattern's anchor directory
/// matches a path pattern, by the compiled engine (an empty `rel`, the
/// anchor directory itself, matches nothing).
pub fn path_matches(p: &crate::rule::PathPattern, rel: &str) -> Result<bool, Error> {
    if rel.is_empty() {
        return Ok(false);
    }
    Ok(single_hit(
        &single(vec![glob::lower_path(p)], Some(b'/'))?,
        rel.as_bytes(),
    ))
}

/// Whether a host matches a domain pattern, by the compiled engine.
pub fn domain_matches(p: &crate::rule::DomainPattern, host: &str) -> Result<bool, Error> {
    Ok(single_hit(
        &single(vec![lower::lower_domain(p)], None)?,
        host.as_bytes(),
    ))
}

/// Whether a tool name matches a rule's tool part, by the compiled engine
/// (`Task` is read as `Agent`).
pub fn tool_matches(t: &ToolMatch, tool: &str) -> Result<bool, Error> {
    let tool = if tool == "Task" { "Agent" } else { tool };
    Ok(single_hit(
        &single(vec![lower::lower_tool(t)], None)?,
        tool.as_bytes(),
    ))
}

/// Whether a field's text matches a form, by the compiled engine.
pub fn form_matches(form: &CommandForm, text: &str) -> Result<bool, Error> {
    Ok(single_hit(
        &single(lower::lower_form(form, false), None)?,
        text.as_bytes(),
    ))
}

/// Does `rule` match `call`? The `match-rules` question (SPEC §10.1), by
/// the compiled engine: the rule is compiled on its own and queried. Same
/// semantics and errors as [`crate::reference::match_rule`], which stays the
/// oracle it is tested against.
pub fn match_rule(
    rule: &Rule,
    call: &crate::ToolCall,
    ctx: &crate::MatchContext,
) -> Result<bool, Error> {
    if !rule.governs(&call.tool) {
        return Ok(false);
    }
    let call_error = |m: String| Error::new(ErrorKind::Call, m);
    match &rule.pattern {
        Pattern::Any => Ok(true),
        Pattern::Opaque(_) => Ok(false),
        Pattern::Command(p) => match call.command() {
            Some(text) => command_matches(p, text),
            None => Err(call_error(format!(
                "a {} call needs a string command for rule {}",
                call.tool, rule.text
            ))),
        },
        Pattern::Field { field, form } => {
            let text = match call.input.get(field) {
                Some(serde_json::Value::String(s)) => s.clone(),
                Some(serde_json::Value::Number(n)) => n.to_string(),
                Some(serde_json::Value::Bool(b)) => b.to_string(),
                _ => return Ok(false),
            };
            form_matches(form, &text)
        }
        Pattern::Domain(p) => {
            let Some(url) = call.url() else {
                return Err(call_error(format!(
                    "a {} call needs a string url for rule {}",
                    call.tool, rule.text
                )));
            };
            domain_matches(p, &crate::reference::host_of(url)?)
        }
        Pattern::Path(p) => {
            let path = match call.path() {
                Some(path) => path,
                None if matches!(call.tool.as_str(), "Glob" | "Grep" | "LSP") => ".",
                None => {
                    return Err(call_error(format!(
                        "a {} call needs a string file_path (or path) for rule {}",
                        call.tool, rule.text
                    )));
                }
            };
            path_rule_matches(p, path, ctx)
        }
        Pattern::Tokens(_) => Err(call_error(format!(
            "rule {} is a command token rule, which needs a shell reading",
            rule.text
        ))),
    }
}

/// A path rule against a `match-rules` call path: the reading of
/// [`crate::reference::match_rule`] (relative paths against the session
/// directory, `//` rules against the absolute path, `~` a literal segment).
fn path_rule_matches(
    p: &crate::rule::PathPattern,
    path: &str,
    ctx: &crate::MatchContext,
) -> Result<bool, Error> {
    let (abs, rel) = crate::paths::session_forms(path, ctx.cwd.as_deref())
        .map_err(|m| Error::new(ErrorKind::Call, m))?;
    let hit = |r: &str| path_matches(p, r);
    match p.anchor {
        Anchor::Root => match abs {
            Some(a) => hit(a.trim_start_matches('/')),
            None => Ok(false),
        },
        Anchor::Home => match rel.as_deref().and_then(|r| r.split_once('/')) {
            Some(("~", rest)) => hit(rest),
            _ => Ok(false),
        },
        Anchor::Source | Anchor::Project => match rel {
            Some(r) => hit(&r),
            None => Ok(false),
        },
    }
}
