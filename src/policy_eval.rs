//! tuff's `policy_eval` interface, backed by the compiled engine (SPEC §7).
//!
//! tuff (`tuff-core`) evaluates a `policy.toml` at run time through a module
//! `policy_eval`: a harness adapter turns its hook input into
//! [`PolicyAction`]s, [`evaluate`] finds the strongest rule any of them
//! matches, and the adapter turns the [`PolicyDecision`] back into the
//! harness's answer. This module offers the same items with the same
//! meanings, so code written against tuff's module ports by changing an
//! import; the matching behind them is toolgate's:
//!
//! - a command is read with the full shell reader (SPEC §8): wrappers,
//!   scripts, substitutions, brace expansion, `$'…'` escapes, here-docs fed
//!   to a shell, `time -p`, functions — the forms tuff's own reader misses;
//! - a policy is compiled once, the first time it is evaluated, and every
//!   later call matches against the compiled engine instead of looping over
//!   the rules.
//!
//! ```
//! use std::path::Path;
//! use toolgate::policy_eval::{evaluate, EvalContext, PolicyAction, PolicyConfig};
//!
//! let policy = PolicyConfig::parse(r#"
//!     [[policy.rules]]
//!     effect = "deny"
//!     command = ["git", "push", "--force"]
//!     reason = "Force pushes rewrite shared history."
//! "#, "policy.toml")?;
//! let ctx = EvalContext { root: Path::new("/repo"), cwd: Path::new("/repo") };
//! let actions = [PolicyAction::Shell("sh -c 'git -C . push -f origin'".into())];
//! let decision = evaluate("guardrails", &policy, &actions, ctx)?.unwrap();
//! assert_eq!(
//!     decision.message(),
//!     "Tuff policy 'guardrails' denies this call: rule 1 (command \"git push --force\"): \
//!      Force pushes rewrite shared history."
//! );
//! # Ok::<(), toolgate::Error>(())
//! ```

use std::cell::RefCell;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use crate::error::{Error, ErrorKind};
use crate::rule::tuff::{Subject, TuffPolicy, TuffRule};
use crate::{Effect, Evaluator, ToolCall};

/// A rule's effect: [`Effect::Deny`] or [`Effect::Ask`] (a policy cannot
/// allow).
pub type PolicyEffect = Effect;

/// A validated tuff policy (its `[policy]` section), compiled the first
/// time it is evaluated and kept compiled for every later call.
///
/// ```
/// use toolgate::policy_eval::PolicyConfig;
/// let policy = PolicyConfig::parse(
///     "[[policy.rules]]\neffect = \"ask\"\ncommand = [\"terraform\", \"apply\"]\n",
///     "policy.toml",
/// )?;
/// assert_eq!(policy.rules().len(), 1);
/// assert!(PolicyConfig::parse("[[policy.rules]]\neffect = \"allow\"\ncommand = [\"ls\"]\n",
///     "policy.toml").is_err());
/// # Ok::<(), toolgate::Error>(())
/// ```
pub struct PolicyConfig {
    policy: TuffPolicy,
    engine: OnceLock<Result<Engine, Error>>,
}

/// A policy compiled: the evaluator, and each rule's description as
/// decisions name it (written once, not on every decided call).
struct Engine {
    evaluator: Evaluator,
    descriptions: Vec<String>,
}

impl PolicyConfig {
    /// Reads and validates a `policy.toml` as tuff does (see
    /// [`TuffPolicy::parse`]); `source` names the file in errors.
    pub fn parse(text: &str, source: &str) -> Result<PolicyConfig, Error> {
        TuffPolicy::parse(text, source).map(PolicyConfig::from)
    }

    /// The rules, in file order.
    pub fn rules(&self) -> &[TuffRule] {
        &self.policy.rules
    }

    /// The validated policy.
    pub fn policy(&self) -> &TuffPolicy {
        &self.policy
    }

    fn engine(&self) -> Result<&Engine, Error> {
        let built = self.engine.get_or_init(|| {
            let source: Arc<str> = Arc::from(self.policy.id.as_deref().unwrap_or("policy.toml"));
            Ok(Engine {
                evaluator: Evaluator::from_rules(self.policy.to_rules(&source))?,
                descriptions: self.policy.rules.iter().map(description).collect(),
            })
        });
        built.as_ref().map_err(Clone::clone)
    }
}

impl From<TuffPolicy> for PolicyConfig {
    fn from(policy: TuffPolicy) -> PolicyConfig {
        PolicyConfig {
            policy,
            engine: OnceLock::new(),
        }
    }
}

impl Clone for PolicyConfig {
    fn clone(&self) -> PolicyConfig {
        PolicyConfig::from(self.policy.clone())
    }
}

impl fmt::Debug for PolicyConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PolicyConfig")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// One thing a tool call is about to do.
///
/// ```
/// use toolgate::policy_eval::PolicyAction;
/// let a = PolicyAction::Mcp { server: "github".into(), tool: "delete_repo".into() };
/// assert_ne!(a, PolicyAction::Shell("ls".into()));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicyAction {
    /// A shell command line, as the agent wrote it.
    Shell(String),
    /// A file read (a path, relative to the context's `cwd` or absolute;
    /// a `file://` prefix is dropped).
    Read(String),
    /// A file written, edited or deleted.
    Edit(String),
    /// An MCP tool call.
    Mcp {
        /// The server's name.
        server: String,
        /// The tool's name.
        tool: String,
    },
}

/// Where a call happens: the project the policy governs (its patterns are
/// relative to it; paths outside it match nothing) and the directory
/// relative paths in the call start from.
///
/// ```
/// use std::path::Path;
/// use toolgate::policy_eval::EvalContext;
/// let ctx = EvalContext { root: Path::new("/repo"), cwd: Path::new("/repo/src") };
/// assert_eq!(ctx.cwd, Path::new("/repo/src"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvalContext<'a> {
    /// The project the policy governs (absolute).
    pub root: &'a Path,
    /// The base of relative paths (absolute, or relative to `root`).
    pub cwd: &'a Path,
}

/// A tool call, as a harness adapter reads it from the hook input.
///
/// ```
/// use toolgate::policy_eval::{PolicyAction, PolicyHookRequest};
/// let req = PolicyHookRequest {
///     event: "PreToolUse".into(),
///     cwd: Some("/repo".into()),
///     roots: vec![],
///     actions: vec![PolicyAction::Shell("git push --force".into())],
/// };
/// assert_eq!(req.actions.len(), 1);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyHookRequest {
    /// The harness's name for the hook event.
    pub event: String,
    /// The call's working directory, if the input gives one.
    pub cwd: Option<PathBuf>,
    /// The workspace roots the input names.
    pub roots: Vec<PathBuf>,
    /// What the call is about to do.
    pub actions: Vec<PolicyAction>,
}

/// What the hook prints and the status it exits with.
///
/// ```
/// use toolgate::policy_eval::PolicyHookAnswer;
/// let quiet = PolicyHookAnswer { stdout: String::new(), exit_code: 0 };
/// assert_eq!(quiet, PolicyHookAnswer::default());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyHookAnswer {
    /// What the hook prints on stdout.
    pub stdout: String,
    /// Its exit status.
    pub exit_code: i32,
}

/// How a harness uses the evaluate hook for one rule (what
/// `toolgate coverage` reports).
///
/// ```
/// use toolgate::policy_eval::PolicyHookUse;
/// assert_eq!(PolicyHookUse::Optional.as_str(), "optional");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PolicyHookUse {
    /// A native setting enforces the rule; the hook is not used.
    Never,
    /// Only the hook enforces the rule.
    Required,
    /// A native setting enforces the rule, and the hook also catches the
    /// forms the setting misses (`git -C . push --force`, `/usr/bin/git`,
    /// `sh -c '…'`).
    Optional,
}

impl PolicyHookUse {
    /// `"never"`, `"required"` or `"optional"`.
    pub fn as_str(self) -> &'static str {
        match self {
            PolicyHookUse::Never => "never",
            PolicyHookUse::Required => "required",
            PolicyHookUse::Optional => "optional",
        }
    }
}

impl fmt::Display for PolicyHookUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the hook concluded about a call.
///
/// ```
/// use toolgate::policy_eval::PolicyVerdict;
/// let v = PolicyVerdict::Failed("the policy is not installed");
/// assert!(matches!(v, PolicyVerdict::Failed(_)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyVerdict<'a> {
    /// No rule matched: the harness decides as it would without the hook.
    NoMatch,
    /// A rule matched.
    Matched(&'a PolicyDecision),
    /// The input or the policy could not be read: the call is refused.
    Failed(&'a str),
}

/// The rule a call matched.
///
/// ```
/// use toolgate::policy_eval::PolicyDecision;
/// use toolgate::Effect;
/// let d = PolicyDecision {
///     effect: Effect::Ask,
///     policy: "infra".into(),
///     rule: 2,
///     description: "command \"terraform apply\"".into(),
///     reason: None,
/// };
/// assert_eq!(d.message(),
///     "Tuff policy 'infra' asks before this call: rule 2 (command \"terraform apply\")");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyDecision {
    /// [`Effect::Deny`] or [`Effect::Ask`].
    pub effect: PolicyEffect,
    /// The policy's id.
    pub policy: String,
    /// The rule's number in the policy, from 1.
    pub rule: usize,
    /// What the rule governs: `command "git push --force"`,
    /// `read ".env", "secrets/**"`, `mcp "github:delete_*"`.
    pub description: String,
    /// The rule's reason, if it gives one.
    pub reason: Option<String>,
}

impl PolicyDecision {
    /// `Tuff policy '<id>' denies this call: rule N (<description>)[:
    /// <reason>]`; for an ask the verb is "asks before".
    pub fn message(&self) -> String {
        let verb = match self.effect {
            Effect::Deny => "denies",
            _ => "asks before",
        };
        let mut m = format!(
            "Tuff policy '{}' {verb} this call: rule {} ({})",
            self.policy, self.rule, self.description
        );
        if let Some(r) = &self.reason {
            m.push_str(": ");
            m.push_str(r);
        }
        m
    }
}

/// What a rule governs, as decisions name it (its description without the
/// effect).
fn description(rule: &TuffRule) -> String {
    let quoted = |items: &[String]| {
        items
            .iter()
            .map(|i| format!("{i:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match &rule.subject {
        Subject::Command(words) => format!("command {:?}", words.join(" ")),
        Subject::Read(p) => format!("read {}", quoted(p)),
        Subject::Edit(p) => format!("edit {}", quoted(p)),
        Subject::Mcp { server, tool } => format!("mcp {:?}", format!("{server}:{tool}")),
    }
}

fn path_str<'p>(what: &str, p: &'p Path) -> Result<&'p str, Error> {
    p.to_str().ok_or_else(|| {
        Error::new(
            ErrorKind::Call,
            format!(
                "the {what} {:?} is not valid utf-8",
                p.display().to_string()
            ),
        )
    })
}

thread_local! {
    /// The engine's context for the last `(root, cwd)` evaluated on this
    /// thread: a harness asks about many calls in one context, and
    /// normalising its directories is a fair part of a call's cost.
    static LAST_CONTEXT: RefCell<Option<(PathBuf, PathBuf, crate::EvalContext)>> =
        const { RefCell::new(None) };
    /// A Bash call whose command is rewritten for each shell action, so a
    /// call allocates no map.
    static SHELL_CALL: RefCell<Option<ToolCall>> = const { RefCell::new(None) };
}

/// Runs `f` with the engine's context for `context` (a relative `cwd` is
/// taken against `root`).
fn with_context<T>(
    context: EvalContext<'_>,
    f: impl FnOnce(&crate::EvalContext) -> T,
) -> Result<T, Error> {
    let build = || {
        let root = path_str("project root", context.root)?;
        let cwd = path_str("working directory", context.cwd)?;
        let abs = if cwd.starts_with('/') {
            cwd.to_string()
        } else {
            crate::paths::join_lexical(root, cwd).unwrap_or_else(|| root.to_string())
        };
        crate::EvalContext::new(&abs)?.with_project_dir(root)
    };
    LAST_CONTEXT.with(|cell| {
        // Busy only if `f` evaluated again on this thread: build afresh.
        let Ok(mut slot) = cell.try_borrow_mut() else {
            return Ok(f(&build()?));
        };
        // (The same bytes as last time: valid already.)
        let hit = slot.as_ref().is_some_and(|(r, c, _)| {
            r.as_os_str() == context.root.as_os_str() && c.as_os_str() == context.cwd.as_os_str()
        });
        if !hit {
            let ctx = build()?;
            *slot = Some((context.root.to_path_buf(), context.cwd.to_path_buf(), ctx));
        }
        match slot.as_ref() {
            Some((_, _, ctx)) => Ok(f(ctx)),
            None => Ok(f(&build()?)),
        }
    })
}

/// Runs `f` with the call the engine decides for `action`.
fn with_call<T>(action: &PolicyAction, f: impl FnOnce(&ToolCall) -> T) -> Result<T, Error> {
    let PolicyAction::Shell(cmd) = action else {
        return Ok(f(&call_of(action)?));
    };
    SHELL_CALL.with(|cell| {
        let Ok(mut slot) = cell.try_borrow_mut() else {
            return Ok(f(&call_of(action)?));
        };
        if slot.is_none() {
            *slot = Some(call_of(action)?);
        }
        match slot.as_mut() {
            Some(call) => {
                // Its one entry, `command` (no lookup by name).
                match call.input.values_mut().next() {
                    Some(Value::String(s)) => {
                        s.clear();
                        s.push_str(cmd);
                    }
                    _ => *call = call_of(action)?,
                }
                Ok(f(call))
            }
            None => Ok(f(&call_of(action)?)),
        }
    })
}

/// The call the engine decides for one action.
fn call_of(action: &PolicyAction) -> Result<ToolCall, Error> {
    let with = |tool: &str, key: &str, value: &str| {
        let mut input = Map::new();
        input.insert(key.into(), Value::String(value.into()));
        ToolCall::new(tool, input)
    };
    match action {
        PolicyAction::Shell(cmd) => with("Bash", "command", cmd),
        PolicyAction::Read(p) => with("Read", "file_path", p.strip_prefix("file://").unwrap_or(p)),
        PolicyAction::Edit(p) => with("Edit", "file_path", p.strip_prefix("file://").unwrap_or(p)),
        PolicyAction::Mcp { server, tool } => {
            ToolCall::new(&format!("mcp__{server}__{tool}"), Map::new())
        }
    }
}

/// The strongest rule of `policy` that any of `actions` matches: a deny
/// over an ask, and the first rule of that effect in the policy. A deny
/// rule that only could match a command word that is not literal
/// (`git push $FLAG`) counts as an ask (fail closed). An error for a
/// context whose directories are not absolute UTF-8 paths, or an action
/// the engine cannot take as a call (an empty path).
///
/// ```
/// use std::path::Path;
/// use toolgate::policy_eval::{evaluate, EvalContext, PolicyAction, PolicyConfig};
/// use toolgate::Effect;
///
/// let policy = PolicyConfig::parse(r#"
///     [[policy.rules]]
///     effect = "ask"
///     command = ["terraform", "apply"]
///
///     [[policy.rules]]
///     effect = "deny"
///     read = [".env", "secrets/**"]
/// "#, "policy.toml")?;
/// let ctx = EvalContext { root: Path::new("/repo"), cwd: Path::new("/repo/app") };
/// let d = evaluate("infra", &policy, &[
///     PolicyAction::Shell("terraform -chdir=infra apply -auto-approve".into()),
///     PolicyAction::Read(".env".into()),
/// ], ctx)?.unwrap();
/// assert_eq!((d.effect, d.rule), (Effect::Deny, 2));
/// assert!(evaluate("infra", &policy, &[PolicyAction::Read("/etc/.env".into())], ctx)?.is_none());
/// # Ok::<(), toolgate::Error>(())
/// ```
pub fn evaluate(
    policy_id: &str,
    policy: &PolicyConfig,
    actions: &[PolicyAction],
    context: EvalContext<'_>,
) -> Result<Option<PolicyDecision>, Error> {
    let engine = policy.engine()?;
    // (level, deny before ask, rule index): the smallest wins.
    let mut best: Option<(Effect, usize)> = None;
    with_context(context, |ctx| {
        for action in actions {
            let rule = with_call(action, |call| {
                // Only the deciding rule is wanted: no decision is built.
                let found = engine.evaluator.narrowing_rule(call, ctx)?;
                Ok::<_, Error>(found.map(|m| (m.rule.effect, m.how, m.rule.provenance.index)))
            })??;
            let Some((effect, how, index)) = rule else {
                continue;
            };
            let level = match (effect, how) {
                (Effect::Deny, crate::eval::How::Matches) => Effect::Deny,
                (Effect::Allow, _) => continue,
                _ => Effect::Ask,
            };
            let key = (level, index);
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
        Ok::<_, Error>(())
    })??;
    Ok(best.and_then(|(effect, index)| {
        let rule = policy.rules().get(index)?;
        Some(PolicyDecision {
            effect,
            policy: policy_id.to_string(),
            rule: index + 1,
            description: engine.descriptions.get(index)?.clone(),
            reason: rule.reason.clone(),
        })
    }))
}

/// Whether the command token rule `rule` (`["git", "push", "--force"]`)
/// matches one invocation's argv (SPEC §7.2): the program by basename,
/// options before the subcommand skipped, the other words in order
/// anywhere after it, short-option clusters in any order or split, and a
/// program's long option counted as its letter.
///
/// ```
/// use toolgate::policy_eval::command_matches;
/// let w = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
/// let rule = w("git push --force");
/// assert!(command_matches(&rule, &w("/usr/bin/git -C . push origin main -f")));
/// assert!(!command_matches(&rule, &w("git push --force-with-lease")));
/// assert!(!command_matches(&rule, &w("legit push --force")));
/// ```
pub fn command_matches(rule: &[String], argv: &[String]) -> bool {
    crate::eval::tokens::tokens_match(rule, argv)
}

/// Whether the gitignore-style `pattern` matches `path`, a path relative
/// to the project root: anchored when a `/` comes before its end, at any
/// depth otherwise; a trailing `/` covers what is inside the directory; a
/// pattern that matches a directory covers everything in it; `*` and `?`
/// stay within a segment, `**` spans segments. A pattern tuff's validation
/// refuses matches nothing.
///
/// ```
/// use toolgate::policy_eval::path_matches;
/// assert!(path_matches(".env", "app/.env"));
/// assert!(!path_matches(".env", ".env.example"));
/// assert!(path_matches("secrets/", "secrets/key"));
/// assert!(!path_matches("secrets/", "secrets"));
/// assert!(!path_matches("config/*.pem", "config/sub/tls.pem"));
/// ```
pub fn path_matches(pattern: &str, path: &str) -> bool {
    if crate::rule::tuff::path_list("read", vec![pattern.to_string()]).is_err() {
        return false;
    }
    let Ok(p) = crate::rule::tuff::path_pattern(pattern) else {
        return false;
    };
    let path = path.trim_start_matches("./");
    !path.is_empty() && crate::reference::path_matches(&p, path)
}

/// Whether `pattern` matches all of `text`: `*` is any run of characters
/// and `?` one character, neither crossing a `/`.
///
/// ```
/// use toolgate::policy_eval::wildcard_matches;
/// assert!(wildcard_matches("delete_*", "delete_repo"));
/// assert!(wildcard_matches("git?ub", "github"));
/// assert!(!wildcard_matches("delete_*", "list_repos"));
/// ```
pub fn wildcard_matches(pattern: &str, text: &str) -> bool {
    // A few lines of backtracking to the last star: no glob crate matches
    // plain text without path or escape semantics of its own.
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        match p.get(i) {
            Some('*') => {
                star = Some((i, j));
                i += 1;
            }
            Some(&c) if (c == '?' && t[j] != '/') || c == t[j] => {
                i += 1;
                j += 1;
            }
            _ => match star {
                Some((si, sj)) if t[sj] != '/' => {
                    star = Some((si, sj + 1));
                    i = si + 1;
                    j = sj + 1;
                }
                _ => return false,
            },
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// The project an installed policy belongs to: the nearest directory at or
/// above one of `starts` (tried in order) that holds
/// `<dir_prefix>/policies/<id>/policy.toml`.
///
/// ```
/// use std::path::{Path, PathBuf};
/// use toolgate::policy_eval::find_policy_root;
/// let none = find_policy_root(&[PathBuf::from("/nonexistent/a")], Path::new(".tuff"), "x");
/// assert_eq!(none, None);
/// assert_eq!(find_policy_root(&[PathBuf::from("/")], Path::new(".tuff"), "../x"), None);
/// ```
pub fn find_policy_root(starts: &[PathBuf], dir_prefix: &Path, id: &str) -> Option<PathBuf> {
    crate::rule::tuff::find_policy_root(starts, dir_prefix, id)
}

/// Reads and validates an installed policy record (its `[policy]`
/// section); errors name the file.
///
/// ```
/// use std::path::Path;
/// use toolgate::policy_eval::load_installed_policy;
/// let err = load_installed_policy(Path::new("/nonexistent/policy.toml")).unwrap_err();
/// assert!(err.to_string().contains("no such file"));
/// ```
pub fn load_installed_policy(path: &Path) -> Result<PolicyConfig, Error> {
    crate::rule::tuff::load_installed_policy(path).map(PolicyConfig::from)
}
