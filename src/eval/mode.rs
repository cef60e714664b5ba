//! Claude Code's permission modes (SPEC §9.3), applied in evaluation only.
//!
//! Hooks never resolve modes: with no mode in the
//! [`EvalContext`](super::EvalContext) a call no rule decided stays
//! [`Verdict::None`]. With a mode, this module says which actions the mode
//! allows on its own (`allows`) and what becomes of a call nothing
//! decided or that was asked about (`resolve`). The two data tables —
//! Claude Code's read-only commands and its tools that never prompt — are
//! taken from its documentation ("Read-only commands", "Tools available to
//! Claude") and apply under every mode, never without one.
//!
//! The mode × action-class table is written out in the README
//! ("Decisions").

use super::action::{Action, ModeFacts};
use super::decision::{ActionKind, Verdict};
use crate::policy::PermissionMode;

/// Programs Claude Code runs without asking in every mode, when every file
/// they name is a read inside the working directories and they use no
/// option that executes or writes (SPEC §9.3; Claude Code's documentation,
/// "Read-only commands").
pub const READ_ONLY_COMMANDS: &[&str] = &[
    "ls",
    "cat",
    "echo",
    "pwd",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "find",
    "wc",
    "which",
    "whereis",
    "type",
    "diff",
    "stat",
    "du",
    "df",
    "cd",
    "file",
    "tree",
    "less",
    "more",
    "sort",
    "uniq",
    "cut",
    "tr",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "date",
    "whoami",
    "id",
    "uname",
    "hostname",
    "true",
    "false",
    "test",
    "[",
    "printf",
    "nl",
    "od",
    "cmp",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "shasum",
    "column",
    "fold",
    "paste",
    "tac",
    "rev",
    "strings",
    "hexdump",
    "xxd",
    "jq",
    "yq",
    "seq",
    "sleep",
    "uptime",
    "ps",
    "groups",
    "tty",
    "pushd",
    "popd",
    "dirs",
];

/// `git` subcommands that only read (Claude Code's "read-only git forms").
pub const READ_ONLY_GIT: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "rev-parse",
    "ls-files",
    "ls-tree",
    "blame",
    "describe",
    "shortlog",
    "cat-file",
    "grep",
    "merge-base",
    "rev-list",
    "show-ref",
    "version",
];

/// The commands `acceptEdits` allows on paths inside the working
/// directories (SPEC §9.3).
pub const ACCEPT_EDITS_COMMANDS: &[&str] = &["mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"];

/// Tools that never prompt in Claude Code ("Tools available to Claude",
/// permission required: no). File reads (`Read`, `Glob`, `Grep`, `LSP`,
/// `NotebookRead`) are not here: they are reads, allowed inside the
/// working directories. `AskUserQuestion` is not here: it is itself a
/// question.
pub const NEVER_PROMPT_TOOLS: &[&str] = &[
    "Agent",
    "TodoWrite",
    "TodoRead",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskUpdate",
    "TaskOutput",
    "TaskStop",
    "BashOutput",
    "KillShell",
    "EnterPlanMode",
    "CronCreate",
    "CronDelete",
    "CronList",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
    "ToolSearch",
    "EnterWorktree",
    "ExitWorktree",
];

/// Whether `tool` never prompts.
pub fn never_prompts(tool: &str) -> bool {
    NEVER_PROMPT_TOOLS.contains(&tool)
}

/// Whether a program (basename, with its subcommand when it has one) is a
/// read-only command.
pub fn read_only_command(program: &str, subcommand: Option<&str>) -> bool {
    if program == "git" {
        return subcommand.is_some_and(|s| READ_ONLY_GIT.contains(&s));
    }
    READ_ONLY_COMMANDS.contains(&program)
}

/// Whether `mode` allows this action when no rule decided it.
///
/// | class | `default` | `acceptEdits` | `plan` | `dontAsk` | `bypassPermissions` |
/// |---|---|---|---|---|---|
/// | read inside the working dirs | yes | yes | yes | yes | yes |
/// | read-only command | yes | yes | yes | yes | yes |
/// | tool that never prompts | yes | yes | yes | yes | yes |
/// | edit inside the working dirs | no | yes | no | no | yes |
/// | `mkdir touch rm rmdir mv cp sed` inside | no | yes | no | no | yes |
/// | anything else | no | no | no | no | yes |
pub(crate) fn allows(mode: PermissionMode, action: &Action) -> bool {
    let f: ModeFacts = action.facts;
    let always = match action.kind {
        ActionKind::Read => f.inside,
        ActionKind::Run => f.read_only,
        ActionKind::Use => f.never_prompts,
        _ => false,
    };
    if always {
        return true;
    }
    match mode {
        PermissionMode::BypassPermissions => true,
        PermissionMode::AcceptEdits => match action.kind {
            ActionKind::Edit => f.inside,
            ActionKind::Run => f.accept_edits,
            _ => false,
        },
        PermissionMode::Default | PermissionMode::Plan | PermissionMode::DontAsk => false,
    }
}

/// Whether `plan` withholds a rule's allow from this action: edits and
/// commands that are not read-only are asked about (SPEC §9.3).
pub(crate) fn plan_withholds(action: &Action) -> bool {
    match action.kind {
        ActionKind::Edit => true,
        ActionKind::Run => !action.facts.read_only,
        _ => false,
    }
}

/// The verdict of a call in `mode`, from what rules and the mode made of
/// it: `rules` is `Deny`/`Ask`/`Allow` when rules (or an incomplete
/// reading) decided, `None` when some action needing approval was left
/// unmatched.
///
/// - `dontAsk`: every ask becomes deny, and so does no-match;
/// - `bypassPermissions`: no-match is allow (deny and ask stand);
/// - every other mode: no-match is ask.
pub(crate) fn resolve(mode: Option<PermissionMode>, rules: Verdict) -> Verdict {
    let Some(mode) = mode else {
        return rules;
    };
    match (mode, rules) {
        (_, Verdict::Deny) => Verdict::Deny,
        (PermissionMode::DontAsk, Verdict::Ask | Verdict::None) => Verdict::Deny,
        (_, Verdict::Ask) => Verdict::Ask,
        (_, Verdict::Allow) => Verdict::Allow,
        (PermissionMode::BypassPermissions, Verdict::None) => Verdict::Allow,
        (_, Verdict::None) => Verdict::Ask,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution_table() {
        use PermissionMode::*;
        let rows = [
            (Default, Verdict::None, Verdict::Ask),
            (AcceptEdits, Verdict::None, Verdict::Ask),
            (Plan, Verdict::None, Verdict::Ask),
            (DontAsk, Verdict::None, Verdict::Deny),
            (DontAsk, Verdict::Ask, Verdict::Deny),
            (DontAsk, Verdict::Allow, Verdict::Allow),
            (BypassPermissions, Verdict::None, Verdict::Allow),
            (BypassPermissions, Verdict::Ask, Verdict::Ask),
            (BypassPermissions, Verdict::Deny, Verdict::Deny),
        ];
        for (mode, rules, want) in rows {
            assert_eq!(resolve(Some(mode), rules), want, "{mode} {rules}");
        }
        assert_eq!(resolve(None, Verdict::None), Verdict::None);
        assert!(read_only_command("git", Some("status")));
        assert!(!read_only_command("git", Some("push")));
        assert!(!read_only_command("git", None));
        assert!(read_only_command("ls", None));
    }
}
