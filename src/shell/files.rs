//! The files and hosts one invocation names (SPEC §8.5, §13), and the
//! directory `cd` moves later commands to.
//!
//! `scan` reads an invocation's words against the tables of
//! [`super::programs`]; `redirection_files` reads its redirections;
//! `Dir` follows `cd`/`pushd` through a list.

use super::programs::{self, FileProgram, HostOperands, Operands};
use super::{Redirection, RedirectionOp, Word, WordKind};
use serde::Serialize;

/// Read or edit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// The file is read (its contents, or its name and metadata).
    Read,
    /// The file is written, created, moved or removed.
    Edit,
}

/// Where a file was named.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// An operand.
    Operand,
    /// The value of an option (`grep -f F`, `sort -o F`).
    Option,
    /// A redirection.
    Redirection,
}

/// What a path is relative to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Base {
    /// The directory the command starts in (the call's cwd).
    Cwd,
    /// The user's home directory (supplied by the evaluation context).
    Home,
    /// The filesystem root: the path is absolute.
    Root,
}

/// A path relative to a [`Base`]; `path` has no leading `/` (for
/// [`Base::Root`] the absolute path is `/` + `path`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PathRef {
    /// What it is relative to.
    pub base: Base,
    /// The path below the base (`""` for the base itself). A glob word keeps
    /// its glob characters.
    pub path: String,
}

impl std::fmt::Display for PathRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.base {
            Base::Cwd if self.path.is_empty() => f.write_str("."),
            Base::Cwd => f.write_str(&self.path),
            Base::Home if self.path.is_empty() => f.write_str("~"),
            Base::Home => write!(f, "~/{}", self.path),
            Base::Root => write!(f, "/{}", self.path),
        }
    }
}

/// One file an invocation names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileUse {
    /// The word as written (its decoded text, or its source when dynamic).
    pub text: String,
    /// The kind of the word.
    pub kind: WordKind,
    /// Read or edit.
    pub access: Access,
    /// True when the program reads or writes below it, recursively.
    pub recursive: bool,
    /// Where it was named.
    pub via: Via,
    /// The path, resolved against the `cd`s before it: set for a literal or
    /// glob word in a known directory.
    pub path: Option<PathRef>,
    /// For deny and ask rules only: the path with a leading `$HOME`,
    /// `${HOME}`, `~` or `$PWD` expanded (SPEC §8.4).
    pub expanded: Option<PathRef>,
}

/// A host a network program contacts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Host {
    /// The host name (lowercase), or the word's source when it is dynamic.
    pub name: String,
    /// True when the word naming it is dynamic: any host could be meant.
    pub dynamic: bool,
}

/// What [`scan`] finds.
#[derive(Clone, Debug, Default)]
pub(crate) struct Found {
    pub files: Vec<FileUse>,
    pub hosts: Vec<Host>,
    pub exec: Vec<String>,
}

impl Found {
    fn file(&mut self, w: &Word, access: Access, recursive: bool, via: Via) {
        if w.text().is_empty() || w.text() == "-" || programs::is_device(w.text()) {
            return;
        }
        self.files.push(FileUse {
            text: w.text().to_string(),
            kind: w.kind,
            access,
            recursive,
            via,
            path: None,
            expanded: None,
        });
    }

    fn file_text(&mut self, text: &str, kind: WordKind, access: Access, via: Via) {
        let w = Word {
            span: 0..0,
            text: super::Text::Owned(text.into()),
            kind,
        };
        self.file(&w, access, false, via);
    }

    fn exec(&mut self, what: &str) {
        if !self.exec.iter().any(|e| e == what) {
            self.exec.push(what.to_string());
        }
    }
}

fn is_option(w: &Word) -> bool {
    !w.is_dynamic() && w.text().len() > 1 && w.text().starts_with('-')
}

/// The files of an invocation's redirections.
pub(crate) fn redirection_files(reds: &[Redirection], found: &mut Found) {
    for r in reds {
        let access = match r.op {
            RedirectionOp::Read => Access::Read,
            RedirectionOp::ReadWrite
            | RedirectionOp::Write
            | RedirectionOp::Append
            | RedirectionOp::Clobber
            | RedirectionOp::WriteAll
            | RedirectionOp::AppendAll => Access::Edit,
            RedirectionOp::DupOut | RedirectionOp::DupIn => {
                let t = &r.target.text();
                if !r.target.is_dynamic() && (*t == "-" || t.bytes().all(|b| b.is_ascii_digit())) {
                    continue;
                }
                if r.op == RedirectionOp::DupOut {
                    Access::Edit
                } else {
                    Access::Read
                }
            }
            RedirectionOp::HereDoc | RedirectionOp::HereDocStrip | RedirectionOp::HereString => {
                continue;
            }
        };
        found.file(&r.target, access, false, Via::Redirection);
    }
}

/// Reads the files, hosts and executing options of one invocation
/// (`words[0]` is its program, `base` its basename, `known` what the
/// program tables know of it).
pub(crate) fn scan(base: &str, known: &programs::Known, words: &[Word], found: &mut Found) {
    let args = words.get(1..).unwrap_or(&[]);
    match base {
        "dd" => dd(args, found),
        "tar" | "gtar" | "bsdtar" => tar(args, found),
        "find" | "gfind" => find(args, found),
        "git" => git(args, found),
        _ => {}
    }
    if let Some(p) = known.file {
        generic(base, p, args, found);
    }
    if let Some(n) = known.network {
        network(n, args, found);
    }
    if let Some(opts) = known.inline_code {
        for w in args {
            if w.is_dynamic() || !w.text().starts_with('-') {
                break;
            }
            let t = w.text();
            if opts.contains(&t)
                || (t.len() > 2
                    && !t.starts_with("--")
                    && opts.iter().any(|o| o.len() == 2 && t.ends_with(&o[1..])))
            {
                found.exec(t);
            }
        }
    }
}

/// A short option letter of a cluster, as `-x`.
fn short(c: char) -> String {
    let mut s = String::with_capacity(2);
    s.push('-');
    s.push(c);
    s
}

fn generic(base: &str, p: &FileProgram, args: &[Word], found: &mut Found) {
    let mut leading = p.leading;
    let mut recursive = p.always_recursive;
    let mut in_place = false;
    // The option as written (`-i`, `-i.bak`, `-pi`, `--in-place`).
    let mut in_place_word = String::new();
    let mut target_dir = false;
    let mut operands: Vec<&Word> = Vec::new();
    let mut end = false;
    let mut i = 0;
    let has = |list: &[&str], o: &str| list.contains(&o);
    while let Some(w) = args.get(i) {
        i += 1;
        let t = w.text();
        if !end && t == "--" && !w.is_dynamic() {
            end = true;
            continue;
        }
        if !end && !w.is_dynamic() && t.starts_with('+') && t.len() > 1 && has(p.exec, "+") {
            found.exec(t);
            continue;
        }
        if end || !is_option(w) {
            operands.push(w);
            continue;
        }
        // A whole option: `--long[=v]`, or a single-dash word in a list.
        let (name, inline) = match t.split_once('=') {
            Some((n, v)) if t.starts_with("--") => (n, Some(v)),
            _ => (t, None),
        };
        let whole = t.starts_with("--")
            || [
                p.value,
                p.reads,
                p.writes,
                p.reads2,
                p.value2,
                p.given_by,
                p.recursive,
                p.in_place,
                p.exec,
            ]
            .iter()
            .any(|l| has(l, name));
        let take = |inline: Option<&str>, i: &mut usize| -> Option<Word> {
            match inline {
                Some(v) => Some(Word {
                    span: 0..0,
                    text: super::Text::Owned(v.into()),
                    kind: if w.kind == WordKind::Literal {
                        WordKind::Literal
                    } else {
                        WordKind::Decoded
                    },
                }),
                None => {
                    let v = args.get(*i).cloned();
                    *i += 1;
                    v
                }
            }
        };
        if whole {
            if has(p.exec, name) {
                found.exec(name);
            }
            if has(p.given_by, name) {
                leading = 0;
            }
            if has(p.recursive, name) {
                recursive = true;
            }
            if has(p.in_place, name) {
                in_place = true;
                in_place_word = t.to_string();
                continue;
            }
            if has(p.reads2, name) || has(p.value2, name) {
                i += 1;
                let v = args.get(i);
                i += 1;
                if let (Some(v), true) = (v, has(p.reads2, name)) {
                    found.file(v, Access::Read, false, Via::Option);
                }
                continue;
            }
            if has(p.reads, name) {
                if let Some(v) = take(inline, &mut i) {
                    found.file(&v, Access::Read, false, Via::Option);
                }
            } else if has(p.writes, name) {
                if let Some(v) = take(inline, &mut i) {
                    found.file(&v, Access::Edit, false, Via::Option);
                    if name == "-t" || name == "--target-directory" {
                        target_dir = true;
                    }
                }
            } else if has(p.value, name) && inline.is_none() {
                i += 1;
            }
            continue;
        }
        // A cluster of short options.
        let body = &t[1..];
        for (k, c) in body.char_indices() {
            let o = short(c);
            let rest = &body[k + c.len_utf8()..];
            if has(p.exec, &o) {
                found.exec(&o);
            }
            if has(p.given_by, &o) {
                leading = 0;
            }
            if has(p.recursive, &o) {
                recursive = true;
            }
            if has(p.in_place, &o) {
                // `sed -i.bak`, `perl -pi.orig`: the rest is a suffix.
                in_place = true;
                in_place_word = t.to_string();
                if base != "perl" || !rest.starts_with('e') {
                    break;
                }
                continue;
            }
            let takes = [p.value, p.reads, p.writes].iter().any(|l| has(l, &o));
            if !takes {
                continue;
            }
            let v = if rest.is_empty() {
                let v = args.get(i).cloned();
                i += 1;
                v
            } else {
                Some(Word {
                    span: 0..0,
                    text: super::Text::Owned(rest.into()),
                    kind: w.kind,
                })
            };
            if let Some(v) = v {
                if has(p.reads, &o) {
                    found.file(&v, Access::Read, false, Via::Option);
                } else if has(p.writes, &o) {
                    found.file(&v, Access::Edit, false, Via::Option);
                    if o == "-t" {
                        target_dir = true;
                    }
                } else if base == "sed" && (o == "-e") {
                    sed_script(&v, found);
                } else if base.ends_with("awk") && o == "-e" {
                    awk_program(&v, found);
                }
            }
            break;
        }
    }
    // Leading non-file operands: a pattern, a script, a filter.
    let mut files = operands.into_iter();
    for _ in 0..leading {
        if let Some(w) = files.next() {
            if base.contains("sed") {
                sed_script(w, found);
            } else if base.contains("awk") {
                awk_program(w, found);
            }
        }
    }
    let files: Vec<&Word> = files.collect();
    if in_place {
        found.exec(&in_place_word);
        for w in &files {
            found.file(w, Access::Edit, recursive, Via::Operand);
        }
        return;
    }
    let n = files.len();
    for (k, w) in files.into_iter().enumerate() {
        let access = match p.operands {
            Operands::Read => Access::Read,
            Operands::Edit => Access::Edit,
            Operands::LastEdit if !target_dir && n > 1 && k == n - 1 => Access::Edit,
            Operands::LastEdit => Access::Read,
            Operands::EditAfterFirst if k == 0 => continue,
            Operands::EditAfterFirst => Access::Edit,
            Operands::FirstEdit if k == 0 => Access::Edit,
            Operands::FirstEdit => Access::Read,
            Operands::None => continue,
        };
        // `scp`/`rsync` remote operands are hosts, not local files.
        if matches!(base, "scp" | "rsync") && remote_host(w.text()).is_some() {
            continue;
        }
        found.file(w, access, recursive, Via::Operand);
    }
}

/// `sed` commands `w FILE`, `W FILE`, `e`, and `s///w`/`s///e` write or run.
fn sed_script(w: &Word, found: &mut Found) {
    if w.is_dynamic() {
        return;
    }
    for part in w.text().split([';', '\n']) {
        let cmd = part.trim_start_matches(|c: char| {
            c.is_ascii_digit() || c.is_whitespace() || matches!(c, ',' | '$' | '!' | '{' | '}')
        });
        let cmd = if let Some(rest) = cmd.strip_prefix('/') {
            // An address `/re/`.
            rest.split_once('/')
                .map(|(_, r)| r.trim_start())
                .unwrap_or("")
        } else {
            cmd
        };
        let mut chars = cmd.chars();
        match chars.next() {
            Some('w' | 'W') => {
                found.exec("sed w");
                let file = chars.as_str().trim();
                if !file.is_empty() {
                    found.file_text(file, WordKind::Decoded, Access::Edit, Via::Option);
                }
            }
            Some('e') => found.exec("sed e"),
            Some('s') => {
                if let Some(d) = chars.next() {
                    let rest: Vec<&str> = chars.as_str().splitn(3, d).collect();
                    if let Some(flags) = rest.get(2) {
                        if let Some(pos) = flags.find('w') {
                            found.exec("sed w");
                            let file = flags[pos + 1..].trim();
                            if !file.is_empty() {
                                found.file_text(file, WordKind::Decoded, Access::Edit, Via::Option);
                            }
                        } else if flags.contains('e') {
                            found.exec("sed e");
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// `awk` programs that run commands or write files.
fn awk_program(w: &Word, found: &mut Found) {
    if w.is_dynamic() {
        return;
    }
    let t = &w.text();
    if t.contains("system(") || t.contains("system (") {
        found.exec("awk system()");
    }
    let prints = t.match_indices("print").any(|(i, _)| {
        let after = &t[i..];
        let end = after.find([';', '}', '\n']).unwrap_or(after.len());
        after[..end].contains('>') || after[..end].contains('|')
    });
    if prints || t.contains("| getline") || t.contains("|getline") {
        found.exec("awk print >");
    }
}

fn dd(args: &[Word], found: &mut Found) {
    for w in args {
        if let Some(v) = w.text().strip_prefix("if=") {
            found.file_text(v, w.kind, Access::Read, Via::Operand);
        } else if let Some(v) = w.text().strip_prefix("of=") {
            found.file_text(v, w.kind, Access::Edit, Via::Operand);
        }
    }
}

fn tar(args: &[Word], found: &mut Found) {
    // Mode: c/r/u (create: operands read), x (extract: writes), t (list).
    let mut create = false;
    let mut extract = false;
    let mut archive: Option<Word> = None;
    let mut chdir: Option<Word> = None;
    let mut operands: Vec<&Word> = Vec::new();
    let mut i = 0;
    let mut first = true;
    while let Some(w) = args.get(i) {
        i += 1;
        let t = w.text();
        let old_style = first && !t.starts_with('-') && !w.is_dynamic();
        first = false;
        if w.is_dynamic() || (!t.starts_with('-') && !old_style) {
            operands.push(w);
            continue;
        }
        if t.starts_with("--") {
            let (name, inline) = match t.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (t, None),
            };
            let value = || {
                inline.map(|v| Word {
                    span: 0..0,
                    text: super::Text::Owned(v.into()),
                    kind: w.kind,
                })
            };
            match name {
                "--create" | "--append" | "--update" => create = true,
                "--extract" | "--get" => extract = true,
                "--file" => {
                    archive = value().or_else(|| {
                        i += 1;
                        args.get(i - 1).cloned()
                    })
                }
                _ if programs::TAR_EXEC.contains(&name) => {
                    found.exec(name);
                    if inline.is_none() {
                        i += 1;
                    }
                }
                _ if programs::TAR_READS.contains(&name) => {
                    let v = value().or_else(|| {
                        i += 1;
                        args.get(i - 1).cloned()
                    });
                    if let Some(v) = v {
                        found.file(&v, Access::Read, false, Via::Option);
                    }
                }
                _ if programs::TAR_CHDIR.contains(&name) => {
                    chdir = value().or_else(|| {
                        i += 1;
                        args.get(i - 1).cloned()
                    });
                }
                _ if programs::TAR_VALUE.contains(&name) && inline.is_none() => {
                    i += 1;
                }
                _ => {}
            }
            continue;
        }
        let body = t.trim_start_matches('-');
        let mut values = 0;
        for c in body.chars() {
            match c {
                'c' | 'r' | 'u' | 'A' => create = true,
                'x' => extract = true,
                'f' => {
                    archive = args.get(i + values).cloned();
                    values += 1;
                }
                'C' => {
                    chdir = args.get(i + values).cloned();
                    values += 1;
                }
                'b' | 'N' | 'V' | 'H' => values += 1,
                'T' | 'X' => {
                    if let Some(v) = args.get(i + values) {
                        found.file(v, Access::Read, false, Via::Option);
                    }
                    values += 1;
                }
                'I' | 'F' => {
                    found.exec(&short(c));
                    values += 1;
                }
                _ => {}
            }
            if !old_style && matches!(c, 'f' | 'C' | 'b' | 'N' | 'V' | 'H' | 'T' | 'X' | 'I' | 'F')
            {
                // In a dash cluster the value is the rest of the word or the
                // next word; only `f` at the end is common.
                break;
            }
        }
        i += values;
    }
    if let Some(a) = &archive {
        found.file(
            a,
            if create { Access::Edit } else { Access::Read },
            false,
            Via::Option,
        );
    }
    // Extracting writes whatever the archive holds, anywhere under the
    // directory it extracts into.
    if extract && operands.is_empty() {
        match &chdir {
            Some(d) => found.file(d, Access::Edit, true, Via::Option),
            None => {
                let here = Word {
                    span: 0..0,
                    text: super::Text::Owned(".".into()),
                    kind: WordKind::Literal,
                };
                found.file(&here, Access::Edit, true, Via::Operand);
            }
        }
    }
    for w in operands {
        if create {
            found.file(w, Access::Read, true, Via::Operand);
        } else if extract {
            found.file(w, Access::Edit, true, Via::Operand);
        }
    }
}

fn find(args: &[Word], found: &mut Found) {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        if programs::FIND_LEADING.contains(&w.text()) || w.text().starts_with("-D") {
            i += 1;
            continue;
        }
        break;
    }
    // Paths until the first expression word.
    while let Some(w) = args.get(i) {
        let t = w.text();
        if !w.is_dynamic() && (t.starts_with('-') || t == "(" || t == "!" || t == ")") {
            break;
        }
        found.file(w, Access::Read, true, Via::Operand);
        i += 1;
    }
    while let Some(w) = args.get(i) {
        i += 1;
        if w.is_dynamic() {
            continue;
        }
        let t = w.text();
        if programs::FIND_EXEC.contains(&t) {
            found.exec(t);
            // Skip to the terminator; the command is read by the reducer.
            while let Some(x) = args.get(i) {
                i += 1;
                if !x.is_dynamic() && (x.text() == ";" || x.text() == "+") {
                    break;
                }
            }
        } else if programs::FIND_WRITES.contains(&t) {
            found.exec(t);
            if let Some(v) = args.get(i) {
                found.file(v, Access::Edit, false, Via::Option);
            }
            i += if t == "-fprintf" { 2 } else { 1 };
        } else if t == "-delete" {
            found.exec(t);
        } else if matches!(
            t,
            "-newer" | "-anewer" | "-cnewer" | "-samefile" | "-files0-from"
        ) {
            if let Some(v) = args.get(i) {
                found.file(v, Access::Read, false, Via::Option);
            }
            i += 1;
        }
    }
}

fn git(args: &[Word], found: &mut Found) {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        let t = w.text();
        if w.is_dynamic() || !t.starts_with('-') {
            git_output(t, args.get(i..).unwrap_or(&[]), found);
            break;
        }
        let setting = if t == "-c" {
            i += 1;
            args.get(i - 1).map(|v| v.text())
        } else if let Some(v) = t.strip_prefix("-c") {
            Some(v)
        } else {
            if matches!(
                t,
                "-C" | "--git-dir"
                    | "--work-tree"
                    | "--namespace"
                    | "--config-env"
                    | "--super-prefix"
                    | "--exec-path"
            ) {
                i += 1;
            }
            None
        };
        if let Some(s) = setting {
            let key = s.split('=').next().unwrap_or("").to_ascii_lowercase();
            if programs::GIT_EXEC_CONFIG.iter().any(|k| {
                if k.ends_with('.') {
                    key.starts_with(k)
                } else {
                    key == *k
                }
            }) {
                found.exec(&format!("-c {key}"));
            }
        }
    }
}

/// The key of an ssh `-o` setting that runs a local command
/// (`ProxyCommand`, `LocalCommand`, `KnownHostsCommand`, `Match exec`).
fn ssh_exec_option(setting: &str) -> Option<String> {
    let key = setting
        .split(['=', ' ', '\t'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    matches!(
        key.as_str(),
        "proxycommand" | "localcommand" | "permitlocalcommand" | "knownhostscommand" | "match"
    )
    .then_some(key)
}

/// Whether `t` is curl's `-O`/`--remote-name`(`-all`)/`-J`, alone or in a
/// cluster of short flags (`-sSLO`; a letter that takes a value ends the
/// cluster: `-XPOST` is not `-O`).
fn is_curl_remote_name(n: &programs::NetworkProgram, t: &str) -> bool {
    if matches!(
        t,
        "--remote-name" | "--remote-name-all" | "--remote-header-name"
    ) {
        return true;
    }
    let Some(body) = t.strip_prefix('-').filter(|b| !b.starts_with('-')) else {
        return false;
    };
    for c in body.chars() {
        if c == 'O' || c == 'J' {
            return true;
        }
        let o = format!("-{c}");
        if [n.value, n.host_options, n.reads, n.writes]
            .iter()
            .any(|l| l.contains(&o.as_str()))
        {
            return false;
        }
    }
    false
}

/// The file a download of URL `w` is saved as, in the working directory:
/// the last segment of its path (`index.html` when it has none); an edit of
/// a name nobody can know when the URL is dynamic.
fn download(w: &Word, found: &mut Found) {
    // A `?` in a URL makes a glob word; only an expansion hides the name.
    if w.kind == WordKind::Dynamic {
        found.file_text(w.text(), WordKind::Dynamic, Access::Edit, Via::Operand);
        return;
    }
    let t = w.text();
    let rest = t.split_once("://").map_or(t, |(_, r)| r);
    let path = rest.split(['?', '#']).next().unwrap_or("");
    let name = match path.split_once('/') {
        Some((_, p)) => p.rsplit('/').next().unwrap_or(""),
        None => "",
    };
    let name = if name.is_empty() || name == "." || name == ".." {
        "index.html"
    } else {
        name
    };
    found.file_text(name, WordKind::Literal, Access::Edit, Via::Operand);
}

/// The files a git subcommand writes through an option: `--output F` of
/// the diff family (`log`, `diff`, `show`, `format-patch` …), and
/// `format-patch`'s output directory (`-o D`, `--output-directory D`).
fn git_output(sub: &str, args: &[Word], found: &mut Found) {
    const DIFF_FAMILY: &[&str] = &[
        "log",
        "diff",
        "show",
        "format-patch",
        "whatchanged",
        "range-diff",
        "diff-tree",
        "diff-files",
        "diff-index",
        "stash",
        "blame",
    ];
    // Options that name a program git runs on this machine.
    let runs: &[&str] = match sub {
        "clone" => &["-u", "--upload-pack"],
        "fetch" | "pull" | "ls-remote" => &["--upload-pack"],
        "push" | "send-pack" => &["--receive-pack", "--exec"],
        "archive" => &["--exec"],
        _ => &[],
    };
    for w in args {
        let t = w.text();
        let name = if t.starts_with("--") {
            t.split('=').next().unwrap_or("")
        } else {
            t.get(..2).unwrap_or("")
        };
        if runs.contains(&name) {
            found.exec(&format!("{sub} {name}"));
        }
    }
    if !DIFF_FAMILY.contains(&sub) {
        return;
    }
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        let t = w.text();
        if t == "--" && !w.is_dynamic() {
            break;
        }
        let dir = sub == "format-patch";
        let takes_next = t == "--output" || (dir && (t == "-o" || t == "--output-directory"));
        if takes_next {
            if let Some(v) = args.get(i) {
                i += 1;
                found.file(v, Access::Edit, false, Via::Option);
            }
            continue;
        }
        let inline = t
            .strip_prefix("--output=")
            .or_else(|| dir.then(|| t.strip_prefix("--output-directory=")).flatten())
            .or_else(|| {
                dir.then(|| t.strip_prefix("-o").filter(|v| !v.is_empty()))
                    .flatten()
            });
        if let Some(v) = inline {
            found.file_text(v, w.kind, Access::Edit, Via::Option);
        }
    }
}

fn network(n: &programs::NetworkProgram, args: &[Word], found: &mut Found) {
    let mut operands: Vec<&Word> = Vec::new();
    let mut i = 0;
    let mut end = false;
    let curl = n.names.contains(&"curl");
    let ssh = n.names.contains(&"ssh") || n.names.contains(&"scp");
    let wget = n.names.contains(&"wget");
    // `curl -O` saves each URL under its own name; `wget` does unless
    // told where (`-O F`, `-P DIR`, recorded as edits) or `--spider`.
    let mut remote_name = false;
    let mut wget_saves = wget;
    while let Some(w) = args.get(i) {
        i += 1;
        let t = w.text();
        if !end && t == "--" {
            end = true;
            continue;
        }
        if end || !is_option(w) {
            operands.push(w);
            continue;
        }
        let (name, inline) = match t.split_once('=') {
            Some((a, b)) if t.starts_with("--") => (a, Some(b)),
            _ => (t, None),
        };
        let known = |l: &[&str]| l.contains(&name);
        let takes = known(n.value) || known(n.host_options) || known(n.reads) || known(n.writes);
        // A short option with its value attached (`-ofile`).
        let split = t.get(..2).zip(t.get(2..));
        let (name, inline) =
            if let (false, false, Some((o, rest))) = (takes, t.starts_with("--"), split) {
                if !rest.is_empty()
                    && [n.value, n.host_options, n.reads, n.writes]
                        .iter()
                        .any(|l| l.contains(&o))
                {
                    (o, Some(rest))
                } else {
                    (name, inline)
                }
            } else {
                (name, inline)
            };
        let known = |l: &[&str]| l.contains(&name);
        if ssh && t.starts_with("-o") {
            let value = match t.get(2..) {
                Some(v) if !v.is_empty() => Some(v),
                _ => args.get(i).map(|w| w.text()),
            };
            if let Some(key) = value.and_then(ssh_exec_option) {
                found.exec(&format!("-o {key}"));
            }
        }
        if curl && (is_curl_remote_name(n, t)) {
            remote_name = true;
        }
        if wget
            && matches!(
                name,
                "-O" | "--output-document" | "-P" | "--directory-prefix" | "--spider"
            )
        {
            wget_saves = false;
        }
        if !(known(n.value) || known(n.host_options) || known(n.reads) || known(n.writes)) {
            continue;
        }
        let v = match inline {
            Some(v) => Some(Word {
                span: 0..0,
                text: super::Text::Owned(v.into()),
                kind: w.kind,
            }),
            None => {
                i += 1;
                args.get(i - 1).cloned()
            }
        };
        let Some(v) = v else { continue };
        if known(n.host_options) {
            host(&v, found, true);
        } else if known(n.reads) {
            found.file(&v, Access::Read, false, Via::Option);
        } else if known(n.writes) {
            found.file(&v, Access::Edit, false, Via::Option);
        } else if n.names.contains(&"curl")
            && (name.starts_with("-d")
                || name.starts_with("--data")
                || name == "-F"
                || name == "--form"
                || name == "--json")
        {
            // `-d @file`, `-F name=@file`, `-F name=<file` read a file.
            let t = v.text();
            let file = t
                .strip_prefix('@')
                .or_else(|| t.split_once("=@").map(|(_, f)| f))
                .or_else(|| t.split_once("=<").map(|(_, f)| f));
            if let Some(file) = file {
                let file = file.split(';').next().unwrap_or(file);
                found.file_text(file, v.kind, Access::Read, Via::Option);
            }
        }
    }
    if remote_name || wget_saves {
        for w in &operands {
            download(w, found);
        }
    }
    match n.hosts {
        HostOperands::Urls => {
            for w in operands {
                host(w, found, true);
            }
        }
        HostOperands::FirstHost => {
            if let Some(w) = operands.first() {
                host(w, found, true);
            }
        }
        HostOperands::HostPaths => {
            for w in operands {
                if w.is_dynamic() {
                    if w.text().contains(':') {
                        found.hosts.push(Host {
                            name: w.text().to_string(),
                            dynamic: true,
                        });
                    }
                } else if let Some(h) = remote_host(w.text()) {
                    found.hosts.push(Host {
                        name: h,
                        dynamic: false,
                    });
                }
            }
        }
        HostOperands::SubcommandUrls(subs) => {
            // The subcommand is the first operand; URLs come after it.
            let mut ops = operands.into_iter();
            let Some(sub) = ops.next() else { return };
            if !subs.contains(&sub.text()) {
                return;
            }
            for w in ops {
                if w.is_dynamic() {
                    continue;
                }
                // `name@git+URL` (pip), `git+URL`, a URL, `user@host:path`.
                let t = w.text();
                let t = t
                    .split_once("@git+")
                    .map(|(_, r)| r)
                    .or_else(|| t.strip_prefix("git+"))
                    .unwrap_or(t);
                let h = if t.contains("://") {
                    url_host(t)
                } else if t.contains('@') && t.contains(':') {
                    remote_host(t)
                } else {
                    None
                };
                if let Some(h) = h {
                    found.hosts.push(Host {
                        name: h,
                        dynamic: false,
                    });
                }
            }
        }
    }
}

/// Records the host a word names (a URL, `user@host`, or a bare host).
fn host(w: &Word, found: &mut Found, bare: bool) {
    if w.is_dynamic() {
        found.hosts.push(Host {
            name: w.text().to_string(),
            dynamic: true,
        });
        return;
    }
    let t = w.text();
    let h = if t.contains("://") {
        url_host(t)
    } else if bare {
        let t = t.rsplit_once('@').map(|(_, h)| h).unwrap_or(t);
        let end = t.find(['/', '?', '#']).unwrap_or(t.len());
        let h = &t[..end];
        let h = if h.starts_with('[') {
            h.find(']').map(|e| &h[..=e]).unwrap_or(h)
        } else {
            h.split(':').next().unwrap_or(h)
        };
        valid_host(h).then(|| h.to_ascii_lowercase())
    } else {
        None
    };
    if let Some(h) = h {
        found.hosts.push(Host {
            name: h,
            dynamic: false,
        });
    }
}

fn valid_host(h: &str) -> bool {
    !h.is_empty()
        && (h.starts_with('[')
            || h.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_')))
}

/// The host of a URL (`https://…`, `git+ssh://…`).
pub(crate) fn url_host(t: &str) -> Option<String> {
    let u = url::Url::parse(t).ok()?;
    let h = u.host_str()?;
    Some(h.to_ascii_lowercase())
}

/// The host of `[user@]host:path` (scp-like) or `rsync://`, `host::module`.
pub(crate) fn remote_host(t: &str) -> Option<String> {
    if t.contains("://") {
        return url_host(t);
    }
    let (before, _) = t.split_once(':')?;
    if before.contains('/') || before.is_empty() {
        return None;
    }
    let h = before.rsplit_once('@').map(|(_, h)| h).unwrap_or(before);
    valid_host(h).then(|| h.to_ascii_lowercase())
}

/// The working directory a command runs in, as far as `cd` tells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Dir {
    /// Known: relative to a base (shared: every later command holds it).
    Known(std::rc::Rc<PathRef>),
    /// Changed to a directory that is not known.
    Unknown,
}

impl Dir {
    /// The start directory (one per thread, shared: no allocation per
    /// reading).
    pub(crate) fn start() -> Dir {
        fn new() -> Dir {
            Dir::known(PathRef {
                base: Base::Cwd,
                path: String::new(),
            })
        }
        thread_local! {
            static START: Dir = new();
        }
        START.try_with(Dir::clone).unwrap_or_else(|_| new())
    }

    /// A known directory; one longer than `PATH_MAX` (4096 bytes) cannot be
    /// entered, so it is not known.
    fn known(p: PathRef) -> Dir {
        if p.path.len() > 4096 {
            Dir::Unknown
        } else {
            Dir::Known(std::rc::Rc::new(p))
        }
    }

    /// The directory after `cd target`.
    pub(crate) fn cd(&self, target: Option<&Word>) -> Dir {
        let Some(t) = target else {
            return Dir::known(PathRef {
                base: Base::Home,
                path: String::new(),
            });
        };
        if t.kind == WordKind::Glob || t.text() == "-" {
            return Dir::Unknown;
        }
        if t.kind == WordKind::Dynamic {
            return match expand(t.text()) {
                Some(p) if p.base != Base::Cwd || self == &Dir::start() => Dir::known(p),
                Some(p) => self.join(&p.path).map_or(Dir::Unknown, Dir::known),
                None => Dir::Unknown,
            };
        }
        self.join(t.text()).map_or(Dir::Unknown, Dir::known)
    }

    /// A path resolved in this directory; `None` when the directory is not
    /// known and the path is relative.
    pub(crate) fn join(&self, path: &str) -> Option<PathRef> {
        if let Some(abs) = path.strip_prefix('/') {
            return Some(PathRef {
                base: Base::Root,
                path: normal(abs),
            });
        }
        let Dir::Known(d) = self else { return None };
        let path = if d.path.is_empty() {
            normal(path)
        } else {
            normal(&format!("{}/{}", d.path, path))
        };
        Some(PathRef { base: d.base, path })
    }
}

/// Drops `.` segments and doubled slashes (`..` is kept: the evaluation
/// resolves it against the real base).
fn normal(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    for seg in p.split('/') {
        if seg.is_empty() || seg == "." {
            continue;
        }
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(seg);
    }
    if p.ends_with('/') && !out.is_empty() {
        out.push('/');
    }
    out
}

/// The deny/ask expansion of a dynamic word's source that starts with
/// `$HOME`, `${HOME}`, `~` or `$PWD` (double quotes around them allowed)
/// and has a literal rest.
pub(crate) fn expand(src: &str) -> Option<PathRef> {
    let unq: String;
    let s = if src.contains('"') {
        unq = src.replace('"', "");
        unq.as_str()
    } else {
        src
    };
    let (base, rest) = if let Some(r) = s
        .strip_prefix("${HOME}")
        .or_else(|| s.strip_prefix("$HOME"))
    {
        (Base::Home, r)
    } else if let Some(r) = s.strip_prefix("${PWD}").or_else(|| s.strip_prefix("$PWD")) {
        (Base::Cwd, r)
    } else if let Some(r) = s.strip_prefix('~') {
        (Base::Home, r)
    } else {
        return None;
    };
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    if rest.contains(['$', '`', '\\', '\'']) {
        return None;
    }
    Some(PathRef {
        base,
        path: normal(rest.trim_start_matches('/')),
    })
}
