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

use super::How;

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
    // A plain scan from the end: `rsplit_once` searches with `memrchr`,
    // which costs more than the word's few bytes.
    match w.bytes().rposition(|b| b == b'/') {
        Some(i) => w.get(i + 1..).unwrap_or(""),
        None => w,
    }
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

/// One letter's bit in a set of short-option letters (`[0-9A-Za-z]`, 62
/// bits); 0 for anything else.
fn bit(c: char) -> u64 {
    match c {
        '0'..='9' => 1 << (c as u32 - '0' as u32),
        'A'..='Z' => 1 << (10 + c as u32 - 'A' as u32),
        'a'..='z' => 1 << (36 + c as u32 - 'a' as u32),
        _ => 0,
    }
}

/// [`letters`] as a set of bits (allocates nothing).
fn letter_bits(program: &str, sub: &str, w: &str) -> u64 {
    if is_cluster(w) {
        w[1..]
            .chars()
            .fold(0, |m, c| m | bit(same_letter(program, c)))
    } else if w.starts_with("--") {
        alias(program, sub, w).map_or(0, bit)
    } else {
        0
    }
}

/// FNV-1a, for the index's keys: program and subcommand names of a few
/// bytes, for which std's SipHash costs more than the rest of a lookup
/// (none of the crates the project uses offers a plain hasher). The keys
/// come from the policy, so they are not chosen by whoever writes the
/// command.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

type FnvMap<V> = HashMap<Box<str>, V, std::hash::BuildHasherDefault<Fnv>>;

/// A word of a token rule after its `w1`, as the engine matches it.
#[derive(Clone, Debug)]
enum RuleWord {
    /// Short-option letters (a cluster, or a long option that is a
    /// letter's alias): each must appear among the rest of the argv.
    Letters(u64),
    /// A word that must appear, in order, among the rest of the argv.
    Word(Box<str>),
}

/// A token rule prepared for matching: what [`tokens_match`] works out
/// from the rule's words on every call is worked out once.
#[derive(Clone, Debug)]
struct TokenRule {
    id: u32,
    program: Box<str>,
    /// Its `w1` when that is a subcommand (not an option).
    sub: Option<Box<str>>,
    /// The words to find after the subcommand (after the program when the
    /// rule has no subcommand).
    words: Box<[RuleWord]>,
}

impl TokenRule {
    fn new(id: u32, rule: &[String]) -> Option<TokenRule> {
        let program = rule.first()?;
        let sub = rule.get(1).filter(|w| !w.starts_with('-'));
        let start = if sub.is_some() { 2 } else { 1 };
        let sub_str = sub.map_or("", String::as_str);
        let words = rule
            .get(start..)
            .unwrap_or(&[])
            .iter()
            .map(|w| match letter_bits(program, sub_str, w) {
                0 => RuleWord::Word(w.as_str().into()),
                m => RuleWord::Letters(m),
            })
            .collect();
        Some(TokenRule {
            id,
            program: program.as_str().into(),
            sub: sub.map(|s| s.as_str().into()),
            words,
        })
    }

    /// Whether the rule matches (`could` false) or could match (`could`
    /// true) the argv `view` was made of.
    fn check<W: Token>(&self, v: &View<'_, W>, could: bool) -> bool {
        if could && v.first_hole {
            return true;
        }
        if *self.program != *v.prog {
            return false;
        }
        let start = match &self.sub {
            None => 0,
            Some(_) if could && v.hole_before_sub => return true,
            Some(s) => match v.sub {
                Some(i) if v.args.get(i).is_some_and(|a| a.token() == &**s) => i + 1,
                _ => return false,
            },
        };
        self.walk(v, start, could)
    }

    /// The rule's words found in order among `v.args[at..]` (letters
    /// anywhere in it); with `could`, a dynamic word still ahead makes it
    /// a could-match.
    fn walk<W: Token>(&self, v: &View<'_, W>, mut at: usize, could: bool) -> bool {
        let sub = self.sub.as_deref().unwrap_or("");
        for w in self.words.iter() {
            if could && v.last_hole.is_some_and(|h| h >= at) {
                return true;
            }
            let rest = v.args.get(at..).unwrap_or(&[]);
            match w {
                RuleWord::Letters(want) => {
                    let have = rest
                        .iter()
                        .fold(0, |m, a| m | letter_bits(v.prog, sub, a.token()));
                    if want & !have != 0 {
                        return false;
                    }
                }
                RuleWord::Word(word) => match rest.iter().position(|a| a.token() == &**word) {
                    Some(p) => at += p + 1,
                    None => return false,
                },
            }
        }
        true
    }
}

/// One argv as every candidate rule sees it, worked out once: the
/// program's basename, where its subcommand is (the options before it
/// skipped), and where its dynamic words are.
struct View<'w, W> {
    /// The words after the program.
    args: &'w [W],
    /// The program word's basename.
    prog: &'w str,
    /// The subcommand's position in `args`.
    sub: Option<usize>,
    /// The program word is dynamic.
    first_hole: bool,
    /// A dynamic word stands among the options before the subcommand, or
    /// where the subcommand would be: any subcommand could be there.
    hole_before_sub: bool,
    /// The position in `args` of the last dynamic word.
    last_hole: Option<usize>,
}

impl<'w, W: Token> View<'w, W> {
    /// `words` (not empty) of the program `prog` (the basename of its
    /// first word), whose options before the subcommand that take a value
    /// are `values`.
    fn new(
        words: &'w [W],
        prog: &'w str,
        values: &[&str],
        hole: &dyn Fn(&str) -> bool,
        first_hole: bool,
        holes: bool,
    ) -> View<'w, W> {
        let args = words.get(1..).unwrap_or(&[]);
        let (mut sub, mut hole_before_sub) = (None, false);
        let mut i = 0;
        while let Some(a) = args.get(i).map(Token::token) {
            if a == "--" {
                sub = args.get(i + 1).map(|_| i + 1);
                break;
            }
            hole_before_sub |= holes && hole(a);
            if !a.starts_with('-') || a == "-" {
                sub = Some(i);
                break;
            }
            i += if !a.contains('=') && values.contains(&a) {
                2
            } else {
                1
            };
        }
        let last_hole = if holes {
            args.iter().rposition(|a| hole(a.token()))
        } else {
            None
        };
        View {
            args,
            prog,
            sub,
            first_hole,
            hole_before_sub,
            last_hole,
        }
    }
}

/// The rules of one program.
#[derive(Clone, Debug, Default)]
struct Program {
    /// Its options before the subcommand that take a value.
    values: &'static [&'static str],
    /// Rules without a subcommand word (none, or an option).
    any: Vec<u32>,
    /// Rules by subcommand.
    by_sub: FnvMap<Vec<u32>>,
    /// Every rule of the program.
    all: Vec<u32>,
}

/// Token rules indexed by `(program, w1)`: an invocation is checked only
/// against the rules of its program whose `w1` is its subcommand, and those
/// whose `w1` is absent or an option (which skip nothing). Built once per
/// policy; a lookup is two hash probes, whatever the number of rules, and
/// the argv is taken apart once for all its candidates.
#[derive(Clone, Debug, Default)]
pub(crate) struct TokenIndex {
    /// The rules, in ascending id order (the lists below hold positions
    /// in it, ascending).
    rules: Vec<TokenRule>,
    by_program: FnvMap<Program>,
    /// Every rule.
    all: Vec<u32>,
}

impl TokenIndex {
    /// Indexes `rules`: `(id, words)` in ascending id order.
    pub(crate) fn new<'r>(rules: impl IntoIterator<Item = (u32, &'r [String])>) -> TokenIndex {
        let mut index = TokenIndex::default();
        for (id, words) in rules {
            let Some(rule) = TokenRule::new(id, words) else {
                continue;
            };
            let Ok(at) = u32::try_from(index.rules.len()) else {
                break;
            };
            let p = index
                .by_program
                .entry(rule.program.clone())
                .or_insert_with(|| Program {
                    values: value_options(&rule.program),
                    ..Program::default()
                });
            p.all.push(at);
            match &rule.sub {
                Some(s) => p.by_sub.entry(s.clone()).or_default().push(at),
                None => p.any.push(at),
            }
            index.all.push(at);
            index.rules.push(rule);
        }
        index
    }

    /// Calls `found` with the id of each rule that `keep` keeps and that
    /// matches the argv `words` ([`How::Matches`]), or, when it has
    /// dynamic words (`holes`, their texts), could match it for some
    /// value of them ([`How::Could`]; see [`tokens_could_match`]).
    ///
    /// Only the rules indexed under the argv's program and subcommand are
    /// looked at, or, when a dynamic word may be its subcommand, those of
    /// its program, or, when its program word is dynamic, every rule. When
    /// more than [`super::COULD_BUDGET`] rules could match, only the first
    /// of them (in id order, which is precedence order) is reported
    /// (SPEC §8.4: the invocation simply asks): a call whose program word
    /// is dynamic costs the same whatever the number of rules.
    pub(crate) fn each_match<W: Token>(
        &self,
        words: &[W],
        holes: &[String],
        keep: impl Fn(u32) -> bool,
        mut found: impl FnMut(u32, How),
    ) {
        let hole = |w: &str| holes.iter().any(|h| h == w);
        let Some(first) = words.first().map(Token::token) else {
            return;
        };
        let prog = basename(first);
        let first_hole = !holes.is_empty() && hole(first);
        let program = self.by_program.get(prog);
        // Most invocations are of a program no rule names.
        let values = match program {
            Some(p) => p.values,
            None if first_hole => value_options(prog),
            None => return,
        };
        let v = View::new(words, prog, values, &hole, first_hole, !holes.is_empty());
        let rule = |at: u32| self.rules.get(at as usize);
        // The rules that may match for certain: those of the argv's
        // program without a subcommand word or with its subcommand.
        let subs = program
            .zip(v.sub.and_then(|i| v.args.get(i)))
            .and_then(|(p, s)| p.by_sub.get(s.token()))
            .map_or(&[][..], |ids| &ids[..]);
        let indexed = merged(program.map_or(&[][..], |p| &p.any[..]), subs);
        // The rules that may only could match, beyond those.
        let wide = if v.first_hole {
            &self.all[..]
        } else if v.hole_before_sub {
            program.map_or(&[][..], |p| &p.all[..])
        } else {
            &[][..]
        };
        if wide.is_empty() || wide.len() <= super::COULD_BUDGET {
            let each = |at: u32| {
                let r = rule(at)?;
                let how = if r.check(&v, false) {
                    How::Matches
                } else if !holes.is_empty() && r.check(&v, true) {
                    How::Could
                } else {
                    return None;
                };
                keep(r.id).then_some((r.id, how))
            };
            if wide.is_empty() {
                indexed
                    .filter_map(each)
                    .for_each(|(id, how)| found(id, how));
            } else {
                let it = wide.iter().filter_map(|&at| each(at));
                it.for_each(|(id, how)| found(id, how));
            }
            return;
        }
        // Many rules could match: the certain matches (only among the
        // indexed rules), then the could-matches up to the budget.
        let mut certain: Vec<u32> = Vec::new();
        for at in indexed {
            if let Some(r) = rule(at).filter(|r| r.check(&v, false) && keep(r.id)) {
                certain.push(r.id);
                found(r.id, How::Matches);
            }
        }
        let mut could: Vec<u32> = Vec::new();
        for &at in wide {
            let Some(r) = rule(at) else { continue };
            if !certain.contains(&r.id) && r.check(&v, true) && keep(r.id) {
                could.push(r.id);
                if could.len() > super::COULD_BUDGET {
                    could.truncate(1);
                    break;
                }
            }
        }
        could.into_iter().for_each(|id| found(id, How::Could));
    }
}

/// Two ascending lists of positions, merged.
fn merged<'a>(a: &'a [u32], b: &'a [u32]) -> impl Iterator<Item = u32> + 'a {
    let (mut a, mut b) = (a.iter().copied().peekable(), b.iter().copied().peekable());
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(x), Some(y)) if x < y => a.next(),
        (_, Some(_)) => b.next(),
        (Some(_), None) => a.next(),
        (None, None) => None,
    })
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
    use crate::eval::COULD_BUDGET;

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
            "git push origin -f",
            "git branch -D",
            "git clean -fdx",
            "rm -R",
            "chmod -R 777",
            "sudo rm",
            "git -C push",
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
            "git push -- origin -f",
            "git push origin main -uf",
            "git clean -x -df",
            "git clean --force -dx",
            "git branch --delete --force x",
            "chmod --recursive 777 x",
            "rm -- -rf",
            "rm -r",
            "sudo rm -rf /",
            "git -C push push",
            "git push --force=true",
        ];
        // What the index finds, against the loop over every rule.
        let engine = |argv: &[String], holes: &[String]| {
            let mut got = Vec::new();
            index.each_match(argv, holes, |_| true, |id, how| got.push((id, how)));
            got.sort_unstable_by_key(|&(id, _)| id);
            got
        };
        let reference = |argv: &[String], holes: &[String]| {
            let hole = |w: &str| holes.iter().any(|h| h == w);
            (0..rules.len() as u32)
                .filter_map(|i| {
                    let r = &rules[i as usize];
                    if tokens_match(r, argv) {
                        Some((i, How::Matches))
                    } else if !holes.is_empty() && tokens_could_match(r, argv, &hole) {
                        Some((i, How::Could))
                    } else {
                        None
                    }
                })
                .collect::<Vec<_>>()
        };
        for argv in argvs {
            let argv = w(argv);
            assert_eq!(engine(&argv, &[]), reference(&argv, &[]), "{argv:?}");
            // With a dynamic word (`$X`) at each position, and with a
            // word that is not dynamic but reads like one.
            for hole_at in 0..=argv.len() {
                let mut argv = argv.clone();
                if let Some(word) = argv.get_mut(hole_at) {
                    *word = "$X".to_string();
                }
                for holes in [vec!["$X".to_string()], vec!["$Y".to_string()], vec![]] {
                    assert_eq!(
                        engine(&argv, &holes),
                        reference(&argv, &holes),
                        "{argv:?} {holes:?}"
                    );
                }
                // Two dynamic words.
                if let Some(word) = argv.get_mut(hole_at / 2) {
                    *word = "$Y".to_string();
                }
                let holes = ["$X".to_string(), "$Y".to_string()];
                assert_eq!(engine(&argv, &holes), reference(&argv, &holes), "{argv:?}");
            }
        }
    }

    #[test]
    fn over_the_budget_only_the_first_could_match_is_reported() {
        let w = |s: &str| -> Vec<String> { s.split(' ').map(str::to_string).collect() };
        // Many rules of `git` (each a subcommand), a few of others; two
        // rules match `git push --force` for certain.
        let mut rules: Vec<Vec<String>> = vec![w("rm -rf"), w("git push --force"), w("git")];
        rules.extend((0..100).map(|i| w(&format!("git sub{i}"))));
        rules.push(w("git push"));
        let index = TokenIndex::new(rules.iter().enumerate().map(|(i, r)| (i as u32, &r[..])));
        let holes = ["$X".to_string()];
        let hole = |w: &str| w == "$X";
        for argv in [
            "$X push --force",
            "git $X push --force",
            "git --no-pager $X",
            "git $X",
        ] {
            let argv = w(argv);
            let mut got = Vec::new();
            index.each_match(&argv, &holes, |_| true, |id, how| got.push((id, how)));
            got.sort_unstable_by_key(|&(id, _)| id);
            let matches: Vec<u32> = (0..rules.len() as u32)
                .filter(|&i| tokens_match(&rules[i as usize], &argv))
                .collect();
            let could: Vec<u32> = (0..rules.len() as u32)
                .filter(|&i| {
                    !matches.contains(&i) && tokens_could_match(&rules[i as usize], &argv, &hole)
                })
                .collect();
            assert!(could.len() > COULD_BUDGET, "{argv:?}: {}", could.len());
            let mut want: Vec<(u32, How)> = matches.iter().map(|&i| (i, How::Matches)).collect();
            want.push((could[0], How::Could));
            want.sort_unstable_by_key(|&(id, _)| id);
            assert_eq!(got, want, "{argv:?}");
            // What `keep` drops is not counted, nor reported.
            let mut kept = Vec::new();
            index.each_match(&argv, &holes, |id| id >= 50, |id, how| kept.push((id, how)));
            kept.sort_unstable_by_key(|&(id, _)| id);
            let mut want: Vec<(u32, How)> = could
                .iter()
                .filter(|&&i| i >= 50)
                .map(|&i| (i, How::Could))
                .collect();
            want.extend(
                matches
                    .iter()
                    .filter(|&&i| i >= 50)
                    .map(|&i| (i, How::Matches)),
            );
            want.sort_unstable_by_key(|&(id, _)| id);
            assert_eq!(kept, want, "{argv:?}: under the budget, every one");
        }
    }
}
