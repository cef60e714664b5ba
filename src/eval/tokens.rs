//! tuff command token rules against one invocation's words (SPEC §7.2).
//!
//! A rule `[program, w1, w2, …]` matches an argv when the program's
//! basename is `program`; when `w1` is not an option, the options before
//! the subcommand are skipped (per the program's table) and the first
//! remaining word is `w1`; the remaining rule words then appear in order
//! after it. A short-option cluster in a rule (`-rf`) matches when each of
//! its letters appears in some short cluster after the subcommand, in any
//! order or split; a long option that is a known alias of a letter
//! (`rm --recursive`, `git push --force`, `--force=true`) counts as it.

use std::collections::HashMap;

/// Options before the subcommand that take a value (SPEC §7.2).
const VALUE_OPTIONS: &[(&[&str], &[&str])] = &[
    (
        &["git"],
        &[
            "-C",
            "-c",
            "--git-dir",
            "--work-tree",
            "--namespace",
            "--super-prefix",
            "--config-env",
        ],
    ),
    (
        &["docker", "podman"],
        &[
            "-H",
            "--host",
            "-c",
            "--context",
            "--config",
            "-l",
            "--log-level",
        ],
    ),
    (
        &["kubectl", "oc"],
        &[
            "-n",
            "--namespace",
            "--context",
            "--cluster",
            "--kubeconfig",
            "-s",
            "--server",
            "--user",
            "--token",
        ],
    ),
    (
        &["helm"],
        &["-n", "--namespace", "--kube-context", "--kubeconfig"],
    ),
    (
        &["npm", "pnpm", "yarn"],
        &[
            "-C",
            "--prefix",
            "--dir",
            "--cwd",
            "--filter",
            "-w",
            "--workspace",
        ],
    ),
    (&["cargo"], &["-C", "--config", "-Z", "--color"]),
    (&["gh"], &["-R", "--repo"]),
    (
        &["aws"],
        &["--profile", "--region", "--output", "--endpoint-url"],
    ),
    (&["gcloud"], &["--project", "--account", "--configuration"]),
    (&["terraform", "tofu"], &[]),
];

/// Long options that are aliases of a short letter, by program (and
/// subcommand): `(program, subcommand, long, letter)`.
const ALIASES: &[(&str, &str, &str, char)] = &[
    ("rm", "", "--recursive", 'r'),
    ("rm", "", "--force", 'f'),
    ("rm", "", "--dir", 'd'),
    ("cp", "", "--recursive", 'r'),
    ("cp", "", "--force", 'f'),
    ("cp", "", "--archive", 'a'),
    ("mv", "", "--force", 'f'),
    ("chmod", "", "--recursive", 'R'),
    ("chown", "", "--recursive", 'R'),
    ("chgrp", "", "--recursive", 'R'),
    ("git", "push", "--force", 'f'),
    ("git", "push", "--delete", 'd'),
    ("git", "clean", "--force", 'f'),
    ("git", "clean", "--dry-run", 'n'),
    ("git", "reset", "--quiet", 'q'),
    ("git", "branch", "--delete", 'd'),
    ("git", "branch", "--force", 'f'),
    ("docker", "rm", "--force", 'f'),
    ("docker", "rm", "--volumes", 'v'),
    ("podman", "rm", "--force", 'f'),
    ("kubectl", "delete", "--all", 'A'),
];

/// Letters that mean the same for a program (`rm -R` is `rm -r`).
fn same_letter(program: &str, c: char) -> char {
    match (program, c) {
        ("rm" | "cp", 'R') => 'r',
        _ => c,
    }
}

fn basename(w: &str) -> &str {
    w.rsplit_once('/').map_or(w, |(_, b)| b)
}

fn is_cluster(w: &str) -> bool {
    w.len() >= 2
        && w.starts_with('-')
        && !w.starts_with("--")
        && w[1..].chars().all(|c| c.is_ascii_alphanumeric())
}

/// The letter a long option stands for, if it is a known alias.
fn alias(program: &str, sub: &str, w: &str) -> Option<char> {
    let long = w.split_once('=').map_or(w, |(l, _)| l);
    ALIASES
        .iter()
        .find(|(p, s, l, _)| *p == program && (s.is_empty() || *s == sub) && *l == long)
        .map(|&(_, _, _, c)| c)
}

/// The letters a word contributes (a short cluster's letters, an alias's
/// letter).
fn letters(program: &str, sub: &str, w: &str) -> Vec<char> {
    if is_cluster(w) {
        w[1..].chars().map(|c| same_letter(program, c)).collect()
    } else if w.starts_with("--") {
        alias(program, sub, w).into_iter().collect()
    } else {
        Vec::new()
    }
}

/// The value options of `program` before its subcommand.
fn value_options(program: &str) -> &'static [&'static str] {
    VALUE_OPTIONS
        .iter()
        .find(|(names, _)| names.contains(&program))
        .map_or(&[][..], |(_, v)| v)
}

/// A word of an argv: a string, or a word of a reading (whose text is
/// not copied).
pub(crate) trait Token {
    /// Its text.
    fn token(&self) -> &str;
}

impl Token for String {
    fn token(&self) -> &str {
        self
    }
}

impl Token for crate::shell::Word {
    fn token(&self) -> &str {
        self.text()
    }
}

/// The subcommand of an argv: the first word after the options before it
/// are skipped (as [`tokens_match`] skips them), if any.
fn subcommand<'w, W: Token>(program: &str, args: &'w [W]) -> Option<&'w str> {
    let values = value_options(program);
    let mut i = 0;
    while let Some(a) = args.get(i).map(Token::token) {
        if a == "--" {
            return args.get(i + 1).map(Token::token);
        }
        if !a.starts_with('-') || a == "-" {
            return Some(a);
        }
        i += if !a.contains('=') && values.contains(&a) {
            2
        } else {
            1
        };
    }
    None
}

/// Token rules indexed by `(program, w1)`: an invocation is checked only
/// against the rules of its program whose `w1` is its subcommand, and those
/// whose `w1` is absent or an option (which skip nothing). Built once per
/// policy; a lookup is two hash probes, whatever the number of rules.
#[derive(Clone, Debug, Default)]
pub(crate) struct TokenIndex {
    /// program → (w1, or "" for no subcommand word) → rule ids, ascending.
    by_program: HashMap<String, HashMap<String, Vec<u32>>>,
    /// program → every rule id of that program, ascending.
    of_program: HashMap<String, Vec<u32>>,
    /// Every rule id, ascending.
    all: Vec<u32>,
}

impl TokenIndex {
    /// Indexes `rules`: `(id, words)` in ascending id order.
    pub(crate) fn new<'r>(rules: impl IntoIterator<Item = (u32, &'r [String])>) -> TokenIndex {
        let mut by_program: HashMap<String, HashMap<String, Vec<u32>>> = HashMap::new();
        let mut of_program: HashMap<String, Vec<u32>> = HashMap::new();
        let mut all = Vec::new();
        for (id, words) in rules {
            let Some(program) = words.first() else {
                continue;
            };
            all.push(id);
            of_program.entry(program.clone()).or_default().push(id);
            let w1 = match words.get(1) {
                Some(w) if !w.starts_with('-') => w.clone(),
                _ => String::new(),
            };
            by_program
                .entry(program.clone())
                .or_default()
                .entry(w1)
                .or_default()
                .push(id);
        }
        TokenIndex {
            by_program,
            of_program,
            all,
        }
    }

    /// The ids of the rules that may match or could match (for some value
    /// of its dynamic words, `hole`) `words` (ascending): those of its
    /// program, or every rule when the program word itself is dynamic.
    /// A token rule matches only an argv whose program word is dynamic or
    /// has the rule's program as its basename ([`tokens_could_match`]).
    pub(crate) fn could_candidates<'a, W: Token>(
        &'a self,
        words: &[W],
        hole: &dyn Fn(&str) -> bool,
    ) -> &'a [u32] {
        let Some(first) = words.first().map(Token::token) else {
            return &[];
        };
        if hole(first) {
            return &self.all;
        }
        self.of_program
            .get(basename(first))
            .map_or(&[], |ids| &ids[..])
    }

    /// The ids of the rules that may match `words` (ascending), to be
    /// checked with [`tokens_match`].
    pub(crate) fn candidates<W: Token>(&self, words: &[W], out: &mut Vec<u32>) {
        out.clear();
        let Some(first) = words.first().map(Token::token) else {
            return;
        };
        let prog = basename(first);
        let Some(subs) = self.by_program.get(prog) else {
            return;
        };
        if let Some(ids) = subs.get("") {
            out.extend_from_slice(ids);
        }
        let args = words.get(1..).unwrap_or(&[]);
        if let Some(ids) = subcommand(prog, args).and_then(|s| subs.get(s)) {
            out.extend_from_slice(ids);
            out.sort_unstable();
        }
    }
}

/// Whether the token rule `rule` matches the argv `words`.
pub(crate) fn tokens_match<W: Token>(rule: &[String], words: &[W]) -> bool {
    tokens_match_with(rule, words, &|_| false)
}

/// Whether the token rule `rule` could match the argv `words` for some
/// value of its dynamic words (`hole` says which they are): a dynamic word
/// may stand for any run of words, so it may be the program, the
/// subcommand, or every rule word still to be found (SPEC §8.4: a deny or
/// ask rule that could match makes the action ask).
pub(crate) fn tokens_could_match<W: Token>(
    rule: &[String],
    words: &[W],
    hole: &dyn Fn(&str) -> bool,
) -> bool {
    tokens_match_with(rule, words, hole)
}

fn tokens_match_with<W: Token>(rule: &[String], words: &[W], hole: &dyn Fn(&str) -> bool) -> bool {
    let (Some(program), Some(first)) = (rule.first(), words.first().map(Token::token)) else {
        return false;
    };
    if hole(first) {
        return true;
    }
    let prog = basename(first);
    if prog != program {
        return false;
    }
    let Some(w1) = rule.get(1) else {
        return true;
    };
    let args = words.get(1..).unwrap_or(&[]);
    let (mut rest, sub) = if w1.starts_with('-') {
        (args, "")
    } else {
        let values = VALUE_OPTIONS
            .iter()
            .find(|(names, _)| names.contains(&prog))
            .map_or(&[][..], |(_, v)| v);
        let mut i = 0;
        while let Some(a) = args.get(i).map(Token::token) {
            if a == "--" {
                i += 1;
                break;
            }
            if hole(a) {
                return true;
            }
            if !a.starts_with('-') || a == "-" {
                break;
            }
            i += if !a.contains('=') && values.contains(&a) {
                2
            } else {
                1
            };
        }
        match args.get(i).map(Token::token) {
            Some(a) if a == w1 => (args.get(i + 1..).unwrap_or(&[]), w1.as_str()),
            _ => return false,
        }
    };
    let start = if w1.starts_with('-') { 1 } else { 2 };
    for w in rule.get(start..).unwrap_or(&[]) {
        if rest.iter().any(|a| hole(a.token())) {
            return true;
        }
        let want = letters(prog, sub, w);
        if !want.is_empty() {
            // Each letter in some cluster (or alias) among the rest.
            let have: Vec<char> = rest
                .iter()
                .flat_map(|a| letters(prog, sub, a.token()))
                .collect();
            if !want.iter().all(|c| have.contains(c)) {
                return false;
            }
            continue;
        }
        match rest.iter().position(|a| a.token() == w) {
            Some(p) => rest = rest.get(p + 1..).unwrap_or(&[]),
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(rule: &[&str], argv: &str) -> bool {
        let rule: Vec<String> = rule.iter().map(|s| s.to_string()).collect();
        let words: Vec<String> = argv.split(' ').map(str::to_string).collect();
        tokens_match(&rule, &words)
    }

    #[test]
    fn spec_examples() {
        let push = ["git", "push", "--force"];
        assert!(m(&push, "git push origin main --force"));
        assert!(m(&push, "git -C . push --force"));
        assert!(m(&push, "git -c x=y push -f origin"));
        assert!(m(&push, "git push --force=true"));
        assert!(m(&push, "/usr/bin/git push -fu origin"));
        assert!(!m(&push, "git push --force-with-lease"));
        assert!(!m(&push, "legit push --force"));
        assert!(!m(&push, "git pull --force"));
        let rm = ["rm", "-rf"];
        for ok in [
            "rm -rf /",
            "rm -fr /",
            "rm -r -f x",
            "rm -rfv x",
            "rm --recursive --force x",
            "rm -R -f x",
        ] {
            assert!(m(&rm, ok), "{ok}");
        }
        assert!(!m(&rm, "rm -r x"));
        assert!(m(&["git"], "git status"));
        assert!(m(&["kubectl", "delete"], "kubectl -n prod delete pod x"));
        assert!(m(&["npm", "-g"], "npm install -g x"));
    }

    #[test]
    fn index_finds_every_rule_the_loop_finds() {
        let w = |s: &str| -> Vec<String> { s.split(' ').map(str::to_string).collect() };
        let rules: Vec<Vec<String>> = [
            "git",
            "git push --force",
            "git push",
            "git -c",
            "git status",
            "git --",
            "rm -rf",
            "rm",
            "kubectl delete namespace",
            "kubectl -n",
            "terraform apply",
            "npm -g",
            "npm install",
            "docker rm -f",
            "cargo publish",
            "gh repo delete",
            "legit push",
        ]
        .iter()
        .map(|r| w(r))
        .collect();
        let index = TokenIndex::new(rules.iter().enumerate().map(|(i, r)| (i as u32, &r[..])));
        let argvs = [
            "git push origin main --force",
            "git -C . push --force",
            "git -c x=y push -f",
            "/usr/bin/git status",
            "git -- push",
            "git --git-dir x push",
            "git",
            "rm -fr /",
            "rm --recursive --force x",
            "kubectl -n prod delete namespace prod",
            "terraform -chdir=infra apply -auto-approve",
            "npm install -g x",
            "npm -w a install",
            "docker -H h rm --force x",
            "cargo -Z x publish",
            "gh -R o/r repo delete",
            "legit push --force",
            "ls -la",
            "git -c",
            "kubectl -n",
        ];
        let mut out = Vec::new();
        for argv in argvs {
            let argv = w(argv);
            let all: Vec<u32> = (0..rules.len() as u32)
                .filter(|&i| tokens_match(&rules[i as usize], &argv))
                .collect();
            index.candidates(&argv, &mut out);
            let via: Vec<u32> = out
                .iter()
                .copied()
                .filter(|&i| tokens_match(&rules[i as usize], &argv))
                .collect();
            assert_eq!(via, all, "{argv:?}");
            assert!(out.windows(2).all(|p| p[0] < p[1]), "{argv:?}: {out:?}");
            // With dynamic words (`$X` here), the narrowed candidates
            // find every rule the loop finds could match.
            for hole_at in 0..=argv.len() {
                let mut argv = argv.clone();
                if let Some(word) = argv.get_mut(hole_at) {
                    *word = "$X".to_string();
                }
                let hole = |w: &str| w == "$X";
                let could: Vec<u32> = (0..rules.len() as u32)
                    .filter(|&i| tokens_could_match(&rules[i as usize], &argv, &hole))
                    .collect();
                let via: Vec<u32> = index
                    .could_candidates(&argv, &hole)
                    .iter()
                    .copied()
                    .filter(|&i| tokens_could_match(&rules[i as usize], &argv, &hole))
                    .collect();
                assert_eq!(via, could, "{argv:?}");
            }
        }
    }
}
