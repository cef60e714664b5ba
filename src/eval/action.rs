//! A call → its actions (SPEC §9.1), the input both evaluators match.
//!
//! Actions are plain data: what to match (a command's candidate texts, an
//! absolute path and its symlink chain, a host, the tool itself), whether
//! the action needs approval, and what the permission modes need to know
//! about it. The engine ([`super::Evaluator`]) and the reference evaluator
//! ([`crate::reference_eval`]) derive the same actions and match them each
//! their own way.

use super::context::EvalContext;
use super::decision::ActionKind;
use crate::error::{Error, ErrorKind};
use crate::eval::call::ToolCall;
use crate::rule::{COMMAND_TOOLS, EDIT_TOOLS, READ_TOOLS};
use crate::shell::reduce::CandTexts;
use std::borrow::Cow;

/// Read or edit, for path actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Edit,
}

/// A text a command rule is matched against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cand<'a> {
    pub text: &'a str,
    /// Allow rules may match it too (SPEC §8.4).
    pub for_allow: bool,
}

/// What an action is matched against.
#[derive(Clone, Debug)]
pub(crate) enum Target {
    /// Only the call-level rules (tool-name and field rules).
    Tool,
    /// One invocation: its candidate texts, its words (for tuff token
    /// rules), and the source texts of its dynamic and glob words.
    Run {
        /// Its candidate texts: a range of [`Actions::texts`]' list.
        cands: std::ops::Range<usize>,
        words: Vec<crate::shell::Word>,
        /// The argv of each wrapper around it, outermost first (its own
        /// words and the command it wraps): deny and ask token rules that
        /// name a wrapper (`["sudo", "airmon-ng"]`) match them.
        wrappers: Vec<Vec<crate::shell::Word>>,
        holes: Vec<String>,
        /// It runs a script or options that execute or write (SPEC §8.5):
        /// allow rules must name what it does.
        exec: Vec<String>,
    },
    /// The whole command text (a range of [`Actions::texts`]' text):
    /// exact rules, and every deny and ask command rule when the reading
    /// is incomplete.
    Raw {
        text: std::ops::Range<usize>,
        complete: bool,
    },
    /// A path. `chain` is the path itself, then each hop of its symlink
    /// chain, then its real path (the last entry) when symlinks are
    /// followed; always at least the path.
    Path {
        access: Access,
        /// The tool whose rules govern it (`Read`/`Edit` for a Bash
        /// command's files, where `strict` rules do not apply).
        tool: &'static str,
        from_bash: bool,
        /// Only deny and ask rules apply (a path known through `$HOME`
        /// or `~` expansion, SPEC §8.4).
        widened: bool,
        chain: Vec<String>,
        /// The path is a glob (its pieces are `*`, `?`, `[…]`): rules that
        /// could match one of its names ask, rules that match all deny.
        glob: bool,
        /// A directory read or written recursively.
        recursive: bool,
    },
    /// A path whose value is unknown (a dynamic word): deny and ask rules
    /// that could match anything ask.
    DynamicPath { access: Access, text: String },
    /// A host (`None`: the URL does not parse or has no host).
    Host { host: Option<String> },
    /// A host named by a dynamic word.
    DynamicHost,
}

/// What the permission modes need to know about an action (SPEC §9.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ModeFacts {
    /// A path inside the working directories.
    pub inside: bool,
    /// A run of a read-only command whose files are all reads inside the
    /// working directories.
    pub read_only: bool,
    /// A run of `mkdir touch rm rmdir mv cp sed` on paths all inside the
    /// working directories.
    pub accept_edits: bool,
    /// A use of a tool that never prompts.
    pub never_prompts: bool,
}

/// One action of a call.
#[derive(Clone, Debug)]
pub(crate) struct Action {
    pub kind: ActionKind,
    /// What it is about; empty for an action named by the text it is
    /// matched by (a command, a run, a path: see [`Action::subject`]).
    pub subject: Cow<'static, str>,
    pub needs_approval: bool,
    /// The call-level rules (tool name, fields) apply to it.
    pub call_rules: bool,
    pub target: Target,
    pub facts: ModeFacts,
}

impl Action {
    /// What the action is about: its own subject, or — when that is
    /// empty — the text it is matched by (a command's whole text, a run's
    /// first candidate in `texts`, a path), which is not copied twice.
    pub fn subject<'a>(&'a self, texts: &'a CandTexts) -> &'a str {
        if !self.subject.is_empty() {
            return &self.subject;
        }
        match &self.target {
            Target::Raw { text, .. } => texts.text_of(text),
            Target::Run { cands, .. } => texts.get(cands.start).map_or("", |(t, _)| t),
            Target::Path { chain, .. } => chain.first().map_or("", String::as_str),
            _ => "",
        }
    }

    /// Whether its subject is a text of the candidate buffer (a command's
    /// whole text, a run's first candidate): [`Action::subject`] reads it
    /// there.
    pub fn subject_in_texts(&self) -> bool {
        self.subject.is_empty() && matches!(self.target, Target::Raw { .. } | Target::Run { .. })
    }

    /// Takes its subject out (for a report) unless it is a text of the
    /// candidate buffer ([`Action::subject_in_texts`]): a name as is, an
    /// owned text or a path moved, without a copy. What the modes read
    /// (its kind, target kind and facts) stays.
    pub fn take_subject(&mut self) -> Option<super::decision::Subject> {
        use super::decision::Subject;
        match std::mem::take(&mut self.subject) {
            Cow::Borrowed("") => match &mut self.target {
                Target::Path { chain, .. } if !chain.is_empty() => {
                    Some(Subject::owned(chain.swap_remove(0)))
                }
                Target::Raw { .. } | Target::Run { .. } => None,
                _ => Some(Subject::name("")),
            },
            Cow::Borrowed(name) => Some(Subject::name(name)),
            Cow::Owned(text) => Some(Subject::owned(text)),
        }
    }
}

/// The actions of a call and why its reading is incomplete.
#[derive(Clone, Debug, Default)]
pub(crate) struct Actions {
    pub list: Vec<Action>,
    pub incomplete: Vec<String>,
    /// The candidate texts of its runs (reused from call to call by the
    /// evaluator).
    pub texts: CandTexts,
}

impl Actions {
    /// Emptied, keeping the room of its list and texts for the next call
    /// (unless a hostile command made the list large: then it starts
    /// afresh, so a long batch's memory stays flat).
    pub fn recycled(mut self) -> Actions {
        const KEEP: usize = 1 << 12;
        if self.list.capacity() > KEEP {
            self.list = Vec::new();
        }
        self.list.clear();
        self.incomplete.clear();
        self.texts.clear();
        self
    }

    /// The candidates of a run (`cands`, from its target).
    pub fn cands(&self, cands: &std::ops::Range<usize>) -> impl Iterator<Item = Cand<'_>> {
        cands.clone().filter_map(|i| {
            let (text, for_allow) = self.texts.get(i)?;
            Some(Cand { text, for_allow })
        })
    }
}

fn call_error(msg: String) -> Error {
    Error::new(ErrorKind::Call, msg)
}

/// Derives the actions of `call` in `ctx`.
pub(crate) fn derive(call: &ToolCall, ctx: &EvalContext) -> Result<Actions, Error> {
    derive_with(call, ctx, Needs::ALL, Actions::default())
}

/// What of a Bash command's runs a policy can use: the rest is not built
/// (it could meet no rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Needs {
    /// The candidate texts at all (the policy has a command rule; without
    /// one, only the text as written is built, to name the run).
    pub candidates: bool,
    /// The candidate texts that serve deny and ask rules only (the policy
    /// has a deny or ask command rule).
    pub deny_candidates: bool,
    /// The words of each run and its wrappers (the policy has token rules).
    pub words: bool,
}

impl Needs {
    /// Everything (the reference evaluator, explanations).
    pub const ALL: Needs = Needs {
        candidates: true,
        deny_candidates: true,
        words: true,
    };

    /// The dynamic words' source texts: only deny and ask rules could
    /// match them.
    pub fn holes(self) -> bool {
        self.deny_candidates || self.words
    }

    /// The candidate texts to build.
    pub fn texts(self) -> crate::shell::reduce::Texts {
        use crate::shell::reduce::Texts;
        if self.deny_candidates {
            Texts::All
        } else if self.candidates {
            Texts::Allow
        } else {
            Texts::First
        }
    }
}

/// [`derive`], building only what `needs` says a policy can use, into the
/// buffers of `earlier` (an earlier call's actions: emptied first).
pub(crate) fn derive_with(
    call: &ToolCall,
    ctx: &EvalContext,
    needs: Needs,
    earlier: Actions,
) -> Result<Actions, Error> {
    let tool = call.tool.as_str();
    let mut out = earlier.recycled();
    if COMMAND_TOOLS.contains(&tool) {
        let Some(command) = call.command() else {
            return Err(call_error(format!("a {tool} call needs a string command")));
        };
        super::bash::derive(command, ctx, &mut out, needs);
        return Ok(out);
    }
    if tool == "PowerShell" {
        // Read as one text: toolgate does not read PowerShell syntax, so
        // the text is both a run (its rules decide) and incomplete for
        // nothing else.
        let Some(command) = call.command() else {
            return Err(call_error(
                "a PowerShell call needs a string command".into(),
            ));
        };
        let at = out.texts.list.len();
        out.texts.push(command, at, true);
        out.list.push(Action {
            kind: ActionKind::Run,
            // Its candidate, the command (see `Action::subject`).
            subject: Cow::Borrowed(""),
            needs_approval: true,
            call_rules: true,
            target: Target::Run {
                cands: at..out.texts.list.len(),
                words: Vec::new(),
                wrappers: Vec::new(),
                holes: Vec::new(),
                exec: Vec::new(),
            },
            facts: ModeFacts::default(),
        });
        return Ok(out);
    }
    let read = READ_TOOLS.contains(&tool);
    // The tool's name as the table spells it (no copy per call).
    let file_tool = READ_TOOLS.iter().chain(EDIT_TOOLS).find(|t| **t == tool);
    if let Some(&file_tool) = file_tool {
        let path = match call.path() {
            Some(p) => p,
            None if matches!(tool, "Glob" | "Grep" | "LSP") => ".",
            None => {
                return Err(call_error(format!(
                    "a {tool} call needs a string file_path"
                )));
            }
        };
        let abs = ctx
            .absolute_path(ctx.cwd(), path)
            .ok_or_else(|| call_error(format!("path {path:?} cannot be made absolute")))?;
        let access = if read { Access::Read } else { Access::Edit };
        let chain = chain_of(abs, ctx);
        let inside = chain.iter().all(|p| ctx.in_working_dirs(p));
        out.list.push(Action {
            kind: if read {
                ActionKind::Read
            } else {
                ActionKind::Edit
            },
            // The path (see `Action::subject`).
            subject: Cow::Borrowed(""),
            needs_approval: true,
            call_rules: true,
            target: Target::Path {
                access,
                tool: file_tool,
                from_bash: false,
                widened: false,
                chain,
                glob: false,
                recursive: false,
            },
            facts: ModeFacts {
                inside,
                ..ModeFacts::default()
            },
        });
        return Ok(out);
    }
    if tool == "WebFetch" {
        let Some(url) = call.url() else {
            return Err(call_error("a WebFetch call needs a string url".into()));
        };
        let host = crate::reference::host_of(url).ok();
        if host.is_none() {
            out.incomplete
                .push(format!("url {url:?} does not parse or has no host"));
        }
        out.list.push(Action {
            kind: ActionKind::Fetch,
            subject: host.clone().unwrap_or_else(|| url.to_string()).into(),
            needs_approval: true,
            call_rules: true,
            target: Target::Host { host },
            facts: ModeFacts::default(),
        });
        return Ok(out);
    }
    out.list.push(Action {
        kind: ActionKind::Use,
        subject: tool.to_string().into(),
        needs_approval: true,
        call_rules: true,
        target: Target::Tool,
        facts: ModeFacts {
            never_prompts: super::mode::never_prompts(tool),
            ..ModeFacts::default()
        },
    });
    Ok(out)
}

/// The path, the hops of its symlink chain and its real path, when the
/// context follows symlinks (SPEC §4.2, §13 "New files"); else the path
/// alone. Every entry is absolute and normalised; repeats are dropped.
pub(crate) fn chain_of(abs: String, ctx: &EvalContext) -> Vec<String> {
    if !ctx.follow_symlinks() {
        return vec![abs];
    }
    let mut cur = abs.clone();
    let mut chain = vec![abs];
    // Hops: follow the link at the path itself, up to 40 times (the
    // kernel's limit).
    for _ in 0..40 {
        let Ok(target) = std::fs::read_link(&cur) else {
            break;
        };
        let Some(t) = target.to_str() else { break };
        let dir = match cur.rsplit_once('/') {
            Some(("", _)) | None => "/".to_string(),
            Some((d, _)) => d.to_string(),
        };
        let Some(next) = crate::paths::join_lexical(&dir, t) else {
            break;
        };
        if chain.contains(&next) {
            break;
        }
        chain.push(next.clone());
        cur = next;
    }
    if let Some(real) = chain.first().and_then(|abs| real_path(abs)) {
        if !chain.contains(&real) {
            chain.push(real);
        }
    }
    chain
}

/// The real path of `abs`; for a missing file, the real path of its
/// deepest existing ancestor followed by the rest (SPEC §13).
fn real_path(abs: &str) -> Option<String> {
    let mut head = abs.to_string();
    let mut rest: Vec<String> = Vec::new();
    loop {
        if let Ok(p) = std::fs::canonicalize(&head) {
            let mut s = p.to_str()?.to_string();
            for r in rest.iter().rev() {
                if !s.ends_with('/') {
                    s.push('/');
                }
                s.push_str(r);
            }
            return crate::paths::normalize_lexical(&s);
        }
        let (dir, last) = head.rsplit_once('/')?;
        rest.push(last.to_string());
        head = if dir.is_empty() {
            "/".into()
        } else {
            dir.into()
        };
        if head == "/" && rest.len() > 4096 {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_paths_of_missing_files() {
        let tmp = std::env::temp_dir();
        let base = std::fs::canonicalize(&tmp).unwrap();
        let base = base.to_str().unwrap();
        let missing = format!("{}/no-such-dir-toolgate/x", tmp.to_str().unwrap());
        assert_eq!(
            real_path(&missing).as_deref(),
            Some(format!("{base}/no-such-dir-toolgate/x").as_str())
        );
    }
}
