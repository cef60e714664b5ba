//! From a [`Reading`] to what each command really does (SPEC §8.2, §8.4,
//! §8.5): wrappers peeled, the subcommand form, the candidate texts rules
//! are matched against, the files and hosts it names.
//!
//! ```
//! use toolgate::shell::{read, reduce};
//!
//! let reading = read("FOO=1 sudo -u root /usr/bin/git -C . push --force > log");
//! let r = reduce::invocations(&reading);
//! // `sudo` is kept as an invocation of its own; `git` is the action.
//! let names: Vec<&str> = r.invocations.iter().map(|i| &*i.program.base).collect();
//! assert_eq!(names, ["sudo", "git"]);
//! let git = &r.invocations[1];
//! assert_eq!(git.form.as_deref(), Some("/usr/bin/git push --force"));
//! // Deny and ask rules see through everything; allow rules see what is certain.
//! assert!(git.candidates.iter().any(|c| c.text == "git push --force" && !c.for_allow));
//! assert!(git.candidates.iter().any(|c| c.text == "FOO=1 sudo -u root /usr/bin/git -C . push --force" && c.for_allow));
//! assert_eq!(r.invocations[0].files[0].text, "log");
//! ```
//!
//! # Invocations
//!
//! Each command of the reading gives one invocation per wrapper layer and
//! one for the command it finally runs (its **action**, [`Role::Command`]),
//! in that order: `sudo nice git push` gives `sudo …`, `nice …`, `git push`.
//! A wrapper's invocation holds its own words and the command it wraps, so
//! a rule can name `sudo`. The candidates are on the action and cover the
//! whole chain (a wrapper and the command it wraps are one action, SPEC
//! §9.2). A script a wrapper runs (`eval`, `su -c`, `env -S`, `watch`, a
//! shell after a wrapper, `find -exec`'s command) is read with
//! [`shell::read`](super::read) and gives invocations of its own, whose
//! `parent` is the wrapper.
//!
//! # Candidates
//!
//! [`Candidate`]s are built from the **rendering** (SPEC §3.2: decoded words
//! joined by single spaces, a word quoted `'…'` only when it holds a
//! character outside `[A-Za-z0-9_@%+=:,./-]`, a dynamic or glob word as its
//! source text) plus the **source text** (the span with redirections
//! removed, runs of blanks collapsed). Every candidate serves deny and ask
//! rules; those with `for_allow` also serve allow rules (SPEC §8.4):
//!
//! - deny/ask: the text as written; with the leading assignments stripped;
//!   with any number of outer wrappers stripped; with every program path
//!   reduced to its basename; in the subcommand form (and, for an unknown
//!   option before the subcommand, with that option taking a value) — and
//!   every combination;
//! - allow: the text as written; with leading safe-variable assignments
//!   stripped; with outer transparent wrappers stripped; with a program in a
//!   system directory named by its basename — and every combination.
//!
//! A command that `xargs`, `parallel` or `find -exec` runs gets a trailing
//! dynamic word `"$@"` (the arguments it is given), and a `{}` (or the `-I`
//! replacement string) in it is dynamic.

use super::files::{self, Access, Dir, FileUse, Found, Host};
use super::parse::{Stdin, inherited_stdin_shell, stdin_of};
use super::programs::{self, Runs, Wrapper};
use super::{Assignment, Command, Connector, MAX_DEPTH, Reading, Word, WordKind};
use serde::Serialize;
use std::borrow::Cow;

/// The text of the trailing dynamic word given to commands that `xargs`,
/// `parallel` and `find -exec` run.
pub const ARGUMENTS: &str = "\"$@\"";

/// What a reading's commands do.
///
/// It borrows the words of the reading it reduces (`'r`): an invocation
/// of the reading's own commands holds a slice of them, not a copy.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Reduction<'r> {
    /// Every invocation, command by command: wrappers outermost first, then
    /// the action, then the invocations of scripts it runs.
    pub invocations: Vec<Invocation<'r>>,
    /// Readings of the scripts wrappers run; `Invocation::reading` `n > 0`
    /// points at `scripts[n - 1]`.
    pub scripts: Vec<Reading>,
    /// True when the reading, every script read, and every invocation are
    /// complete.
    pub complete: bool,
}

impl Reduction<'_> {
    /// True when everything was read with certainty (SPEC §8.3).
    pub fn is_complete(&self) -> bool {
        self.complete
    }
}

/// What an invocation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The command a chain finally runs: the action, with the candidates.
    Command,
    /// A wrapper around the next invocation.
    Wrapper,
    /// A command with no words (only assignments or redirections): it runs
    /// no program but may name files.
    NoProgram,
}

/// A program name (borrowed from its word when the invocation's words
/// are the reading's).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Program<'r> {
    /// As written (`/usr/bin/git`).
    pub written: Cow<'r, str>,
    /// Its basename (`git`).
    pub base: Cow<'r, str>,
    /// True when it is written as a path in a system directory (SPEC §8.4).
    pub system_dir: bool,
    /// True when the name is dynamic.
    pub dynamic: bool,
}

/// Whether a program word names a program in a system directory.
fn in_system_dir(w: &Word) -> bool {
    !w.is_dynamic() && split_dir(w.text()).is_some_and(|(d, _)| programs::SYSTEM_DIRS.contains(&d))
}

/// A name's directory and basename, split at its last `/` (a byte scan:
/// names are short, and `rsplit_once` sets up a searcher for each).
fn split_dir(name: &str) -> Option<(&str, &str)> {
    let k = name.bytes().rposition(|b| b == b'/')?;
    // `/` is ASCII: both sides are on character boundaries.
    Some((name.get(..k)?, name.get(k + 1..)?))
}

/// A program name's basename.
fn basename(name: &str) -> &str {
    split_dir(name).map_or(name, |(_, b)| b)
}

impl<'r> Program<'r> {
    /// The program of an invocation whose words are `words`: borrowed
    /// from them when they are borrowed, else a copy.
    fn of(words: &Cow<'r, [Word]>) -> Program<'r> {
        match words {
            Cow::Borrowed(w) => Program::named(w.first().map(|w| (w.text(), w.is_dynamic()))),
            Cow::Owned(w) => {
                let p = Program::named(w.first().map(|w| (w.text(), w.is_dynamic())));
                Program {
                    written: Cow::Owned(p.written.into_owned()),
                    base: Cow::Owned(p.base.into_owned()),
                    ..p
                }
            }
        }
    }

    /// The program named `(text, dynamic)` (none: no program).
    fn named(name: Option<(&'r str, bool)>) -> Program<'r> {
        let Some((written, dynamic)) = name else {
            return Program {
                written: Cow::Borrowed(""),
                base: Cow::Borrowed(""),
                system_dir: false,
                dynamic: false,
            };
        };
        if dynamic {
            return Program {
                written: Cow::Borrowed(written),
                base: Cow::Borrowed(written),
                system_dir: false,
                dynamic: true,
            };
        }
        let (dir, base) = match split_dir(written) {
            Some((d, b)) => (Some(d), b),
            None => (None, written),
        };
        Program {
            written: Cow::Borrowed(written),
            base: Cow::Borrowed(base),
            system_dir: dir.is_some_and(|d| programs::SYSTEM_DIRS.contains(&d)),
            dynamic: false,
        }
    }
}

/// A text a command rule is matched against.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Candidate {
    /// The text.
    pub text: String,
    /// True when allow rules may match it too; every candidate serves deny
    /// and ask rules.
    pub for_allow: bool,
}

/// Why an invocation is not read completely.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "gap", content = "detail")]
pub enum Gap {
    /// A wrapper option toolgate does not know (read as taking no value).
    UnknownOption(String),
    /// A wrapper in a mode toolgate does not read (`sudo -l`, `sudo -e`).
    Mode(String),
    /// The program a wrapper runs is dynamic.
    DynamicProgram,
    /// A wrapper runs a script that is not literal.
    DynamicScript,
    /// Wrappers or scripts nested deeper than 16.
    TooDeep,
    /// A wrapped shell reads its script from a pipe.
    PipedScript,
}

impl Gap {
    /// A one-clause description.
    pub fn describe(&self) -> String {
        match self {
            Gap::UnknownOption(o) => format!("unknown wrapper option {o}"),
            Gap::Mode(o) => format!("wrapper mode {o} is not read"),
            Gap::DynamicProgram => "the wrapped program is dynamic".into(),
            Gap::DynamicScript => "a wrapper runs a script that is not literal".into(),
            Gap::TooDeep => "wrappers nested deeper than 16".into(),
            Gap::PipedScript => "a wrapped shell reads a script from a pipe".into(),
        }
    }
}

/// One program invocation (SPEC §8.2).
///
/// Its words and program name borrow the reading's words (`'r`) where
/// the reduction kept them as written; words it rewrote (the command a
/// wrapper that feeds arguments runs, a `find -exec` command) and the
/// words of scripts it read itself are its own.
#[derive(Clone, Debug, Serialize)]
pub struct Invocation<'r> {
    /// The reading its command is in: 0 for the reading given, `n` for
    /// [`Reduction::scripts`]`[n - 1]`.
    pub reading: usize,
    /// Its command's index in that reading.
    pub command: usize,
    /// The invocation that wraps it or runs its script.
    pub parent: Option<usize>,
    /// What it is.
    pub role: Role,
    /// Nesting depth: the command's, plus one per wrapper and script.
    pub depth: u8,
    /// Its command's leading assignments (`env NAME=value` ones included,
    /// for the invocations inside `env`).
    pub assignments: Vec<Assignment>,
    /// Its words: the program, its arguments, and for a wrapper the command
    /// it wraps.
    pub words: Cow<'r, [Word]>,
    /// The program.
    pub program: Program<'r>,
    /// The subcommand (for a program with an option table, SPEC §7.2).
    pub subcommand: Option<String>,
    /// The subcommand form's rendering, when options were skipped.
    pub form: Option<String>,
    /// Candidate texts (on [`Role::Command`] invocations).
    pub candidates: Vec<Candidate>,
    /// Its candidates in the [`CandTexts`] the reduction wrote them into
    /// (a range of its list); [`invocations`] copies them into
    /// `candidates`, the evaluator matches them where they are.
    #[serde(skip)]
    pub(crate) cands: std::ops::Range<usize>,
    /// Files it names.
    pub files: Vec<FileUse>,
    /// Hosts it contacts.
    pub hosts: Vec<Host>,
    /// Options that execute or write (SPEC §8.5), as written (`-i.bak`,
    /// `-exec`, `--pre`), plus `-c KEY` for such `git -c` settings and
    /// `sed w`, `sed e`, `awk system()`, `awk print >` for script commands:
    /// allow rules that do not name them do not cover the invocation.
    pub exec: Vec<String>,
    /// Why it is not read completely.
    pub gaps: Vec<Gap>,
}

/// Reduces every command of a reading. Never panics.
pub fn invocations(reading: &Reading) -> Reduction<'_> {
    let mut buf = CandTexts::default();
    let mut red = invocations_with(reading, Texts::All, true, &mut buf);
    for inv in &mut red.invocations {
        inv.candidates = buf
            .list
            .get(inv.cands.clone())
            .unwrap_or(&[])
            .iter()
            .map(|c| Candidate {
                text: buf.text.get(c.text.clone()).unwrap_or("").to_string(),
                for_allow: c.for_allow,
            })
            .collect();
    }
    red
}

/// The candidate texts of a reduction, written one after another into
/// one buffer: no allocation per text, and the evaluator keeps the buffer
/// from call to call.
#[derive(Clone, Debug, Default)]
pub(crate) struct CandTexts {
    /// Every candidate's text.
    pub(crate) text: String,
    /// Each candidate: a range of `text`.
    pub(crate) list: Vec<CandSpan>,
    /// Emptied layer vectors of earlier chains, for the next ones (one
    /// per nesting level of chains in progress): kept with the buffer,
    /// so a reduction allocates none.
    layers: Spare,
}

/// [`CandTexts::layers`]: room only, so a copy starts without it. (Empty
/// vectors: a layer borrows its reading only while its chain is reduced.)
#[derive(Default)]
struct Spare(Vec<Vec<Layer<'static>>>);

impl Clone for Spare {
    fn clone(&self) -> Spare {
        Spare::default()
    }
}

impl std::fmt::Debug for Spare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} spare layer vectors", self.0.len())
    }
}

/// One candidate of a [`CandTexts`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CandSpan {
    /// Its text: a range of [`CandTexts::text`].
    pub(crate) text: std::ops::Range<usize>,
    /// Allow rules may match it too.
    pub(crate) for_allow: bool,
}

impl CandTexts {
    /// Empties it, keeping its room (unless a hostile command made it
    /// large: then it starts afresh, so a long batch's memory stays flat).
    pub(crate) fn clear(&mut self) {
        const KEEP: usize = 1 << 20;
        if self.text.capacity() > KEEP {
            self.text = String::new();
        }
        if self.list.capacity() > KEEP / 16 {
            self.list = Vec::new();
        }
        self.text.clear();
        self.list.clear();
    }

    /// Candidate `i`'s text and whether allow rules may match it.
    pub(crate) fn get(&self, i: usize) -> Option<(&str, bool)> {
        let c = self.list.get(i)?;
        Some((self.text.get(c.text.clone())?, c.for_allow))
    }

    /// Writes `text` (not a candidate: a text kept with them, such as a
    /// whole command) and returns where it is.
    pub(crate) fn push_text(&mut self, text: &str) -> std::ops::Range<usize> {
        let start = self.text.len();
        self.text.push_str(text);
        start..self.text.len()
    }

    /// A text written with [`CandTexts::push_text`] (empty when out of
    /// range).
    pub(crate) fn text_of(&self, r: &std::ops::Range<usize>) -> &str {
        self.text.get(r.clone()).unwrap_or("")
    }

    /// Adds `text` as a candidate (and of the candidates from `from` on,
    /// an equal one takes `for_allow` instead).
    pub(crate) fn push(&mut self, text: &str, from: usize, for_allow: bool) {
        let start = self.text.len();
        self.text.push_str(text);
        self.finish(start, from, for_allow);
    }

    /// The index of the first candidate from `from` on whose text is
    /// `text`.
    fn same_from(&self, from: usize, text: &str) -> Option<usize> {
        let list = self.list.get(from..).unwrap_or(&[]);
        let k = list
            .iter()
            .position(|c| self.text.get(c.text.clone()) == Some(text))?;
        Some(from + k)
    }

    /// Candidate `k` also serves allow rules when `for_allow`.
    fn serve_allow(&mut self, k: usize, for_allow: bool) {
        if let Some(c) = self.list.get_mut(k) {
            c.for_allow |= for_allow;
        }
    }

    /// Adds `text` as a candidate unless it equals one of the candidates
    /// from `from` on (which then also serves allow rules when it does):
    /// [`CandTexts::push`], compared before it is written.
    pub(crate) fn add(&mut self, text: &str, from: usize, for_allow: bool) {
        match self.same_from(from, text) {
            Some(k) => self.serve_allow(k, for_allow),
            None => {
                let start = self.text.len();
                self.text.push_str(text);
                self.list.push(CandSpan {
                    text: start..self.text.len(),
                    for_allow,
                });
            }
        }
    }

    /// Ends the candidate written into `text` from byte `start`: dropped
    /// when it equals one of the candidates from `from` on (which then
    /// also serves allow rules when it does).
    fn finish(&mut self, start: usize, from: usize, for_allow: bool) {
        let Some(new) = self.text.get(start..) else {
            return;
        };
        match self.same_from(from, new) {
            Some(k) => {
                self.serve_allow(k, for_allow);
                self.text.truncate(start);
            }
            None => self.list.push(CandSpan {
                text: start..self.text.len(),
                for_allow,
            }),
        }
    }
}

/// Which candidate texts to build.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Texts {
    /// The text as written only (a policy without command rules: it names
    /// the invocation in reports).
    First,
    /// Those that serve allow rules (a policy without deny or ask command
    /// rules).
    Allow,
    /// All of them.
    #[default]
    All,
}

/// [`invocations`], building only the candidate texts `texts` says, into
/// `buf` (each invocation's `cands` is a range of its list; `candidates`
/// stay empty), and each action's subcommand and subcommand form only
/// when `texts` is [`Texts::All`] (the deny and ask candidates use the
/// form) or `subcommands` asks for them.
pub(crate) fn invocations_with<'r>(
    reading: &'r Reading,
    texts: Texts,
    subcommands: bool,
    buf: &mut CandTexts,
) -> Reduction<'r> {
    let mut ctx = Ctx {
        // Room for each command and a wrapper: an invocation is large, and
        // the allocator's path for blocks of a kilobyte and more is slow.
        out: Vec::with_capacity(reading.commands.len() + 1),
        scripts: Vec::new(),
        texts,
        subcommands: subcommands || texts == Texts::All,
        buf,
    };
    reduce_reading(&mut ctx, reading, Some(reading), 0, None, 0, &Dir::start());
    let complete = reading.is_complete()
        && ctx.scripts.iter().all(Reading::is_complete)
        && ctx.out.iter().all(|i| i.gaps.is_empty());
    Reduction {
        invocations: ctx.out,
        scripts: ctx.scripts,
        complete,
    }
}

struct Ctx<'b, 'r> {
    out: Vec<Invocation<'r>>,
    scripts: Vec<Reading>,
    /// Which candidates to build.
    texts: Texts,
    /// Whether to find the subcommand and the subcommand form.
    subcommands: bool,
    /// Where they are written.
    buf: &'b mut CandTexts,
}

/// Where a chain's words came from, for source texts.
#[derive(Clone, Copy)]
struct Origin<'a> {
    reading: &'a Reading,
    reading_idx: usize,
    command: usize,
    /// False for words made up (a `find -exec` command).
    sourced: bool,
}

/// Reduces the commands of `reading`; `own` is the same reading when the
/// invocations may borrow its words (`None` for a script read here: they
/// copy them).
#[allow(clippy::too_many_arguments)]
fn reduce_reading<'r>(
    ctx: &mut Ctx<'_, 'r>,
    reading: &Reading,
    own: Option<&'r Reading>,
    idx: usize,
    parent: Option<usize>,
    depth: u8,
    start: &Dir,
) {
    let dirs = directories(reading, start);
    // Only a command a shell reads needs the actions before it.
    let scripted = reading
        .commands
        .iter()
        .any(|c| c.origin == super::Origin::Script);
    let mut actions: Vec<Option<usize>> = Vec::new();
    for (ci, c) in reading.commands.iter().enumerate() {
        let origin = Origin {
            reading,
            reading_idx: idx,
            command: ci,
            sourced: true,
        };
        let dir = match &dirs {
            Some(d) => d.get(ci).cloned().unwrap_or(Dir::Unknown),
            None => start.clone(),
        };
        let d = c.depth.saturating_add(depth);
        // A command of a script a shell reads (`sh -c`, a here-document, a
        // pipe) belongs to that shell: the nearest command before it in the
        // parent script, one level out.
        let mut par = parent;
        if let Some(script) = reading.scripts.get(c.script()) {
            if c.origin == super::Origin::Script && script.kind != super::ScriptKind::Backquote {
                let shell = (0..ci).rev().find(|&j| {
                    let o = &reading.commands[j];
                    Some(o.script()) == script.parent && o.depth < c.depth
                });
                if let Some(a) = shell.and_then(|j| actions.get(j).copied().flatten()) {
                    par = Some(a);
                }
            }
        }
        let words = match own {
            Some(r) => Cow::Borrowed(c.words(r)),
            None => Cow::Owned(c.words(reading).to_vec()),
        };
        let action = chain(ctx, origin, c, words, par, d, &dir, true);
        if scripted {
            actions.push(action);
        }
    }
}

/// One layer of a chain.
struct Layer<'r> {
    /// Its own words: the wrapper and its options (for the last layer, all
    /// its words).
    own: Cow<'r, [Word]>,
    /// Where its invocation's words are in the command's words, when they
    /// are borrowed (its own words; for a wrapper, then the command's
    /// words it wraps).
    span: Option<std::ops::Range<usize>>,
    wrapper: Option<&'static Wrapper>,
    /// A wrapper given no option (bare `xargs`).
    bare: bool,
    /// The layer after it gets a trailing dynamic word.
    feeds: bool,
    /// The byte where its first word starts, when its words are sourced.
    start: Option<usize>,
    found: Found,
    gaps: Vec<Gap>,
    assignments: Vec<Assignment>,
}

/// What follows a wrapper's options.
enum Next {
    /// The command starts at this word.
    Command(usize),
    /// A script to read (or why it cannot be).
    Script(Result<String, Gap>),
    /// Nothing runs.
    Nothing,
}

impl Layer<'_> {
    /// The same layer owning its words: only ever called on an empty
    /// vector's items (none), to keep the vector's room past its reading.
    fn detached(self) -> Layer<'static> {
        Layer {
            own: Cow::Owned(self.own.into_owned()),
            span: self.span,
            wrapper: self.wrapper,
            bare: self.bare,
            feeds: self.feeds,
            start: self.start,
            found: self.found,
            gaps: self.gaps,
            assignments: self.assignments,
        }
    }
}

/// `words[range]` as a part of `words`: borrowed when they are, with the
/// range it has in them; else a copy.
fn part<'r>(
    words: &Cow<'r, [Word]>,
    range: std::ops::Range<usize>,
) -> (Cow<'r, [Word]>, Option<std::ops::Range<usize>>) {
    match words {
        Cow::Borrowed(w) => match w.get(range.clone()) {
            Some(p) => (Cow::Borrowed(p), Some(range)),
            None => (Cow::Borrowed(&[]), None),
        },
        Cow::Owned(w) => (Cow::Owned(w.get(range).unwrap_or(&[]).to_vec()), None),
    }
}

#[allow(clippy::too_many_arguments)]
fn chain<'r>(
    ctx: &mut Ctx<'_, 'r>,
    origin: Origin<'_>,
    c: &Command,
    words: Cow<'r, [Word]>,
    parent: Option<usize>,
    depth: u8,
    dir: &Dir,
    top: bool,
) -> Option<usize> {
    if words.is_empty() {
        let mut found = Found::default();
        if top {
            files::redirection_files(c.redirections(origin.reading), &mut found);
        }
        let mut inv = invocation(
            origin,
            parent,
            Role::NoProgram,
            depth,
            c.assignments(origin.reading).to_vec(),
            Cow::Borrowed(&[]),
            found,
            Vec::new(),
        );
        resolve(&mut inv.files, dir);
        ctx.out.push(inv);
        return None;
    }
    // (The command's words, to join a wrapper's with the command's.)
    let words_of_command = match &words {
        Cow::Borrowed(w) => Cow::Borrowed(*w),
        Cow::Owned(_) => Cow::Owned(Vec::new()),
    };
    let mut cur = words;
    let mut start = 0usize;
    let mut sourced = origin.sourced;
    // (A vector of an earlier chain, emptied: no allocation per chain.)
    let mut layers: Vec<Layer<'r>> = ctx.buf.layers.0.pop().unwrap_or_default();
    let mut script: Option<Result<String, Gap>> = None;
    let mut replace: Option<String> = None;
    // What the tables know of the last layer's program.
    let mut known: &programs::Known;
    loop {
        let prog = cur.get(start);
        let p_dynamic = prog.is_some_and(Word::is_dynamic);
        let p_base = prog.map_or("", |w| basename(w.text()));
        known = if p_dynamic {
            &programs::Known::NOTHING
        } else {
            programs::known(p_base)
        };
        let mut layer = Layer {
            own: Cow::Borrowed(&[]),
            span: None,
            wrapper: None,
            bare: true,
            feeds: false,
            start: if sourced {
                prog.map(|w| w.span.start)
            } else {
                None
            },
            found: Found::default(),
            gaps: Vec::new(),
            assignments: Vec::new(),
        };
        if layers.len() >= MAX_DEPTH as usize
            || usize::from(depth) + layers.len() > MAX_DEPTH as usize
        {
            layer.gaps.push(Gap::TooDeep);
            (layer.own, layer.span) = part(&cur, start..cur.len());
            layers.push(layer);
            break;
        }
        let nested = !layers.is_empty();
        let shell = known.shell;
        if let Some(wr) = known.wrapper {
            layer.wrapper = Some(wr);
            let next = wrapper_options(wr, &cur, start, &mut layer, &mut replace);
            match next {
                Next::Command(i) => {
                    (layer.own, layer.span) = part(&cur, start..i);
                    if cur.get(i).is_some_and(Word::is_dynamic) {
                        layer.gaps.push(Gap::DynamicProgram);
                    }
                    if wr.feeds_arguments {
                        layer.feeds = true;
                        let mut inner: Vec<Word> = cur.get(i..).unwrap_or(&[]).to_vec();
                        if wr.names.contains(&"parallel") {
                            if let Some(end) =
                                inner.iter().position(|w| w.text().starts_with(":::"))
                            {
                                inner.truncate(end);
                            }
                        }
                        dynamic_arguments(&mut inner, replace.as_deref().unwrap_or("{}"));
                        cur = Cow::Owned(inner);
                        start = 0;
                        sourced = false;
                    } else {
                        start = i;
                    }
                    layers.push(layer);
                    continue;
                }
                Next::Script(s) => {
                    (layer.own, layer.span) = part(&cur, start..cur.len());
                    script = Some(s);
                }
                Next::Nothing => {
                    (layer.own, layer.span) = part(&cur, start..cur.len());
                    // With no command, `sudo -s`/`-i`, `su [USER]` and
                    // `script [FILE]` start a shell that reads its
                    // standard input.
                    if layer.gaps.is_empty()
                        && wr
                            .names
                            .iter()
                            .any(|n| matches!(*n, "sudo" | "su" | "script"))
                    {
                        script = stdin_script(c, origin.reading);
                    }
                }
            }
            layers.push(layer);
            break;
        }
        // The last layer takes the words (no copy when it is all of them
        // or they are borrowed).
        (layer.own, layer.span) = if start == 0 && matches!(cur, Cow::Owned(_)) {
            (std::mem::take(&mut cur), None)
        } else {
            part(&cur, start..cur.len())
        };
        // A shell at the top of a command was read by the parser; one a
        // wrapper or `find -exec` runs is read here.
        if shell && (nested || !top) {
            script = shell_script(&layer.own, c, origin.reading);
        }
        layers.push(layer);
        break;
    }
    // The command's own redirections and assignments belong to the chain.
    if top {
        if let Some(first) = layers.first_mut() {
            files::redirection_files(c.redirections(origin.reading), &mut first.found);
        }
    }
    // The action's files, hosts and executing options. (Its program is
    // the last one the loop looked up.)
    let last = layers.len() - 1;
    if let Some(l) = layers.last_mut() {
        if let Some(w) = l.own.first().filter(|w| !w.is_dynamic()) {
            let base = basename(w.text());
            files::scan(base, known, &l.own, &mut l.found);
            if known.shell {
                shell_file(&l.own, &mut l.found);
            }
        }
    }
    // Invocations, outermost first.
    let mut env_assignments: Vec<Assignment> = c.assignments(origin.reading).to_vec();
    let first_idx = ctx.out.len();
    for (j, l) in layers.iter_mut().enumerate() {
        // The action's words move into its invocation; a wrapper's are its
        // own (the command it wraps is added below). Borrowed words are a
        // slice of the reading's.
        let words = if j == last {
            std::mem::take(&mut l.own)
        } else {
            l.own.clone()
        };
        let role = if j == last {
            Role::Command
        } else {
            Role::Wrapper
        };
        let found = std::mem::take(&mut l.found);
        let gaps = std::mem::take(&mut l.gaps);
        let par = if j == 0 {
            parent
        } else {
            Some(first_idx + j - 1)
        };
        let mut inv = invocation(
            origin,
            par,
            role,
            depth.saturating_add(j as u8),
            env_assignments.clone(),
            words,
            found,
            gaps,
        );
        resolve(&mut inv.files, dir);
        env_assignments.extend(l.assignments.iter().cloned());
        ctx.out.push(inv);
    }
    // A wrapper's words include the command it wraps: still a slice of
    // the command's words when both are (and it feeds no arguments).
    let base: Option<&'r [Word]> = match &words_of_command {
        Cow::Borrowed(w) => Some(w),
        Cow::Owned(_) => None,
    };
    for j in (0..last).rev() {
        let (Some(l), Some(next)) = (layers.get(j), layers.get(j + 1)) else {
            continue;
        };
        let joined = match (&l.span, &next.span, base) {
            (Some(a), Some(b), Some(base)) if !l.feeds && a.end == b.start => {
                base.get(a.start..b.end).map(|w| (w, a.start..b.end))
            }
            _ => None,
        };
        if let Some((w, span)) = joined {
            ctx.out[first_idx + j].words = Cow::Borrowed(w);
            layers[j].span = Some(span);
            continue;
        }
        layers[j].span = None;
        let inner = ctx.out[first_idx + j + 1].words.clone();
        let own = ctx.out[first_idx + j].words.to_mut();
        if layers[j].feeds {
            // The wrapped words as written (without the trailing argument).
            let k = inner.len().saturating_sub(1);
            own.extend(inner.iter().take(k).cloned());
        } else {
            own.extend(inner.iter().cloned());
        }
    }
    let action = first_idx + last;
    // Subcommand form and candidates.
    {
        let inv = &mut ctx.out[action];
        let (sub, form, alt) = if ctx.subcommands {
            subcommand_form(&inv.words, known.subcommands)
        } else {
            (None, None, None)
        };
        inv.subcommand = sub;
        inv.form = form
            .as_ref()
            .map(|f| render_words(f.iter().copied(), false));
        let from = ctx.buf.list.len();
        candidates(
            origin,
            c,
            &layers,
            &inv.words,
            form.as_deref(),
            alt.as_deref(),
            ctx.texts,
            ctx.buf,
        );
        inv.cands = from..ctx.buf.list.len();
    }
    // Scripts the action runs.
    if let Some(s) = script {
        match s {
            Ok(text) => {
                let d = depth.saturating_add(layers.len() as u8);
                if d >= MAX_DEPTH {
                    ctx.out[action].gaps.push(Gap::TooDeep);
                } else {
                    let reading = super::read(&text);
                    // A shell in it reading the input the wrapped shell was
                    // given (`sudo sh -c sh <<< 'rm -rf /'`) reads what
                    // nobody can know from here.
                    if inherited_stdin_shell(&reading).is_some() {
                        ctx.out[action].gaps.push(Gap::DynamicScript);
                    }
                    let idx = ctx.scripts.len() + 1;
                    ctx.scripts.push(Reading::default());
                    reduce_reading(ctx, &reading, None, idx, Some(action), d, dir);
                    if let Some(slot) = ctx.scripts.get_mut(idx - 1) {
                        *slot = reading;
                    }
                }
            }
            Err(g) => ctx.out[action].gaps.push(g),
        }
    }
    // `find -exec` commands.
    if matches!(&*ctx.out[action].program.base, "find" | "gfind") {
        let action_words = ctx.out[action].words.clone();
        let mut i = 1;
        while i < action_words.len() {
            let w = &action_words[i];
            i += 1;
            if w.is_dynamic() || !programs::FIND_EXEC.contains(&w.text()) {
                continue;
            }
            let from = i;
            while action_words
                .get(i)
                .is_some_and(|x| x.is_dynamic() || !matches!(x.text(), ";" | "+"))
            {
                i += 1;
            }
            let mut inner: Vec<Word> = action_words[from..i].to_vec();
            i += 1;
            if inner.is_empty() {
                continue;
            }
            dynamic_arguments(&mut inner, "{}");
            let d = depth.saturating_add(layers.len() as u8);
            let o = Origin {
                sourced: false,
                ..origin
            };
            chain(ctx, o, c, Cow::Owned(inner), Some(action), d, dir, false);
        }
    }
    layers.clear();
    // (Empty: the same room, past this reading.)
    ctx.buf
        .layers
        .0
        .push(layers.into_iter().map(Layer::detached).collect());
    Some(action)
}

#[allow(clippy::too_many_arguments)]
fn invocation<'r>(
    origin: Origin<'_>,
    parent: Option<usize>,
    role: Role,
    depth: u8,
    assignments: Vec<Assignment>,
    words: Cow<'r, [Word]>,
    found: Found,
    gaps: Vec<Gap>,
) -> Invocation<'r> {
    Invocation {
        reading: origin.reading_idx,
        command: origin.command,
        parent,
        role,
        depth,
        assignments,
        program: Program::of(&words),
        words,
        subcommand: None,
        form: None,
        candidates: Vec::new(),
        cands: 0..0,
        files: found.files,
        hosts: found.hosts,
        exec: found.exec,
        gaps,
    }
}

/// Makes `{}` (or the replacement string) dynamic and appends the
/// arguments word.
fn dynamic_arguments(words: &mut Vec<Word>, replace: &str) {
    for w in words.iter_mut().skip(1) {
        if !replace.is_empty() && w.text().contains(replace) && !w.is_dynamic() {
            w.kind = WordKind::Dynamic;
        }
    }
    words.push(Word {
        span: 0..0,
        text: super::Text::Owned(ARGUMENTS.into()),
        kind: WordKind::Dynamic,
    });
}

fn is_assignment(t: &str) -> bool {
    let Some((name, _)) = t.split_once('=') else {
        return false;
    };
    let name = name.strip_suffix('+').unwrap_or(name);
    !name.is_empty()
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Reads a wrapper's options from `cur[start + 1..]`.
fn wrapper_options(
    wr: &'static Wrapper,
    cur: &[Word],
    start: usize,
    layer: &mut Layer<'_>,
    replace: &mut Option<String>,
) -> Next {
    let mut i = start + 1;
    let mut operands = wr.operands;
    let mut as_command = false;
    let has = |l: &[&str], o: &str| l.contains(&o);
    while let Some(w) = cur.get(i) {
        let t = w.text();
        if wr.assignments && is_assignment(t) {
            let (name, value) = t.split_once('=').unwrap_or((t, ""));
            let (name, append) = match name.strip_suffix('+') {
                Some(n) => (n, true),
                None => (name, false),
            };
            layer.assignments.push(Assignment {
                span: w.span.clone(),
                name: name.to_string(),
                append,
                value: Word {
                    span: w.span.clone(),
                    text: super::Text::Owned(value.into()),
                    kind: w.kind,
                },
            });
            layer.bare = false;
            i += 1;
            continue;
        }
        if w.is_dynamic() {
            if t.starts_with('-') {
                layer.gaps.push(Gap::UnknownOption(t.to_string()));
                i += 1;
                continue;
            }
            break;
        }
        if t == "--" {
            i += 1;
            break;
        }
        let option = (t.starts_with('-') && t.len() > 1) || (t == "-" && has(wr.flags, "-"));
        if !option {
            if operands > 0 {
                if i > start
                    && wr.names.contains(&"flock")
                    && !t.bytes().all(|b| b.is_ascii_digit())
                {
                    layer.found.files.push(file_use(w, Access::Edit));
                }
                operands -= 1;
                i += 1;
                continue;
            }
            break;
        }
        layer.bare = false;
        i += 1;
        // A whole option.
        let (name, inline) = match t.split_once('=') {
            Some((n, v)) if t.starts_with("--") => (n, Some(v.to_string())),
            _ => (t, None),
        };
        let listed = t.starts_with("--")
            || t == "-"
            || [
                wr.value,
                wr.flags,
                wr.script,
                wr.queries,
                wr.modes,
                wr.reads,
                wr.writes,
                wr.optional,
                wr.as_command,
            ]
            .iter()
            .any(|l| has(l, name));
        let mut options: Vec<(String, Option<String>)> = Vec::new();
        if listed {
            options.push((name.to_string(), inline));
        } else if wr.numeric && t[1..].bytes().all(|b| b.is_ascii_digit()) {
            continue;
        } else {
            // A cluster: each letter an option; one that takes a value takes
            // the rest of the word (or the next word).
            let body = &t[1..];
            for (k, ch) in body.char_indices() {
                let o = format!("-{ch}");
                let rest = &body[k + ch.len_utf8()..];
                let takes = [wr.value, wr.script, wr.reads, wr.writes, wr.optional]
                    .iter()
                    .any(|l| has(l, &o));
                if takes {
                    options.push((
                        o,
                        if rest.is_empty() && !has(wr.optional, &format!("-{ch}")) {
                            None
                        } else {
                            Some(rest.to_string())
                        },
                    ));
                    break;
                }
                options.push((o, None));
            }
        }
        for (o, inline) in options {
            let o = o.as_str();
            if has(wr.as_command, o) {
                as_command = true;
            }
            if has(wr.queries, o) {
                return Next::Nothing;
            }
            if has(wr.modes, o) {
                layer.gaps.push(Gap::Mode(o.to_string()));
                return Next::Nothing;
            }
            if has(wr.optional, o) {
                if (o == "-i" || o == "--replace") && wr.feeds_arguments {
                    *replace = Some(
                        inline
                            .clone()
                            .filter(|v| !v.is_empty())
                            .unwrap_or_else(|| "{}".into()),
                    );
                }
                continue;
            }
            let takes = [wr.value, wr.script, wr.reads, wr.writes]
                .iter()
                .any(|l| has(l, o));
            if !takes {
                if !has(wr.flags, o) && !has(wr.as_command, o) {
                    layer.gaps.push(Gap::UnknownOption(o.to_string()));
                }
                continue;
            }
            let value: Option<Word> = match inline {
                Some(v) => Some(Word {
                    span: w.span.clone(),
                    text: super::Text::Owned(v.into_boxed_str()),
                    kind: w.kind,
                }),
                None => {
                    let v = cur.get(i).cloned();
                    i += 1;
                    v
                }
            };
            let Some(value) = value else {
                continue;
            };
            if has(wr.script, o) {
                if value.is_dynamic() {
                    return Next::Script(Err(Gap::DynamicScript));
                }
                let mut text = value.text().to_string();
                // `env -S 'a b' c`: the words after the string follow it.
                if wr.assignments {
                    for w in cur.get(i..).unwrap_or(&[]) {
                        text.push(' ');
                        text.push_str(&render_word(w));
                    }
                }
                return Next::Script(Ok(text));
            }
            if (o == "-I" || o == "--replace") && wr.feeds_arguments {
                *replace = Some(value.text().to_string());
            }
            if has(wr.reads, o) {
                layer.found.files.push(file_use(&value, Access::Read));
            } else if has(wr.writes, o) {
                layer.found.files.push(file_use(&value, Access::Edit));
            }
        }
    }
    if operands > 0 || i >= cur.len() {
        return Next::Nothing;
    }
    match wr.runs {
        Runs::Command => Next::Command(i),
        Runs::Script if as_command => Next::Command(i),
        Runs::Script => {
            let rest = cur.get(i..).unwrap_or(&[]);
            if rest.iter().any(Word::is_dynamic) {
                return Next::Script(Err(Gap::DynamicScript));
            }
            let text = rest.iter().map(|w| w.text()).collect::<Vec<_>>().join(" ");
            Next::Script(Ok(text))
        }
        Runs::ScriptOption => {
            // `su USER -c CMD`: the words after the user go to the user's
            // shell, so a `-c` there is still a script it runs, and any
            // other word is a script file or option toolgate cannot read.
            let rest = cur.get(i + 1..).unwrap_or(&[]);
            for (k, w) in rest.iter().enumerate() {
                let t = w.text();
                let (name, inline) = match t.split_once('=') {
                    Some((n, v)) if t.starts_with("--") => (n, Some(v)),
                    _ => (t, None),
                };
                if w.is_dynamic() || !has(wr.script, name) {
                    continue;
                }
                let value = match inline {
                    Some(v) => Some((v.to_string(), false)),
                    None => rest
                        .get(k + 1)
                        .map(|v| (v.text().to_string(), v.is_dynamic())),
                };
                return match value {
                    Some((_, true)) | None => Next::Script(Err(Gap::DynamicScript)),
                    Some((text, false)) => Next::Script(Ok(text)),
                };
            }
            if !rest.is_empty() {
                layer
                    .gaps
                    .push(Gap::Mode("arguments for the user's shell".into()));
            }
            Next::Nothing
        }
    }
}

fn file_use(w: &Word, access: Access) -> FileUse {
    FileUse {
        text: w.text().to_string(),
        kind: w.kind,
        access,
        recursive: false,
        via: files::Via::Option,
        path: None,
        expanded: None,
    }
}

/// A shell's options: does it run `-c`'s script, and which word is that
/// script (or its first operand)?
fn shell_mode(words: &[Word]) -> (bool, Option<usize>) {
    let mut has_c = false;
    let mut i = 1;
    while let Some(w) = words.get(i) {
        let t = w.text();
        if w.is_dynamic() {
            return (has_c, Some(i));
        }
        if t == "--" || t == "-" {
            return (has_c, words.get(i + 1).map(|_| i + 1));
        }
        if t.starts_with("--") {
            i += if programs::SHELL_VALUE_OPTIONS.contains(&t) {
                2
            } else {
                1
            };
            continue;
        }
        if t.len() > 1 && (t.starts_with('-') || t.starts_with('+')) {
            let os = t[1..].bytes().filter(|&b| b == b'o' || b == b'O').count();
            if t.starts_with('-') && t.contains('c') {
                has_c = true;
            }
            i += 1 + os;
            continue;
        }
        return (has_c, Some(i));
    }
    (has_c, None)
}

/// The script a wrapped shell runs: `-c`'s, or a here-document or
/// here-string it reads.
fn shell_script(words: &[Word], c: &Command, reading: &Reading) -> Option<Result<String, Gap>> {
    let (has_c, operand) = shell_mode(words);
    if has_c {
        return Some(match operand.and_then(|i| words.get(i)) {
            Some(w) if !w.is_dynamic() => Ok(w.text().to_string()),
            _ => Err(Gap::DynamicScript),
        });
    }
    if operand.is_some() {
        return None;
    }
    stdin_script(c, reading)
}

/// The script a shell reads on its standard input, when the command gives
/// it one: a here-document or here-string.
fn stdin_script(c: &Command, reading: &Reading) -> Option<Result<String, Gap>> {
    match stdin_of(c.redirections(reading)) {
        Stdin::Text(_, w, _) => Some(Ok(w.text().to_string())),
        Stdin::Unknown(_) => Some(Err(Gap::DynamicScript)),
        Stdin::File => None,
        Stdin::Inherited if c.connector == Connector::Pipe || c.connector == Connector::PipeAll => {
            Some(Err(Gap::PipedScript))
        }
        Stdin::Inherited => None,
    }
}

/// A shell given a script file reads it.
fn shell_file(words: &[Word], found: &mut Found) {
    let (has_c, operand) = shell_mode(words);
    if has_c {
        return;
    }
    if let Some(w) = operand.and_then(|i| words.get(i)) {
        found.files.push(FileUse {
            via: files::Via::Operand,
            ..file_use(w, Access::Read)
        });
    }
}

/// The subcommand, its form, and the form with unknown options taking a
/// value (SPEC §7.2, §13); `table` is the program's subcommand table.
#[allow(clippy::type_complexity)]
fn subcommand_form<'w>(
    words: &'w [Word],
    table: Option<&programs::SubcommandTable>,
) -> (Option<String>, Option<Vec<&'w Word>>, Option<Vec<&'w Word>>) {
    if words.first().is_none_or(Word::is_dynamic) {
        return (None, None, None);
    }
    let Some(table) = table else {
        return (None, None, None);
    };
    let find = |unknown_takes: bool| -> (Option<usize>, bool) {
        let mut i = 1;
        let mut unknown = false;
        while let Some(w) = words.get(i) {
            let t = w.text();
            if w.is_dynamic() {
                return (None, unknown);
            }
            if t == "--" {
                return (words.get(i + 1).map(|_| i + 1), unknown);
            }
            if !(t.starts_with('-') && t.len() > 1) {
                return (Some(i), unknown);
            }
            i += 1;
            if t.contains('=') {
                continue;
            }
            if table.value.contains(&t) {
                i += 1;
                continue;
            }
            if table.flags.contains(&t) {
                continue;
            }
            // `-C/tmp`: a short value option with its value attached.
            if !t.starts_with("--")
                && t.get(..2)
                    .is_some_and(|o| t.len() > 2 && table.value.contains(&o))
            {
                continue;
            }
            unknown = true;
            if unknown_takes {
                i += 1;
            }
        }
        (None, unknown)
    };
    let form_of = |sub: usize| -> Vec<&Word> {
        let mut v: Vec<&Word> = Vec::with_capacity(words.len() - sub + 1);
        v.extend(words.first());
        v.extend(words[sub..].iter());
        v
    };
    let (sub, unknown) = find(false);
    let Some(sub) = sub else {
        return (None, None, None);
    };
    let name = words.get(sub).map(|w| w.text().to_string());
    let form = (sub > 1).then(|| form_of(sub));
    let alt = if unknown {
        match find(true).0 {
            Some(s) if s != sub && s > 1 => Some(form_of(s)),
            _ => None,
        }
    } else {
        None
    };
    (name, form, alt)
}

/// Writes one word as SPEC §3.2 renders it.
pub fn render_word(w: &Word) -> String {
    let mut s = String::new();
    push_word(&mut s, w, false);
    s
}

fn push_word(out: &mut String, w: &Word, base: bool) {
    if w.is_dynamic() {
        out.push_str(w.text());
        return;
    }
    let t = if base { basename(w.text()) } else { w.text() };
    push_quoted(out, t);
}

/// The bytes a word is rendered with unquoted (SPEC §3.2:
/// `[A-Za-z0-9_@%+=:,./-]`), as a table: one load per byte.
static PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'_' | b'@' | b'%' | b'+' | b'=' | b':' | b',' | b'.' | b'/' | b'-'
            );
        b += 1;
    }
    t
};

fn push_quoted(out: &mut String, t: &str) {
    let plain = !t.is_empty() && t.bytes().all(|b| PLAIN[usize::from(b)]);
    if plain {
        out.push_str(t);
        return;
    }
    out.push('\'');
    for (i, part) in t.split('\'').enumerate() {
        if i > 0 {
            out.push_str("'\\''");
        }
        out.push_str(part);
    }
    out.push('\'');
}

/// The rendering of words (SPEC §3.2); with `basename`, the first word's
/// path is reduced to its basename.
pub fn render_words<'a>(words: impl IntoIterator<Item = &'a Word>, basename: bool) -> String {
    let mut s = String::new();
    for (i, w) in words.into_iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        push_word(&mut s, w, basename && i == 0);
    }
    s
}

fn render_assignment(out: &mut String, a: &Assignment) {
    out.push_str(&a.name);
    if a.append {
        out.push('+');
    }
    out.push('=');
    if a.value.is_dynamic() {
        out.push_str(a.value.text());
    } else if !a.value.text().is_empty() {
        push_quoted(out, a.value.text());
    }
}

fn safe_assignment(a: &Assignment) -> bool {
    programs::SAFE_VARIABLES.contains(&a.name.as_str())
        && !a.append
        && a.value.kind == WordKind::Literal
        && !a.value.text().is_empty()
        && a.value
            .text()
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b':' | b'-'))
}

/// How one candidate is built.
struct Shape<'a> {
    assignments: &'a [Assignment],
    from: usize,
    /// Which programs are named by basename: none, all, or those in a
    /// system directory.
    basename: Basename,
    form: Option<&'a [&'a Word]>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Basename {
    No,
    All,
    System,
}

/// Writes the candidate of shape `s` at the end of `out`.
fn build(out: &mut String, layers: &[Layer<'_>], action_words: &[Word], s: &Shape<'_>) {
    let start = out.len();
    for a in s.assignments {
        if out.len() > start {
            out.push(' ');
        }
        render_assignment(out, a);
    }
    let last = layers.len() - 1;
    let base_of = |w: &Word| match s.basename {
        Basename::No => false,
        Basename::All => true,
        Basename::System => in_system_dir(w),
    };
    // Past a wrapper that feeds it arguments, the action's trailing
    // arguments word is not part of the text as written.
    let fed = layers.iter().take(last).skip(s.from).any(|l| l.feeds);
    let emit = |out: &mut String, k: usize, w: &Word| {
        if out.len() > start {
            out.push(' ');
        }
        push_word(out, w, k == 0 && base_of(w));
    };
    for (j, l) in layers.iter().enumerate().skip(s.from) {
        if j != last {
            for (k, w) in l.own.iter().enumerate() {
                emit(out, k, w);
            }
            continue;
        }
        let at = |k: usize| -> Option<&Word> {
            match s.form {
                Some(f) => f.get(k).copied(),
                None => action_words.get(k),
            }
        };
        let mut n = s.form.map_or(action_words.len(), <[&Word]>::len);
        if fed
            && n.checked_sub(1)
                .and_then(at)
                .is_some_and(|w| w.text() == ARGUMENTS && w.span.is_empty())
        {
            n -= 1;
        }
        for k in 0..n {
            if let Some(w) = at(k) {
                emit(out, k, w);
            }
        }
    }
}

/// What [`source_text`] found.
enum Source<'a> {
    /// The command has no source text.
    None,
    /// Its source text is this part of its script, as it is.
    Whole(&'a str),
    /// Its source text was written at the end of the buffer.
    Written,
}

/// The source text of a command from byte `from`, redirections removed
/// and blank runs collapsed: the script's own text when that is it
/// already, else written at the end of `out`.
fn source_text<'a>(out: &mut String, origin: Origin<'a>, c: &Command, from: usize) -> Source<'a> {
    if !origin.sourced {
        return Source::None;
    }
    let Some(script) = origin.reading.scripts.get(c.script()) else {
        return Source::None;
    };
    let end = c.span().end;
    let Some(text) = script.text.get(from..end) else {
        return Source::None;
    };
    let start = out.len();
    let redirected = c
        .redirections(origin.reading)
        .iter()
        .any(|r| r.span.start >= from && r.span.end <= end);
    // Most commands are written with single spaces: the text is its own
    // source text.
    if !redirected && single_spaced(text.as_bytes()) {
        return Source::Whole(text);
    }
    // Without redirections inside and line continuations, the words are
    // the runs between blanks.
    if !redirected && !text.contains("\\\n") {
        let blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\n');
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            i += bytes
                .get(i..)
                .map_or(0, |r| r.iter().take_while(|b| blank(b)).count());
            let s = i;
            i += bytes
                .get(i..)
                .map_or(0, |r| r.iter().take_while(|b| !blank(b)).count());
            if s < i {
                if out.len() > start {
                    out.push(' ');
                }
                // Split only at ASCII blanks: on character boundaries.
                out.push_str(text.get(s..i).unwrap_or(""));
            }
        }
        return Source::Written;
    }
    let mut cut: Vec<std::ops::Range<usize>> = c
        .redirections(origin.reading)
        .iter()
        .filter(|r| r.span.start >= from && r.span.end <= end)
        .map(|r| r.span.start - from..r.span.end - from)
        .collect();
    cut.sort_by_key(|r| r.start);
    // Runs of other bytes are copied whole; the text is split only at
    // ASCII bytes and at redirection spans, so on character boundaries.
    let bytes = text.as_bytes();
    let mut blank = false;
    let mut run: Option<usize> = None;
    let mut next_cut = 0;
    let mut i = 0;
    let flush = |out: &mut String, run: &mut Option<usize>, i: usize| {
        if let Some(s) = run.take() {
            out.push_str(text.get(s..i).unwrap_or(""));
        }
    };
    while let Some(&b) = bytes.get(i) {
        if let Some(r) = cut.get(next_cut).filter(|r| i >= r.start) {
            flush(out, &mut run, i);
            blank = true;
            i = i.max(r.end);
            next_cut += 1;
            continue;
        }
        // A line continuation joins the lines it splits.
        if b == b'\\' && bytes.get(i + 1) == Some(&b'\n') {
            flush(out, &mut run, i);
            i += 2;
            continue;
        }
        if matches!(b, b' ' | b'\t' | b'\n') {
            flush(out, &mut run, i);
            blank = true;
            i += 1;
            continue;
        }
        if run.is_none() {
            if blank && out.len() > start {
                out.push(' ');
            }
            blank = false;
            run = Some(i);
        }
        i += 1;
    }
    flush(out, &mut run, bytes.len());
    Source::Written
}

/// Whether a text has no tab or newline, no run of spaces, and no space
/// at either end (it is collapsed already).
fn single_spaced(t: &[u8]) -> bool {
    match (t.first(), t.last()) {
        (Some(&first), Some(&last)) if first != b' ' && !matches!(last, b' ' | b'\t' | b'\n') => {}
        _ => return false,
    }
    // One pass without early exit over each byte and the next (the last
    // byte was looked at above): no branch per byte.
    let next = t.get(1..).unwrap_or(&[]);
    !t.iter().zip(next).fold(false, |bad, (&a, &b)| {
        bad | (a == b'\t') | (a == b'\n') | ((a == b' ') & (b == b' '))
    })
}

#[allow(clippy::too_many_arguments)]
fn candidates(
    origin: Origin<'_>,
    c: &Command,
    layers: &[Layer<'_>],
    action_words: &[Word],
    form: Option<&[&Word]>,
    alt: Option<&[&Word]>,
    texts: Texts,
    buf: &mut CandTexts,
) {
    let deny_candidates = texts == Texts::All;
    // Each text is written at the end of the buffer and dropped again when
    // it repeats one of this invocation's candidates.
    let from = buf.list.len();
    let top = layers.first().and_then(|l| l.start).is_some();
    let assignments: &[Assignment] = if top {
        c.assignments(origin.reading)
    } else {
        &[]
    };
    // Allow: safe assignments, transparent wrappers, system directories.
    let safe_prefix = assignments
        .iter()
        .take_while(|a| safe_assignment(a))
        .count();
    let mut transparent = 0;
    for l in layers.iter().take(layers.len() - 1) {
        match l.wrapper {
            Some(w) if w.transparent && (!w.feeds_arguments || l.bare) => transparent += 1,
            _ => break,
        }
    }
    let stripped = assignments.get(safe_prefix..).unwrap_or(&[]);
    let assign_allow: &[&[Assignment]] = if safe_prefix > 0 {
        &[assignments, stripped]
    } else {
        &[assignments]
    };
    // Skip the shapes that cannot differ from others (no path to reduce,
    // no assignment to strip, no form).
    // (The action's words are in its invocation, not in its layer.)
    let programs = || {
        layers
            .iter()
            .take(layers.len() - 1)
            .filter_map(|l| l.own.first())
            .chain(action_words.first())
            .filter(|w| !w.is_dynamic())
    };
    let any_path = programs().any(|w| w.text().contains('/'));
    let any_system = programs().any(in_system_dir);
    let allow_bases: &[Basename] = if any_system {
        &[Basename::No, Basename::System]
    } else {
        &[Basename::No]
    };
    let deny_bases: &[Basename] = if any_path {
        &[Basename::No, Basename::All]
    } else {
        &[Basename::No]
    };
    // One shape's text, written and kept unless it repeats another.
    let add = |buf: &mut CandTexts, shape: &Shape, for_allow: bool| {
        let start = buf.text.len();
        build(&mut buf.text, layers, action_words, shape);
        buf.finish(start, from, for_allow);
    };
    for a in assign_allow {
        for skip in 0..=transparent {
            for &b in allow_bases {
                let shape = Shape {
                    assignments: a,
                    from: skip,
                    basename: b,
                    form: None,
                };
                add(buf, &shape, true);
                if texts == Texts::First {
                    return;
                }
            }
        }
    }
    // Source texts.
    let any_fed_before = |j: usize| layers.iter().take(j).any(|l| l.feeds);
    if top {
        let start = buf.text.len();
        match source_text(&mut buf.text, origin, c, c.span().start) {
            Source::Whole(text) => buf.add(text, from, true),
            Source::Written => buf.finish(start, from, true),
            Source::None => {}
        }
    }
    for (j, l) in layers.iter().enumerate() {
        if let Some(start) = l.start {
            // The whole command's text, when nothing stands before its
            // first word, is the one just added.
            if top && j == 0 && start == c.span().start {
                continue;
            }
            let allow =
                j <= transparent && !any_fed_before(j) && assignments.iter().all(safe_assignment);
            if !allow && !deny_candidates {
                continue;
            }
            let at = buf.text.len();
            match source_text(&mut buf.text, origin, c, start) {
                Source::Whole(text) => buf.add(text, from, allow),
                Source::Written => buf.finish(at, from, allow),
                Source::None => {}
            }
        }
    }
    if !deny_candidates {
        return;
    }
    // Deny and ask: every combination.
    let none: &[Assignment] = &[];
    let assigns: &[&[Assignment]] = if assignments.is_empty() {
        &[none]
    } else {
        &[assignments, none]
    };
    // The plain form, then the subcommand forms there are (no vector per
    // call: this runs on every evaluation with deny or ask rules).
    let forms = || {
        std::iter::once(None)
            .chain(form.map(Some))
            .chain(alt.map(Some))
    };
    for &a in assigns {
        for skip in 0..layers.len() {
            for &b in deny_bases {
                for f in forms() {
                    let shape = Shape {
                        assignments: a,
                        from: skip,
                        basename: b,
                        form: f,
                    };
                    add(buf, &shape, false);
                }
            }
        }
    }
}

/// The directory each command of a reading runs in (SPEC §13: `cd` and
/// `pushd` affect the later commands of the same shell).
///
/// Each command runs in a shell environment of the reading; an
/// environment starts in the directory its parent is in when its first
/// command runs (commands are in execution order), and a `cd` changes its
/// own environment's directory only: `(cd x); cat b` reads `b`, `{ cd x;
/// }; cat b` reads `x/b`. A `cd` that control flow decides on (in an `if`
/// body, a loop, a `case` item, a function, after `||`), and an `eval` or
/// `source`, which may run one, leave the directory unknown: later
/// relative paths are dynamic. `start` is the directory the reading's
/// shell starts in (a script a wrapper runs starts in its wrapper's).
/// `None` when every command runs in `start` (no command changes or may
/// change a directory).
fn directories(r: &Reading, start: &Dir) -> Option<Vec<Dir>> {
    let changes = |c: &Command| {
        c.program(r).is_some_and(|w| {
            w.is_dynamic()
                || matches!(
                    w.text(),
                    "cd" | "pushd"
                        | "popd"
                        | "eval"
                        | "source"
                        | "."
                        | "command"
                        | "builtin"
                        | "time"
                )
        })
    };
    let envs = r.envs.len().max(1);
    if !r
        .commands
        .iter()
        .any(|c| changes(c) || c.env as usize >= envs)
    {
        return None;
    }
    let mut out = Vec::with_capacity(r.commands.len());
    // The directory of each environment, once one of its commands ran.
    let mut dirs: Vec<Option<Dir>> = vec![None; r.envs.len().max(1)];
    for c in &r.commands {
        let env = c.env as usize;
        let here = env_dir(r, &mut dirs, env, start);
        out.push(here.clone());
        let words = c.words(r);
        let Some(w) = words.first().filter(|w| !w.is_dynamic()) else {
            continue;
        };
        let name = w.text();
        let next = match name {
            "cd" | "pushd" | "popd" => {
                let target = words
                    .get(1..)
                    .unwrap_or(&[])
                    .iter()
                    .find(|w| w.is_dynamic() || !w.text().starts_with('-') || w.text() == "-");
                if name == "popd" || (name == "pushd" && target.is_none()) || c.conditional {
                    Dir::Unknown
                } else {
                    here.cd(target)
                }
            }
            "eval" | "source" | "." => Dir::Unknown,
            "command" | "builtin" | "time"
                if words.get(1).is_some_and(|w| {
                    w.is_dynamic()
                        || matches!(w.text(), "cd" | "pushd" | "popd" | "eval" | "source" | ".")
                }) =>
            {
                Dir::Unknown
            }
            _ => continue,
        };
        if let Some(slot) = dirs.get_mut(env) {
            *slot = Some(next);
        }
    }
    Some(out)
}

/// The directory environment `env` is in now (set from its parent's the
/// first time it is asked for).
fn env_dir(r: &Reading, dirs: &mut [Option<Dir>], env: usize, start: &Dir) -> Dir {
    // The chain of environments up to one whose directory is set (or the
    // top); bounded, since a chain cannot be longer than the environments.
    let mut chain = Vec::new();
    let mut cur = env;
    let mut found = start.clone();
    for _ in 0..=dirs.len() {
        match dirs.get(cur) {
            Some(Some(d)) => {
                found = d.clone();
                break;
            }
            Some(None) => {}
            None => {
                found = Dir::Unknown;
                break;
            }
        }
        chain.push(cur);
        let parent = r.envs.get(cur).map_or(0, |&p| p as usize);
        if parent == cur {
            break;
        }
        cur = parent;
    }
    for e in chain {
        if let Some(slot) = dirs.get_mut(e) {
            *slot = Some(found.clone());
        }
    }
    found
}

/// Resolves file paths against the directory.
fn resolve(files: &mut [FileUse], dir: &Dir) {
    for f in files {
        match f.kind {
            WordKind::Literal | WordKind::Decoded | WordKind::Glob => {
                f.path = dir.join(&f.text);
            }
            WordKind::Dynamic => {
                if let Some(p) = files::expand(&f.text) {
                    f.expanded = match p.base {
                        files::Base::Cwd => dir.join(&p.path),
                        _ => Some(p),
                    };
                }
            }
        }
    }
}

/// Writes an invocation on one line for people: its rendering.
impl std::fmt::Display for Invocation<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = String::new();
        for a in &self.assignments {
            if !s.is_empty() {
                s.push(' ');
            }
            render_assignment(&mut s, a);
        }
        if !s.is_empty() && !self.words.is_empty() {
            s.push(' ');
        }
        s.push_str(&render_words(self.words.iter(), false));
        f.write_str(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan without branches answers as a byte-by-byte one.
    #[test]
    fn single_spaced_as_a_plain_scan() {
        fn plain(t: &[u8]) -> bool {
            let mut prev = b' ';
            for &b in t {
                if b == b'\t' || b == b'\n' || (b == b' ' && prev == b' ') {
                    return false;
                }
                prev = b;
            }
            prev != b' '
        }
        let alphabet = [b'a', b' ', b'\t', b'\n', b'x'];
        // Every text of up to five bytes over the alphabet.
        let mut texts: Vec<Vec<u8>> = vec![Vec::new()];
        for _ in 0..5 {
            let longer: Vec<Vec<u8>> = texts
                .iter()
                .filter(|t| t.len() == texts.last().map_or(0, Vec::len))
                .flat_map(|t| {
                    alphabet.iter().map(move |&b| {
                        let mut u = t.clone();
                        u.push(b);
                        u
                    })
                })
                .collect();
            texts.extend(longer);
        }
        let mut wrong = Vec::new();
        for t in &texts {
            if single_spaced(t) != plain(t) {
                wrong.push(String::from_utf8_lossy(t).into_owned());
            }
        }
        assert!(wrong.is_empty(), "{wrong:?}");
    }

    /// The table of plain bytes is the class SPEC §3.2 names.
    #[test]
    fn plain_bytes() {
        for b in 0..=255u8 {
            let class = b.is_ascii_alphanumeric() || b"_@%+=:,./-".contains(&b);
            assert_eq!(PLAIN[usize::from(b)], class, "{b}");
        }
    }
}
