//! Stage 3: from a tool call to a decision with its reasons (SPEC §9).
//!
//! # Use
//!
//! Build an [`Evaluator`] once from a policy — it compiles the rules into
//! one matcher per tool kind — and call [`Evaluator::evaluate`] for each
//! call, with the [`EvalContext`] the call is made in:
//!
//! ```
//! use toolgate::eval::{EvalContext, Evaluator, Verdict};
//! use toolgate::policy::LoadedPolicy;
//! use toolgate::{Effect, ToolCall};
//!
//! let mut policy = LoadedPolicy::new();
//! policy.add_rule(Effect::Allow, "Bash(git *)")?;
//! policy.add_rule(Effect::Deny, "Bash(git push --force:*)")?;
//! policy.add_rule(Effect::Deny, "Read(.env)")?;
//! let eval = Evaluator::new(&policy)?;
//! let ctx = EvalContext::new("/home/me/app")?;
//!
//! let call = |v| ToolCall::from_json(&v).unwrap();
//! let d = eval.evaluate(&call(serde_json::json!(
//!     {"tool": "Bash", "input": {"command": "git status && git log"}})), &ctx)?;
//! assert_eq!(d.verdict, Verdict::Allow);
//! assert_eq!(d.rule_text(), Some("Bash(git *)"));
//!
//! // A wrapper, an option before the subcommand: still the deny rule.
//! let d = eval.evaluate(&call(serde_json::json!(
//!     {"tool": "Bash", "input": {"command": "sudo git -C . push --force"}})), &ctx)?;
//! assert_eq!(d.verdict, Verdict::Deny);
//! assert_eq!(d.rule_text(), Some("Bash(git push --force:*)"));
//!
//! // The files a command reads meet the Read rules.
//! let d = eval.evaluate(&call(serde_json::json!(
//!     {"tool": "Bash", "input": {"command": "git diff > /dev/null; cat .env"}})), &ctx)?;
//! assert_eq!(d.verdict, Verdict::Deny);
//! # Ok::<(), toolgate::Error>(())
//! ```
//!
//! # What happens to a call
//!
//! 1. **Actions** (SPEC §9.1). A Bash call is read by [`crate::shell`]: one
//!    *run* per invocation (wrappers peeled, SPEC §8.2), a *read* or *edit*
//!    per file it names (SPEC §8.5), a *fetch* per host, and the command
//!    as a whole (exact rules; every deny and ask rule when the reading is
//!    incomplete). A file tool's call is one read or edit of its path
//!    (made absolute against the cwd, `~` expanded, `.`/`..` collapsed,
//!    and — when the context follows symlinks — with its symlink chain and
//!    real path). A `WebFetch` is a fetch of its URL's host. Any other
//!    call is a use of its tool.
//! 2. **Matches** (SPEC §8.4). Every candidate text of a run serves deny
//!    and ask rules; only the certain ones serve allow rules. Dynamic and
//!    glob words are matched by their source text, and a deny or ask rule
//!    that *could* match one of their values makes the action ask. A
//!    recursive read or write of a directory could match the deny and ask
//!    rules whose literal directory lies under it.
//! 3. **Precedence** (SPEC §9.2, `decide.rs`): deny over ask over allow;
//!    the reported rule is the first of the deciding effect in policy
//!    order; a Bash call is allowed only if every run is (and every file
//!    that needs approval: reads outside the working directories, every
//!    edit). An incomplete reading is asked about unless a deny rule
//!    matched.
//! 4. **Modes** (SPEC §9.3, `mode.rs`), only when the context has one.
//!
//! The reference evaluator ([`crate::reference_eval`]) derives the same
//! actions and matches them rule by rule with the reference matchers; the
//! differential tests hold the two to the same verdict and deciding rule.

pub(crate) mod action;
mod bash;
pub mod call;
mod context;
mod decide;
mod decision;
pub mod mode;
pub(crate) mod tokens;
pub(crate) mod unify;

pub use context::EvalContext;
pub use decision::{
    ActionKind, ActionReport, DecidingRule, Decision, How, Outcome, RuleMatch, Subject, Verdict,
};

use crate::compile::image::PatternKind;
use crate::compile::{AnchorDirs, Config, Kind, Matches, Policy};
use crate::error::Error;
use crate::policy::{AdditionalDirectory, LoadedPolicy, PermissionMode, SourceRoot};
use crate::rule::{DomainPattern, Effect, Pattern, Rule};
use crate::shell::reduce::CandTexts;
use action::{Access, Action, Target};
use call::ToolCall;
use serde_json::Value;
use std::sync::Arc;

/// Above this many deny and ask rules that could match a dynamic word, an
/// action simply asks (SPEC §8.4).
pub const COULD_BUDGET: usize = 64;

/// The policy-level facts both evaluators need besides the rules.
#[derive(Clone, Debug, Default)]
pub(crate) struct PolicyFacts {
    /// `(source name, root)` of each source.
    pub sources: Vec<(Arc<str>, SourceRoot)>,
    pub additional: Vec<AdditionalDirectory>,
    pub default_mode: Option<PermissionMode>,
    pub disable_bypass: bool,
}

impl PolicyFacts {
    pub(crate) fn of(policy: &LoadedPolicy) -> PolicyFacts {
        PolicyFacts {
            sources: policy
                .sources()
                .iter()
                .map(|s| (s.name.clone(), s.root.clone()))
                .collect(),
            additional: policy.additional_directories().to_vec(),
            default_mode: policy.default_mode(),
            disable_bypass: policy.disable_bypass(),
        }
    }

    /// The root directory of the source named `name` (absolute,
    /// normalised), for `/x` rules; `None` when unknown.
    pub(crate) fn source_root(&self, name: &str, ctx: &EvalContext) -> Option<String> {
        let (_, root) = self.sources.iter().find(|(n, _)| &**n == name)?;
        match root {
            SourceRoot::Project => Some(ctx.project_dir().to_string()),
            SourceRoot::Dir(d) => crate::paths::normalize_lexical(d.to_str()?),
        }
    }

    pub(crate) fn effective_mode(
        &self,
        requested: Option<PermissionMode>,
    ) -> Option<PermissionMode> {
        match requested.or(self.default_mode) {
            Some(PermissionMode::BypassPermissions) if self.disable_bypass => {
                Some(PermissionMode::Default)
            }
            m => m,
        }
    }

    pub(crate) fn with_dirs(&self, mut ctx: EvalContext) -> Result<EvalContext, Error> {
        for d in &self.additional {
            if (d.path == "~" || d.path.starts_with("~/")) && ctx.home().is_none() {
                continue;
            }
            ctx = ctx.with_additional_dir(&d.path)?;
        }
        Ok(ctx)
    }
}

/// What every evaluation on a thread reuses: the match buffers, the
/// action list and the candidate texts' buffer.
#[derive(Default)]
struct Scratch {
    matches: Matches,
    ids: Vec<(u32, How)>,
    actions: action::Actions,
    /// The subjects of a call's actions, written one after another.
    subjects: String,
    /// The room of the list of each action's matches (empty: its matches
    /// borrow the evaluator of one call).
    all: Vec<Vec<RuleMatch<'static>>>,
    /// The command rules that match a Bash call's whole text.
    whole: Vec<u32>,
}

/// The buffers [`Evaluator::decide_actions`] writes into: matches, rule
/// ids, subjects, each action's matches, the whole command's matches.
type DecideBuffers<'a, 'p> = (
    &'a mut Matches,
    &'a mut Vec<(u32, How)>,
    &'a mut String,
    &'a mut Vec<Vec<RuleMatch<'p>>>,
    &'a mut Vec<u32>,
);

/// A command text matched already in this call, and the command rules
/// that match it: a run whose candidate is the whole command (a command
/// of one plain invocation) is not matched twice.
struct Memo<'t, 'a> {
    text: Option<&'t str>,
    ids: &'a mut Vec<u32>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// The compiled evaluator: built once from a policy, asked once per call.
///
/// Cheap to share across threads (`&Evaluator` is all `evaluate` needs).
#[derive(Clone, Debug)]
pub struct Evaluator {
    policy: Policy,
    facts: PolicyFacts,
    /// Field names that field rules read.
    fields: Vec<String>,
    /// Deny and ask command rules with their literal prefix (ids).
    could_commands: Vec<(u32, String)>,
    /// Deny and ask path rules (ids) by access.
    could_read: Vec<u32>,
    could_edit: Vec<u32>,
    /// Deny and ask domain rules (ids); those on `domain:*`.
    could_domains: Vec<u32>,
    any_domains: Vec<u32>,
    /// Each source's root, normalised once (`None`: the project directory
    /// of the call).
    roots: Vec<(Arc<str>, Option<String>)>,
    /// The tuff token rules by program and subcommand.
    token_index: tokens::TokenIndex,
    /// What of a Bash command the rules can use.
    needs: action::Needs,
    /// The tool-name rules that match each tool of [`KNOWN_TOOLS`], found
    /// on its first call: they depend on the tool's name only.
    tool_ids: [std::sync::OnceLock<Vec<u32>>; KNOWN_TOOLS.len()],
    /// The policy has tool-name rules (a policy without any, such as a
    /// tuff policy, skips their lookup: it can match nothing).
    tool_rules: bool,
}

/// The tools whose tool-name matches an evaluator keeps (those with a
/// specifier: every call of them is matched by name the same way).
const KNOWN_TOOLS: [&str; 11] = [
    "Bash",
    "Monitor",
    "PowerShell",
    "Read",
    "Glob",
    "Grep",
    "Edit",
    "Write",
    "MultiEdit",
    "NotebookEdit",
    "WebFetch",
];

impl Evaluator {
    /// Compiles a loaded policy (its rules in policy order, its sources'
    /// roots, its additional directories and default mode).
    pub fn new(policy: &LoadedPolicy) -> Result<Evaluator, Error> {
        Evaluator::with_config(policy, Config::new())
    }

    /// Compiles a loaded policy with a matcher configuration of its own
    /// (e.g. [`Config::one_shot`] in a process that answers one call).
    pub fn with_config(policy: &LoadedPolicy, config: Config) -> Result<Evaluator, Error> {
        Evaluator::build(policy.rules().to_vec(), PolicyFacts::of(policy), config)
    }

    /// Compiles bare rules (in policy order). `/x` rules are anchored at
    /// the project directory of each call.
    pub fn from_rules(rules: Vec<Rule>) -> Result<Evaluator, Error> {
        let mut facts = PolicyFacts::default();
        for r in &rules {
            let name = r.provenance.source.clone();
            if !facts.sources.iter().any(|(n, _)| *n == name) {
                facts.sources.push((name, SourceRoot::Project));
            }
        }
        Evaluator::build(rules, facts, Config::new())
    }

    /// An evaluator over `policy` compiled already as `compiled` (from a
    /// precompiled image): `compiled` must hold exactly `policy`'s rules.
    pub fn with_compiled(policy: &LoadedPolicy, compiled: Policy) -> Result<Evaluator, Error> {
        let same = compiled.rule_count() == policy.rules().len()
            && (0..compiled.rule_count() as u32).all(|id| {
                compiled.input_index(id).and_then(|i| policy.rules().get(i)) == compiled.rule(id)
            });
        if !same {
            return Err(Error::new(
                crate::error::ErrorKind::Image,
                "the compiled matchers were built from other rules",
            ));
        }
        Evaluator::assemble(compiled, PolicyFacts::of(policy))
    }

    /// An evaluator over `compiled` with the sources, additional
    /// directories and modes of `policy`, whose rules are neither read nor
    /// compared: for a precompiled image, whose rules were decoded once,
    /// into `compiled`, from the same checksummed bytes.
    pub(crate) fn with_compiled_facts(
        policy: &LoadedPolicy,
        compiled: Policy,
    ) -> Result<Evaluator, Error> {
        Evaluator::assemble(compiled, PolicyFacts::of(policy))
    }

    fn build(rules: Vec<Rule>, facts: PolicyFacts, config: Config) -> Result<Evaluator, Error> {
        let policy = Policy::builder().configure(config).build(rules)?;
        Evaluator::assemble(policy, facts)
    }

    fn assemble(policy: Policy, facts: PolicyFacts) -> Result<Evaluator, Error> {
        let mut e = Evaluator {
            policy,
            facts,
            fields: Vec::new(),
            could_commands: Vec::new(),
            could_read: Vec::new(),
            could_edit: Vec::new(),
            could_domains: Vec::new(),
            any_domains: Vec::new(),
            roots: Vec::new(),
            token_index: tokens::TokenIndex::default(),
            needs: action::Needs::ALL,
            tool_ids: Default::default(),
            tool_rules: true,
        };
        let token_rules: Vec<(u32, &[String])> = e
            .policy
            .token_rules()
            .iter()
            .filter_map(|&id| match &e.policy.rule(id)?.pattern {
                Pattern::Tokens(t) => Some((id, &t[..])),
                _ => None,
            })
            .collect();
        e.token_index = tokens::TokenIndex::new(token_rules);
        for (name, root) in &e.facts.sources {
            let dir = match root {
                SourceRoot::Project => None,
                SourceRoot::Dir(d) => match d.to_str().and_then(crate::paths::normalize_lexical) {
                    Some(d) => Some(d),
                    // A root that is not UTF-8 or not absolute anchors nothing.
                    None => continue,
                },
            };
            e.roots.push((name.clone(), dir));
        }
        // Only field rules and deny and ask rules are read: a policy
        // loaded from an image decodes a rule when it is first asked for.
        let (mut commands, mut tools) = (false, false);
        for id in 0..e.policy.rule_count() as u32 {
            let Some((effect, kind)) = e.policy.rule_head(id) else {
                continue;
            };
            commands |= kind == PatternKind::Command;
            tools |= kind == PatternKind::Any;
            if effect == Effect::Allow && kind != PatternKind::Field {
                continue;
            }
            let Some(r) = e.policy.rule(id) else { continue };
            if let Pattern::Field { field, .. } = &r.pattern {
                if !e.fields.contains(field) {
                    e.fields.push(field.clone());
                }
            }
            if r.effect == Effect::Allow {
                continue;
            }
            match &r.pattern {
                Pattern::Command(p) => e
                    .could_commands
                    .push((id, unify::command_literal_prefix(&p.form).to_string())),
                Pattern::Path(_) => {
                    if r.governs("Read") {
                        e.could_read.push(id);
                    }
                    if r.governs("Edit") {
                        e.could_edit.push(id);
                    }
                }
                Pattern::Domain(d) => {
                    e.could_domains.push(id);
                    if *d == DomainPattern::Any {
                        e.any_domains.push(id);
                    }
                }
                _ => {}
            }
        }
        e.needs = action::Needs {
            candidates: commands,
            deny_candidates: !e.could_commands.is_empty(),
            words: !e.policy.token_rules().is_empty(),
        };
        e.tool_rules = tools;
        Ok(e)
    }

    /// The rules, in id order (deny, ask, allow; each in policy order).
    pub fn rules(&self) -> &[Rule] {
        self.policy.rules()
    }

    /// The compiled policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The mode to evaluate in: `requested` (a call's own mode, or the
    /// `--mode` flag), else the policy's `defaultMode`; a
    /// `bypassPermissions` becomes `default` when the policy disables it.
    /// Hooks do not call this: they never resolve modes (SPEC §9.3).
    pub fn effective_mode(&self, requested: Option<PermissionMode>) -> Option<PermissionMode> {
        self.facts.effective_mode(requested)
    }

    /// `ctx` with the policy's `additionalDirectories` added (relative ones
    /// against its project directory; `~/x` ones only when it has a home).
    pub fn with_policy_dirs(&self, ctx: EvalContext) -> Result<EvalContext, Error> {
        self.facts.with_dirs(ctx)
    }

    /// Decides `call` in `ctx` (SPEC §9). An error only for a call that is
    /// malformed for its tool (a Bash call without a string `command`, a
    /// file tool without a path, a `WebFetch` without a `url`).
    pub fn evaluate<'p>(
        &'p self,
        call: &ToolCall,
        ctx: &EvalContext,
    ) -> Result<Decision<'p>, Error> {
        self.evaluate_with(call, ctx, true)
    }

    /// [`Evaluator::evaluate`] for a caller that reports only the verdict,
    /// the deciding rule and the reason: the decision's
    /// [`actions`](Decision::actions) are left empty (what the reason
    /// needs of them, [`Decision::unmatched`], is kept), which spares
    /// their reports. The verdict, rule and [`Decision::reason`] are those
    /// of [`Evaluator::evaluate`].
    ///
    /// ```
    /// use toolgate::eval::{EvalContext, Evaluator, Verdict};
    /// use toolgate::policy::LoadedPolicy;
    /// use toolgate::{Effect, ToolCall};
    ///
    /// let mut policy = LoadedPolicy::new();
    /// policy.add_rule(Effect::Deny, "Bash(git push --force:*)")?;
    /// let eval = Evaluator::new(&policy)?;
    /// let ctx = EvalContext::new("/home/me/app")?;
    /// let call = |c: &str| ToolCall::from_json(
    ///     &serde_json::json!({"tool": "Bash", "input": {"command": c}})).unwrap();
    ///
    /// let d = eval.decide(&call("sudo git push --force"), &ctx)?;
    /// assert_eq!(d.verdict, Verdict::Deny);
    /// assert!(d.actions.is_empty());
    /// let d = eval.decide(&call("ls -la"), &ctx)?;
    /// assert_eq!(d.reason(), "no rule decided run ls -la");
    /// assert_eq!(d.reason(), eval.evaluate(&call("ls -la"), &ctx)?.reason());
    /// # Ok::<(), toolgate::Error>(())
    /// ```
    pub fn decide<'p>(&'p self, call: &ToolCall, ctx: &EvalContext) -> Result<Decision<'p>, Error> {
        self.evaluate_with(call, ctx, false)
    }

    fn evaluate_with<'p>(
        &'p self,
        call: &ToolCall,
        ctx: &EvalContext,
        with_reports: bool,
    ) -> Result<Decision<'p>, Error> {
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => self.evaluate_in(call, ctx, &mut scratch, with_reports),
            // Busy only if evaluation re-entered itself: fresh buffers.
            Err(_) => self.evaluate_in(call, ctx, &mut Scratch::default(), with_reports),
        })
    }

    /// [`Evaluator::evaluate`] with the buffers of `s` (its candidate
    /// texts' buffer is handed back to it for the next call).
    fn evaluate_in<'p>(
        &'p self,
        call: &ToolCall,
        ctx: &EvalContext,
        s: &mut Scratch,
        with_reports: bool,
    ) -> Result<Decision<'p>, Error> {
        // Without deny and ask command rules, the widened candidates
        // could only meet allow rules, which never use them.
        let earlier = std::mem::take(&mut s.actions);
        let mut actions = action::derive_with(call, ctx, self.needs, earlier)?;
        let mut few = [("", ""); 4];
        let mut many = Vec::new();
        let roots_ref = self.source_roots(ctx, &actions, &mut few, &mut many);
        let dirs = AnchorDirs {
            home: ctx.home(),
            project: Some(ctx.project_dir()),
            sources: roots_ref,
        };
        // (`Vec<Vec<RuleMatch<'static>>>` is a `Vec<Vec<RuleMatch<'p>>>`.)
        let mut all = std::mem::take(&mut s.all);
        let d = self.decide_actions(
            call,
            ctx,
            &mut actions,
            &dirs,
            (
                &mut s.matches,
                &mut s.ids,
                &mut s.subjects,
                &mut all,
                &mut s.whole,
            ),
            with_reports,
        );
        s.actions = actions;
        // Emptied: the same room, past this call (no item is converted).
        all.clear();
        s.all = all.into_iter().map(|_| Vec::new()).collect();
        d
    }

    /// Matches each action and decides (`m`, `ids`, `subjects` and `all`
    /// are scratch; the actions' list is emptied, their texts left).
    #[allow(clippy::too_many_arguments)]
    fn decide_actions<'p>(
        &'p self,
        call: &ToolCall,
        ctx: &EvalContext,
        actions: &mut action::Actions,
        dirs: &AnchorDirs<'_>,
        (m, ids, subjects, all, whole): DecideBuffers<'_, 'p>,
        with_reports: bool,
    ) -> Result<Decision<'p>, Error> {
        let call_ids = self.call_ids(call, m);
        let mut memo = Memo {
            text: None,
            ids: whole,
        };
        all.clear();
        all.reserve(actions.list.len());
        for a in &actions.list {
            ids.clear();
            if a.call_rules {
                ids.extend(call_ids.iter().map(|&id| (id, How::Matches)));
            }
            self.match_target(call, a, &actions.texts, ctx, dirs, m, ids, &mut memo);
            all.push(
                ids.iter()
                    .filter_map(|&(id, how)| {
                        Some(RuleMatch {
                            rule: self.policy.rule(id)?,
                            index: self.policy.input_index(id)?,
                            how,
                        })
                    })
                    .collect(),
            );
        }
        propagate_exact_allow(&actions.list, all);
        Ok(decide::decide(
            &mut actions.list,
            &actions.texts,
            subjects,
            all,
            std::mem::take(&mut actions.incomplete),
            ctx.mode(),
            with_reports,
        ))
    }

    /// The rule [`Evaluator::decide`] names for `call` in `ctx` when it is
    /// a deny or ask rule (the first in precedence order of the deny and
    /// ask matches of all the call's actions: SPEC §9.2), without the
    /// decision: for a caller that only narrows (tuff's `policy_eval`).
    /// `None` where the decision names no rule or an allow rule.
    pub(crate) fn narrowing_rule<'p>(
        &'p self,
        call: &ToolCall,
        ctx: &EvalContext,
    ) -> Result<Option<RuleMatch<'p>>, Error> {
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => self.narrowing_rule_in(call, ctx, &mut scratch),
            Err(_) => self.narrowing_rule_in(call, ctx, &mut Scratch::default()),
        })
    }

    fn narrowing_rule_in<'p>(
        &'p self,
        call: &ToolCall,
        ctx: &EvalContext,
        s: &mut Scratch,
    ) -> Result<Option<RuleMatch<'p>>, Error> {
        let earlier = std::mem::take(&mut s.actions);
        let actions = action::derive_with(call, ctx, self.needs, earlier)?;
        let mut few = [("", ""); 4];
        let mut many = Vec::new();
        let roots = self.source_roots(ctx, &actions, &mut few, &mut many);
        let dirs = AnchorDirs {
            home: ctx.home(),
            project: Some(ctx.project_dir()),
            sources: roots,
        };
        let call_ids = self.call_ids(call, &mut s.matches);
        // decide's precedence key: level, deny before ask, policy order.
        let key = |m: &RuleMatch<'_>| (m.level(), m.rule.effect, m.index);
        let mut best: Option<RuleMatch<'p>> = None;
        let mut memo = Memo {
            text: None,
            ids: &mut s.whole,
        };
        for a in &actions.list {
            s.ids.clear();
            if a.call_rules {
                s.ids.extend(call_ids.iter().map(|&id| (id, How::Matches)));
            }
            self.match_target(
                call,
                a,
                &actions.texts,
                ctx,
                &dirs,
                &mut s.matches,
                &mut s.ids,
                &mut memo,
            );
            for &(id, how) in &s.ids {
                let (Some(rule), Some(index)) = (self.policy.rule(id), self.policy.input_index(id))
                else {
                    continue;
                };
                let m = RuleMatch { rule, index, how };
                if m.level() != Effect::Allow && best.is_none_or(|b| key(&m) < key(&b)) {
                    best = Some(m);
                }
            }
        }
        s.actions = actions;
        Ok(best)
    }

    /// Each source's root with its directory, for the anchors of path
    /// rules: needed only when the call has a path action (a policy of a
    /// few sources lists them in `few`, without an allocation).
    fn source_roots<'a>(
        &'a self,
        ctx: &'a EvalContext,
        actions: &action::Actions,
        few: &'a mut [(&'a str, &'a str); 4],
        many: &'a mut Vec<(&'a str, &'a str)>,
    ) -> &'a [(&'a str, &'a str)] {
        let paths = actions
            .list
            .iter()
            .any(|a| matches!(a.target, Target::Path { .. }));
        let root = |(n, d): &'a (Arc<str>, Option<String>)| {
            (&**n, d.as_deref().unwrap_or(ctx.project_dir()))
        };
        if !paths {
            &[]
        } else if self.roots.len() <= few.len() {
            for (slot, r) in few.iter_mut().zip(&self.roots) {
                *slot = root(r);
            }
            few.get(..self.roots.len()).unwrap_or(&[])
        } else {
            many.extend(self.roots.iter().map(root));
            many
        }
    }

    /// Tool-name and field rules of the call.
    fn call_ids(&self, call: &ToolCall, m: &mut Matches) -> std::borrow::Cow<'_, [u32]> {
        use std::borrow::Cow;
        let tool = call.tool.as_str();
        let known = KNOWN_TOOLS
            .iter()
            .position(|t| *t == tool)
            .and_then(|k| self.tool_ids.get(k));
        let mut ids: Cow<'_, [u32]> = match known {
            _ if !self.tool_rules => Cow::Borrowed(&[]),
            Some(cell) => Cow::Borrowed(cell.get_or_init(|| {
                self.policy.find(Kind::Tool, Some(tool), tool, m);
                m.ids().to_vec()
            })),
            None => {
                self.policy.find(Kind::Tool, Some(tool), tool, m);
                Cow::Owned(m.ids().to_vec())
            }
        };
        for f in &self.fields {
            let text = match call.input.get(f) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                Some(Value::Bool(b)) => b.to_string(),
                _ => continue,
            };
            self.policy.find_field(Some(tool), f, &text, m);
            ids.to_mut().extend_from_slice(m.ids());
        }
        ids
    }

    #[allow(clippy::too_many_arguments)]
    fn match_target<'t>(
        &self,
        call: &ToolCall,
        a: &Action,
        texts: &'t CandTexts,
        ctx: &EvalContext,
        dirs: &AnchorDirs<'_>,
        m: &mut Matches,
        ids: &mut Vec<(u32, How)>,
        memo: &mut Memo<'t, '_>,
    ) {
        let rule = |id: u32| self.policy.rule(id);
        let tool = call.tool.as_str();
        match &a.target {
            Target::Tool => {}
            Target::Run {
                cands,
                words,
                wrappers,
                holes,
                exec,
            } => {
                // (Without command rules, nothing to look up.)
                let cands = if self.needs.candidates {
                    cands.clone()
                } else {
                    0..0
                };
                for i in cands.clone() {
                    let Some((text, for_allow)) = texts.get(i) else {
                        continue;
                    };
                    let found = if memo.text == Some(text) {
                        &memo.ids[..]
                    } else {
                        self.policy.find(Kind::Command, Some(tool), text, m);
                        m.ids()
                    };
                    for &id in found {
                        let Some(r) = rule(id) else { continue };
                        if r.effect != Effect::Allow || (for_allow && names_exec(r, exec)) {
                            ids.push((id, How::Matches));
                        }
                    }
                }
                self.token_matches(tool, words, holes, false, ids);
                // A wrapper's own argv: deny and ask token rules only.
                for argv in wrappers {
                    self.token_matches(tool, argv, holes, true, ids);
                }
                // A rule that a wrapper's argv matches for certain is not
                // also one that only could match (as the reference says).
                if !wrappers.is_empty() && ids.iter().any(|&(_, h)| h == How::Could) {
                    let sure: Vec<u32> = ids
                        .iter()
                        .filter(|&&(_, h)| h == How::Matches)
                        .map(|&(id, _)| id)
                        .collect();
                    ids.retain(|&(id, h)| h != How::Could || !sure.contains(&id));
                }
                if !holes.is_empty() && !self.could_commands.is_empty() {
                    let cands: Vec<&str> = cands
                        .clone()
                        .filter_map(|i| texts.get(i).map(|(t, _)| t))
                        .collect();
                    let certain: Vec<u32> = ids.iter().map(|&(id, _)| id).collect();
                    let compatible = self.could_commands.iter().filter(|(id, lit)| {
                        !certain.contains(id)
                            && rule(*id).is_some_and(|r| r.governs(tool))
                            && cands.iter().any(|c| prefix_compatible(c, holes, lit))
                    });
                    could_commands(compatible.map(|(id, _)| *id), rule, &cands, holes, ids);
                }
            }
            Target::Raw { .. } if !self.needs.candidates => {}
            Target::Raw { text, complete } => {
                let text = texts.text_of(text);
                self.policy.find(Kind::Command, Some(tool), text, m);
                memo.text = Some(text);
                memo.ids.clear();
                memo.ids.extend_from_slice(m.ids());
                for &id in m.ids() {
                    if let Some(r) = rule(id) {
                        if raw_applies(r, *complete) {
                            ids.push((id, How::Matches));
                        }
                    }
                }
            }
            Target::Path {
                access,
                tool: ptool,
                from_bash,
                widened,
                chain,
                glob,
                recursive,
            } => {
                let kind = match access {
                    Access::Read => Kind::Read,
                    Access::Edit => Kind::Edit,
                };
                let keep = |r: &Rule| !(*from_bash && r.dialect == crate::Dialect::Strict);
                let mut allow_first: Vec<u32> = Vec::new();
                let last = chain.len().saturating_sub(1);
                for (k, p) in chain.iter().enumerate() {
                    self.policy.find_path(kind, Some(ptool), p, dirs, m);
                    for &id in m.ids() {
                        let Some(r) = rule(id) else { continue };
                        if !keep(r) {
                            continue;
                        }
                        if r.effect != Effect::Allow {
                            ids.push((id, How::Matches));
                        } else if *widened {
                        } else if k == 0 {
                            allow_first.push(id);
                            if last == 0 {
                                ids.push((id, How::Matches));
                            }
                        } else if k == last && allow_first.contains(&id) {
                            ids.push((id, How::Matches));
                        }
                    }
                }
                if *glob || *recursive {
                    let pool = match access {
                        Access::Read => &self.could_read,
                        Access::Edit => &self.could_edit,
                    };
                    let certain: Vec<u32> = ids.iter().map(|&(id, _)| id).collect();
                    let path = chain.first().map_or("", String::as_str);
                    let cands = pool.iter().copied().filter(|id| {
                        !certain.contains(id)
                            && rule(*id).is_some_and(|r| keep(r) && r.governs(ptool))
                    });
                    could_paths(
                        cands,
                        rule,
                        |r| self.anchor_dir(r, ctx),
                        path,
                        *glob,
                        *recursive,
                        ids,
                    );
                }
            }
            Target::DynamicPath { access, text } => {
                let pool = match access {
                    Access::Read => &self.could_read,
                    Access::Edit => &self.could_edit,
                };
                let ptool = match access {
                    Access::Read => "Read",
                    Access::Edit => "Edit",
                };
                let cands = pool.iter().copied().filter(|id| {
                    rule(*id)
                        .is_some_and(|r| r.dialect != crate::Dialect::Strict && r.governs(ptool))
                });
                could_dynamic_path(
                    cands,
                    rule,
                    |r| self.anchor_dir(r, ctx),
                    ctx.cwd(),
                    text,
                    ids,
                );
            }
            Target::Host { host } => match host {
                Some(h) => {
                    self.policy.find(Kind::Domain, Some("WebFetch"), h, m);
                    ids.extend(m.ids().iter().map(|&id| (id, How::Matches)));
                }
                None => ids.extend(self.any_domains.iter().map(|&id| (id, How::Matches))),
            },
            Target::DynamicHost => {
                could_budget(self.could_domains.iter().copied(), ids);
            }
        }
    }

    /// The tuff token rules that match (or, with dynamic words, could
    /// match) the argv `words`; with `narrowing`, deny and ask rules only.
    fn token_matches(
        &self,
        tool: &str,
        words: &[crate::shell::Word],
        holes: &[String],
        narrowing: bool,
        ids: &mut Vec<(u32, How)>,
    ) {
        // Only the rules indexed under the invocation's program and
        // subcommand are looked at (see `TokenIndex::each_match`).
        let keep = |id: u32| {
            self.policy
                .rule(id)
                .is_some_and(|r| r.governs(tool) && !(narrowing && r.effect == Effect::Allow))
        };
        self.token_index
            .each_match(words, holes, keep, |id, how| ids.push((id, how)));
    }

    fn anchor_dir(&self, r: &Rule, ctx: &EvalContext) -> Option<String> {
        anchor_dir(r, ctx, &self.facts)
    }
}

/// The directory a path rule is relative to in `ctx`.
pub(crate) fn anchor_dir(r: &Rule, ctx: &EvalContext, facts: &PolicyFacts) -> Option<String> {
    let Pattern::Path(p) = &r.pattern else {
        return None;
    };
    match p.anchor {
        crate::rule::Anchor::Root => Some("/".to_string()),
        crate::rule::Anchor::Home => ctx.home().map(str::to_string),
        crate::rule::Anchor::Project => Some(ctx.project_dir().to_string()),
        crate::rule::Anchor::Source => facts.source_root(&r.provenance.source, ctx),
    }
}

/// Whether an allow rule covers an invocation that uses options which
/// execute or write: it must name each of them (SPEC §8.5).
pub(crate) fn names_exec(r: &Rule, exec: &[String]) -> bool {
    r.effect != Effect::Allow || exec.iter().all(|e| r.text.contains(e.as_str()))
}

/// Whether a rule matching the whole command text counts: exact rules
/// always; when the reading is incomplete, every deny and ask rule
/// (SPEC §3.2, §9.2, §13).
pub(crate) fn raw_applies(r: &Rule, complete: bool) -> bool {
    match &r.pattern {
        Pattern::Command(p) => {
            matches!(p.form, crate::rule::CommandForm::Exact(_))
                || (!complete && r.effect != Effect::Allow)
        }
        _ => false,
    }
}

/// An exact allow rule equal to the whole command stands in for an allow
/// of each of its runs (SPEC §13).
pub(crate) fn propagate_exact_allow(actions: &[Action], all: &mut [Vec<RuleMatch<'_>>]) {
    let mut exact: Vec<RuleMatch<'_>> = Vec::new();
    for (a, ms) in actions.iter().zip(all.iter()) {
        if matches!(a.target, Target::Raw { complete: true, .. }) {
            exact.extend(
                ms.iter()
                    .filter(|m| m.rule.effect == Effect::Allow)
                    .copied(),
            );
        }
    }
    if exact.is_empty() {
        return;
    }
    for (a, ms) in actions.iter().zip(all.iter_mut()) {
        if a.kind == ActionKind::Run {
            ms.extend(exact.iter().copied());
        }
    }
}

/// Whether a candidate's literal start (before its first hole) and a
/// rule's literal prefix can agree (one starts with the other).
pub(crate) fn prefix_compatible(text: &str, holes: &[String], lit: &str) -> bool {
    let cut = holes
        .iter()
        .filter_map(|h| text.find(h.as_str()))
        .min()
        .unwrap_or(text.len());
    let head = &text[..cut];
    head.starts_with(lit) || lit.starts_with(head)
}

/// Adds the rules (deny and ask, by id or index) that could match a
/// candidate with holes; above [`COULD_BUDGET`] only the first, as a
/// could-match (the action asks).
pub(crate) fn could_commands<'r, I: Copy + Ord>(
    pool: impl Iterator<Item = I>,
    rule: impl Fn(I) -> Option<&'r Rule>,
    cands: &[&str],
    holes: &[String],
    out: &mut Vec<(I, How)>,
) {
    let pool: Vec<I> = pool.collect();
    if pool.len() > COULD_BUDGET {
        could_budget(pool.into_iter(), out);
        return;
    }
    let texts: Vec<Vec<unify::U<'_>>> = cands
        .iter()
        .map(|c| unify::text_with_holes(c, holes))
        .collect();
    for id in pool {
        let Some(r) = rule(id) else { continue };
        let Pattern::Command(p) = &r.pattern else {
            continue;
        };
        let variants = unify::command_variants(&p.form);
        if texts.iter().any(|t| {
            variants
                .iter()
                .any(|v| unify::could(t, v, p.case_insensitive))
        }) {
            out.push((id, How::Could));
        }
    }
}

/// Over budget (or with no way to tell): the first rule of the pool —
/// given in precedence order — could match.
pub(crate) fn could_budget<I: Copy + Ord>(
    mut pool: impl Iterator<Item = I>,
    out: &mut Vec<(I, How)>,
) {
    if let Some(first) = pool.next() {
        out.push((first, How::Could));
    }
}

/// The rule's pattern variants over absolute paths under `dir`.
fn absolute_variants<'r>(r: &'r Rule, dir: &str) -> Option<(Vec<Vec<unify::U<'r>>>, bool)> {
    let Pattern::Path(p) = &r.pattern else {
        return None;
    };
    let head: Vec<unify::U<'r>> = dir
        .trim_end_matches('/')
        .chars()
        .map(unify::U::Ch)
        .chain(std::iter::once(unify::U::Ch('/')))
        .collect();
    let vs = unify::path_variants(p)?
        .into_iter()
        .map(|v| {
            let mut w = head.clone();
            w.extend(v);
            w
        })
        .collect();
    Some((vs, p.case_insensitive))
}

/// Deny and ask path rules that could match a glob path, or a file below
/// a directory read or written recursively (SPEC §8.4, §13).
pub(crate) fn could_paths<'r, I: Copy + Ord>(
    pool: impl Iterator<Item = I>,
    rule: impl Fn(I) -> Option<&'r Rule>,
    dir_of: impl Fn(&Rule) -> Option<String>,
    path: &str,
    glob: bool,
    recursive: bool,
    out: &mut Vec<(I, How)>,
) {
    let pool: Vec<I> = pool.collect();
    if glob && pool.len() > COULD_BUDGET {
        could_budget(pool.into_iter(), out);
        return;
    }
    let text = unify::glob_path_atoms(path);
    for id in pool {
        let Some(r) = rule(id) else { continue };
        let Some(dir) = dir_of(r) else { continue };
        let mut hit = false;
        if glob {
            if let Some((vs, ci)) = absolute_variants(r, &dir) {
                hit = vs.iter().any(|v| unify::could(&text, v, ci));
            } else {
                hit = true;
            }
        }
        if !hit && recursive {
            hit = literal_dir_under(r, &dir, path);
        }
        if hit {
            out.push((id, How::Could));
        }
    }
}

/// Whether the literal directory part of an anchored path rule lies at or
/// below `read` (a directory read recursively): `Read(secrets/**)` under
/// `rg key .`; any-depth basename rules (`.env`, `*.pem`) never do.
fn literal_dir_under(r: &Rule, dir: &str, read: &str) -> bool {
    let Pattern::Path(p) = &r.pattern else {
        return false;
    };
    // A directory rule: anchored, or written with a trailing `/**` or
    // `/` (claude-code deny rules widen those to any depth, but their
    // literal directory is still taken at the anchor, SPEC §13).
    let spec = r.text.strip_suffix(')').unwrap_or(&r.text);
    if !p.anchored && !spec.ends_with("/**") && !spec.ends_with('/') {
        return false;
    }
    let mut lit = dir.trim_end_matches('/').to_string();
    for s in &p.segments {
        match s {
            crate::rule::Segment::Pieces(pieces) => match pieces.as_slice() {
                [crate::rule::SegPiece::Literal(l)] => {
                    lit.push('/');
                    lit.push_str(l);
                }
                _ => break,
            },
            crate::rule::Segment::DoubleStar => break,
        }
    }
    let lit = if lit.is_empty() { "/".to_string() } else { lit };
    if p.case_insensitive {
        crate::paths::relative_to(&lit.to_lowercase(), &read.to_lowercase()).is_some()
    } else {
        crate::paths::relative_to(&lit, read).is_some()
    }
}

/// Deny and ask path rules that could match some value of a dynamic path
/// word.
pub(crate) fn could_dynamic_path<'r, I: Copy + Ord>(
    pool: impl Iterator<Item = I>,
    rule: impl Fn(I) -> Option<&'r Rule>,
    dir_of: impl Fn(&Rule) -> Option<String>,
    cwd: &str,
    text: &str,
    out: &mut Vec<(I, How)>,
) {
    let pool: Vec<I> = pool.collect();
    if pool.len() > COULD_BUDGET {
        could_budget(pool.into_iter(), out);
        return;
    }
    let mut atoms = unify::dynamic_path_atoms(text);
    if matches!(atoms.first(), Some(unify::U::Ch(c)) if *c != '/') {
        let mut abs: Vec<unify::U<'_>> = cwd
            .trim_end_matches('/')
            .chars()
            .map(unify::U::Ch)
            .collect();
        abs.push(unify::U::Ch('/'));
        abs.extend(atoms);
        atoms = abs;
    }
    for id in pool {
        let Some(r) = rule(id) else { continue };
        let Some(dir) = dir_of(r) else { continue };
        let hit = match absolute_variants(r, &dir) {
            Some((vs, ci)) => vs.iter().any(|v| unify::could(&atoms, v, ci)),
            None => true,
        };
        if hit {
            out.push((id, How::Could));
        }
    }
}
