//! Shadowing that only the evaluator sees: through its reading of a
//! command (wrappers stripped, a program path reduced to its basename,
//! options before the subcommand skipped, tuff token rules) and across
//! kinds (a command allow whose files or hosts a `Read`, `Edit` or
//! `WebFetch` deny covers). Reported apart from pattern-level shadowing
//! ([`super::shadow`]), and each finding is confirmed by the evaluator: a
//! witness call that the rule matches is decided by the shadowing rule.
//!
//! - An **exact** command rule B (`Bash(sudo rm -rf build)`) holds one
//!   text: the evaluator, built from the policy's deny and ask rules,
//!   decides it; when a rule of higher precedence than B decides it, B can
//!   never decide.
//! - Any other command rule B has a literal run of whole words in front
//!   (`sudo rm ` in `Bash(sudo rm *)`). The shell reader reads those words
//!   as the evaluator does and gives the texts deny and ask rules see
//!   (`rm`); B with its front so rewritten is compared with each deny or
//!   ask command rule A by language inclusion on DFAs, as pattern-level
//!   shadowing is, and with each tuff token rule by its words (adding words
//!   after the front never unmatches a token rule). When A covers it, a
//!   witness B matches (`sudo rm x`) is evaluated against A and B alone
//!   and must be decided by A.
//!
//! Path rules are decided with the session in the project directory (the
//! rules' anchors then coincide); commands are read the same everywhere.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::lower::{self, Dfa};
use super::{Finding, Kind, RuleRef};
use crate::eval::{ActionKind, EvalContext, Evaluator, How, Verdict};
use crate::reference::command_matches;
use crate::rule::{CommandForm, CommandPattern, Effect, GlobPiece, List, Pattern, Rule, ToolMatch};
use crate::shell::reduce::{self, Role};

/// The project directory of the witness calls.
const PROJECT: &str = "/project";
/// The home directory of the witness calls.
const HOME: &str = "/home/user";
/// The word standing for what follows a rule's literal front.
const MARKER: &str = "tglintrest";

fn bash_command(r: &Rule) -> Option<&CommandPattern> {
    match (&r.tool, &r.pattern) {
        (ToolMatch::Name(n), Pattern::Command(c)) if n == "Bash" && !c.case_insensitive => Some(c),
        _ => None,
    }
}

fn verdict_of(e: Effect) -> Verdict {
    match e {
        Effect::Deny => Verdict::Deny,
        Effect::Ask => Verdict::Ask,
        Effect::Allow => Verdict::Allow,
    }
}

/// Whether the words are plain: read by a shell as written, so that the
/// rendering the evaluator matches equals the text.
fn plain(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(' ')
        && !s.contains("  ")
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || " _@%+=:,./-".contains(c))
}

/// The texts deny and ask rules see for `text`, read as one simple
/// command: every candidate of its one action.
fn deny_candidates(text: &str) -> Option<Vec<String>> {
    let reading = crate::shell::read(text);
    let red = reduce::invocations(&reading);
    if !red.complete {
        return None;
    }
    let mut actions = red.invocations.iter().filter(|i| i.role == Role::Command);
    let action = actions.next()?;
    if actions.next().is_some() {
        return None;
    }
    Some(action.candidates.iter().map(|c| c.text.clone()).collect())
}

/// B's literal front of whole words, and the form with the front replaced.
struct Front {
    words: String,
    rebuild: Box<dyn Fn(&str) -> CommandForm>,
}

fn front(form: &CommandForm) -> Option<Front> {
    match form {
        CommandForm::Exact(_) => None,
        CommandForm::Prefix(p) => Some(Front {
            words: p.clone(),
            rebuild: Box::new(|w| CommandForm::Prefix(w.to_string())),
        }),
        CommandForm::Glob(pieces) | CommandForm::PrefixGlob(pieces) => {
            let Some(GlobPiece::Literal(first)) = pieces.first() else {
                return None;
            };
            let cut = first.rfind(' ')?;
            let tail = first[cut..].to_string();
            let rest: Vec<GlobPiece> = pieces[1..].to_vec();
            let prefix_glob = matches!(form, CommandForm::PrefixGlob(_));
            Some(Front {
                words: first[..cut].to_string(),
                rebuild: Box::new(move |w| {
                    let mut p = vec![GlobPiece::Literal(format!("{w}{tail}"))];
                    p.extend(rest.iter().cloned());
                    if prefix_glob {
                        CommandForm::PrefixGlob(p)
                    } else {
                        CommandForm::Glob(p)
                    }
                }),
            })
        }
    }
}

/// A text the form matches, with something in every wildcard.
fn witness(c: &CommandPattern) -> Option<String> {
    let text = match &c.form {
        CommandForm::Exact(s) => s.clone(),
        CommandForm::Prefix(p) => format!("{p} x"),
        CommandForm::Glob(p) | CommandForm::PrefixGlob(p) => p
            .iter()
            .map(|g| match g {
                GlobPiece::Literal(s) => s.as_str(),
                _ => "x",
            })
            .collect(),
    };
    command_matches(c, &text).then_some(text)
}

fn context() -> Option<EvalContext> {
    EvalContext::new(PROJECT).ok()?.with_home(HOME).ok()
}

/// The call of a Bash command.
fn bash_call(text: &str) -> Option<crate::ToolCall> {
    let mut input = serde_json::Map::new();
    input.insert("command".into(), serde_json::Value::String(text.into()));
    crate::ToolCall::new("Bash", input).ok()
}

fn key(r: &Rule) -> (Arc<str>, List, usize) {
    (
        r.provenance.source.clone(),
        r.provenance.list,
        r.provenance.index,
    )
}

struct Dfas(HashMap<String, Option<Dfa>>);

impl Dfas {
    fn includes(&mut self, a: &str, b: &str) -> Option<bool> {
        for re in [a, b] {
            if !self.0.contains_key(re) {
                self.0.insert(re.to_string(), Dfa::new(re));
            }
        }
        let da = self.0.get(a)?.as_ref()?;
        let db = self.0.get(b)?.as_ref()?;
        lower::includes(da, db, None)
    }
}

/// Adds a finding for every command rule that a rule of higher precedence
/// shadows only as the evaluator reads commands, or across kinds. Rules
/// that already have a shadowing or duplicate finding are left alone (a
/// redundant one may still be shadowed this way).
pub(crate) fn shadowing(rules: &[Rule], out: &mut Vec<Finding>) {
    let settled: HashSet<(Arc<str>, List, usize)> = out
        .iter()
        .filter(|f| {
            matches!(
                f.kind,
                Kind::Shadowed | Kind::Duplicate | Kind::AllowAndDeny
            )
        })
        .map(|f| (f.rule.source.clone(), f.rule.list, f.rule.index))
        .collect();
    let candidates: Vec<&Rule> = rules
        .iter()
        .filter(|r| r.effect != Effect::Deny && bash_command(r).is_some())
        .filter(|r| !settled.contains(&key(r)))
        .collect();
    if candidates.is_empty() {
        return;
    }
    let stronger: Vec<&Rule> = rules.iter().filter(|r| r.effect != Effect::Allow).collect();
    if stronger.is_empty() {
        return;
    }
    let Some(ctx) = context() else { return };
    let mut found = Vec::new();
    exact_rules(&candidates, &stronger, &ctx, &mut found);
    fronted_rules(&candidates, &stronger, &ctx, &mut found);
    out.extend(found);
}

/// Exact rules: the evaluator decides their one text.
fn exact_rules(
    candidates: &[&Rule],
    stronger: &[&Rule],
    ctx: &EvalContext,
    out: &mut Vec<Finding>,
) {
    let exact: Vec<&&Rule> = candidates
        .iter()
        .filter(|r| {
            matches!(
                bash_command(r).map(|c| &c.form),
                Some(CommandForm::Exact(_))
            )
        })
        .collect();
    if exact.is_empty() {
        return;
    }
    let Ok(eval) = Evaluator::from_rules(stronger.iter().map(|r| (*r).clone()).collect()) else {
        return;
    };
    for b in exact {
        let Some(CommandForm::Exact(text)) = bash_command(b).map(|c| &c.form) else {
            continue;
        };
        let Some(call) = bash_call(text) else {
            continue;
        };
        let Ok(d) = eval.evaluate(&call, ctx) else {
            continue;
        };
        let Some(r) = d.rule else { continue };
        let a = r.rule;
        if r.how != How::Matches || a.effect >= b.effect || d.verdict != verdict_of(a.effect) {
            continue;
        }
        let action = d
            .actions
            .iter()
            .find(|act| act.matches.iter().any(|m| std::ptr::eq(m.rule, a)));
        let across = !matches!(a.pattern, Pattern::Command(_) | Pattern::Tokens(_));
        let f = if across {
            let (verb, subject) = match action {
                Some(act) => {
                    let verb = match act.kind {
                        ActionKind::Read => "reads",
                        ActionKind::Edit => "writes",
                        ActionKind::Fetch => "contacts",
                        _ => "runs",
                    };
                    let subject = act
                        .subject
                        .strip_prefix(PROJECT)
                        .and_then(|s| s.strip_prefix('/'))
                        .unwrap_or(&act.subject)
                        .to_string();
                    (verb, subject)
                }
                None => ("uses", String::from("what")),
            };
            Finding::new(
                Kind::ShadowedAcrossKinds,
                RuleRef::of(b),
                format!(
                    "never decides: `{text}` {verb} {subject}, and the {} rule {} `{}` {} that",
                    a.effect,
                    a.provenance.item(),
                    a.text,
                    if a.effect == Effect::Deny {
                        "denies"
                    } else {
                        "asks about"
                    }
                ),
            )
        } else {
            normalised(b, a, text)
        };
        out.push(f.related(RuleRef::of(a)).fix(format!(
            "remove it, or narrow {} if this {} was meant to win",
            a.provenance.item(),
            b.effect
        )));
    }
}

fn normalised(b: &Rule, a: &Rule, witness: &str) -> Finding {
    Finding::new(
        Kind::ShadowedNormalised,
        RuleRef::of(b),
        format!(
            "never decides: as toolgate reads a command (wrappers, program paths, options before the subcommand), the {} rule {} `{}` matches everything it matches: `{witness}` is {}",
            a.effect,
            a.provenance.item(),
            a.text,
            if a.effect == Effect::Deny {
                "denied"
            } else {
                "asked about"
            }
        ),
    )
}

/// Rules with a literal front of whole words: the front read as the
/// evaluator reads it, the rest compared on automata, then a witness
/// confirmed by the evaluator.
fn fronted_rules(
    candidates: &[&Rule],
    stronger: &[&Rule],
    ctx: &EvalContext,
    out: &mut Vec<Finding>,
) {
    let mut dfas = Dfas(HashMap::new());
    let lowered_a: Vec<Option<lower::Lowered>> = stronger
        .iter()
        .map(|a| bash_command(a).map(|c| lower::command(&c.form, false)))
        .collect();
    for b in candidates {
        let Some(cb) = bash_command(b) else { continue };
        let Some(fr) = front(&cb.form) else { continue };
        if !plain(&fr.words) {
            continue;
        }
        let Some(texts) = deny_candidates(&format!("{} {MARKER}", fr.words)) else {
            continue;
        };
        let suffix = format!(" {MARKER}");
        let mut fronts: Vec<String> = texts
            .iter()
            .filter_map(|t| t.strip_suffix(&suffix))
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect();
        fronts.sort();
        fronts.dedup();
        // The rule's literal text must read as written, so that the
        // texts the evaluator matches are the rule's own.
        let Some(w) = witness(cb).filter(|w| plain(w) && !w.ends_with(' ')) else {
            continue;
        };
        let mut shadower: Option<&Rule> = None;
        'pairs: for (ai, a) in stronger.iter().enumerate() {
            if a.effect >= b.effect {
                continue;
            }
            for f in &fronts {
                let covered = match (&a.pattern, &lowered_a[ai]) {
                    (Pattern::Tokens(words), _) => {
                        let argv: Vec<String> = f.split(' ').map(str::to_string).collect();
                        crate::policy_eval::command_matches(words, &argv)
                    }
                    (Pattern::Command(_), Some(la)) => {
                        if f == &fr.words {
                            // The text as written: pattern-level shadowing's.
                            continue;
                        }
                        let lb = lower::command(&(fr.rebuild)(f), false);
                        la.may_overlap(&lb) && dfas.includes(&la.regex, &lb.regex) == Some(true)
                    }
                    _ => false,
                };
                if covered && confirmed(a, b, &w, ctx) {
                    shadower = Some(a);
                    break 'pairs;
                }
            }
        }
        if let Some(a) = shadower {
            out.push(normalised(b, a, &w).related(RuleRef::of(a)).fix(format!(
                "remove it, or narrow {} if this {} was meant to win",
                a.provenance.item(),
                b.effect
            )));
        }
    }
}

/// Whether the evaluator, given only A and B, decides the witness by A.
fn confirmed(a: &Rule, b: &Rule, witness: &str, ctx: &EvalContext) -> bool {
    let Ok(eval) = Evaluator::from_rules(vec![a.clone(), b.clone()]) else {
        return false;
    };
    let Some(call) = bash_call(witness) else {
        return false;
    };
    let Ok(d) = eval.evaluate(&call, ctx) else {
        return false;
    };
    d.verdict == verdict_of(a.effect)
        && d.rule.is_some_and(|r| {
            r.how == How::Matches && r.rule.text == a.text && r.rule.effect == a.effect
        })
}
