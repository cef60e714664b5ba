//! A Bash command → actions: one run per invocation, the files it reads
//! and edits, the hosts it contacts, and the command as a whole
//! (SPEC §8, §9.1, §13 "Evaluation").

use super::action::{Access, Action, Actions, ModeFacts, Needs, Target, chain_of};
use super::context::EvalContext;
use super::decision::ActionKind;
use super::mode;
use crate::shell::files::{self, Base, FileUse, PathRef};
use crate::shell::programs;
use crate::shell::reduce::{self, Invocation, Role};
use crate::shell::{self, Word, WordKind};
use std::borrow::Cow;

/// Derives the actions of the Bash command `command` into `out`.
/// What the policy cannot use (`needs`) is not built.
pub(crate) fn derive(command: &str, ctx: &EvalContext, out: &mut Actions, needs: Needs) {
    let reading = shell::read(command);
    for inc in &reading.incomplete {
        out.incomplete.push(format!(
            "{} ({:?})",
            inc.reason.describe(),
            reading.source(inc.script, &inc.span)
        ));
    }
    // The subcommand serves the permission modes only (SPEC §9.3).
    let moded = ctx.mode().is_some();
    let red = reduce::invocations_with(&reading, needs.texts(), moded, &mut out.texts);
    for sub in &red.scripts {
        for inc in &sub.incomplete {
            out.incomplete.push(format!(
                "{} ({:?})",
                inc.reason.describe(),
                sub.source(inc.script, &inc.span)
            ));
        }
    }
    for inv in &red.invocations {
        for g in &inv.gaps {
            out.incomplete
                .push(format!("{} in {}", g.describe(), inv.program.written));
        }
    }
    let complete = out.incomplete.is_empty() && red.is_complete();
    if !complete && out.incomplete.is_empty() {
        out.incomplete
            .push("the command could not be read completely".to_string());
    }
    // Room for the command, the tool use, and a run, the files and the
    // hosts of each invocation (a file may give two actions; rarely).
    out.list.reserve(
        2 + red
            .invocations
            .iter()
            .map(|i| usize::from(i.role == Role::Command) + i.files.len() + i.hosts.len())
            .sum::<usize>(),
    );
    out.list.push(Action {
        kind: ActionKind::Command,
        // The text it is matched by (see `Action::subject`).
        subject: Cow::Borrowed(""),
        needs_approval: false,
        call_rules: false,
        target: Target::Raw {
            text: out.texts.push_text(command),
            complete,
        },
        facts: ModeFacts::default(),
    });
    // The call-level rules (a bare `Bash`) see the call even when it runs
    // nothing.
    out.list.push(Action {
        kind: ActionKind::Use,
        subject: Cow::Borrowed("Bash"),
        needs_approval: false,
        call_rules: true,
        target: Target::Tool,
        facts: ModeFacts::default(),
    });
    // Each invocation is taken apart without copying its texts; what
    // needs the chain around it reads the invocations before it (its
    // wrappers and the command whose script it is), whose files, hosts,
    // executing options and action words are taken already.
    // The mode facts matter only under a mode (SPEC §9.3).
    let mut invs = red.invocations;
    for i in 0..invs.len() {
        let chain = (invs[i].role == Role::Command).then(|| {
            (
                moded && plain_chain(&invs, i),
                if needs.holes() {
                    holes_of(&invs, i)
                } else {
                    Vec::new()
                },
                if needs.words {
                    wrapper_argvs(&invs, i)
                } else {
                    Vec::new()
                },
            )
        });
        let inv = &mut invs[i];
        let files_start = out.list.len();
        for f in &inv.files {
            file_actions(f, ctx, out);
        }
        for h in std::mem::take(&mut inv.hosts) {
            out.list.push(Action {
                kind: ActionKind::Fetch,
                needs_approval: false,
                call_rules: false,
                target: if h.dynamic {
                    Target::DynamicHost
                } else {
                    Target::Host {
                        host: Some(h.name.trim_end_matches('.').to_string()),
                    }
                },
                subject: h.name.into(),
                facts: ModeFacts::default(),
            });
        }
        let Some((plain, holes, wrappers)) = chain else {
            continue;
        };
        let mut read_only = moded
            && plain
            && !inv.program.dynamic
            && inv.exec.is_empty()
            && mode::read_only_command(&inv.program.base, inv.subcommand.as_deref());
        let mut accept_edits = moded
            && plain
            && !inv.program.dynamic
            && mode::ACCEPT_EDITS_COMMANDS.contains(&&*inv.program.base);
        for a in &out.list[files_start..] {
            if !matches!(a.kind, ActionKind::Read | ActionKind::Edit) {
                continue;
            }
            let dynamic = matches!(a.target, Target::DynamicPath { .. });
            read_only &= a.kind == ActionKind::Read && a.facts.inside && !dynamic;
            accept_edits &= a.facts.inside && !dynamic;
        }
        let cands = inv.cands.clone();
        // Its first candidate (the text as written) when it has one (see
        // `Action::subject`).
        let subject = if cands.is_empty() {
            Cow::Owned(reduce::render_words(inv.words.iter(), false))
        } else {
            Cow::Borrowed("")
        };
        out.list.push(Action {
            kind: ActionKind::Run,
            subject,
            needs_approval: true,
            call_rules: true,
            target: Target::Run {
                cands,
                words: if needs.words {
                    std::mem::take(&mut inv.words).into_owned()
                } else {
                    Vec::new()
                },
                wrappers,
                holes,
                exec: std::mem::take(&mut inv.exec),
            },
            facts: ModeFacts {
                read_only,
                accept_edits,
                ..ModeFacts::default()
            },
        });
    }
}

/// Whether every wrapper around invocation `i` is transparent and every
/// assignment on the chain sets a safe variable (what Claude Code's mode
/// allowances look through).
fn plain_chain(invs: &[Invocation], i: usize) -> bool {
    let mut cur = Some(i);
    let mut first = true;
    while let Some(k) = cur {
        let Some(inv) = invs.get(k) else { break };
        if !first
            && inv.role == Role::Wrapper
            && !programs::wrapper(&inv.program.base).is_some_and(|w| w.transparent)
        {
            return false;
        }
        if inv
            .assignments
            .iter()
            .any(|a| !programs::SAFE_VARIABLES.contains(&a.name.as_str()))
        {
            return false;
        }
        if inv.role != Role::Wrapper && !first {
            break;
        }
        first = false;
        cur = inv.parent;
    }
    true
}

/// The argv of each wrapper around invocation `i`, outermost first.
fn wrapper_argvs(invs: &[Invocation], i: usize) -> Vec<Vec<Word>> {
    let mut out: Vec<Vec<Word>> = Vec::new();
    let mut cur = invs.get(i).and_then(|inv| inv.parent);
    while let Some(inv) = cur.and_then(|k| invs.get(k)) {
        if inv.role != Role::Wrapper {
            break;
        }
        out.push(inv.words.to_vec());
        cur = inv.parent;
    }
    out.reverse();
    out
}

/// The source texts of the dynamic and glob words of invocation `i` and
/// of the wrappers around it (its candidates hold them all).
fn holes_of(invs: &[Invocation], i: usize) -> Vec<String> {
    let mut holes: Vec<String> = Vec::new();
    let mut cur = Some(i);
    let mut first = true;
    while let Some(k) = cur {
        let Some(inv) = invs.get(k) else { break };
        if !first && inv.role != Role::Wrapper {
            break;
        }
        for w in inv
            .words
            .iter()
            .chain(inv.assignments.iter().map(|a| &a.value))
        {
            if w.is_dynamic() && !holes.iter().any(|h| h == w.text()) {
                holes.push(w.text().to_string());
            }
        }
        first = false;
        cur = inv.parent;
    }
    // Longest first, so a hole is never cut by a shorter one inside it.
    holes.sort_by_key(|h| std::cmp::Reverse(h.len()));
    holes
}

/// The absolute text of a resolved path (glob characters kept).
fn absolute(p: &PathRef, ctx: &EvalContext) -> Option<String> {
    let dir = match p.base {
        Base::Cwd => ctx.cwd(),
        Base::Home => ctx.home()?,
        Base::Root => "/",
    };
    crate::paths::join_lexical(dir, &p.path)
}

fn file_actions(f: &FileUse, ctx: &EvalContext, out: &mut Actions) {
    let (access, kind) = match f.access {
        files::Access::Read => (Access::Read, ActionKind::Read),
        files::Access::Edit => (Access::Edit, ActionKind::Edit),
    };
    let tool = match access {
        Access::Read => "Read",
        Access::Edit => "Edit",
    };
    let glob = f.kind == WordKind::Glob;
    if let Some(abs) = f.path.as_ref().and_then(|p| absolute(p, ctx)) {
        let chain = if glob { vec![abs] } else { chain_of(abs, ctx) };
        let inside = chain.iter().all(|p| ctx.in_working_dirs(p));
        out.list.push(Action {
            kind,
            // The path (see `Action::subject`).
            subject: Cow::Borrowed(""),
            // A read inside the working directories is covered by its
            // command's approval; a read outside them, and every edit,
            // needs its own (SPEC §13).
            needs_approval: access == Access::Edit || !inside,
            call_rules: false,
            target: Target::Path {
                access,
                tool,
                from_bash: true,
                widened: false,
                chain,
                glob,
                recursive: f.recursive,
            },
            facts: ModeFacts {
                inside,
                ..ModeFacts::default()
            },
        });
        return;
    }
    // A path only known for deny and ask rules ($HOME/x, ~/x expanded).
    // Its expansion still says where the file is: one outside the working
    // directories needs its own approval, as it would spelled out
    // (`cat ~/x` as `cat /home/me/x`), and so does one whose expansion is
    // unknown (no home directory).
    let expanded = f.expanded.as_ref().map(|p| absolute(p, ctx));
    if let Some(None) = expanded {
        out.list.push(Action {
            kind,
            subject: f.text.clone().into(),
            needs_approval: true,
            call_rules: false,
            target: Target::DynamicPath {
                access,
                text: f.text.clone(),
            },
            facts: ModeFacts::default(),
        });
    }
    if let Some(Some(abs)) = expanded {
        let inside = ctx.in_working_dirs(&abs);
        out.list.push(Action {
            kind,
            // The path (see `Action::subject`).
            subject: Cow::Borrowed(""),
            needs_approval: access == Access::Edit || !inside,
            call_rules: false,
            target: Target::Path {
                access,
                tool,
                from_bash: true,
                widened: true,
                chain: vec![abs],
                glob,
                recursive: f.recursive,
            },
            facts: ModeFacts {
                inside,
                ..ModeFacts::default()
            },
        });
    }
    // A path whose value is unknown: deny and ask rules that could match
    // it ask; a read is covered by its command's approval (whose `*` had
    // to cover the word), an edit needs an Edit rule that nothing certain
    // can give.
    let text = if f.kind != WordKind::Dynamic && f.path.is_none() {
        // A literal or glob word left unresolved: a relative path in a
        // directory `cd` made unknown, so any directory stands before it.
        let mut t = String::from("${DIR}/");
        for ch in f.text.chars() {
            if matches!(ch, '"' | '\'' | '`' | '\\' | '$')
                || (f.kind != WordKind::Glob && matches!(ch, '*' | '?'))
            {
                t.push('\\');
            }
            t.push(ch);
        }
        t
    } else {
        f.text.clone()
    };
    out.list.push(Action {
        kind,
        subject: text.clone().into(),
        needs_approval: access == Access::Edit,
        call_rules: false,
        target: Target::DynamicPath { access, text },
        facts: ModeFacts::default(),
    });
}
