//! The reference evaluator: deliberately naive, checkable by eye.
//!
//! It derives the same actions as [`crate::eval::Evaluator`] and then, for
//! each action, loops over every rule in policy order and asks the
//! reference matchers ([`crate::reference`]) whether it matches — no
//! automata, no match ids. Precedence is written out plainly below. The
//! differential tests hold the engine to the same verdict and deciding
//! rule on random and corpus-drawn policies and calls.

use crate::error::Error;
use crate::eval::action::{self, Access, Action, Actions, Target};
use crate::eval::call::ToolCall;
use crate::eval::{
    self, ActionReport, DecidingRule, Decision, EvalContext, How, Outcome, PolicyFacts, RuleMatch,
    Subject, Verdict,
};
use crate::paths::relative_to;
use crate::policy::{LoadedPolicy, PermissionMode, SourceRoot};
use crate::reference::{command_matches, domain_matches, field_matches, path_matches};
use crate::rule::{Dialect, DomainPattern, Effect, Pattern, Rule};
use crate::shell::reduce::CandTexts;

/// The reference evaluator over a list of rules in policy order.
#[derive(Clone, Debug)]
pub struct ReferenceEvaluator {
    rules: Vec<Rule>,
    facts: PolicyFacts,
    /// Rule positions in precedence order: deny, ask, allow; each in
    /// policy order.
    order: Vec<usize>,
}

fn precedence_order(rules: &[Rule]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rules.len()).collect();
    order.sort_by_key(|&i| (rules[i].effect, i));
    order
}

impl ReferenceEvaluator {
    /// The evaluator of a loaded policy.
    pub fn new(policy: &LoadedPolicy) -> ReferenceEvaluator {
        let rules = policy.rules().to_vec();
        ReferenceEvaluator {
            order: precedence_order(&rules),
            rules,
            facts: PolicyFacts::of(policy),
        }
    }

    /// The evaluator of bare rules (`/x` rules anchored at the project).
    pub fn from_rules(rules: Vec<Rule>) -> ReferenceEvaluator {
        let mut facts = PolicyFacts::default();
        for r in &rules {
            let name = r.provenance.source.clone();
            if !facts.sources.iter().any(|(n, _)| *n == name) {
                facts.sources.push((name, SourceRoot::Project));
            }
        }
        ReferenceEvaluator {
            order: precedence_order(&rules),
            rules,
            facts,
        }
    }

    /// The rules, in policy order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Decides `call` in `ctx`, as [`crate::eval::Evaluator::evaluate`]
    /// does.
    pub fn evaluate<'p>(
        &'p self,
        call: &ToolCall,
        ctx: &EvalContext,
    ) -> Result<Decision<'p>, Error> {
        let actions = action::derive(call, ctx)?;
        let mut all: Vec<Vec<RuleMatch<'p>>> = Vec::new();
        for a in &actions.list {
            let mut found: Vec<(usize, How)> = Vec::new();
            for (i, rule) in self.rules.iter().enumerate() {
                if (a.call_rules && self.call_rule_matches(rule, call))
                    || self.target_matches(rule, call, a, &actions, ctx)
                {
                    found.push((i, How::Matches));
                }
            }
            self.could(call, a, &actions, ctx, &mut found);
            all.push(
                found
                    .into_iter()
                    .filter_map(|(i, how)| {
                        Some(RuleMatch {
                            rule: self.rules.get(i)?,
                            index: i,
                            how,
                        })
                    })
                    .collect(),
            );
        }
        eval::propagate_exact_allow(&actions.list, &mut all);
        Ok(plain_precedence(
            &actions.list,
            &actions.texts,
            all,
            actions.incomplete,
            ctx.mode(),
        ))
    }

    /// A bare rule (tool name) or a field rule of the call's tool.
    fn call_rule_matches(&self, rule: &Rule, call: &ToolCall) -> bool {
        if !rule.governs(&call.tool) {
            return false;
        }
        match &rule.pattern {
            Pattern::Any => true,
            Pattern::Field { field, form } => field_matches(field, form, &call.input),
            _ => false,
        }
    }

    fn target_matches(
        &self,
        rule: &Rule,
        call: &ToolCall,
        a: &Action,
        texts: &Actions,
        ctx: &EvalContext,
    ) -> bool {
        match &a.target {
            Target::Tool | Target::DynamicPath { .. } | Target::DynamicHost => false,
            Target::Run {
                cands,
                words,
                wrappers,
                exec,
                ..
            } => {
                if !rule.governs(&call.tool) {
                    return false;
                }
                match &rule.pattern {
                    Pattern::Command(p) => texts.cands(cands).any(|c| {
                        (rule.effect != Effect::Allow
                            || (c.for_allow && eval::names_exec(rule, exec)))
                            && command_matches(p, c.text)
                    }),
                    Pattern::Tokens(t) => {
                        crate::eval::tokens::tokens_match(t, words)
                            || (rule.effect != Effect::Allow
                                && wrappers
                                    .iter()
                                    .any(|w| crate::eval::tokens::tokens_match(t, w)))
                    }
                    _ => false,
                }
            }
            Target::Raw { text, complete } => match &rule.pattern {
                Pattern::Command(p) => {
                    rule.governs(&call.tool)
                        && eval::raw_applies(rule, *complete)
                        && command_matches(p, texts.texts.text_of(text))
                }
                _ => false,
            },
            Target::Path {
                tool,
                from_bash,
                widened,
                chain,
                ..
            } => {
                let Pattern::Path(p) = &rule.pattern else {
                    return false;
                };
                if !rule.governs(tool) || (*from_bash && rule.dialect == Dialect::Strict) {
                    return false;
                }
                let Some(dir) = eval::anchor_dir(rule, ctx, &self.facts) else {
                    return false;
                };
                let hit = |path: &String| {
                    relative_to(path, &dir).is_some_and(|rel| path_matches(p, &rel))
                };
                if rule.effect != Effect::Allow {
                    chain.iter().any(hit)
                } else {
                    // An allow rule applies only if the path and its real
                    // path both match; never to a widened path.
                    !*widened && chain.first().is_some_and(hit) && chain.last().is_some_and(hit)
                }
            }
            Target::Host { host } => {
                let Pattern::Domain(d) = &rule.pattern else {
                    return false;
                };
                if !rule.governs("WebFetch") {
                    return false;
                }
                match host {
                    Some(h) => domain_matches(d, h),
                    None => *d == DomainPattern::Any && rule.effect != Effect::Allow,
                }
            }
        }
    }

    /// The deny and ask rules that could match what is dynamic in an
    /// action.
    fn could(
        &self,
        call: &ToolCall,
        a: &Action,
        texts: &Actions,
        ctx: &EvalContext,
        found: &mut Vec<(usize, How)>,
    ) {
        let certain: Vec<usize> = found.iter().map(|&(i, _)| i).collect();
        let rule = |i: usize| self.rules.get(i);
        let narrowing = |r: &Rule| r.effect != Effect::Allow;
        match &a.target {
            Target::Run {
                cands,
                holes,
                words,
                wrappers,
                ..
            } if !holes.is_empty() => {
                for &i in &self.order {
                    let r = &self.rules[i];
                    if let Pattern::Tokens(t) = &r.pattern {
                        if !certain.contains(&i)
                            && r.governs(&call.tool)
                            && (crate::eval::tokens::tokens_could_match(t, words, &|w| {
                                holes.iter().any(|h| h == w)
                            }) || (r.effect != Effect::Allow
                                && wrappers.iter().any(|argv| {
                                    crate::eval::tokens::tokens_could_match(t, argv, &|w| {
                                        holes.iter().any(|h| h == w)
                                    })
                                })))
                        {
                            found.push((i, How::Could));
                        }
                    }
                }
                let cands: Vec<&str> = texts.cands(cands).map(|c| c.text).collect();
                let pool = self.order.iter().copied().filter(|&i| {
                    let r = &self.rules[i];
                    !certain.contains(&i)
                        && narrowing(r)
                        && r.governs(&call.tool)
                        && match &r.pattern {
                            Pattern::Command(p) => {
                                let lit = eval::unify::command_literal_prefix(&p.form);
                                cands.iter().any(|c| eval::prefix_compatible(c, holes, lit))
                            }
                            _ => false,
                        }
                });
                eval::could_commands(pool, rule, &cands, holes, found);
            }
            Target::Path {
                access,
                tool,
                from_bash,
                chain,
                glob,
                recursive,
                ..
            } if *glob || *recursive => {
                let pool = self.order.iter().copied().filter(|&i| {
                    let r = &self.rules[i];
                    !certain.contains(&i)
                        && narrowing(r)
                        && matches!(r.pattern, Pattern::Path(_))
                        && governs_access(r, *access)
                        && r.governs(tool)
                        && !(*from_bash && r.dialect == Dialect::Strict)
                });
                let path = chain.first().map_or("", String::as_str);
                eval::could_paths(
                    pool,
                    rule,
                    |r| eval::anchor_dir(r, ctx, &self.facts),
                    path,
                    *glob,
                    *recursive,
                    found,
                );
            }
            Target::DynamicPath { access, text } => {
                let tool = match access {
                    Access::Read => "Read",
                    Access::Edit => "Edit",
                };
                let pool = self.order.iter().copied().filter(|&i| {
                    let r = &self.rules[i];
                    narrowing(r)
                        && matches!(r.pattern, Pattern::Path(_))
                        && r.dialect != Dialect::Strict
                        && r.governs(tool)
                });
                eval::could_dynamic_path(
                    pool,
                    rule,
                    |r| eval::anchor_dir(r, ctx, &self.facts),
                    ctx.cwd(),
                    text,
                    found,
                );
            }
            Target::DynamicHost => {
                let pool = self.order.iter().copied().filter(|&i| {
                    narrowing(&self.rules[i]) && matches!(self.rules[i].pattern, Pattern::Domain(_))
                });
                eval::could_budget(pool, found);
            }
            _ => {}
        }
    }
}

/// Whether a path rule is one the engine consults for this access (its
/// read or edit matcher).
fn governs_access(r: &Rule, access: Access) -> bool {
    match access {
        Access::Read => r.governs("Read"),
        Access::Edit => r.governs("Edit"),
    }
}

/// Precedence, written plainly (SPEC §9.2, §9.3).
fn plain_precedence<'p>(
    actions: &[Action],
    texts: &CandTexts,
    matches: Vec<Vec<RuleMatch<'p>>>,
    incomplete: Vec<String>,
    mode: Option<PermissionMode>,
) -> Decision<'p> {
    // The level of a match: a deny rule that only could match asks.
    fn level(m: &RuleMatch<'_>) -> Effect {
        if m.rule.effect == Effect::Deny && m.how == How::Could {
            Effect::Ask
        } else {
            m.rule.effect
        }
    }
    let mut reports = Vec::new();
    let mut deny_rules: Vec<RuleMatch<'p>> = Vec::new();
    let mut ask_rules: Vec<RuleMatch<'p>> = Vec::new();
    let mut allow_rules: Vec<RuleMatch<'p>> = Vec::new();
    let mut any_unmatched = false;
    let mut plan_withheld = false;
    for (a, ms) in actions.iter().zip(matches) {
        let denies: Vec<_> = ms
            .iter()
            .filter(|m| level(m) == Effect::Deny)
            .copied()
            .collect();
        let asks: Vec<_> = ms
            .iter()
            .filter(|m| level(m) == Effect::Ask)
            .copied()
            .collect();
        let allows: Vec<_> = ms
            .iter()
            .filter(|m| level(m) == Effect::Allow)
            .copied()
            .collect();
        let outcome = if !denies.is_empty() {
            deny_rules.extend(&denies);
            ask_rules.extend(&asks);
            Outcome::Denied
        } else if !asks.is_empty() {
            ask_rules.extend(&asks);
            Outcome::Asked
        } else if !a.needs_approval {
            if allows.is_empty() {
                Outcome::Covered
            } else {
                Outcome::Allowed
            }
        } else if !allows.is_empty() {
            if mode == Some(PermissionMode::Plan) && eval::mode::plan_withholds(a) {
                plan_withheld = true;
                Outcome::Asked
            } else {
                allow_rules.extend(&allows);
                Outcome::Allowed
            }
        } else if mode.is_some_and(|m| eval::mode::allows(m, a)) {
            Outcome::ModeAllowed
        } else {
            any_unmatched = true;
            Outcome::Unmatched
        };
        let mut sorted = ms;
        sorted.sort_by_key(|m| (level(m), m.rule.effect, m.index));
        sorted.dedup_by(|x, y| x.index == y.index && x.how == y.how);
        reports.push(ActionReport {
            kind: a.kind,
            subject: Subject::from(a.subject(texts)),
            needs_approval: a.needs_approval,
            matches: sorted,
            outcome,
        });
    }
    // The first rule, in policy order, of the deciding effect (deny rules
    // that could match before ask rules at the ask level).
    let first = |v: &[RuleMatch<'p>]| {
        v.iter()
            .min_by_key(|m| (m.rule.effect, m.index))
            .map(|m| DecidingRule {
                rule: m.rule,
                index: m.index,
                how: m.how,
            })
    };
    let needs_any = reports.iter().any(|r| r.needs_approval);
    let (verdict, rule) = if !deny_rules.is_empty() {
        (Verdict::Deny, first(&deny_rules))
    } else if !ask_rules.is_empty() || plan_withheld {
        (Verdict::Ask, first(&ask_rules))
    } else if !incomplete.is_empty() {
        if mode == Some(PermissionMode::BypassPermissions) {
            (Verdict::Allow, None)
        } else {
            (Verdict::Ask, None)
        }
    } else if any_unmatched || !needs_any {
        (Verdict::None, None)
    } else {
        (Verdict::Allow, first(&allow_rules))
    };
    let rules_verdict = verdict;
    let verdict = match (mode, verdict) {
        (None, v) => v,
        (Some(_), Verdict::Deny) => Verdict::Deny,
        (Some(PermissionMode::DontAsk), Verdict::Ask | Verdict::None) => Verdict::Deny,
        (Some(PermissionMode::BypassPermissions), Verdict::None) => Verdict::Allow,
        (Some(_), Verdict::None) => Verdict::Ask,
        (Some(_), v) => v,
    };
    Decision {
        verdict,
        rule,
        rules_verdict,
        plan_withheld: plan_withheld && deny_rules.is_empty() && ask_rules.is_empty(),
        unmatched: reports
            .iter()
            .find(|a| a.outcome == Outcome::Unmatched)
            .map(|a| (a.kind, a.subject.clone())),
        actions: reports,
        incomplete,
        mode,
    }
}
