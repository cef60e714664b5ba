//! Precedence: the rules that matched each action → one decision
//! (SPEC §9.2, §9.3).
//!
//! [`decide`] is the one place precedence lives:
//!
//! 1. Each action's outcome: a deny rule that matches → denied; else an
//!    ask rule that matches, or a deny rule that could → asked; else, for
//!    an action that needs approval, an allow rule → allowed (`plan` withholds
//!    it from edits and commands that are not read-only), or the mode
//!    allows it, or it is unmatched.
//! 2. The call: any action denied → deny; else any asked → ask; else an
//!    incomplete reading (or an unparsable URL) → ask (floor and cap);
//!    else every action needing approval allowed → allow; else no match.
//! 3. The reported rule is the first rule of the deciding effect in policy
//!    order (at the ask level, deny rules that could match come before ask
//!    rules, as their ids do).
//! 4. With a mode, no match is resolved and `dontAsk` turns ask into deny;
//!    under `bypassPermissions` an incomplete reading no deny or ask rule
//!    matched is allowed ([`super::mode::resolve`]).

use super::action::Action;
use super::decision::{
    ActionKind, ActionReport, DecidingRule, Decision, Outcome, RuleMatch, Subject, Verdict,
};
use super::mode;
use crate::policy::PermissionMode;
use crate::rule::Effect;
use crate::shell::reduce::CandTexts;
use std::sync::Arc;

/// The precedence key of a match: its level, then deny rules before ask
/// rules, then policy order.
fn key(m: &RuleMatch<'_>) -> (Effect, Effect, usize) {
    (m.level(), m.rule.effect, m.index)
}

/// Decides a call from its actions and the rules that matched each
/// (`matches[i]` for `actions[i]`, in any order), emptying both lists
/// (their room is kept for the next call). With `with_reports` false,
/// the decision's actions are left empty (a caller that wants the
/// verdict and the deciding rule only).
#[allow(clippy::too_many_arguments)]
pub(crate) fn decide<'p>(
    actions: &mut Vec<Action>,
    texts: &CandTexts,
    subjects: &mut String,
    matches: &mut Vec<Vec<RuleMatch<'p>>>,
    incomplete: Vec<String>,
    mode: Option<PermissionMode>,
    with_reports: bool,
) -> Decision<'p> {
    let mut reports = Vec::with_capacity(if with_reports { actions.len() } else { 0 });
    // The subjects the reduction wrote (a command, its runs) in one shared
    // text: one allocation per call, and none for a call without them.
    // The others (names, paths, hosts) are moved into their reports.
    let shared: Option<Arc<str>> = (with_reports && actions.iter().any(Action::subject_in_texts))
        .then(|| {
            subjects.clear();
            for a in actions.iter().filter(|a| a.subject_in_texts()) {
                subjects.push_str(a.subject(texts));
            }
            Arc::from(subjects.as_str())
        });
    let mut at = 0;
    let mut any_needs_approval = false;
    let mut best: [Option<RuleMatch<'p>>; 3] = [None, None, None];
    let (mut denied, mut asked, mut plan_asked, mut unmatched) = (false, false, false, false);
    let mut first_unmatched: Option<(ActionKind, Subject)> = None;
    // (Each action and its matches are read where they are, not moved
    // out: an action is a large record; both lists are emptied below.)
    for (action, ms) in actions.iter_mut().zip(matches.iter_mut()) {
        let subject = if !with_reports {
            None
        } else if let Some(own) = action.take_subject() {
            Some(own)
        } else {
            // The next one written into the shared text above.
            let len = action.subject(texts).len();
            let range = at..at + len;
            at = range.end;
            shared.as_ref().map(|t| Subject::shared(t, range))
        };
        ms.sort_by_key(key);
        ms.dedup_by(|a, b| a.index == b.index && a.how == b.how);
        let level = ms.first().map(RuleMatch::level);
        let allow = ms.iter().find(|m| m.level() == Effect::Allow).copied();
        let outcome = match level {
            Some(Effect::Deny) => Outcome::Denied,
            Some(Effect::Ask) => Outcome::Asked,
            _ if !action.needs_approval => {
                if allow.is_some() {
                    Outcome::Allowed
                } else {
                    Outcome::Covered
                }
            }
            Some(Effect::Allow) => {
                if mode == Some(PermissionMode::Plan) && mode::plan_withholds(action) {
                    plan_asked = true;
                    Outcome::Asked
                } else {
                    Outcome::Allowed
                }
            }
            None => match mode {
                Some(m) if mode::allows(m, action) => Outcome::ModeAllowed,
                _ => Outcome::Unmatched,
            },
        };
        match outcome {
            Outcome::Denied => denied = true,
            Outcome::Asked => asked = true,
            Outcome::Unmatched => unmatched = true,
            _ => {}
        }
        // The first match of each level over the whole call; allow
        // matches count only where they allowed an action.
        for m in ms.iter() {
            let slot = match m.level() {
                Effect::Deny => 0,
                Effect::Ask => 1,
                Effect::Allow if outcome == Outcome::Allowed && action.needs_approval => 2,
                Effect::Allow => continue,
            };
            if best[slot].is_none_or(|b| key(m) < key(&b)) {
                best[slot] = Some(*m);
            }
        }
        any_needs_approval |= action.needs_approval;
        if outcome == Outcome::Unmatched && first_unmatched.is_none() {
            // What the reason of a call no rule decided names, kept in a
            // brief decision too.
            let named = match &subject {
                Some(s) => s.clone(),
                None => action
                    .take_subject()
                    .unwrap_or_else(|| Subject::from(action.subject(texts))),
            };
            first_unmatched = Some((action.kind, named));
        }
        if let Some(subject) = subject {
            reports.push(ActionReport {
                kind: action.kind,
                needs_approval: action.needs_approval,
                subject,
                matches: std::mem::take(ms),
                outcome,
            });
        }
    }
    actions.clear();
    matches.clear();
    let deciding = |m: Option<RuleMatch<'p>>| {
        m.map(|m| DecidingRule {
            rule: m.rule,
            index: m.index,
            how: m.how,
        })
    };
    let (verdict, rule) = if denied {
        (Verdict::Deny, deciding(best[0]))
    } else if asked {
        (Verdict::Ask, deciding(best[1]))
    } else if !incomplete.is_empty() {
        if mode == Some(PermissionMode::BypassPermissions) {
            (Verdict::Allow, None)
        } else {
            (Verdict::Ask, None)
        }
    } else if unmatched || !any_needs_approval {
        (Verdict::None, None)
    } else {
        (Verdict::Allow, deciding(best[2]))
    };
    Decision {
        verdict: mode::resolve(mode, verdict),
        rule,
        rules_verdict: verdict,
        plan_withheld: plan_asked && !denied && best[1].is_none(),
        actions: reports,
        unmatched: first_unmatched,
        incomplete,
        mode,
    }
}
