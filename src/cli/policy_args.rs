//! The policy options every command that takes a policy shares (SPEC §10.3):
//! `--policy FILE` (repeatable), `--claude-settings`, `--tuff ID
//! [--dir-prefix DIR]` and `--allow/--ask/--deny RULE`.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::Effect;
use crate::Error;
use crate::compile::{Config, Policy};
use crate::policy::cache::ImageCache;
use crate::policy::image;
use crate::policy::{ClaudeRoots, LoadedPolicy, PolicyImage};

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
        let starts = [roots.project.clone()];
        self.load_from(&roots, &starts)
    }

    /// [`PolicyArgs::load_with`], installed tuff policies searched from
    /// each of `tuff_starts` in turn.
    pub fn load_from(
        &self,
        roots: &ClaudeRoots,
        tuff_starts: &[PathBuf],
    ) -> Result<LoadedPolicy, Error> {
        let mut p = LoadedPolicy::new();
        if self.claude_settings {
            p.add_claude_settings(roots)?;
        }
        for file in &self.policy {
            p.add_file(file)?;
        }
        for id in &self.tuff {
            p.add_installed_tuff(tuff_starts, &self.dir_prefix, id)?;
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

/// How a command compiles its policy, and whether it may use the image
/// cache.
#[derive(Clone, Debug)]
pub struct Compiling {
    /// The matcher configuration.
    pub config: Config,
    /// A name for the configuration, part of the cache key.
    pub engine: &'static str,
    /// The cache to use, if any.
    pub cache: Option<ImageCache>,
}

impl PolicyArgs {
    /// The recipe of the policy: every option and every directory the load
    /// depends on, as one line of JSON (the image cache's key, with the
    /// toolgate build).
    pub fn recipe(&self, roots: &ClaudeRoots, tuff_starts: &[PathBuf], engine: &str) -> String {
        let abs = |p: &Path| {
            std::path::absolute(p)
                .unwrap_or_else(|_| p.to_path_buf())
                .display()
                .to_string()
        };
        let cwd = std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        let mut v = json!({
            "engine": engine,
            // Relative file names are kept in provenance as given.
            "cwd": cwd,
            "policy": self.policy.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "deny": self.deny,
            "ask": self.ask,
            "allow": self.allow,
        });
        if self.claude_settings {
            v["claude_settings"] = json!({
                "managed": roots.managed_dir.as_deref().map(abs),
                "home": roots.home.as_deref().map(abs),
                "project": abs(&roots.project),
            });
        }
        if !self.tuff.is_empty() {
            v["tuff"] = json!({
                "ids": self.tuff,
                "dir_prefix": self.dir_prefix.display().to_string(),
                "starts": tuff_starts.iter().map(|s| abs(s)).collect::<Vec<_>>(),
            });
        }
        v.to_string()
    }

    /// The policy and its compiled matchers: a precompiled image given as
    /// the only source loads as it is (refused when stale, foreign or
    /// corrupt); otherwise the fresh entry of the image cache, else the
    /// policy loaded from its sources and compiled (and stored in the
    /// cache).
    pub fn load_compiled(
        &self,
        roots: &ClaudeRoots,
        tuff_starts: &[PathBuf],
        how: &Compiling,
    ) -> Result<(LoadedPolicy, Policy), Error> {
        if let Some((path, bytes)) = self.sole_image()? {
            let name = path.display().to_string();
            let image = PolicyImage::from_bytes(&bytes, &name)?;
            image.check_fresh(&name)?;
            return Ok(image.into_parts());
        }
        let load = || self.load_from(roots, tuff_starts);
        let compile = |p: &LoadedPolicy| {
            Policy::builder()
                .configure(how.config.clone())
                .build(p.rules().to_vec())
        };
        match &how.cache {
            Some(cache) => {
                let recipe = self.recipe(roots, tuff_starts, how.engine);
                let (p, c, _) = cache.get_or_build(&recipe, load, compile)?;
                Ok((p, c))
            }
            None => {
                let p = load()?;
                let c = compile(&p)?;
                Ok((p, c))
            }
        }
    }

    /// The file given as the only source of rules, if one is.
    pub(crate) fn sole_file(&self) -> Option<&Path> {
        let alone = self.policy.len() == 1
            && !self.claude_settings
            && self.tuff.is_empty()
            && self.allow.is_empty()
            && self.ask.is_empty()
            && self.deny.is_empty();
        self.policy.first().filter(|_| alone).map(PathBuf::as_path)
    }

    /// The precompiled image given as the only source of rules, if so,
    /// and its bytes (the file opened and read once).
    pub(crate) fn sole_image(&self) -> Result<Option<(&Path, Vec<u8>)>, Error> {
        let Some(path) = self.sole_file() else {
            return Ok(None);
        };
        Ok(image::read_if_image(path)?.map(|bytes| (path, bytes)))
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
