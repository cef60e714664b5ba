//! The policy options every command that takes a policy shares (SPEC §10.3):
//! `--policy FILE` (repeatable), `--claude-settings`, `--tuff ID
//! [--dir-prefix DIR]` and `--allow/--ask/--deny RULE`.

use std::path::{Path, PathBuf};

use crate::Effect;
use crate::Error;
use crate::policy::{ClaudeRoots, LoadedPolicy};

/// Where a command's rules come from.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyArgs {
    /// A Claude settings file (.json: its permissions block, or a bare
    /// {"allow", "ask", "deny"}) or a tuff policy (.toml); repeatable,
    /// loaded in the order given.
    #[arg(long = "policy", value_name = "FILE")]
    pub policy: Vec<PathBuf>,
    /// Discover and merge the project's Claude Code settings (managed,
    /// ~/.claude/settings.json, .claude/settings.json,
    /// .claude/settings.local.json).
    #[arg(long)]
    pub claude_settings: bool,
    /// An installed tuff policy, found as DIR/policies/ID/policy.toml at or
    /// above the project directory; repeatable.
    #[arg(long = "tuff", value_name = "ID")]
    pub tuff: Vec<String>,
    /// The directory installed tuff policies live in, relative to their
    /// project.
    #[arg(long, value_name = "DIR", default_value = ".claude")]
    pub dir_prefix: PathBuf,
    /// An allow rule (Claude Code rule syntax); repeatable.
    #[arg(long = "allow", value_name = "RULE")]
    pub allow: Vec<String>,
    /// An ask rule (Claude Code rule syntax); repeatable.
    #[arg(long = "ask", value_name = "RULE")]
    pub ask: Vec<String>,
    /// A deny rule (Claude Code rule syntax); repeatable.
    #[arg(long = "deny", value_name = "RULE")]
    pub deny: Vec<String>,
}

impl PolicyArgs {
    /// Whether no source of rules was given.
    pub fn is_empty(&self) -> bool {
        self.policy.is_empty()
            && !self.claude_settings
            && self.tuff.is_empty()
            && self.allow.is_empty()
            && self.ask.is_empty()
            && self.deny.is_empty()
    }

    /// Loads the policy: the discovered settings hierarchy of `project`
    /// (with `--claude-settings`), then the `--policy` files in order, then
    /// the installed tuff policies (looked up from `project`), then the
    /// rules given on the command line (deny, ask, allow, each in order).
    pub fn load(&self, project: &Path) -> Result<LoadedPolicy, Error> {
        self.load_with(ClaudeRoots::system(project.to_path_buf()))
    }

    /// [`PolicyArgs::load`] with the settings hierarchy's roots given.
    pub fn load_with(&self, roots: ClaudeRoots) -> Result<LoadedPolicy, Error> {
        let mut p = LoadedPolicy::new();
        if self.claude_settings {
            p.add_claude_settings(&roots)?;
        }
        for file in &self.policy {
            p.add_file(file)?;
        }
        let starts = [roots.project.clone()];
        for id in &self.tuff {
            p.add_installed_tuff(&starts, &self.dir_prefix, id)?;
        }
        for (effect, rules) in [
            (Effect::Deny, &self.deny),
            (Effect::Ask, &self.ask),
            (Effect::Allow, &self.allow),
        ] {
            for rule in rules {
                p.add_rule(effect, rule)?;
            }
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        policy: PolicyArgs,
    }

    #[test]
    fn flags_parse_and_load() {
        let cli = Cli::try_parse_from([
            "x",
            "--deny",
            "Bash(rm *)",
            "--allow",
            "Read",
            "--deny",
            "Read(.env)",
            "--ask",
            "WebFetch",
        ])
        .unwrap();
        assert!(!cli.policy.is_empty());
        assert_eq!(cli.policy.dir_prefix, PathBuf::from(".claude"));
        let roots = ClaudeRoots {
            managed_dir: None,
            home: None,
            project: PathBuf::from("/nonexistent-project"),
        };
        let p = cli.policy.load_with(roots).unwrap();
        let got: Vec<String> = p
            .rules()
            .iter()
            .map(|r| format!("{} {}", r.provenance.item(), r.text))
            .collect();
        assert_eq!(
            got,
            [
                "deny[0] Bash(rm *)",
                "deny[1] Read(.env)",
                "ask[0] WebFetch",
                "allow[0] Read"
            ]
        );
    }

    #[test]
    fn a_bad_deny_rule_fails_the_load() {
        let cli = Cli::try_parse_from(["x", "--deny", "Bash(rm"]).unwrap();
        let roots = ClaudeRoots {
            managed_dir: None,
            home: None,
            project: PathBuf::from("/nonexistent-project"),
        };
        let e = cli.policy.load_with(roots).unwrap_err();
        assert_eq!(e.location().source.as_deref(), Some("<command line>"));
    }
}
