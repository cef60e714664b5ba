//! The reader proper: one recursive-descent pass over the bytes of a
//! script. Recursion happens only where the shell nests (substitutions,
//! subshells, groups, compound commands, scripts) and is cut at
//! `MAX_DEPTH`. On any syntax problem the reader records why, stops
//! (`abort`) and returns what it read so far.

use super::{
    Assignment, Command, Connector, Incomplete, MAX_BRACE_WORDS, MAX_COMMAND_BRACE_WORDS,
    MAX_DEPTH, MAX_INPUT, MAX_MADE_TEXT, MAX_WORK, Origin, Reading, Reason, Redirection,
    RedirectionOp, Script, ScriptKind, Word, WordKind, brace,
};
use std::cell::Cell;
use std::ops::Range;
use std::sync::Arc;

const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"];

// What ends a list.
const S_EOF: u16 = 1;
const S_RPAREN: u16 = 1 << 1;
const S_BRACE: u16 = 1 << 2;
const S_THEN: u16 = 1 << 3;
const S_ELSE: u16 = 1 << 4; // else, elif, fi
const S_DO: u16 = 1 << 5;
const S_DONE: u16 = 1 << 6;
const S_CASE_END: u16 = 1 << 7; // ;; ;& ;;& esac

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kw {
    If,
    Then,
    Elif,
    Else,
    Fi,
    While,
    Until,
    Do,
    Done,
    For,
    Select,
    Case,
    Esac,
    In,
    LBrace,
    RBrace,
    Bang,
    Function,
    Coproc,
    DBracket,
}

const fn is_meta(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')'
    )
}

/// Bytes `lex_word` stops at: metacharacters, quotes, expansions, glob and
/// brace characters. Every other byte is plain and is skipped in runs.
static WORD_STOP: [bool; 256] = byte_set(b" \t\n;&|<>()\\'\"$`*?[]{~");

/// How [`Parser::plain_word`] takes each byte: a plain byte, `=`, `[`, `]`,
/// a metacharacter (the end of the word), or one it leaves to `lex_word`.
static PLAIN: [u8; 256] = {
    let mut t = [P_PLAIN; 256];
    let mut i = 0;
    while i < 256 {
        if WORD_STOP[i] {
            t[i] = if is_meta(i as u8) { P_END } else { P_OTHER };
        }
        i += 1;
    }
    t[b'[' as usize] = P_OPEN;
    t[b']' as usize] = P_CLOSE;
    t[b'=' as usize] = P_EQ;
    t
};
/// The bytes [`Parser::plain_word`] takes in a run: plain bytes but `=`.
static PLAIN_RUN: [bool; 256] = {
    let mut t = WORD_STOP;
    t[b'=' as usize] = true;
    t
};
const P_PLAIN: u8 = 0;
const P_EQ: u8 = 5;
const P_OPEN: u8 = 1;
const P_CLOSE: u8 = 2;
const P_END: u8 = 3;
const P_OTHER: u8 = 4;

/// Bytes the inside of double quotes stops at.
static DQ_STOP: [bool; 256] = byte_set(b"\"\\$`");

/// Units of work (see [`MAX_WORK`]): a simple command that is not one
/// plain word (one that is counts 1, 2 when it names a shell) …
const WORK_COMMAND: u32 = 4;
/// … a redirection, a here-document's body, a word that is not plain …
const WORK_PART: u32 = 2;
/// … an assignment …
const WORK_ASSIGNMENT: u32 = 3;
/// … a word holding a brace group …
const WORK_BRACE_WORD: u32 = 4;
/// … a pipe between two commands …
const WORK_PIPE: u32 = 1;
/// … a compound command (a subshell, group, `if`, loop, `case`), a
/// function definition (beside its body) …
const WORK_COMPOUND: u32 = 3;
/// … a command or process substitution …
const WORK_SUBSTITUTION: u32 = 2;
/// … a script a shell reads (beside its own commands). A reason the
/// reading is incomplete counts 1.
const WORK_SCRIPT: u32 = 6;

pub(super) const fn byte_set(bytes: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        t[bytes[i] as usize] = true;
        i += 1;
    }
    t
}

/// How many bytes from the start of `s` are not in `set`.
pub(super) fn run_outside(s: &[u8], set: &[bool; 256]) -> usize {
    s.iter().position(|&b| set[b as usize]).unwrap_or(s.len())
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_name(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// A here-document waiting for its body (read at the next newline).
struct PendingHereDoc {
    /// The command whose redirection it is, or `None` for a compound
    /// command's.
    owner: Option<usize>,
    /// Where substitutions of its body go (before its owner).
    insert_at: usize,
    /// Index of the redirection: in its simple command's while that is
    /// read, then in `Reading::redirections` once the owner is known.
    redir: usize,
    delim: Delim,
    strip_tabs: bool,
    quoted: bool,
    script: usize,
    depth: u8,
    /// The shell environment its owner runs in.
    env: u32,
}

/// A here-document's delimiter: a span of its script when that is what
/// the line ending the body must hold (the source of a word quote removal
/// left as it was, or of a dynamic word), else the decoded bytes.
enum Delim {
    Source(Range<usize>),
    Decoded(Box<[u8]>),
}

/// A shell whose standard input is a pipe from another command.
struct PipeFeed {
    producer: Option<usize>,
    shell: usize,
}

struct State {
    reading: Reading,
    heredocs: Vec<PendingHereDoc>,
    /// Here-documents whose bodies are being read, last first.
    active: Vec<PendingHereDoc>,
    feeds: Vec<PipeFeed>,
    /// Words of simple commands being read that nested commands' words
    /// came after (a stack; see `Pending`).
    words: Vec<Word>,
    /// Scratch for decoding a word.
    decoded: Vec<u8>,
    /// Scratch for the inside of double quotes.
    dq_scratch: Vec<u8>,
    /// A vector for a simple command's redirections, kept empty from
    /// command to command (a command being read holds it; a command read
    /// meanwhile makes its own).
    redirs: Vec<Redirection>,
    /// How many redirections the input holds at most (see
    /// [`ops_before`]), counted when first needed.
    redir_bound: Option<usize>,
    /// The most commands or words the input can hold (see [`room`]).
    bound: usize,
    /// Shells read so far that read their standard input and were given no
    /// literal here-string of their own: what [`resolve_shells`] looks for
    /// among a script's commands (none: it looks at none).
    deferred: usize,
    /// How many function bodies are being read (scripts `sh -c` runs in
    /// them included): a shell there that reads its standard input reads
    /// whatever each call gives the function.
    functions: u32,
    /// Whether an `alias` command with arguments was read (see
    /// [`expanded_alias`]).
    aliases: bool,
    /// The text made so far (nested scripts, brace expansion), against
    /// [`MAX_MADE_TEXT`].
    made: usize,
    /// The work done so far, against [`MAX_WORK`] (see [`State::charge`]).
    work: u32,
    /// Whether reading stopped at [`MAX_WORK`].
    over_work: bool,
    abort: bool,
}

impl State {
    /// A new shell environment forked from `parent` (a subshell, a
    /// substitution, a pipeline element, a background list, a script).
    fn new_env(&mut self, parent: u32) -> u32 {
        // The first environment, the command line's own, is implied until
        // another one is made (most readings have only it: no allocation).
        if self.reading.envs.is_empty() {
            self.reading.envs.push(0);
        }
        let id = self.reading.envs.len() as u32;
        self.reading.envs.push(parent);
        id
    }

    /// How many environments there are (the implied first one counted).
    fn env_count(&self) -> usize {
        self.reading.envs.len().max(1)
    }

    /// Moves the commands `cmds..` that run in `env` into a new
    /// environment forked from it, and the environments created since
    /// `envs` (as children of `env`) with them: `a | b` and `a &` run in
    /// subshells, which is known only once the `|` or `&` is read.
    fn fork_since(&mut self, env: u32, cmds: usize, envs: usize) {
        let new = self.new_env(env);
        let end = new as usize;
        for p in self.reading.envs.get_mut(envs..end).unwrap_or(&mut []) {
            if *p == env {
                *p = new;
            }
        }
        for c in self.reading.commands.get_mut(cmds..).unwrap_or(&mut []) {
            if c.env == env {
                c.env = new;
            }
        }
    }
}

/// The words of a simple command being read: `n` words from `start`, in the
/// reading's word vector while nothing else was put after them (the usual
/// case: no copy), else on the stack. When a nested command (a
/// substitution in a word) has put its words after them, a command of at
/// most [`RECOPY`] words copies them to the end again and goes on there
/// (`echo $(date) y y …` adds every later word in place); a longer one
/// moves to the stack, at most once. Each word a command adds costs at most
/// [`RECOPY`] copies, so the work stays linear in the words; the words left
/// behind belong to no command.
struct Pending {
    stacked: bool,
    start: usize,
    n: usize,
}

/// The most pending words copied to the end of the reading's word vector
/// again after a nested command's (see [`Pending`]).
const RECOPY: usize = 4;

impl State {
    fn pending_vec(&self, p: &Pending) -> &Vec<Word> {
        if p.stacked {
            &self.words
        } else {
            &self.reading.words
        }
    }

    /// Word `i` of a pending command.
    fn word(&self, p: &Pending, i: usize) -> Option<&Word> {
        if i >= p.n {
            return None;
        }
        self.pending_vec(p).get(p.start + i)
    }

    fn word_mut(&mut self, p: &Pending, i: usize) -> Option<&mut Word> {
        if i >= p.n {
            return None;
        }
        let v = if p.stacked {
            &mut self.words
        } else {
            &mut self.reading.words
        };
        v.get_mut(p.start + i)
    }

    /// True when the pending words are the last of the reading's vector.
    fn at_end(&self, p: &Pending) -> bool {
        !p.stacked && p.start + p.n == self.reading.words.len()
    }

    /// Moves pending words that are no longer last to the end of the
    /// reading's vector again (a few), or onto the stack.
    #[inline(always)]
    fn move_to_stack(&mut self, p: &mut Pending) {
        if !p.stacked && !self.at_end(p) {
            self.move_pending(p);
        }
    }

    #[inline(never)]
    fn move_pending(&mut self, p: &mut Pending) {
        if p.n <= RECOPY {
            let start = self.reading.words.len();
            let end = (p.start + p.n).min(start);
            room(&mut self.reading.words, self.bound);
            self.reading.words.extend_from_within(p.start.min(end)..end);
            p.start = start;
            return;
        }
        let start = self.words.len();
        let ours = self
            .reading
            .words
            .get(p.start..p.start + p.n)
            .unwrap_or(&[]);
        self.words.extend_from_slice(ours);
        *p = Pending {
            stacked: true,
            start,
            n: p.n,
        };
    }

    /// Adds a word to a pending command.
    #[inline(always)]
    fn push_word(&mut self, p: &mut Pending, w: Word) {
        self.move_to_stack(p);
        if p.stacked {
            room(&mut self.words, self.bound);
            self.words.push(w);
        } else {
            room(&mut self.reading.words, self.bound);
            self.reading.words.push(w);
        }
        p.n += 1;
    }

    /// Forgets the pending words (a function's name).
    fn drop_words(&mut self, p: &mut Pending) {
        if p.stacked {
            self.words.truncate(p.start);
        } else if self.at_end(p) {
            self.reading.words.truncate(p.start);
        }
        p.n = 0;
    }

    /// The pending words, taken out.
    fn take_words(&mut self, p: Pending) -> Vec<Word> {
        if p.stacked {
            self.words.split_off(p.start)
        } else if self.at_end(&p) {
            self.reading.words.split_off(p.start)
        } else {
            self.pending_vec(&p)
                .get(p.start..p.start + p.n)
                .unwrap_or(&[])
                .to_vec()
        }
    }

    /// The range of the reading's word vector the pending words end in.
    fn finish_words(&mut self, p: Pending) -> (usize, usize) {
        if self.at_end(&p) {
            return (p.start, p.start + p.n);
        }
        let from = self.reading.words.len();
        room(&mut self.reading.words, self.bound);
        if p.stacked {
            // Straight from the stack: one copy, no vector in between.
            let start = p.start.min(self.words.len());
            self.reading.words.extend(self.words.drain(start..));
        } else {
            let words = self.take_words(p);
            self.reading.words.extend(words);
        }
        (from, self.reading.words.len())
    }
}

impl State {
    /// Moves a simple command's redirections to the end of the reading's
    /// (emptying `redirections`); the range they take there (`0..0` when
    /// there are none).
    #[inline(never)]
    fn take_redirections(&mut self, redirections: &mut Vec<Redirection>) -> Range<u32> {
        let n = redirections.len();
        if n == 0 {
            return 0..0;
        }
        if self.reading.redirections.is_empty() {
            // The first ones become the reading's vector (no copy).
            std::mem::swap(&mut self.reading.redirections, redirections);
            return 0..n as u32;
        }
        let all = &self.reading.redirections;
        if all.capacity() - all.len() < n {
            // A long script's redirections are reserved at once, up to
            // what its input can hold, rather than doubled step by step.
            let bound = if all.len() < 16 {
                0
            } else {
                let input = self
                    .reading
                    .scripts
                    .first()
                    .map_or(&b""[..], |s| s.text.as_bytes());
                *self
                    .redir_bound
                    .get_or_insert_with(|| ops_before::<TO_END>(input))
            };
            let all = &mut self.reading.redirections;
            all.reserve(n.max(bound.saturating_sub(all.len())));
        }
        let all = &mut self.reading.redirections;
        let start = all.len() as u32;
        all.append(redirections);
        start..all.len() as u32
    }

    /// What is left of the budget for made text.
    fn made_left(&self) -> usize {
        MAX_MADE_TEXT.saturating_sub(self.made)
    }

    /// Takes `n` bytes of made text from the budget; false (and nothing
    /// taken) when fewer are left.
    fn spend(&mut self, n: usize) -> bool {
        if n > self.made_left() {
            return false;
        }
        self.made += n;
        true
    }

    fn fail(&mut self, reason: Reason, script: usize, span: Range<usize>) {
        self.work += 1;
        self.reading.incomplete.push(Incomplete {
            reason,
            script,
            span,
        });
    }

    fn stop(&mut self, reason: Reason, script: usize, span: Range<usize>) {
        self.fail(reason, script, span);
        self.abort = true;
    }

    /// Counts `n` units of work (see [`MAX_WORK`]); past the limit the
    /// reading stops there.
    #[inline(always)]
    fn charge(&mut self, n: u32, script: usize, span: Range<usize>) {
        self.work += n;
        if self.work > MAX_WORK {
            self.over_work(script, span);
        }
    }

    #[cold]
    #[inline(never)]
    fn over_work(&mut self, script: usize, span: Range<usize>) {
        if !self.abort {
            self.stop(Reason::TooMuchWork, script, span);
            self.over_work = true;
        }
    }

    /// Renumbers the commands that pending here-documents and feeds refer
    /// to, after the commands moved (`map`: old index to new).
    fn renumber(&mut self, map: impl Fn(usize) -> usize) {
        for h in self.heredocs.iter_mut().chain(self.active.iter_mut()) {
            h.owner = h.owner.map(&map);
            h.insert_at = map(h.insert_at);
        }
        for f in &mut self.feeds {
            f.producer = f.producer.map(&map);
            f.shell = map(f.shell);
        }
    }

    /// Moves the last `n` commands to `pos`, keeping every index that
    /// refers to a command right.
    fn rotate_into(&mut self, pos: usize, n: usize) {
        let len = self.reading.commands.len();
        if n == 0 || pos >= len - n {
            return;
        }
        self.reading.commands[pos..].rotate_right(n);
        let map = |i: usize| {
            if i < pos {
                i
            } else if i < len - n {
                i + n
            } else {
                i - (len - n) + pos
            }
        };
        self.renumber(map);
    }

    /// Moves chunks of commands read after `base` (each a range at or
    /// past `base`, in the order they were read) to stand before the
    /// command at `at` each (at the end when `at` is `base`), chunks before
    /// the same command in the order they were read; keeps every index that
    /// refers to a command right. One pass over the commands from the
    /// smallest `at` on, however many chunks: what moving each chunk into
    /// place as it was read ([`State::rotate_into`]) gives, without the
    /// quadratic cost of many chunks.
    fn place_chunks(&mut self, base: usize, chunks: &[(usize, Range<usize>)]) {
        let len = self.reading.commands.len();
        let Some(lo) = chunks.iter().map(|c| c.0.min(base)).min() else {
            return;
        };
        if lo >= len {
            return;
        }
        // Chunks by the command they go before, in reading order.
        let mut by_at: Vec<usize> = (0..chunks.len()).collect();
        by_at.sort_by_key(|&k| chunks[k].0.min(base));
        let mut order: Vec<usize> = Vec::with_capacity(len - lo);
        let mut placed = vec![false; len - lo];
        let mut next = by_at.iter().peekable();
        let mut take = |order: &mut Vec<usize>, r: &Range<usize>| {
            for i in r.start.max(base)..r.end.min(len) {
                if let Some(p) = placed.get_mut(i - lo)
                    && !*p
                {
                    *p = true;
                    order.push(i);
                }
            }
        };
        for i in lo..base {
            while let Some(&&k) = next.peek() {
                if chunks[k].0.min(base) > i {
                    break;
                }
                take(&mut order, &chunks[k].1);
                next.next();
            }
            order.push(i);
        }
        for &k in next {
            take(&mut order, &chunks[k].1);
        }
        // Commands read after `base` in no chunk stay last, in order.
        for i in base..len {
            if !placed[i - lo] {
                order.push(i);
            }
        }
        if order.iter().enumerate().all(|(k, &i)| i == lo + k) {
            return;
        }
        if !(self.heredocs.is_empty() && self.active.is_empty() && self.feeds.is_empty()) {
            let mut new_of = vec![0usize; len - lo];
            for (k, &i) in order.iter().enumerate() {
                new_of[i - lo] = lo + k;
            }
            let map = |i: usize| {
                if i < lo || i >= len {
                    i
                } else {
                    new_of[i - lo]
                }
            };
            self.renumber(map);
        }
        // In place, cycle by cycle: the command at `lo + k` is to be the
        // one now at `order[k]`; a place done is marked `order[k] == lo + k`
        // (each step marks one, so the loops end).
        let tail = self.reading.commands.get_mut(lo..).unwrap_or(&mut []);
        for start in 0..order.len() {
            let mut k = start;
            while let Some(slot) = order.get_mut(k) {
                let from = slot.wrapping_sub(lo);
                *slot = lo + k;
                if from == start || from == k || from >= tail.len() {
                    break;
                }
                tail.swap(k, from);
                k = from;
            }
        }
    }
}

/// Moves `items` to the end of `to`; the range they take there (`0..0`
/// when there are none). The first items become `to` itself (no copy).
fn append_range<T>(to: &mut Vec<T>, items: Vec<T>) -> Range<u32> {
    if items.is_empty() {
        return 0..0;
    }
    if to.is_empty() {
        *to = items;
        return 0..to.len() as u32;
    }
    let from = to.len() as u32;
    to.extend(items);
    from..to.len() as u32
}

/// Makes room before adding to a full vector: a command or a word takes
/// two bytes at least (itself and a separator), so once a vector of a
/// long script is full, the rest of that bound is reserved at once rather
/// than doubling step by step (each step copies the vector and touches
/// fresh memory). A script with few commands never asks for more than its
/// first, small reservation.
fn room<T>(v: &mut Vec<T>, bound: usize) {
    if v.len() == v.capacity() && bound > v.len() {
        v.reserve_exact(bound - v.len());
    }
}

/// Where [`ops_before`] stops counting: nowhere, at the end of a line, or
/// at the end of a command (`;` `&` `|` `)` `` ` `` or a newline).
const TO_END: u8 = 0;
const TO_LINE_END: u8 = 1;
const TO_COMMAND_END: u8 = 2;

/// About how many redirection operators `text` holds (before the first byte
/// that ends a line or a command, as `STOP` says): the `<` and `>` that
/// follow no other (`2>&1`, `<<<`, `&>>` are one each), counted in blocks
/// of bytes (the block an end is in counted whole; comparisons only, which
/// compilers turn into vector code). With [`TO_END`], a bound on the
/// redirections `text` holds; else room to reserve for what follows.
#[inline(never)]
fn ops_before<const STOP: u8>(text: &[u8]) -> usize {
    let op = |b: u8| u8::from((b == b'<') | (b == b'>'));
    let mut n = 0;
    let mut prev = 0;
    for block in text.chunks(255) {
        let ops = block.iter().fold(0u8, |k, &b| k.wrapping_add(op(b)));
        let pairs = block
            .iter()
            .zip(block.get(1..).unwrap_or(&[]))
            .fold(0u8, |k, (&a, &b)| k.wrapping_add(op(a) & op(b)));
        let first = block.first().map_or(0, |&b| op(b) & prev);
        prev = block.last().map_or(0, |&b| op(b));
        n += usize::from(ops) - usize::from(pairs) - usize::from(first);
        if STOP == TO_END {
            continue;
        }
        let ends = block.iter().fold(0u8, |e, &b| {
            let end = (b == b'\n')
                | ((STOP == TO_COMMAND_END)
                    & ((b == b';') | (b == b'&') | (b == b'|') | (b == b')') | (b == b'`')));
            e | u8::from(end)
        });
        if ends != 0 {
            break;
        }
    }
    n
}

/// Makes room for one more redirection in `v`, the redirections of one
/// command read so far, `rest` the text after the one to add: at the
/// fifth and whenever full after, for it and as many more as `rest` seems
/// to hold (at least as many as there are), not doubling step by step
/// (each step copies the redirections and touches fresh memory).
#[inline(always)]
fn redirection_room(v: &mut Vec<Redirection>, rest: &[u8]) {
    let n = v.len();
    if n == v.capacity() && n >= 4 {
        v.reserve_exact((ops_before::<TO_COMMAND_END>(rest) + 1).max(n));
    }
}

/// Scripts longer than this reserve room for the commands and words
/// [`estimate`] finds (shorter ones for a share of their length).
const LONG: usize = 4096;

/// How many commands, and how many words, a script's own text makes at
/// most but for nested scripts and brace expansion (which [`room`] makes
/// room for): a word after the first follows a blank or one of
/// ``; & | ( ) ` < >``; a command after the first follows one of
/// ``; & | ( ` `` or a newline. (Counted in blocks of bytes with
/// comparisons only, which compilers turn into vector code.)
fn estimate(text: &[u8]) -> usize {
    let mut n = 1;
    for block in text.chunks(255) {
        let mut k: u8 = 0;
        for &b in block {
            let sep = (b == b' ')
                | (b == b'\t')
                | (b == b'\n')
                | (b == b';')
                | (b == b'&')
                | (b == b'|')
                | (b == b'(')
                | (b == b')')
                | (b == b'`')
                | (b == b'<')
                | (b == b'>');
            k = k.wrapping_add(u8::from(sep));
        }
        n += usize::from(k);
    }
    n
}

pub(super) fn read(command: &str) -> Reading {
    let mut text = command;
    let mut too_long = false;
    if text.len() > MAX_INPUT {
        let mut cut = MAX_INPUT;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text = &text[..cut];
        too_long = true;
    }
    let shared: Arc<str> = Arc::from(text);
    let bound = text.len() / 2 + 4;
    let (commands, words) = if text.len() > LONG {
        let n = estimate(text.as_bytes()).min(bound);
        (n, n)
    } else {
        (text.len() / 8, text.len() / 4)
    };
    let mut st = State {
        reading: Reading {
            commands: Vec::with_capacity(commands.max(2)),
            scripts: vec![Script {
                text: Arc::clone(&shared),
                kind: ScriptKind::Input,
                parent: None,
                span: 0..0,
            }],
            words: Vec::with_capacity(words.max(4)),
            assignments: Vec::new(),
            redirections: Vec::new(),
            incomplete: Vec::new(),
            envs: Vec::new(),
        },
        heredocs: Vec::new(),
        active: Vec::new(),
        feeds: Vec::new(),
        words: Vec::new(),
        decoded: Vec::new(),
        dq_scratch: Vec::new(),
        redirs: Vec::new(),
        redir_bound: None,
        bound,
        deferred: 0,
        functions: 0,
        aliases: false,
        made: 0,
        work: 0,
        over_work: false,
        abort: false,
    };
    if too_long {
        st.fail(Reason::TooLong, 0, text.len()..text.len());
    }
    read_script(&mut st, &shared, 0, 0, Origin::Top, false, 0);
    if st.deferred > 0 {
        if let Some(c) = fed_through_runner(&st.reading) {
            let (script, span) = (c.script(), c.span());
            st.fail(Reason::DynamicScript, script, span);
        }
        if let Some(c) = stdin_exec(&st.reading) {
            let (script, span) = (c.script(), c.span());
            st.fail(Reason::DynamicScript, script, span);
        }
    }
    if st.aliases
        && let Some((script, span)) = expanded_alias(&st.reading)
    {
        st.fail(Reason::ValueRunsCode, script, span);
    }
    // A value it sets that could run as code (checked here, not by the
    // caller: the reading is returned once, not moved again).
    if let Some((script, span)) = super::evaluating::find(&st.reading.scripts) {
        st.fail(Reason::ValueRunsCode, script, span);
    }
    st.reading
}

/// Reads one script (the input or a nested one) and resolves the shells
/// that read their standard input.
fn read_script(
    st: &mut State,
    text: &Arc<str>,
    script: usize,
    depth: u8,
    origin: Origin,
    cond: bool,
    env: u32,
) {
    let src = text.as_bytes();
    let feeds_before = st.feeds.len();
    let deferred_before = st.deferred;
    let first_cmd = st.reading.commands.len();
    let mut p = Parser {
        text,
        src,
        end: src.len(),
        pos: 0,
        script,
        depth,
        origin,
        cond,
        env,
        st,
        keyword_at: Cell::new(None),
        last_newline: Cell::new(None),
    };
    // (Only a nested script: one-word input is rare, and trying the lean
    // path first costs the input's reading more than it saves.)
    if script != 0 && p.lean_script() {
        return;
    }
    let stop = p.list(S_EOF, Connector::None);
    if !p.st.abort && stop != Some(S_EOF) {
        let at = p.pos;
        p.st.stop(Reason::Unexpected, script, at..at);
    }
    // Bodies of here-documents never reached: this script's pending
    // here-documents are the last ones queued (a nested script is read to
    // its end before its parent goes on).
    let mut unterminated = false;
    while p.st.heredocs.last().is_some_and(|h| h.script == script) {
        p.st.heredocs.pop();
        unterminated = true;
    }
    if unterminated && !p.st.abort {
        p.st.fail(Reason::Unterminated, script, src.len()..src.len());
    }
    if st.feeds.len() > feeds_before || st.deferred > deferred_before {
        resolve_shells(st, script, first_cmd, feeds_before, deferred_before);
    }
}

/// Shells in this script that read a here-document, a here-string or a pipe.
fn resolve_shells(
    st: &mut State,
    script: usize,
    first: usize,
    feeds_before: usize,
    deferred_before: usize,
) {
    let feeds: Vec<PipeFeed> = st.feeds.drain(feeds_before..).collect();
    let mut found: Vec<(usize, Option<usize>)> = Vec::new(); // (shell, producer)
    let mut piped: Vec<usize> = Vec::new();
    for f in &feeds {
        piped.push(f.shell);
        found.push((f.shell, f.producer.map(|p| p + 1)));
    }
    piped.sort_unstable();
    // (No shell counted since the script began: none to look for.)
    let scan = if st.deferred > deferred_before {
        first..st.reading.commands.len()
    } else {
        0..0
    };
    for i in scan {
        let c = &st.reading.commands[i];
        // (Most commands have no redirection: asked first, it is cheapest.)
        if c.redirections.is_empty()
            || c.script() != script
            || piped.binary_search(&i).is_ok()
            || !reads_stdin_script(st.reading.words(c))
        {
            continue;
        }
        // (A shell whose own here-string was read with it is passed over
        // below.)
        if matches!(
            stdin_of(c.redirections(&st.reading)),
            Stdin::Text(..) | Stdin::Unknown(_)
        ) {
            found.push((i, None));
        }
    }
    if found.is_empty() {
        return;
    }
    // Last first (the order scripts and reasons are recorded in); each
    // script's commands are read at the end and moved after their shell
    // once all are read.
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    let base = st.reading.commands.len();
    let mut chunks: Vec<(usize, Range<usize>)> = Vec::with_capacity(found.len());
    // Each shell found reads one script, in an environment of its own.
    st.reading.scripts.reserve(found.len());
    st.reading.envs.reserve(found.len() + 1);
    for (shell, producer) in found {
        if st.abort {
            break;
        }
        let Some(cmd) = st.reading.commands.get(shell) else {
            continue;
        };
        let (depth, cond, span, env) = (cmd.depth, cmd.conditional, cmd.span(), cmd.env);
        // A redirection of the shell's standard input wins over a pipe; a
        // here-string of its own was read with it.
        let redirections = cmd.redirections(&st.reading);
        if read_at_once(own_redirections(redirections)).is_some() {
            continue;
        }
        let input = match stdin_of(redirections) {
            Stdin::Text(kind, w, at) => Ok((kind, Arc::from(w.text()), at)),
            Stdin::Unknown(at) => Err(at),
            Stdin::File => continue,
            Stdin::Inherited => match producer.and_then(|p| p.checked_sub(1)) {
                Some(p) => piped_text(&st.reading.commands[p], &st.reading)
                    .map(|t| {
                        let at = st.reading.commands[p].span();
                        (ScriptKind::Piped, Arc::from(t), at)
                    })
                    .ok_or(st.reading.commands[p].span()),
                None => Err(span.clone()),
            },
        };
        match input {
            Ok((kind, text, at)) => {
                let n_before = st.reading.commands.len();
                nested_script(st, text, kind, script, at, (depth, cond, env));
                chunks.push((shell + 1, n_before..st.reading.commands.len()));
            }
            Err(at) => st.fail(Reason::DynamicScript, script, at),
        }
    }
    st.place_chunks(base, &chunks);
}

/// Reads `text` as a script that a shell runs; its commands are appended.
fn nested_script(
    st: &mut State,
    text: Arc<str>,
    kind: ScriptKind,
    parent: usize,
    span: Range<usize>,
    (depth, cond, env): (u8, bool, u32),
) {
    if depth >= MAX_DEPTH {
        st.stop(Reason::TooDeep, parent, span);
        return;
    }
    // The text is read again: it counts against the reading's budget.
    if !st.spend(text.len()) {
        st.fail(Reason::TooMuchText, parent, span);
        return;
    }
    st.charge(WORK_SCRIPT, parent, span.clone());
    if st.abort {
        return;
    }
    let idx = st.reading.scripts.len();
    st.reading.scripts.push(Script {
        text: Arc::clone(&text),
        kind,
        parent: Some(parent),
        span,
    });
    // A shell is a process of its own: what it changes stays in it.
    let env = st.new_env(env);
    read_script(st, &text, idx, depth + 1, Origin::Script, cond, env);
}

/// The shell options before the first operand: does it read `-c`'s script,
/// and which word is that script (or the first operand)?
fn shell_mode(words: &[Word]) -> (bool, Option<usize>) {
    let mut has_c = false;
    let mut i = 1;
    while let Some(w) = words.get(i) {
        let t = w.text().as_bytes();
        if w.is_dynamic() {
            return (has_c, Some(i));
        }
        if t == b"--" || t == b"-" {
            return (has_c, words.get(i + 1).map(|_| i + 1));
        }
        if t.starts_with(b"--") {
            if matches!(t, b"--rcfile" | b"--init-file") {
                i += 1;
            }
            i += 1;
            continue;
        }
        if t.len() > 1 && (t[0] == b'-' || t[0] == b'+') {
            let os = t[1..].iter().filter(|&&b| b == b'o' || b == b'O').count();
            if t[0] == b'-' && t.contains(&b'c') {
                has_c = true;
            }
            i += 1 + os;
            continue;
        }
        return (has_c, Some(i));
    }
    (has_c, None)
}

fn program_base(words: &[Word]) -> Option<&str> {
    let w = words.first()?;
    if w.is_dynamic() {
        return None;
    }
    let t = w.text();
    // (A byte scan: names are short, and `/` is ASCII.)
    Some(match t.bytes().rposition(|b| b == b'/') {
        Some(i) => t.get(i + 1..).unwrap_or(""),
        None => t,
    })
}

/// Is a program's base name a shell's?
fn is_shell_name(b: &str) -> bool {
    // Every shell's name ends in `h`: a cheap first test.
    b.ends_with('h') && (2..=4).contains(&b.len()) && SHELLS.contains(&b)
}

/// Files that are a process's standard input.
const STDIN_FILES: &[&str] = &["/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"];

/// A shell with neither `-c` nor a script operand (or with `-s`, or with
/// standard input as its script file) reads its script from standard
/// input; so do `source /dev/stdin`, and `at` and `batch` without `-f`
/// (the job they give `sh`).
fn reads_stdin_script(words: &[Word]) -> bool {
    program_base(words).is_some_and(|base| base_reads_stdin_script(base, words))
}

/// [`reads_stdin_script`] with the program's base name found.
fn base_reads_stdin_script(base: &str, words: &[Word]) -> bool {
    let stdin_file = |w: &Word| !w.is_dynamic() && STDIN_FILES.contains(&w.text());
    if base == "source" || base == "." {
        return words.get(1).is_some_and(stdin_file);
    }
    if base == "at" || base == "batch" {
        // The job's commands, which `sh` runs, come from standard input
        // unless `-f FILE` names them (or it only lists, removes or
        // shows jobs).
        return !words.get(1..).unwrap_or(&[]).iter().any(|w| {
            let t = w.text().as_bytes();
            !w.is_dynamic()
                && t.first() == Some(&b'-')
                && t.iter()
                    .any(|b| matches!(b, b'f' | b'l' | b'r' | b'c' | b'd'))
        });
    }
    if !is_shell_name(base) {
        return false;
    }
    if words.len() == 1 {
        // A shell alone: no `-c`, no operand.
        return true;
    }
    let (has_c, operand) = shell_mode(words);
    let dash_s = words.get(1..).unwrap_or(&[]).iter().any(|w| {
        let t = w.text().as_bytes();
        t.len() > 1 && t[0] == b'-' && t[1] != b'-' && t.contains(&b's')
    });
    let stdin_operand = operand.and_then(|i| words.get(i)).is_some_and(stdin_file);
    !has_c && (operand.is_none() || dash_s || stdin_operand)
}

/// A script file that is an open descriptor's text, not a file: a process
/// substitution (`bash <(echo …)`) or `/dev/fd/N` other than standard
/// input (`bash /dev/fd/3 3<<< …`). What it holds is not read here.
fn descriptor_file(w: &Word) -> bool {
    let t = w.text();
    if w.is_dynamic() {
        return t.starts_with("<(");
    }
    !STDIN_FILES.contains(&t) && (t.starts_with("/dev/fd/") || t.starts_with("/proc/self/fd/"))
}

/// What a command reads on its standard input, from its redirections.
pub(super) enum Stdin<'a> {
    /// What it inherits: a pipe, or the standard input of its shell.
    Inherited,
    /// A here-document's body or a here-string's word, literal: a script
    /// when a shell reads it. The span is the redirection's.
    Text(ScriptKind, &'a Word, Range<usize>),
    /// A file named literally, or no input (closed, opened for writing).
    File,
    /// Text nobody can read before it runs: a here-document or here-string
    /// with expansions, a file named at run time (`< "$F"`, `< <(cmd)`),
    /// another descriptor (`<&3`).
    Unknown(Range<usize>),
}

/// The standard input `redirections` (a command's, see
/// [`Command::redirections`]) give a command: the last redirection onto
/// descriptor 0 among its own, else among those of the innermost compound
/// command around it that has one, and so on outwards (bash applies the
/// outer ones first). `< /dev/stdin` and `<&0` change nothing.
pub(super) fn stdin_of(redirections: &[Redirection]) -> Stdin<'_> {
    let mut found: Option<&Redirection> = None;
    for r in redirections {
        if r.compound_first && found.is_some() {
            break;
        }
        if onto_stdin(r) {
            found = Some(r);
        }
    }
    let Some(r) = found else {
        return Stdin::Inherited;
    };
    let span = r.span.clone();
    match r.op {
        RedirectionOp::HereDoc | RedirectionOp::HereDocStrip => match &r.body {
            Some(w) if !w.is_dynamic() => Stdin::Text(ScriptKind::HereDocument, w, span),
            _ => Stdin::Unknown(span),
        },
        RedirectionOp::HereString if !r.target.is_dynamic() => {
            Stdin::Text(ScriptKind::HereString, &r.target, span)
        }
        RedirectionOp::DupIn | RedirectionOp::DupOut
            if r.target.is_dynamic() || r.target.text() != "-" =>
        {
            Stdin::Unknown(span)
        }
        _ if r.target.is_dynamic() => Stdin::Unknown(span),
        _ => Stdin::File,
    }
}

/// Does this command read, as a script, the standard input it inherits
/// (no redirection of its own or of the groups around it, no pipe into
/// it)?
fn reads_inherited_stdin(c: &Command, reading: &Reading) -> bool {
    !matches!(c.connector, Connector::Pipe | Connector::PipeAll)
        && reads_stdin_script(reading.words(c))
        && matches!(stdin_of(c.redirections(reading)), Stdin::Inherited)
}

/// A shell that reads its standard input with no redirection or pipe of
/// its own (see [`reads_inherited_stdin`]): at the top of a script it
/// reads what the script's reader was given.
pub(super) fn inherited_stdin_shell(reading: &Reading) -> Option<&Command> {
    reading
        .commands
        .iter()
        .find(|c| reads_inherited_stdin(c, reading))
}

/// A shell in a `sh -c` script (at any depth) that reads the standard
/// input it inherits while a shell running the script was given one
/// (`bash -c sh <<< 'rm -rf /'`, `echo 'rm -rf /' | bash -c sh`): a script
/// nobody reads here. (Inside a function or a compound command piped into,
/// such shells are found as they are read.)
fn fed_through_runner(reading: &Reading) -> Option<&Command> {
    let commands = &reading.commands;
    // Each script's first command: its runner is the command before it
    // (a `sh -c` script is read right after the command that runs it).
    let mut first = vec![usize::MAX; reading.scripts.len()];
    for (i, c) in commands.iter().enumerate() {
        if let Some(f) = first.get_mut(c.script())
            && *f == usize::MAX
        {
            *f = i;
        }
    }
    // Whether a script's input may hold what a shell in it reads, once
    // known.
    let mut fed: Vec<Option<bool>> = vec![None; reading.scripts.len()];
    let mut script_fed = |s: usize| -> bool {
        // Up the runners (at most the nesting limit of them); what is not
        // found as expected counts as fed.
        let mut chain: Vec<usize> = Vec::new();
        let mut s = s;
        let answer = loop {
            if let Some(&Some(known)) = fed.get(s) {
                break known;
            }
            chain.push(s);
            let Some(script) = reading.scripts.get(s) else {
                break true;
            };
            if s == 0 || script.kind != ScriptKind::ShellArgument {
                // The input, or a here-document, here-string or piped
                // script: the rest of its text, read here, is what the
                // shell reads.
                break false;
            }
            let Some(parent) = script.parent else {
                break true;
            };
            let runner = first
                .get(s)
                .and_then(|&f| f.checked_sub(1))
                .and_then(|j| commands.get(j));
            let Some(r) =
                runner.filter(|r| r.script() == parent && r.span().contains(&script.span.start))
            else {
                break true;
            };
            if matches!(r.connector, Connector::Pipe | Connector::PipeAll)
                || !matches!(stdin_of(r.redirections(reading)), Stdin::Inherited)
            {
                break true;
            }
            s = parent;
        };
        for k in chain {
            if let Some(slot) = fed.get_mut(k) {
                *slot = Some(answer);
            }
        }
        answer
    };
    commands
        .iter()
        .find(|c| c.script() != 0 && reads_inherited_stdin(c, reading) && script_fed(c.script()))
}

/// An alias defined with a value (`alias ll='rm -rf /'`) where aliases
/// are expanded: after `shopt -s expand_aliases`, or in a shell started
/// with `-O expand_aliases` or interactive (`-i`). Its value runs as code
/// wherever its name is a command's first word, which is not looked for:
/// the definition's command and span. (Asked only when a script's text
/// has an `alias` command with arguments.)
fn expanded_alias(reading: &Reading) -> Option<(usize, Range<usize>)> {
    let literal = |w: &Word, t: &str| !w.is_dynamic() && w.text() == t;
    let mut definition = None;
    let mut expanded = false;
    for c in &reading.commands {
        let words = reading.words(c);
        let args = words.get(1..).unwrap_or(&[]);
        match program_base(words) {
            Some("alias")
                if definition.is_none()
                    && args
                        .iter()
                        .any(|w| w.is_dynamic() || w.text().contains('=')) =>
            {
                definition = Some((c.script(), c.span()));
            }
            Some("shopt") => {
                expanded |= args.iter().any(|w| literal(w, "expand_aliases"))
                    && args
                        .iter()
                        .any(|w| w.text().starts_with('-') && w.text().contains('s'));
            }
            Some(b) if is_shell_name(b) => {
                expanded |= args.iter().any(|w| {
                    let t = w.text();
                    literal(w, "expand_aliases")
                        || (t.starts_with('-') && !t.starts_with("--") && t.contains('i'))
                });
            }
            _ => {}
        }
    }
    definition.filter(|_| expanded)
}

/// An `exec` with no program that redirects standard input (`exec <<<
/// 'rm -rf /'; sh`): the shells after it that read theirs read that. (Asked
/// only when some shell reads its standard input; where it stands is not
/// looked at, which is stricter than need be.)
fn stdin_exec(reading: &Reading) -> Option<&Command> {
    reading.commands.iter().find(|c| {
        let words = reading.words(c);
        words.len() == 1
            && !words[0].is_dynamic()
            && words[0].text() == "exec"
            && !matches!(stdin_of(c.redirections(reading)), Stdin::Inherited)
    })
}

/// The literal here-string a command's own redirections (`own`, no
/// group's) give its standard input, with the redirection's span: a shell
/// reads it as soon as the command is read ([`Parser::simple`]), not with
/// the shells [`resolve_shells`] finds.
fn read_at_once(own: &[Redirection]) -> Option<(&Word, Range<usize>)> {
    match stdin_of(own) {
        Stdin::Text(ScriptKind::HereString, w, span) => Some((w, span)),
        _ => None,
    }
}

/// A command's own redirections (before those of the compound commands
/// around it).
fn own_redirections(all: &[Redirection]) -> &[Redirection] {
    let n = all
        .iter()
        .position(|r| r.compound_first)
        .unwrap_or(all.len());
    all.get(..n).unwrap_or(&[])
}

/// Does this redirection change descriptor 0?
fn onto_stdin(r: &Redirection) -> bool {
    use RedirectionOp as Op;
    let fd = match (r.fd, r.op) {
        (_, Op::WriteAll | Op::AppendAll) => return false,
        (Some(fd), _) => fd,
        (None, Op::Write | Op::Append | Op::Clobber | Op::DupOut) => 1,
        (None, _) => 0,
    };
    if fd != 0 {
        return false;
    }
    let literal = || !r.target.is_dynamic();
    match r.op {
        Op::Read | Op::ReadWrite => !(literal() && STDIN_FILES.contains(&r.target.text())),
        Op::DupIn | Op::DupOut => !(literal() && r.target.text() == "0"),
        _ => true,
    }
}

/// The literal text a command writes to its standard output, when it is
/// `echo`, `printf` (no `%`) or `cat` of a here-document or here-string.
fn piped_text(c: &Command, reading: &Reading) -> Option<String> {
    let words = reading.words(c);
    if words.iter().any(Word::is_dynamic) {
        return None;
    }
    let base = program_base(words)?;
    let args = words.get(1..).unwrap_or(&[]);
    match base {
        "echo" => {
            let mut i = 0;
            let mut newline = true;
            while let Some(w) = args.get(i) {
                match w.text() {
                    "-n" => newline = false,
                    "-E" => {}
                    "-e" => return None,
                    _ => break,
                }
                i += 1;
            }
            let mut s = args[i..]
                .iter()
                .map(|w| w.text())
                .collect::<Vec<_>>()
                .join(" ");
            if s.contains('\\') {
                return None;
            }
            if newline {
                s.push('\n');
            }
            Some(s)
        }
        "printf" => {
            if args.len() != 1 {
                return None;
            }
            let f = args[0].text();
            if f.contains('%') || f.starts_with('-') {
                return None;
            }
            let mut out = Vec::new();
            decode_escapes(f.as_bytes(), &mut out, false)?;
            String::from_utf8(out).ok()
        }
        "cat" => {
            if !(args.is_empty() || (args.len() == 1 && args[0].text() == "-")) {
                return None;
            }
            match stdin_of(c.redirections(reading)) {
                Stdin::Text(ScriptKind::HereString, w, _) => {
                    let mut s = w.text().to_string();
                    s.push('\n');
                    Some(s)
                }
                Stdin::Text(_, w, _) => Some(w.text().to_string()),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Decodes `$'…'`-style escapes (`ansi` also takes `\'`, `\"`, `\?`, `\cX`,
/// `\u`, `\U`); `None` for an escape it does not know in printf mode.
fn decode_escapes(s: &[u8], out: &mut Vec<u8>, ansi: bool) -> Option<()> {
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        if b != b'\\' || i + 1 >= s.len() {
            out.push(b);
            i += 1;
            continue;
        }
        let e = s[i + 1];
        i += 2;
        match e {
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'e' | b'E' => out.push(27),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'\\' => out.push(b'\\'),
            b'\'' | b'"' | b'?' if ansi => out.push(e),
            b'"' => out.push(b'"'),
            b'0'..=b'7' => {
                // Up to three octal digits (printf: `\0` then up to three).
                let mut v: u32 = (e - b'0') as u32;
                let mut n = 1;
                let max = if !ansi && e == b'0' { 4 } else { 3 };
                while n < max && i < s.len() && (b'0'..=b'7').contains(&s[i]) {
                    v = v * 8 + (s[i] - b'0') as u32;
                    i += 1;
                    n += 1;
                }
                out.push((v & 0xff) as u8);
            }
            b'x' => {
                let mut v: u32 = 0;
                let mut n = 0;
                while n < 2 && i < s.len() && s[i].is_ascii_hexdigit() {
                    v = v * 16 + (s[i] as char).to_digit(16).unwrap_or(0);
                    i += 1;
                    n += 1;
                }
                if n == 0 {
                    out.extend_from_slice(b"\\x");
                } else {
                    out.push(v as u8);
                }
            }
            b'u' | b'U' => {
                let max = if e == b'u' { 4 } else { 8 };
                let mut v: u32 = 0;
                let mut n = 0;
                while n < max && i < s.len() && s[i].is_ascii_hexdigit() {
                    v = v * 16 + (s[i] as char).to_digit(16).unwrap_or(0);
                    i += 1;
                    n += 1;
                }
                if n == 0 {
                    out.push(b'\\');
                    out.push(e);
                } else {
                    let c = char::from_u32(v)?;
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
            b'c' if ansi && i < s.len() => {
                out.push(s[i] & 0x1f);
                i += 1;
            }
            _ => {
                if !ansi {
                    return None;
                }
                out.push(b'\\');
                out.push(e);
            }
        }
    }
    Some(())
}

/// The reserved word `word` is, if any.
#[inline(always)]
fn kw_of(word: &[u8]) -> Option<Kw> {
    Some(match word {
        b"if" => Kw::If,
        b"then" => Kw::Then,
        b"elif" => Kw::Elif,
        b"else" => Kw::Else,
        b"fi" => Kw::Fi,
        b"while" => Kw::While,
        b"until" => Kw::Until,
        b"do" => Kw::Do,
        b"done" => Kw::Done,
        b"for" => Kw::For,
        b"select" => Kw::Select,
        b"case" => Kw::Case,
        b"esac" => Kw::Esac,
        b"in" => Kw::In,
        b"{" => Kw::LBrace,
        b"}" => Kw::RBrace,
        b"!" => Kw::Bang,
        b"function" => Kw::Function,
        b"coproc" => Kw::Coproc,
        b"[[" => Kw::DBracket,
        _ => return None,
    })
}

/// What lexing a word found.
#[derive(Default)]
struct Lexed {
    start: usize,
    end: usize,
    dynamic: bool,
    glob: bool,
    brace: bool,
    changed: bool,
    /// Set when a `[` was seen: a later `]` makes the word a glob.
    bracket: bool,
    /// Set when an unquoted `~` was seen (one inside quotes is looked for
    /// only in words with quotes).
    tilde: bool,
    /// Set by [`Parser::plain_word`] when a `=` was seen (else the word is
    /// no assignment; `lex_word` does not look).
    eq: bool,
}

/// An answer of [`Parser::keyword`]: where it was asked (`pos`, `end`)
/// and the keyword found there with its length.
type KeywordAt = (usize, usize, Option<(Kw, usize)>);

struct Parser<'s, 'st> {
    /// The script's text, shared with words that are their source.
    text: &'s Arc<str>,
    src: &'s [u8],
    end: usize,
    pos: usize,
    script: usize,
    depth: u8,
    origin: Origin,
    cond: bool,
    /// The shell environment commands read now run in (an index into
    /// [`Reading::envs`]).
    env: u32,
    st: &'st mut State,
    /// The last answer of [`Parser::keyword`] and where it was asked
    /// (`(pos, end)`): a command's start is asked about several times.
    keyword_at: Cell<Option<KeywordAt>>,
    /// Where the script's last newline is, once asked (see
    /// [`Parser::newline_after`]).
    last_newline: Cell<Option<Option<usize>>>,
}

impl<'s> Parser<'s, '_> {
    fn peek(&self) -> Option<u8> {
        if self.pos < self.end {
            self.src.get(self.pos).copied()
        } else {
            None
        }
    }

    fn peek_at(&self, k: usize) -> Option<u8> {
        let i = self.pos + k;
        if i < self.end {
            self.src.get(i).copied()
        } else {
            None
        }
    }

    fn starts(&self, s: &[u8]) -> bool {
        self.pos + s.len() <= self.end
            && self
                .src
                .get(self.pos..self.pos + s.len())
                .is_some_and(|x| x == s)
    }

    /// A span clamped to the script (an operator at the very end).
    /// The span inside the script and on character boundaries (a span
    /// that would cut a multi-byte character takes all of it).
    fn clamp(&self, span: Range<usize>) -> Range<usize> {
        let inside = |i: usize| self.src.get(i).is_some_and(|b| b & 0xC0 == 0x80);
        let mut end = span.end.min(self.src.len());
        while inside(end) {
            end += 1;
        }
        let mut start = span.start.min(end);
        while start > 0 && inside(start) {
            start -= 1;
        }
        start..end
    }

    fn stop(&mut self, reason: Reason, span: Range<usize>) {
        let (script, span) = (self.script, self.clamp(span));
        self.st.stop(reason, script, span);
    }

    fn fail(&mut self, reason: Reason, span: Range<usize>) {
        let (script, span) = (self.script, self.clamp(span));
        self.st.fail(reason, script, span);
    }

    /// Blanks, line continuations and a comment (not the newline).
    fn skip_blanks(&mut self) {
        while let Some(b) = self.peek() {
            match b {
                b' ' | b'\t' => self.pos += 1,
                b'\\' if self.peek_at(1) == Some(b'\n') => self.pos += 2,
                b'#' => {
                    while let Some(b) = self.peek() {
                        if b == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    /// Blanks, comments and newlines (reading here-document bodies).
    fn skip_space(&mut self) {
        loop {
            self.skip_blanks();
            if self.peek() == Some(b'\n') {
                self.pos += 1;
                self.heredoc_bodies();
                if self.st.abort {
                    return;
                }
            } else {
                return;
            }
        }
    }

    /// The reserved word at the cursor, if one stands there as a word.
    fn keyword(&self) -> Option<(Kw, usize)> {
        if let Some((pos, end, kw)) = self.keyword_at.get()
            && pos == self.pos
            && end == self.end
        {
            return kw;
        }
        let kw = self.keyword_uncached();
        self.keyword_at.set(Some((self.pos, self.end, kw)));
        kw
    }

    fn keyword_uncached(&self) -> Option<(Kw, usize)> {
        let rest = self.src.get(self.pos..self.end)?;
        // Every keyword starts with one of these bytes: most words are
        // turned away here.
        if !matches!(
            rest.first(),
            Some(
                b'i' | b't'
                    | b'e'
                    | b'f'
                    | b'w'
                    | b'u'
                    | b'd'
                    | b's'
                    | b'c'
                    | b'{'
                    | b'}'
                    | b'!'
                    | b'['
            )
        ) {
            return None;
        }
        // The word at the cursor, if it is short enough to be a keyword.
        let len = rest.iter().take(9).take_while(|&&b| !is_meta(b)).count();
        if len == 0 || len > 8 {
            return None;
        }
        Some((kw_of(rest.get(..len)?)?, len))
    }

    /// The stop token at the cursor, if it is one of `stop`.
    fn at_stop(&self, stop: u16) -> Option<u16> {
        let Some(b) = self.peek() else {
            return Some(S_EOF).filter(|s| stop & s != 0);
        };
        if b == b')' && stop & S_RPAREN != 0 {
            return Some(S_RPAREN);
        }
        if b == b';' && stop & S_CASE_END != 0 && matches!(self.peek_at(1), Some(b';' | b'&')) {
            return Some(S_CASE_END);
        }
        let (kw, _) = self.keyword()?;
        let s = match kw {
            Kw::RBrace => S_BRACE,
            Kw::Then => S_THEN,
            Kw::Else | Kw::Elif | Kw::Fi => S_ELSE,
            Kw::Do => S_DO,
            Kw::Done => S_DONE,
            Kw::Esac => S_CASE_END,
            _ => return None,
        };
        Some(s).filter(|s| stop & s != 0)
    }

    /// A list of and-or lists, up to a stop token (not consumed). Returns
    /// the stop found, or `None` when reading stopped.
    fn list(&mut self, stop: u16, first: Connector) -> Option<u16> {
        self.list_counted(stop, first).map(|(s, _)| s)
    }

    fn list_counted(&mut self, stop: u16, first: Connector) -> Option<(u16, usize)> {
        let mut conn = first;
        let mut count = 0;
        loop {
            self.skip_space();
            if self.st.abort {
                return None;
            }
            let (cmds, envs) = (self.st.reading.commands.len(), self.st.env_count());
            // A plain command after a separator first (no stop token,
            // reserved word or separator is one; a list's first command is
            // rarely one); then what else may stand here.
            if conn != Connector::None && self.lean_first(conn) {
                self.and_or_rest();
            } else {
                if let Some(s) = self.at_stop(stop) {
                    return Some((s, count));
                }
                match self.peek() {
                    None => {
                        let at = self.pos;
                        self.stop(Reason::Unterminated, at..at);
                        return None;
                    }
                    Some(b';' | b'&' | b'|') => {
                        let at = self.pos;
                        self.stop(Reason::EmptyCommand, at..at + 1);
                        return None;
                    }
                    Some(b')') => {
                        let at = self.pos;
                        self.stop(Reason::Unexpected, at..at + 1);
                        return None;
                    }
                    _ => {}
                }
                self.pipeline(conn);
                self.and_or_rest();
            }
            count += 1;
            if self.st.abort {
                return None;
            }
            self.skip_blanks();
            if self.peek() == Some(b'&') && self.peek_at(1) != Some(b'&') {
                // `list &` runs in a subshell.
                self.st.fork_since(self.env, cmds, envs);
            }
            match self.peek() {
                Some(b';') if matches!(self.peek_at(1), Some(b';' | b'&')) => {
                    if stop & S_CASE_END != 0 {
                        return Some((S_CASE_END, count));
                    }
                    let at = self.pos;
                    self.stop(Reason::EmptyCommand, at..at + 2);
                    return None;
                }
                Some(b';') => {
                    self.pos += 1;
                    conn = Connector::Seq;
                }
                Some(b'&') => {
                    self.pos += 1;
                    conn = Connector::Background;
                }
                Some(b'\n') => conn = Connector::Seq,
                _ => {
                    if let Some(s) = self.at_stop(stop) {
                        return Some((s, count));
                    }
                    let at = self.pos;
                    let reason = if self.peek().is_none() {
                        Reason::Unterminated
                    } else {
                        Reason::Unexpected
                    };
                    self.stop(reason, at..at + 1);
                    return None;
                }
            }
        }
    }

    /// After an operator that needs a command on its right.
    fn need_command(&mut self, op: Range<usize>) -> bool {
        self.skip_space();
        if self.st.abort {
            return false;
        }
        let empty = match self.peek() {
            None => true,
            Some(b';' | b'&' | b'|' | b')') => true,
            _ => self.at_stop(0xffff).is_some(),
        };
        if empty {
            self.stop(Reason::EmptyCommand, op);
            return false;
        }
        true
    }

    /// The `&&` and `||` parts of an and-or list after its first pipeline.
    fn and_or_rest(&mut self) {
        let saved = self.cond;
        loop {
            if self.st.abort {
                break;
            }
            self.skip_blanks();
            let c = if self.starts(b"&&") {
                Connector::And
            } else if self.starts(b"||") {
                Connector::Or
            } else {
                break;
            };
            let at = self.pos;
            self.pos += 2;
            if c == Connector::Or {
                self.cond = true;
            }
            if self.lean_command(c) {
                continue;
            }
            self.pos = at + 2;
            if !self.need_command(at..at + 2) {
                break;
            }
            self.pipeline(c);
        }
        self.cond = saved;
    }

    /// The plain word at the cursor when it can be a lean command's whole
    /// program: no glob, no `=`, no reserved word nor `time` (a plain word is
    /// all of the word [`Parser::keyword`] would read).
    #[inline(always)]
    fn lean_word(&self) -> Option<Lexed> {
        match self.plain_word() {
            Ok(lx)
                if !(lx.glob
                    || lx.eq
                    || self
                        .src
                        .get(lx.start..lx.end)
                        .is_none_or(|w| w == b"time" || kw_of(w).is_some())) =>
            {
                Some(lx)
            }
            _ => None,
        }
    }

    /// A pipeline that is one plain command (see [`Parser::plain_command`])
    /// and no reserved word (nor `time`), after blanks, read without
    /// [`Parser::need_command`], [`Parser::pipeline`] and
    /// [`Parser::command`]: what they give for it. False for anything
    /// else (a `|` after the word included: a pipeline forks), the cursor
    /// after any blanks.
    #[inline(always)]
    fn lean_command(&mut self, conn: Connector) -> bool {
        self.skip_blanks();
        if self.st.abort {
            return false;
        }
        let Some(lx) = self.lean_word() else {
            return false;
        };
        self.pos = lx.end;
        self.skip_blanks();
        let ends = match self.peek() {
            None | Some(b';' | b')' | b'\n') => true,
            Some(b'&') => self.peek_at(1) != Some(b'>'),
            Some(b'|') => self.peek_at(1) == Some(b'|'),
            _ => false,
        };
        if !ends {
            self.pos = lx.start;
            return false;
        }
        self.push_plain(conn, lx.start..lx.end);
        true
    }

    /// [`Parser::lean_command`] at the start of an and-or list (after
    /// blanks and newlines, not aborted), asking first what turns most
    /// commands away: a word that is not plain, or more than one word.
    #[inline(never)]
    fn lean_first(&mut self, conn: Connector) -> bool {
        let lx = match self.plain_word() {
            Ok(lx) if !(lx.glob || lx.eq) => lx,
            _ => return false,
        };
        let at = self.pos;
        self.pos = lx.end;
        self.skip_blanks();
        let ends = match self.peek() {
            None | Some(b';' | b')' | b'\n') => true,
            Some(b'&') => self.peek_at(1) != Some(b'>'),
            Some(b'|') => self.peek_at(1) == Some(b'|'),
            _ => false,
        };
        if !ends
            || self
                .src
                .get(lx.start..lx.end)
                .is_none_or(|w| w == b"time" || kw_of(w).is_some())
        {
            self.pos = at;
            return false;
        }
        self.push_plain(conn, lx.start..lx.end);
        true
    }

    /// A whole script that is one plain command (see
    /// [`Parser::plain_command`]; no reserved word nor `time`), with
    /// blanks around it and at most one newline after it (`sh -c make`,
    /// `bash <<< ls`, `echo pwd | sh`), read without [`Parser::list`]:
    /// what reading the script gives for it (one command, which holds no
    /// here-document and reads no script). False, with the cursor where
    /// it was, for anything else.
    fn lean_script(&mut self) -> bool {
        let at = self.pos;
        if self.st.abort {
            return false;
        }
        self.skip_blanks();
        let Some(lx) = self.lean_word() else {
            self.pos = at;
            return false;
        };
        self.pos = lx.end;
        self.skip_blanks();
        if !matches!(self.src.get(self.pos..self.end), Some(b"" | b"\n")) {
            self.pos = at;
            return false;
        }
        self.pos = self.end;
        self.push_plain(Connector::None, lx.start..lx.end);
        true
    }

    fn pipeline(&mut self, conn: Connector) {
        self.skip_blanks();
        while let Some((Kw::Bang, n)) = self.keyword() {
            self.pos += n;
            self.skip_blanks();
        }
        self.time_before_compound();
        let (cmds, envs) = (self.st.reading.commands.len(), self.st.env_count());
        let mut first = true;
        let mut prev = self.command(conn);
        loop {
            if self.st.abort {
                return;
            }
            self.skip_blanks();
            let c = if self.starts(b"|&") {
                Connector::PipeAll
            } else if self.peek() == Some(b'|') && self.peek_at(1) != Some(b'|') {
                Connector::Pipe
            } else {
                return;
            };
            // Each command of a pipeline runs in a subshell.
            if first {
                self.st.fork_since(self.env, cmds, envs);
                first = false;
            }
            let at = self.pos;
            self.pos += if c == Connector::PipeAll { 2 } else { 1 };
            let script = self.script;
            self.st.charge(WORK_PIPE, script, at..self.pos);
            if !self.need_command(at..self.pos) {
                return;
            }
            let (cmds, envs) = (self.st.reading.commands.len(), self.st.env_count());
            let cur = self.command(c);
            if !self.st.abort {
                self.st.fork_since(self.env, cmds, envs);
            }
            if let Some(i) = cur
                && let Some(c) = self.st.reading.commands.get(i)
                && reads_stdin_script(self.st.reading.words(c))
            {
                self.st.feeds.push(PipeFeed {
                    producer: prev,
                    shell: i,
                });
            } else if cur.is_none() && !self.st.abort {
                self.compound_piped_into(cmds);
            }
            prev = cur;
        }
    }

    /// A compound command piped into (its commands from `cmds`): a shell
    /// in it reading its standard input with no redirection of its own or
    /// of the groups around it may read the pipe (`echo 'rm -rf /' | {
    /// sh; }`), a script nobody reads here.
    #[inline(never)]
    fn compound_piped_into(&mut self, cmds: usize) {
        if self.st.deferred == 0 {
            return;
        }
        let reading = &self.st.reading;
        // (Those of scripts `sh -c` runs in it too: they inherit it. Its
        // first command's connector is the pipe into the compound; one a
        // pipe inside it feeds is taken too, which is stricter than need
        // be, but linear.)
        let found = reading
            .commands
            .get(cmds..)
            .unwrap_or(&[])
            .iter()
            .find(|c| {
                reads_stdin_script(reading.words(c))
                    && matches!(stdin_of(c.redirections(reading)), Stdin::Inherited)
            });
        if let Some(c) = found {
            let (script, span) = (c.script(), c.span());
            self.st.fail(Reason::DynamicScript, script, span);
        }
    }

    /// `time [-p]` before a compound command is bash's keyword timing it:
    /// skipped. (Before a simple command `time` stays a word, for the
    /// wrapper pass.)
    fn time_before_compound(&mut self) {
        let save = self.pos;
        if !(self.starts(b"time") && self.peek_at(4).is_some_and(|b| b == b' ' || b == b'\t')) {
            return;
        }
        self.pos += 4;
        self.skip_blanks();
        while self.starts(b"-p") && self.peek_at(2).is_none_or(is_meta) {
            self.pos += 2;
            self.skip_blanks();
        }
        let compound = self.peek() == Some(b'(')
            || matches!(
                self.keyword(),
                Some((
                    Kw::LBrace
                        | Kw::If
                        | Kw::While
                        | Kw::Until
                        | Kw::For
                        | Kw::Case
                        | Kw::Select
                        | Kw::DBracket,
                    _
                ))
            );
        if !compound {
            self.pos = save;
        }
    }

    /// Enters one nesting level; false (and reading stops) past the limit.
    fn enter(&mut self, at: usize) -> bool {
        if self.depth >= MAX_DEPTH {
            self.stop(Reason::TooDeep, at..at + 1);
            return false;
        }
        self.depth += 1;
        true
    }

    /// One command; returns the index of the simple command it pushed.
    fn command(&mut self, conn: Connector) -> Option<usize> {
        self.skip_blanks();
        let start_cmd = self.st.reading.commands.len();
        let at = self.pos;
        if self.peek() == Some(b'(') {
            if self.peek_at(1) == Some(b'(') {
                self.pos += 2;
                self.arithmetic(at);
            } else {
                if !self.enter(at) {
                    return None;
                }
                self.pos += 1;
                let saved = self.env;
                self.env = self.st.new_env(saved);
                let r = self.list_counted(S_RPAREN, conn);
                self.env = saved;
                self.depth -= 1;
                match r {
                    Some((_, 0)) => {
                        self.stop(Reason::EmptyCommand, at..self.pos);
                        return None;
                    }
                    Some(_) => self.pos += 1,
                    None => return None,
                }
            }
            self.compound_redirections(start_cmd);
            return None;
        }
        let Some((kw, n)) = self.keyword() else {
            return self.simple(conn);
        };
        match kw {
            Kw::LBrace => {
                if !self.enter(at) {
                    return None;
                }
                self.pos += n;
                let r = self.list_counted(S_BRACE, conn);
                self.depth -= 1;
                match r {
                    Some((_, 0)) => {
                        self.stop(Reason::EmptyCommand, at..self.pos);
                        return None;
                    }
                    Some(_) => self.pos += 1,
                    None => return None,
                }
            }
            Kw::If => {
                if !self.enter(at) {
                    return None;
                }
                self.pos += n;
                self.if_rest(conn);
                self.depth -= 1;
            }
            Kw::While | Kw::Until => {
                if !self.enter(at) {
                    return None;
                }
                self.pos += n;
                let saved = self.cond;
                self.cond = true;
                if self.body(S_DO, conn, at) {
                    self.pos += 2;
                    if self.body(S_DONE, Connector::None, at) {
                        self.pos += 4;
                    }
                }
                self.cond = saved;
                self.depth -= 1;
            }
            Kw::For | Kw::Select => {
                if !self.enter(at) {
                    return None;
                }
                self.pos += n;
                self.for_rest(at);
                self.depth -= 1;
            }
            Kw::Case => {
                if !self.enter(at) {
                    return None;
                }
                self.pos += n;
                self.case_rest(at);
                self.depth -= 1;
            }
            Kw::Function => {
                self.pos += n;
                self.skip_blanks();
                let name = self.pos;
                while self.peek().is_some_and(|b| !is_meta(b)) {
                    self.pos += 1;
                }
                if self.pos == name {
                    self.stop(Reason::Unexpected, at..self.pos);
                    return None;
                }
                self.skip_blanks();
                if self.starts(b"()") {
                    self.pos += 2;
                } else if self.peek() == Some(b'(') {
                    self.skip_paren_pair(at);
                }
                self.function_body(at);
            }
            Kw::DBracket => {
                self.pos += n;
                self.double_bracket(at);
            }
            Kw::Coproc => {
                self.stop(Reason::Unsupported, at..at + n);
                return None;
            }
            Kw::Bang => {
                // `a | ! b`: skip every `!` without recursing.
                while let Some((Kw::Bang, n)) = self.keyword() {
                    self.pos += n;
                    self.skip_blanks();
                }
                // The next word is no `!`, so this recursion is one level.
                return self.command(conn);
            }
            Kw::In => return self.simple(conn),
            _ => {
                self.stop(Reason::Unexpected, at..at + n);
                return None;
            }
        }
        if !self.st.abort {
            self.compound_redirections(start_cmd);
        }
        None
    }

    /// `( )` after `function name`, spaces allowed inside.
    fn skip_paren_pair(&mut self, at: usize) {
        self.pos += 1;
        self.skip_blanks();
        if self.peek() == Some(b')') {
            self.pos += 1;
        } else {
            let here = self.pos;
            self.stop(Reason::Unexpected, at..here);
        }
    }

    fn function_body(&mut self, at: usize) {
        if self.st.abort {
            return;
        }
        self.skip_space();
        let script = self.script;
        self.st.charge(WORK_COMPOUND, script, at..self.pos);
        let saved = self.cond;
        self.cond = true;
        self.st.functions += 1;
        let body_at = self.pos;
        let compound = self.peek() == Some(b'(')
            || matches!(
                self.keyword(),
                Some((
                    Kw::LBrace
                        | Kw::If
                        | Kw::While
                        | Kw::Until
                        | Kw::For
                        | Kw::Case
                        | Kw::Select
                        | Kw::DBracket,
                    _
                ))
            );
        if !compound {
            self.stop(Reason::Unexpected, at..body_at);
        } else if self.enter(at) {
            self.command(Connector::None);
            self.depth -= 1;
        }
        self.cond = saved;
        self.st.functions -= 1;
    }

    /// A list up to `stop`, which must hold a command; then the stop
    /// keyword is at the cursor. False when reading stopped.
    fn body(&mut self, stop: u16, conn: Connector, at: usize) -> bool {
        match self.list_counted(stop, conn) {
            Some((s, n)) if n > 0 && s == stop => true,
            Some((S_EOF, _)) => {
                let here = self.pos;
                self.stop(Reason::Unterminated, at..here);
                false
            }
            Some(_) => {
                let here = self.pos;
                self.stop(Reason::EmptyCommand, at..here);
                false
            }
            None => false,
        }
    }

    fn if_rest(&mut self, conn: Connector) {
        let at = self.pos;
        if !self.body(S_THEN, conn, at) {
            return;
        }
        let saved = self.cond;
        self.cond = true;
        loop {
            // At `then`.
            self.pos += 4;
            match self.list_counted(S_ELSE | S_EOF, Connector::None) {
                Some((S_ELSE, n)) if n > 0 => {}
                Some((S_EOF, _)) => {
                    let here = self.pos;
                    self.stop(Reason::Unterminated, at..here);
                    break;
                }
                Some(_) => {
                    let here = self.pos;
                    self.stop(Reason::EmptyCommand, at..here);
                    break;
                }
                None => break,
            }
            match self.keyword() {
                Some((Kw::Fi, n)) => {
                    self.pos += n;
                    break;
                }
                Some((Kw::Elif, n)) => {
                    self.pos += n;
                    if !self.body(S_THEN, Connector::None, at) {
                        break;
                    }
                }
                Some((Kw::Else, n)) => {
                    self.pos += n;
                    if self.body(S_ELSE, Connector::None, at) {
                        if let Some((Kw::Fi, n)) = self.keyword() {
                            self.pos += n;
                        } else {
                            let here = self.pos;
                            self.stop(Reason::Unexpected, here..here);
                        }
                    }
                    break;
                }
                _ => break,
            }
        }
        self.cond = saved;
    }

    fn for_rest(&mut self, at: usize) {
        self.skip_blanks();
        if self.starts(b"((") {
            self.pos += 2;
            if !self.arithmetic(at) {
                return;
            }
        } else {
            let name = self.pos;
            while self.peek().is_some_and(is_name) {
                self.pos += 1;
            }
            if self.pos == name {
                let here = self.pos;
                self.stop(Reason::Unexpected, at..here);
                return;
            }
            self.skip_space();
            if let Some((Kw::In, n)) = self.keyword() {
                self.pos += n;
                // The words of the list: their substitutions run first.
                loop {
                    self.skip_blanks();
                    match self.peek() {
                        None | Some(b';' | b'\n') => break,
                        Some(b) if is_meta(b) => {
                            let here = self.pos;
                            self.stop(Reason::Unexpected, here..here + 1);
                            return;
                        }
                        _ => {
                            if self.lex_word().is_none() {
                                return;
                            }
                        }
                    }
                }
            }
        }
        self.skip_blanks();
        if self.peek() == Some(b';') {
            self.pos += 1;
        }
        self.skip_space();
        if self.st.abort {
            return;
        }
        let saved = self.cond;
        self.cond = true;
        match self.keyword() {
            Some((Kw::Do, n)) => {
                self.pos += n;
                if self.body(S_DONE, Connector::None, at) {
                    self.pos += 4;
                }
            }
            Some((Kw::LBrace, _)) => {
                self.command(Connector::None);
            }
            _ => {
                let here = self.pos;
                let reason = if self.peek().is_none() {
                    Reason::Unterminated
                } else {
                    Reason::Unexpected
                };
                self.stop(reason, at..here);
            }
        }
        self.cond = saved;
    }

    fn case_rest(&mut self, at: usize) {
        self.skip_blanks();
        if self.lex_word().is_none() {
            return;
        }
        self.skip_space();
        match self.keyword() {
            Some((Kw::In, n)) => self.pos += n,
            _ => {
                let here = self.pos;
                let reason = if self.peek().is_none() {
                    Reason::Unterminated
                } else {
                    Reason::Unexpected
                };
                self.stop(reason, at..here);
                return;
            }
        }
        let saved = self.cond;
        self.cond = true;
        loop {
            self.skip_space();
            if self.st.abort {
                break;
            }
            if let Some((Kw::Esac, n)) = self.keyword() {
                self.pos += n;
                break;
            }
            if self.peek().is_none() {
                let here = self.pos;
                self.stop(Reason::Unterminated, at..here);
                break;
            }
            if self.peek() == Some(b'(') {
                self.pos += 1;
            }
            // Patterns: words separated by `|`, up to `)`.
            loop {
                self.skip_blanks();
                match self.peek() {
                    Some(b')') => {
                        self.pos += 1;
                        break;
                    }
                    Some(b'|') => self.pos += 1,
                    Some(b) if !is_meta(b) => {
                        if self.lex_word().is_none() {
                            self.cond = saved;
                            return;
                        }
                    }
                    _ => {
                        let here = self.pos;
                        let reason = if self.peek().is_none() {
                            Reason::Unterminated
                        } else {
                            Reason::Unexpected
                        };
                        self.stop(reason, at..here);
                        self.cond = saved;
                        return;
                    }
                }
            }
            match self.list_counted(S_CASE_END, Connector::None) {
                Some(_) => {}
                None => break,
            }
            if self.starts(b";;&") {
                self.pos += 3;
            } else if self.starts(b";;") || self.starts(b";&") {
                self.pos += 2;
            }
        }
        self.cond = saved;
    }

    /// `[[ … ]]`: runs nothing itself; its substitutions are read.
    fn double_bracket(&mut self, at: usize) {
        loop {
            self.skip_blanks();
            if self.st.abort {
                return;
            }
            if self.starts(b"]]") && self.peek_at(2).is_none_or(is_meta) {
                self.pos += 2;
                return;
            }
            match self.peek() {
                None => {
                    let here = self.pos;
                    self.stop(Reason::Unterminated, at..here);
                    return;
                }
                Some(b'\n') => {
                    self.pos += 1;
                    self.heredoc_bodies();
                }
                Some(b) if is_meta(b) => self.pos += 1,
                _ => {
                    if self.lex_word().is_none() {
                        return;
                    }
                }
            }
        }
    }

    /// Is there a newline in the script at or after `at`?
    fn newline_after(&self, at: usize) -> bool {
        let last = self.last_newline.get().unwrap_or_else(|| {
            let last = self.src.iter().rposition(|&b| b == b'\n');
            self.last_newline.set(Some(last));
            last
        });
        last.is_some_and(|i| i >= at)
    }

    /// Redirections after a compound command: their substitutions run
    /// before it, and they apply to every command inside.
    fn compound_redirections(&mut self, start_cmd: usize) {
        let (script, at) = (self.script, self.pos);
        self.st.charge(WORK_COMPOUND, script, at..at);
        let inner_end = self.st.reading.commands.len();
        let script = self.script;
        // The commands of this script in the group (see below; the same
        // after the loop unless it reads a here-document's body).
        let inner = self
            .st
            .reading
            .commands
            .get(start_cmd..)
            .unwrap_or(&[])
            .iter()
            .filter(|c| c.script() == script)
            .count();
        let mut redirs = Vec::new();
        // The span of all and the text they make (see below): once that
        // is more than the budget has left (which only shrinks), they are
        // not kept — unless a newline follows (a here-document's body read
        // in a later one could move the commands counted).
        let mut span: Option<Range<usize>> = None;
        let mut size = 0usize;
        let mut over = false;
        let heredocs_before = self.st.heredocs.len();
        loop {
            self.skip_blanks();
            if self.st.abort || !self.at_redirection() {
                break;
            }
            let read = if over {
                self.read_redirection::<false>(&mut redirs)
            } else {
                self.read_redirection::<true>(&mut redirs)
            };
            let Some((at, _)) = read else {
                return;
            };
            span = Some(span.map_or(at.start, |s| s.start)..at.end);
            size = size.saturating_add(at.len().max(1));
            if !over
                && size.saturating_mul(inner) > self.st.made_left()
                && !self.newline_after(span.as_ref().map_or(0, |s| s.start))
            {
                over = true;
                redirs = Vec::new();
            }
        }
        if !self.at_command_end() && !self.st.abort {
            let here = self.pos;
            self.stop(Reason::Unexpected, here..here + 1);
            return;
        }
        let n = self.st.reading.commands.len() - inner_end;
        self.st.rotate_into(start_cmd, n);
        // A nested reading may have taken here-docs queued before it.
        let from = heredocs_before.min(self.st.heredocs.len());
        for h in &mut self.st.heredocs[from..] {
            h.owner = None;
            h.insert_at = start_cmd;
        }
        if let Some(span) = span {
            // Onto the commands of this script only: a command of a script
            // read inside the group (`sh -c`, a here-doc fed to a shell) is
            // run by one of them, which carries the redirection, and the
            // redirection's spans point into this script, not that one.
            // (Counted again unless they were not kept: then no body was
            // read among them, and the count is the one above.)
            let inner = if over {
                inner
            } else {
                self.st
                    .reading
                    .commands
                    .get(start_cmd + n..)
                    .unwrap_or(&[])
                    .iter()
                    .filter(|c| c.script() == script)
                    .count()
            };
            // Each copy is text made from text read (its source; a body is
            // read later): the copies count against the budget, so that
            // many redirections around many commands stay linear.
            if over || !self.st.spend(size.saturating_mul(inner)) {
                self.fail(Reason::TooMuchText, span);
                return;
            }
            // The group's redirections once; a command without its own
            // shares them, a command whose own come right before them
            // (an inner group's) extends its range over them, any other
            // gets a copy of its own and the group's (and a here-document
            // of its own whose body is still to come goes into the copy).
            if let Some(r) = redirs.first_mut() {
                r.compound_first = true;
            }
            let all = &mut self.st.reading.redirections;
            let g = all.len() as u32..(all.len() + redirs.len()) as u32;
            if all.is_empty() {
                *all = redirs;
            } else {
                all.extend(redirs);
            }
            let first = start_cmd + n;
            for (i, c) in self.st.reading.commands[first..].iter_mut().enumerate() {
                if c.script() != script {
                    continue;
                }
                let own = c.redirections.clone();
                c.redirections = if own.is_empty() {
                    g.clone()
                } else if own.end == g.start {
                    own.start..g.end
                } else {
                    let from = all.len();
                    all.extend_from_within(own.start as usize..own.end as usize);
                    all.extend_from_within(g.start as usize..g.end as usize);
                    let own_slots = own.start as usize..own.end as usize;
                    for h in &mut self.st.heredocs {
                        if h.owner == Some(first + i) && own_slots.contains(&h.redir) {
                            h.redir = from + (h.redir - own_slots.start);
                        }
                    }
                    from as u32..all.len() as u32
                };
            }
        }
    }

    fn at_command_end(&self) -> bool {
        match self.peek() {
            None => true,
            Some(b) => matches!(b, b';' | b'&' | b'|' | b')' | b'\n'),
        }
    }

    /// Is a redirection operator (with an optional descriptor) at the cursor?
    fn at_redirection(&self) -> bool {
        let mut i = 0;
        while self.peek_at(i).is_some_and(|b| b.is_ascii_digit()) {
            i += 1;
        }
        match self.peek_at(i) {
            Some(b'<' | b'>') => self.peek_at(i + 1) != Some(b'(') || i > 0,
            Some(b'&') if i == 0 => self.peek_at(1) == Some(b'>'),
            _ => false,
        }
    }

    /// Reads a redirection onto the end of `to` (the redirections of a
    /// command being read: room made as [`redirection_room`] does; no copy
    /// of it on the way); its operator. `None` when reading stopped.
    #[inline(never)]
    fn redirection_onto(&mut self, to: &mut Vec<Redirection>) -> Option<RedirectionOp> {
        self.read_redirection::<true>(to).map(|(_, op)| op)
    }

    /// Reads a redirection (queueing a here-document's), with `KEEP` onto
    /// the end of `to` (else, for redirections read but not kept, the
    /// target's word is not made unless it is a here-document's
    /// delimiter); its span and operator. `None` when reading stopped.
    #[inline(always)]
    fn read_redirection<const KEEP: bool>(
        &mut self,
        to: &mut Vec<Redirection>,
    ) -> Option<(Range<usize>, RedirectionOp)> {
        let start = self.pos;
        let mut fd: Option<u32> = None;
        while let Some(b) = self.peek().filter(u8::is_ascii_digit) {
            fd = Some(
                fd.unwrap_or(0)
                    .saturating_mul(10)
                    .saturating_add((b - b'0') as u32),
            );
            self.pos += 1;
        }
        // The longest operator at the cursor.
        let (len, op) = match self.src.get(self.pos..self.end).unwrap_or(&[]) {
            [b'<', b'<', b'<', ..] => (3, RedirectionOp::HereString),
            [b'<', b'<', b'-', ..] => (3, RedirectionOp::HereDocStrip),
            [b'<', b'<', ..] => (2, RedirectionOp::HereDoc),
            [b'<', b'&', ..] => (2, RedirectionOp::DupIn),
            [b'<', b'>', ..] => (2, RedirectionOp::ReadWrite),
            [b'<', ..] => (1, RedirectionOp::Read),
            [b'>', b'>', ..] => (2, RedirectionOp::Append),
            [b'>', b'|', ..] => (2, RedirectionOp::Clobber),
            [b'>', b'&', ..] => (2, RedirectionOp::DupOut),
            [b'>', ..] => (1, RedirectionOp::Write),
            [b'&', b'>', b'>', ..] => (3, RedirectionOp::AppendAll),
            [b'&', b'>', ..] => (2, RedirectionOp::WriteAll),
            _ => return None,
        };
        self.pos += len;
        self.skip_blanks();
        let procsub = matches!(self.peek(), Some(b'<' | b'>')) && self.peek_at(1) == Some(b'(');
        if !procsub && self.peek().is_none_or(is_meta) {
            let here = self.pos;
            self.stop(Reason::MissingTarget, start..here);
            return None;
        }
        let heredoc = matches!(op, RedirectionOp::HereDoc | RedirectionOp::HereDocStrip);
        // A plain target is its source (what `make_word` gives for it).
        let (lx, target) = match self.plain_word() {
            Ok(lx) => {
                self.pos = lx.end;
                let kind = if lx.glob {
                    WordKind::Glob
                } else {
                    WordKind::Literal
                };
                let target =
                    (KEEP || heredoc).then(|| Word::source(self.text, lx.start..lx.end, kind));
                (lx, target)
            }
            Err(partial) => {
                let lx = self.lex_word_from(partial)?;
                let target = (KEEP || heredoc).then(|| self.make_word(&lx));
                (lx, target)
            }
        };
        if heredoc && let Some(target) = &target {
            let quoted = lx.changed;
            // Only a decoded word's text differs from its source.
            let delim = if target.kind == WordKind::Decoded {
                Delim::Decoded(target.text().as_bytes().into())
            } else {
                Delim::Source(lx.start..lx.end)
            };
            let (script, depth, env) = (self.script, self.depth, self.env);
            // Room, once there are a few, for this one and about as many
            // as follow on its line (not doubling step by step).
            let n = self.st.heredocs.len();
            if n == self.st.heredocs.capacity() && n >= 4 {
                let rest = self.src.get(self.pos..self.end).unwrap_or(&[]);
                let more = ops_before::<TO_LINE_END>(rest) + 1;
                self.st.heredocs.reserve_exact(more.max(n));
            }
            self.st.heredocs.push(PendingHereDoc {
                owner: None,
                insert_at: 0,
                redir: usize::MAX,
                delim,
                strip_tabs: op == RedirectionOp::HereDocStrip,
                quoted,
                script,
                depth,
                env,
            });
        }
        let span = start..self.pos;
        if KEEP && let Some(target) = target {
            redirection_room(to, self.src.get(self.pos..self.end).unwrap_or(&[]));
            to.push(Redirection {
                span: span.clone(),
                fd,
                op,
                target,
                body: None,
                compound_first: false,
            });
        }
        Some((span, op))
    }

    /// Reads the bodies of the pending here-documents of this script; the
    /// cursor is just after a newline. (The check for none is inlined: it
    /// is made at every newline.)
    #[inline(always)]
    fn heredoc_bodies(&mut self) {
        // This script's pending here-documents are the last ones queued.
        if self
            .st
            .heredocs
            .last()
            .is_some_and(|h| h.script == self.script)
        {
            self.read_heredoc_bodies();
        }
    }

    /// [`Parser::heredoc_bodies`] when this script has some pending.
    #[inline(never)]
    fn read_heredoc_bodies(&mut self) {
        if !self.st.active.is_empty() {
            // A here-document started inside another one's body.
            let at = self.pos;
            self.stop(Reason::Unsupported, at..at);
            return;
        }
        let script = self.script;
        let ours = self
            .st
            .heredocs
            .iter()
            .rev()
            .take_while(|h| h.script == script)
            .count();
        let from = self.st.heredocs.len() - ours;
        let mut mine = self.st.heredocs.split_off(from);
        mine.reverse();
        self.st.active = mine;
        // The substitutions of each body are read at the end and moved
        // before the body's owner once all are read.
        let base = self.st.reading.commands.len();
        let mut chunks = Vec::new();
        while let Some(h) = self.st.active.pop() {
            if self.st.abort {
                break;
            }
            chunks.extend(self.heredoc_body(h));
        }
        self.st.active.clear();
        self.st.place_chunks(base, &chunks);
    }

    /// Reads one here-document's body; returns where the commands of its
    /// substitutions go and which they are, for [`State::place_chunks`].
    fn heredoc_body(&mut self, h: PendingHereDoc) -> Option<(usize, Range<usize>)> {
        let body_start = self.pos;
        let script = self.script;
        self.st.charge(WORK_PART, script, body_start..body_start);
        if self.st.abort {
            return None;
        }
        let mut body_end = None;
        let mut stripped = false;
        while self.pos < self.end {
            let line_start = self.pos;
            let line_end = self.src[line_start..self.end]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(self.end, |k| line_start + k);
            let mut line = &self.src[line_start..line_end];
            if h.strip_tabs {
                let t = line.iter().take_while(|&&b| b == b'\t').count();
                stripped |= t > 0;
                line = &line[t..];
            }
            self.pos = (line_end + 1).min(self.end);
            let delim = match &h.delim {
                Delim::Source(span) => self.src.get(span.clone()).unwrap_or(&[]),
                Delim::Decoded(bytes) => bytes,
            };
            if line == delim {
                body_end = Some(line_start);
                break;
            }
        }
        let Some(body_end) = body_end else {
            self.stop(Reason::Unterminated, body_start..self.end);
            return None;
        };
        let span = body_start..body_end;
        let raw = &self.src[span.clone()];
        let text_bytes: Vec<u8> = if h.strip_tabs && stripped {
            let mut v = Vec::with_capacity(raw.len());
            for line in raw.split_inclusive(|&b| b == b'\n') {
                let t = line.iter().take_while(|&&b| b == b'\t').count();
                v.extend_from_slice(&line[t..]);
            }
            v
        } else {
            raw.to_vec()
        };
        let mut dynamic = false;
        let mut changed = h.strip_tabs && stripped;
        let mut decoded = text_bytes.clone();
        let mut chunk = None;
        if !h.quoted && text_bytes.iter().any(|b| matches!(b, b'$' | b'`' | b'\\')) {
            // Expanded like double quotes (without `"`): read its
            // substitutions in place; they run before the owner.
            let n_before = self.st.reading.commands.len();
            let (saved_pos, saved_end, saved_depth) = (self.pos, self.end, self.depth);
            let saved_env = self.env;
            self.pos = body_start;
            self.end = body_end;
            self.depth = h.depth;
            self.env = h.env;
            let mut out = Vec::new();
            let mut lx = Lexed {
                start: body_start,
                ..Default::default()
            };
            self.double_quoted(&mut out, &mut lx, false);
            self.pos = saved_pos;
            self.end = saved_end;
            self.depth = saved_depth;
            self.env = saved_env;
            if self.st.abort {
                return None;
            }
            dynamic = lx.dynamic;
            changed |= lx.changed;
            if !dynamic {
                decoded = out;
                if h.strip_tabs && stripped {
                    let mut v = Vec::with_capacity(decoded.len());
                    for line in decoded.split_inclusive(|&b| b == b'\n') {
                        let t = line.iter().take_while(|&&b| b == b'\t').count();
                        v.extend_from_slice(&line[t..]);
                    }
                    decoded = v;
                }
            }
            chunk = Some((h.insert_at, n_before..self.st.reading.commands.len()));
        }
        let text = if dynamic {
            String::from_utf8_lossy(raw).into_owned()
        } else {
            match String::from_utf8(decoded) {
                Ok(s) => s,
                Err(_) => {
                    dynamic = true;
                    String::from_utf8_lossy(raw).into_owned()
                }
            }
        };
        let kind = if dynamic {
            WordKind::Dynamic
        } else if changed {
            WordKind::Decoded
        } else {
            WordKind::Literal
        };
        if h.owner.is_some()
            && let Some(r) = self.st.reading.redirections.get_mut(h.redir)
        {
            r.body = Some(Box::new(Word::owned(span, text, kind)));
        }
        chunk
    }

    /// A simple command (or a function definition `name() …`).
    fn simple(&mut self, conn: Connector) -> Option<usize> {
        let start = self.pos;
        // The first word when it is plain: what `lex_word` finds there,
        // found once for both paths.
        let mut first = Some(self.plain_word());
        if let Some(Ok(lx)) = &first
            && let Some(idx) = self.plain_command(conn, lx)
        {
            return Some(idx);
        }
        let mut end = start;
        // Words go straight to the end of the reading's word vector; once a
        // nested command (a substitution inside a word) has put its own
        // there, a few are copied to the end again, more go on a stack (see
        // `Pending`).
        let mut ours = Pending {
            stacked: false,
            start: self.st.reading.words.len(),
            n: 0,
        };
        let mut any_brace = false;
        // Assignments and redirections go into the reading's vectors when
        // the command ends (a nested command's go there first).
        let mut assignments = Vec::new();
        let mut redirections = std::mem::take(&mut self.st.redirs);
        let heredocs_before = self.st.heredocs.len();
        loop {
            if first.is_none() && ours.n > 0 && self.st.at_end(&ours) {
                first = Some(self.plain_words(&mut ours, &mut end));
            }
            self.skip_blanks();
            if self.st.abort {
                // At the work limit the command read so far is kept (its
                // words reach the deny rules); after any other stop it is
                // not.
                if self.st.over_work && ours.n > 0 {
                    break;
                }
                return None;
            }
            let Some(b) = self.peek() else { break };
            // A plain word not followed by `<` or `>` (digits there would
            // be a descriptor): a literal word that is its source, or an
            // assignment (`lex_word` and `make_word` give the same).
            // (Else what it found is where `lex_word` goes on from.)
            let plain = match first.take() {
                Some(Ok(lx) | Err(lx)) if lx.start != self.pos => self.plain_word(),
                Some(found) => found,
                _ => self.plain_word(),
            };
            let partial = match plain {
                Ok(lx) if self.plain_word_ends(&lx) => {
                    self.pos = lx.end;
                    end = self.pos;
                    if ours.n == 0
                        && lx.eq
                        && let Some(a) = self.assignment(&lx)
                    {
                        assignments.push(a);
                        self.st.charge(WORK_ASSIGNMENT, self.script, start..end);
                        continue;
                    }
                    let kind = if lx.glob {
                        WordKind::Glob
                    } else {
                        WordKind::Literal
                    };
                    let w = Word::source(self.text, lx.start..lx.end, kind);
                    self.st.push_word(&mut ours, w);
                    continue;
                }
                Ok(lx) | Err(lx) => lx,
            };
            if self.at_redirection() {
                let idx = redirections.len();
                let op = self.redirection_onto(&mut redirections)?;
                end = self.pos;
                self.st.charge(WORK_PART, self.script, start..end);
                if matches!(op, RedirectionOp::HereDoc | RedirectionOp::HereDocStrip)
                    && let Some(h) = self.st.heredocs.last_mut()
                {
                    h.redir = idx;
                }
                continue;
            }
            if matches!(b, b';' | b'&' | b'|' | b')' | b'\n') {
                break;
            }
            if b == b'(' {
                // `name() body`
                if ours.n == 1 && assignments.is_empty() && redirections.is_empty() {
                    self.st.drop_words(&mut ours);
                    let at = self.pos;
                    self.skip_paren_pair(at);
                    self.function_body(start);
                    return None;
                }
                // `declare -a x=(…)`: a declaration builtin takes arrays.
                if let Some(last) = ours
                    .n
                    .checked_sub(1)
                    .filter(|&i| i > 0)
                    .and_then(|i| self.st.word(&ours, i))
                    && last.span.end == self.pos
                    && last.text().ends_with('=')
                    && assignment_shaped(last.text())
                    && self.st.word(&ours, 0).is_some_and(|p| {
                        matches!(
                            p.text(),
                            "declare" | "typeset" | "local" | "export" | "readonly"
                        )
                    })
                {
                    let from = last.span.start;
                    self.array(from)?;
                    end = self.pos;
                    let w = Word::source(self.text, from..self.pos, WordKind::Dynamic);
                    if let Some(slot) = self.st.word_mut(&ours, ours.n.wrapping_sub(1)) {
                        *slot = w;
                    }
                    continue;
                }
                let at = self.pos;
                self.stop(Reason::Unexpected, at..at + 1);
                return None;
            }
            let lx = self.lex_word_from(partial)?;
            end = self.pos;
            let work = if lx.brace { WORK_BRACE_WORD } else { WORK_PART };
            self.st.charge(work, self.script, start..end);
            if ours.n == 0
                && let Some(a) = self.assignment(&lx)
            {
                assignments.push(a);
                self.st.work += WORK_ASSIGNMENT - WORK_PART;
                continue;
            }
            let w = self.make_word(&lx);
            self.st.push_word(&mut ours, w);
            any_brace |= lx.brace && !lx.dynamic;
        }
        if ours.n == 0 && assignments.is_empty() && redirections.is_empty() {
            let at = self.pos;
            self.stop(Reason::EmptyCommand, at..at);
            return None;
        }
        let (from, to) = if any_brace {
            // Brace expansion.
            let words = self.st.take_words(ours);
            let from = self.st.reading.words.len();
            self.expand_braces(words);
            (from, self.st.reading.words.len())
        } else {
            self.st.finish_words(ours)
        };
        let words = self.st.reading.words.get(from..).unwrap_or(&[]);
        if let Some(w) = words.first()
            && w.is_dynamic()
        {
            let span = w.span.clone();
            self.fail(Reason::DynamicProgram, span);
        }
        let assignments = append_range(&mut self.st.reading.assignments, assignments);
        let range = if redirections.is_empty() {
            0..0
        } else {
            self.st.take_redirections(&mut redirections)
        };
        self.st.redirs = redirections;
        let redirections = range;
        let words = self.st.reading.words.get(from..).unwrap_or(&[]);
        let idx = self.st.reading.commands.len();
        let cmd = Command {
            script: self.script as u32,
            span: start as u32..end as u32,
            words: from as u32..to as u32,
            assignments,
            redirections: redirections.clone(),
            connector: conn,
            origin: self.origin,
            depth: self.depth,
            conditional: self.cond,
            env: self.env,
        };
        // `eval` of dynamic text, `source`/`.` of a file named at run time.
        let base = program_base(words);
        let dynamic_input = match base {
            Some("eval") => words
                .get(1..)
                .unwrap_or(&[])
                .iter()
                .find(|w| w.is_dynamic()),
            Some("source" | ".") => words.get(1).filter(|w| w.is_dynamic()),
            Some("alias") => {
                self.st.aliases |= words.len() > 1;
                None
            }
            _ => None,
        };
        let dynamic_input = dynamic_input.map(|w| w.span.clone());
        let mut descriptor_script = None;
        let shell_c = if base.is_some_and(is_shell_name) {
            let (has_c, operand) = shell_mode(words);
            if has_c {
                Some(operand.and_then(|i| words.get(i).cloned()))
            } else {
                descriptor_script = operand
                    .and_then(|i| words.get(i))
                    .filter(|w| descriptor_file(w))
                    .map(|w| w.span.clone());
                None
            }
        } else {
            if matches!(base, Some("source" | ".")) {
                descriptor_script = words
                    .get(1)
                    .filter(|w| descriptor_file(w))
                    .map(|w| w.span.clone());
            }
            None
        };
        // A shell fed a literal here-string of its own reads it whatever
        // follows (no group around it or pipe into it overrides its own
        // redirection): read now, its commands land after it in place.
        // Any other shell reading its standard input is resolved with the
        // script ([`resolve_shells`]): a group's redirection, a
        // here-document's body or a pipe may feed it.
        // (In a function's body, one reading the input it inherits reads
        // whatever each call gives the function.)
        // (The names first: most programs are none of them.)
        let stdin_shell = shell_c.is_none()
            && base.is_some_and(|b| {
                (is_shell_name(b) || matches!(b, "source" | "." | "at" | "batch"))
                    && base_reads_stdin_script(b, words)
            });
        let (mut here_string, mut called_input) = (None, false);
        if stdin_shell {
            let own = self
                .st
                .reading
                .redirections
                .get(redirections.start as usize..redirections.end as usize)
                .unwrap_or(&[]);
            match stdin_of(own) {
                Stdin::Text(ScriptKind::HereString, w, span) => {
                    here_string = Some((Arc::<str>::from(w.text()), span));
                }
                Stdin::Inherited => called_input = self.st.functions > 0,
                _ => {}
            }
        }
        if stdin_shell && here_string.is_none() {
            self.st.deferred += 1;
        }
        if let Some(span) = dynamic_input {
            self.fail(Reason::DynamicScript, span);
        }
        if called_input {
            self.fail(Reason::DynamicScript, start..end);
        }
        if let Some(span) = descriptor_script {
            self.fail(Reason::DynamicScript, span);
        }
        room(&mut self.st.reading.commands, self.st.bound);
        self.st.reading.commands.push(cmd);
        self.st.charge(WORK_COMMAND, self.script, start..end);
        // A nested reading may have taken here-docs queued before it.
        let from = heredocs_before.min(self.st.heredocs.len());
        for h in &mut self.st.heredocs[from..] {
            if h.owner.is_none() && h.script == self.script {
                h.owner = Some(idx);
                h.insert_at = idx;
                h.redir = h.redir.saturating_add(redirections.start as usize);
            }
        }
        if let Some(script) = shell_c {
            match script {
                Some(w) if !w.is_dynamic() => {
                    let (d, c, s, e) = (self.depth, self.cond, self.script, self.env);
                    nested_script(
                        self.st,
                        Arc::from(w.text()),
                        ScriptKind::ShellArgument,
                        s,
                        w.span,
                        (d, c, e),
                    );
                }
                Some(w) => self.fail(Reason::DynamicScript, w.span),
                None => self.fail(Reason::DynamicScript, start..end),
            }
        } else if let Some((text, span)) = here_string {
            let (d, c, s, e) = (self.depth, self.cond, self.script, self.env);
            nested_script(self.st, text, ScriptKind::HereString, s, span, (d, c, e));
        }
        Some(idx)
    }

    /// Plain words after the first of a simple command whose words are the
    /// last of the reading's vector (`ours`), added in place: what the
    /// general loop of [`Parser::simple`] gives for them, without its other
    /// cases. Returns what [`Parser::plain_word`] found at the first word it
    /// did not take (after blanks), for the general loop to go on from.
    fn plain_words(&mut self, ours: &mut Pending, end: &mut usize) -> Result<Lexed, Lexed> {
        loop {
            self.skip_blanks();
            let found = self.plain_word();
            let lx = match found {
                Ok(lx) if !matches!(self.src.get(lx.end), Some(b'<' | b'>')) => lx,
                _ => return found,
            };
            self.pos = lx.end;
            *end = lx.end;
            let kind = if lx.glob {
                WordKind::Glob
            } else {
                WordKind::Literal
            };
            // (Its span starts and ends beside a byte below 0x80 or at an
            // end of the text: on character boundaries.)
            let w = Word::plain(self.text, lx.start..lx.end, kind);
            room(&mut self.st.reading.words, self.st.bound);
            self.st.reading.words.push(w);
            ours.n += 1;
        }
    }

    /// Does the plain word `lx` end where it stops? Not before `<(` or
    /// `>(` (a process substitution goes on with the word), nor when it
    /// is all digits before `<` or `>` (a descriptor: `2>err`).
    #[inline(always)]
    fn plain_word_ends(&self, lx: &Lexed) -> bool {
        match self.src.get(lx.end) {
            Some(b'<' | b'>') => {
                self.src.get(lx.end + 1) != Some(&b'(')
                    && !self
                        .src
                        .get(lx.start..lx.end)
                        .unwrap_or(&[])
                        .iter()
                        .all(u8::is_ascii_digit)
            }
            _ => true,
        }
    }

    /// A word of plain bytes (no quote, escape, expansion, `*`, `?`, brace
    /// or `~`; `[` and `]` allowed) at the cursor, up to a metacharacter or
    /// the end of the text: `Ok` with what [`Parser::lex_word`] finds there
    /// (a glob when a `]` follows a `[`; it reads nothing in it). Else
    /// `Err` with what lexing found up to the first byte it does not take
    /// (where [`Parser::lex_word_from`] goes on). The cursor does not move.
    #[inline(always)]
    fn plain_word(&self) -> Result<Lexed, Lexed> {
        let start = self.pos;
        let rest = self.src.get(start..self.end).unwrap_or(&[]);
        let mut lx = Lexed {
            start,
            end: start,
            ..Default::default()
        };
        // (The plain bytes first, in a run; then byte by byte.)
        let mut i = run_outside(rest, &PLAIN_RUN);
        let whole = loop {
            let Some(&b) = rest.get(i) else { break true };
            match PLAIN[b as usize] {
                P_PLAIN => {}
                P_EQ => lx.eq = true,
                P_OPEN => lx.bracket = true,
                P_CLOSE => lx.glob |= lx.bracket,
                P_END => break true,
                _ => break false,
            }
            i += 1;
        };
        lx.end = start + i;
        if whole && i > 0 { Ok(lx) } else { Err(lx) }
    }

    /// The most common simple command, read without the general loop: a
    /// plain word (`lx`, at the cursor) that is no glob and holds no `=`
    /// (no assignment), then blanks (or a comment) and the end of the command (`;`,
    /// `&` but not `&>`, `|`, `)`, a newline or the end of the text). It
    /// gives what [`Parser::simple`] gives for it: a literal word that is
    /// its source, no assignment, no redirection; one word makes no
    /// `eval`, `source` or `sh -c` script. `None`, with the cursor where it
    /// was, for anything else.
    fn plain_command(&mut self, conn: Connector, lx: &Lexed) -> Option<usize> {
        if self.st.abort || lx.glob {
            return None;
        }
        let (start, end) = (lx.start, lx.end);
        self.pos = end;
        self.skip_blanks();
        let ends = match self.peek() {
            None | Some(b';' | b'|' | b')' | b'\n') => true,
            Some(b'&') => self.peek_at(1) != Some(b'>'),
            _ => false,
        };
        if !ends || lx.eq {
            self.pos = start;
            return None;
        }
        Some(self.push_plain(conn, start..end))
    }

    /// Pushes the command of one plain word, `start..end`, a literal word
    /// that is its source; its index.
    #[inline(always)]
    fn push_plain(&mut self, conn: Connector, Range { start, end }: Range<usize>) -> usize {
        // (A plain word starts and ends beside a byte below 0x80 or at an
        // end of the text: on character boundaries.)
        let word = Word::plain(self.text, start..end, WordKind::Literal);
        // A shell alone reads its standard input (see `Parser::simple`).
        if self.src.get(end.wrapping_sub(1)) == Some(&b'h')
            && program_base(std::slice::from_ref(&word))
                .is_some_and(|b| is_shell_name(b) || b == "batch")
        {
            self.st.deferred += 1;
            self.st.work += 1;
            if self.st.functions > 0 {
                self.fail(Reason::DynamicScript, start..end);
            }
        }
        let from = self.st.reading.words.len();
        room(&mut self.st.reading.words, self.st.bound);
        self.st.reading.words.push(word);
        let idx = self.st.reading.commands.len();
        self.st.charge(1, self.script, start..end);
        room(&mut self.st.reading.commands, self.st.bound);
        self.st.reading.commands.push(Command {
            script: self.script as u32,
            span: start as u32..end as u32,
            words: from as u32..from as u32 + 1,
            assignments: 0..0,
            redirections: 0..0,
            connector: conn,
            origin: self.origin,
            depth: self.depth,
            conditional: self.cond,
            env: self.env,
        });
        idx
    }

    /// Appends `words` to the reading's word vector, expanding those that
    /// hold an unquoted brace group (a word's source without expansions is
    /// enough to tell).
    fn expand_braces(&mut self, words: Vec<Word>) {
        let mut out = std::mem::take(&mut self.st.reading.words);
        let mut total = 0usize;
        for w in words {
            let src = self.src.get(w.span.clone()).unwrap_or(&[]);
            if w.kind == WordKind::Dynamic || !src.contains(&b'{') {
                out.push(w);
                continue;
            }
            let Some(group) = brace::group(src) else {
                out.push(w);
                continue;
            };
            let cap = MAX_BRACE_WORDS.min(MAX_COMMAND_BRACE_WORDS.saturating_sub(total));
            match brace::expand(src, group, cap, self.st.made_left()) {
                Ok(brace::Expansion {
                    words: items,
                    bytes,
                }) => {
                    self.st.made += bytes;
                    total += items.len();
                    for item in items {
                        let (text, glob) = decode_plain(&item);
                        match text {
                            Some(text) => {
                                let kind = if glob {
                                    WordKind::Glob
                                } else {
                                    WordKind::Decoded
                                };
                                let text = if glob {
                                    String::from_utf8_lossy(&item).into_owned()
                                } else {
                                    text
                                };
                                out.push(Word::owned(w.span.clone(), text, kind));
                            }
                            None => out.push(Word::owned(
                                w.span.clone(),
                                String::from_utf8_lossy(&item).into_owned(),
                                WordKind::Dynamic,
                            )),
                        }
                    }
                }
                Err((over, bytes)) => {
                    self.st.made = self.st.made.saturating_add(bytes).min(MAX_MADE_TEXT);
                    let reason = match over {
                        brace::Over::Words => Reason::TooManyWords,
                        brace::Over::Budget => Reason::TooMuchText,
                    };
                    self.fail(reason, w.span.clone());
                    out.push(Word::source(self.text, w.span.clone(), WordKind::Dynamic));
                }
            }
        }
        self.st.reading.words = out;
    }

    /// The `(…)` of an array value, at its `(`: its words are read (their
    /// substitutions run). `None` when reading stopped.
    fn array(&mut self, start: usize) -> Option<()> {
        self.pos += 1;
        loop {
            self.skip_space();
            if self.st.abort {
                return None;
            }
            match self.peek() {
                Some(b')') => {
                    self.pos += 1;
                    return Some(());
                }
                None => {
                    let here = self.pos;
                    self.stop(Reason::Unterminated, start..here);
                    return None;
                }
                Some(b) if is_meta(b) => {
                    let here = self.pos;
                    self.stop(Reason::Unexpected, here..here + 1);
                    return None;
                }
                _ => {
                    self.lex_word()?;
                }
            }
        }
    }

    fn assignment(&mut self, lx: &Lexed) -> Option<Assignment> {
        let src = self.src.get(lx.start..lx.end)?;
        if !src.first().copied().is_some_and(is_name_start) {
            return None;
        }
        let n = src.iter().take_while(|&&b| is_name(b)).count();
        let (append, eq) = match src.get(n..n + 2) {
            Some([b'+', b'=']) => (true, n + 2),
            _ if src.get(n) == Some(&b'=') => (false, n + 1),
            _ => return None,
        };
        let name = String::from_utf8_lossy(&src[..n]).into_owned();
        let vstart = lx.start + eq;
        let value = if vstart == lx.end && self.peek() == Some(b'(') {
            // An array `NAME=(…)`: its words are read, the value is dynamic.
            self.array(lx.start)?;
            Word::source(self.text, vstart..self.pos, WordKind::Dynamic)
        } else {
            let vsrc = &self.src[vstart..lx.end];
            // Decode the value on its own (a glob does not expand in an
            // assignment; `~` after `=` or `:` does).
            let tilde = vsrc.first() == Some(&b'~') || vsrc.windows(2).any(|w| w == b":~");
            let dynamic = lx.dynamic || tilde;
            let span = vstart..lx.end;
            if dynamic {
                Word::source(self.text, span, WordKind::Dynamic)
            } else {
                match decode_plain(vsrc).0 {
                    Some(t) if t.as_bytes() == vsrc => {
                        Word::source(self.text, span, WordKind::Literal)
                    }
                    Some(t) => Word::owned(span, t, WordKind::Decoded),
                    None => Word::source(self.text, span, WordKind::Dynamic),
                }
            }
        };
        Some(Assignment {
            span: lx.start..self.pos.max(lx.end),
            name,
            append,
            value,
        })
    }

    /// Builds the word for what `lex_word` found: its source text (shared,
    /// no allocation) unless quote removal changed it.
    fn make_word(&mut self, lx: &Lexed) -> Word {
        let span = lx.start..lx.end;
        let src = self.src.get(span.clone()).unwrap_or(&[]);
        // (A plain loop: words are short, and `contains` calls `memchr`.)
        #[allow(clippy::manual_contains)]
        let tilde = lx.tilde || (lx.changed && src.iter().any(|&b| b == b'~'));
        let kind = if lx.dynamic || (tilde && assignment_tilde(src)) {
            WordKind::Dynamic
        } else if lx.glob {
            WordKind::Glob
        } else if !lx.changed {
            WordKind::Literal
        } else {
            let out = &mut self.st.decoded;
            decode_plain_into(src, out);
            return match std::str::from_utf8(out) {
                Ok(text) => Word::copied(span, text, WordKind::Decoded),
                Err(_) => Word::source(self.text, span, WordKind::Dynamic),
            };
        };
        Word::source(self.text, span, kind)
    }

    /// Lexes one word at the cursor, reading the substitutions in it.
    /// `None` when reading stopped.
    fn lex_word(&mut self) -> Option<Lexed> {
        let at = self.pos;
        self.lex_word_from(Lexed {
            start: at,
            end: at,
            ..Default::default()
        })
    }

    /// [`Parser::lex_word`] going on from what [`Parser::plain_word`]
    /// found at the cursor (`lx`, from its start to `lx.end`).
    fn lex_word_from(&mut self, mut lx: Lexed) -> Option<Lexed> {
        if lx.end > lx.start {
            // Plain bytes and brackets: no process substitution or `~`
            // starts the word.
            self.pos = lx.end;
        } else {
            // A process substitution at the start of a word.
            if matches!(self.peek(), Some(b'<' | b'>')) && self.peek_at(1) == Some(b'(') {
                let at = self.pos;
                self.pos += 2;
                self.substitution(at, Origin::ProcessSubstitution)?;
                lx.dynamic = true;
            }
            if self.peek() == Some(b'~') && self.pos == lx.start {
                lx.dynamic = true;
            }
        }
        while let Some(b) = self.peek() {
            match b {
                b'\\' => {
                    lx.changed = true;
                    self.pos += if self.peek_at(1).is_some() { 2 } else { 1 };
                }
                b'\'' => {
                    lx.changed = true;
                    let at = self.pos;
                    let rest = &self.src[self.pos + 1..self.end];
                    match rest.iter().position(|&c| c == b'\'') {
                        Some(k) => self.pos += k + 2,
                        None => {
                            self.stop(Reason::Unterminated, at..self.end);
                            return None;
                        }
                    }
                }
                b'"' => {
                    lx.changed = true;
                    self.pos += 1;
                    // What double quotes decode to is not needed here: a
                    // buffer kept from word to word (a nested word gets its
                    // own).
                    let mut scratch = std::mem::take(&mut self.st.dq_scratch);
                    self.double_quoted(&mut scratch, &mut lx, true);
                    scratch.clear();
                    self.st.dq_scratch = scratch;
                    if self.st.abort {
                        return None;
                    }
                }
                b'$' => {
                    if !self.dollar(&mut lx, false) {
                        return None;
                    }
                }
                b'`' => {
                    self.backquote()?;
                    lx.dynamic = true;
                }
                b'*' | b'?' => {
                    lx.glob = true;
                    self.pos += 1;
                }
                b'[' => {
                    lx.bracket = true;
                    self.pos += 1;
                }
                b']' => {
                    if lx.bracket {
                        lx.glob = true;
                    }
                    self.pos += 1;
                }
                b'{' => {
                    lx.brace = true;
                    self.pos += 1;
                }
                b'~' => {
                    lx.tilde = true;
                    self.pos += 1;
                }
                _ if is_meta(b) => break,
                _ => {
                    // A run of plain bytes: most of a word.
                    self.pos += 1;
                    let rest = self.src.get(self.pos..self.end).unwrap_or(&[]);
                    self.pos += run_outside(rest, &WORD_STOP);
                }
            }
        }
        lx.end = self.pos;
        Some(lx)
    }

    /// At a `$`: an ANSI-C or locale quote, or an expansion (reading its
    /// substitutions). False when reading stopped.
    fn dollar(&mut self, lx: &mut Lexed, in_dq: bool) -> bool {
        let at = self.pos;
        match self.peek_at(1) {
            Some(b'\'') if !in_dq => {
                lx.changed = true;
                let mut i = self.pos + 2;
                while i < self.end {
                    match self.src[i] {
                        b'\\' => i += 2,
                        b'\'' => break,
                        _ => i += 1,
                    }
                }
                if i >= self.end {
                    self.stop(Reason::Unterminated, at..self.end);
                    return false;
                }
                self.pos = i + 1;
            }
            Some(b'"') if !in_dq => {
                lx.changed = true;
                self.pos += 2;
                let mut scratch = Vec::new();
                self.double_quoted(&mut scratch, lx, true);
                if self.st.abort {
                    return false;
                }
            }
            Some(b'(') => {
                lx.dynamic = true;
                if self.peek_at(2) == Some(b'(') {
                    self.pos += 3;
                    return self.arithmetic(at);
                }
                self.pos += 2;
                return self.substitution(at, Origin::Substitution).is_some();
            }
            Some(b'[') => {
                lx.dynamic = true;
                self.pos += 2;
                return self.old_arithmetic(at);
            }
            Some(b'{') => {
                lx.dynamic = true;
                self.pos += 2;
                return self.parameter(at);
            }
            Some(b) if is_name(b) => {
                lx.dynamic = true;
                self.pos += 1;
                if b.is_ascii_digit() {
                    self.pos += 1;
                } else {
                    while self.peek().is_some_and(is_name) {
                        self.pos += 1;
                    }
                }
            }
            Some(b'@' | b'*' | b'#' | b'?' | b'$' | b'!' | b'-') => {
                lx.dynamic = true;
                self.pos += 2;
            }
            _ => self.pos += 1,
        }
        true
    }

    /// The inside of `"…"` (after the opening quote; `term` false for a
    /// here-document body, which ends at `self.end`). Decoded bytes go to
    /// `out`.
    fn double_quoted(&mut self, out: &mut Vec<u8>, lx: &mut Lexed, term: bool) {
        let at = self.pos;
        while let Some(b) = self.peek() {
            match b {
                b'"' if term => {
                    self.pos += 1;
                    return;
                }
                b'\\' => match self.peek_at(1) {
                    Some(b'\n') => {
                        lx.changed = true;
                        self.pos += 2;
                    }
                    Some(c @ (b'$' | b'`' | b'\\')) => {
                        lx.changed = true;
                        out.push(c);
                        self.pos += 2;
                    }
                    Some(b'"') if term => {
                        out.push(b'"');
                        self.pos += 2;
                    }
                    _ => {
                        out.push(b'\\');
                        self.pos += 1;
                    }
                },
                b'$' => {
                    let before = self.pos;
                    if !self.dollar(lx, true) {
                        return;
                    }
                    if !lx.dynamic {
                        out.extend_from_slice(&self.src[before..self.pos]);
                    }
                }
                b'`' => {
                    if self.backquote().is_none() {
                        return;
                    }
                    lx.dynamic = true;
                }
                _ => {
                    // A run of bytes that stand for themselves.
                    let rest = self.src.get(self.pos..self.end).unwrap_or(&[]);
                    let n = run_outside(rest, &DQ_STOP).max(1);
                    out.extend_from_slice(rest.get(..n).unwrap_or(&[b]));
                    self.pos += n;
                }
            }
        }
        if term {
            self.stop(Reason::Unterminated, at.saturating_sub(1)..self.end);
        }
    }

    /// `$(…)` or `<(…)` after its opening; reads the list inside.
    fn substitution(&mut self, at: usize, origin: Origin) -> Option<()> {
        if !self.enter(at) {
            return None;
        }
        let script = self.script;
        self.st.charge(WORK_SUBSTITUTION, script, at..at + 1);
        let (saved_origin, saved_cond, saved_env) = (self.origin, self.cond, self.env);
        self.origin = origin;
        self.env = self.st.new_env(saved_env);
        let r = self.list(S_RPAREN | S_EOF, Connector::None);
        self.origin = saved_origin;
        self.cond = saved_cond;
        self.env = saved_env;
        self.depth -= 1;
        match r {
            Some(S_RPAREN) => {
                self.pos += 1;
                Some(())
            }
            Some(_) => {
                let here = self.pos;
                self.stop(Reason::Unterminated, at..here);
                None
            }
            None => None,
        }
    }

    /// `` `…` ``: the text up to the closing backquote is read as a list —
    /// in place when it holds no backslash, else decoded into a script.
    fn backquote(&mut self) -> Option<()> {
        let at = self.pos;
        let script = self.script;
        self.st.charge(WORK_SUBSTITUTION, script, at..at + 1);
        let mut i = self.pos + 1;
        let mut escaped = false;
        while i < self.end {
            match self.src[i] {
                b'\\' => {
                    escaped = true;
                    i += 2;
                }
                b'`' => break,
                _ => i += 1,
            }
        }
        if i >= self.end {
            self.stop(Reason::Unterminated, at..self.end);
            return None;
        }
        let close = i;
        if !self.enter(at) {
            return None;
        }
        if escaped && !self.st.spend(close - at - 1) {
            // Its decoded text would be read again: over the budget.
            self.depth -= 1;
            self.fail(Reason::TooMuchText, at..close + 1);
            self.pos = close + 1;
            return Some(());
        }
        if escaped {
            let inner = &self.src[at + 1..close];
            let mut text = Vec::with_capacity(inner.len());
            let mut k = 0;
            while k < inner.len() {
                if inner[k] == b'\\' && matches!(inner.get(k + 1), Some(b'\\' | b'`' | b'$')) {
                    text.push(inner[k + 1]);
                    k += 2;
                } else {
                    text.push(inner[k]);
                    k += 1;
                }
            }
            let text: Arc<str> = Arc::from(String::from_utf8_lossy(&text).as_ref());
            let (parent, depth, cond) = (self.script, self.depth - 1, self.cond);
            let env = self.st.new_env(self.env);
            let idx = self.st.reading.scripts.len();
            self.st.reading.scripts.push(Script {
                text: Arc::clone(&text),
                kind: ScriptKind::Backquote,
                parent: Some(parent),
                span: at..close + 1,
            });
            read_script(
                self.st,
                &text,
                idx,
                depth + 1,
                Origin::Substitution,
                cond,
                env,
            );
        } else {
            let (saved_end, saved_origin, saved_cond) = (self.end, self.origin, self.cond);
            let saved_env = self.env;
            self.end = close;
            self.origin = Origin::Substitution;
            self.env = self.st.new_env(saved_env);
            self.pos = at + 1;
            let r = self.list(S_EOF, Connector::None);
            self.end = saved_end;
            self.origin = saved_origin;
            self.cond = saved_cond;
            self.env = saved_env;
            if r.is_none() {
                self.depth -= 1;
                return None;
            }
        }
        self.depth -= 1;
        if self.st.abort {
            return None;
        }
        self.pos = close + 1;
        Some(())
    }

    /// `${…}` after its opening: skips to the matching `}`, reading the
    /// substitutions in its operands.
    fn parameter(&mut self, at: usize) -> bool {
        if !self.enter(at) {
            return false;
        }
        let ok = self.parameter_inner(at);
        self.depth -= 1;
        ok
    }

    fn parameter_inner(&mut self, at: usize) -> bool {
        let mut depth = 0u32;
        let mut lx = Lexed::default();
        let mut scratch = Vec::new();
        while let Some(b) = self.peek() {
            match b {
                b'}' if depth == 0 => {
                    self.pos += 1;
                    return true;
                }
                b'}' => {
                    depth -= 1;
                    self.pos += 1;
                }
                b'{' => {
                    depth += 1;
                    self.pos += 1;
                }
                b'\\' => self.pos += 2,
                b'\'' => {
                    let rest = &self.src[self.pos + 1..self.end];
                    match rest.iter().position(|&c| c == b'\'') {
                        Some(k) => self.pos += k + 2,
                        None => break,
                    }
                }
                b'"' => {
                    self.pos += 1;
                    self.double_quoted(&mut scratch, &mut lx, true);
                    scratch.clear();
                    if self.st.abort {
                        return false;
                    }
                }
                b'$' => {
                    if !self.dollar(&mut lx, false) {
                        return false;
                    }
                }
                b'`' => {
                    if self.backquote().is_none() {
                        return false;
                    }
                }
                _ => self.pos += 1,
            }
        }
        if !self.st.abort {
            self.stop(Reason::Unterminated, at..self.end);
        }
        false
    }

    /// `$((…))` / `((…))` after the opening `((`: up to the matching `))`,
    /// reading substitutions. A `)` that closes at depth 0 without a second
    /// `)` (the `$( (…) …)` reading) is not read: unsupported.
    fn arithmetic(&mut self, at: usize) -> bool {
        if !self.enter(at) {
            return false;
        }
        let ok = self.arithmetic_inner(at);
        self.depth -= 1;
        ok
    }

    fn arithmetic_inner(&mut self, at: usize) -> bool {
        let mut depth = 0u32;
        let mut lx = Lexed::default();
        let mut scratch = Vec::new();
        while let Some(b) = self.peek() {
            match b {
                b'(' => {
                    depth += 1;
                    self.pos += 1;
                }
                b')' if depth > 0 => {
                    depth -= 1;
                    self.pos += 1;
                }
                b')' => {
                    if self.peek_at(1) == Some(b')') {
                        self.pos += 2;
                        return true;
                    }
                    let here = self.pos;
                    self.stop(Reason::Unsupported, at..here + 1);
                    return false;
                }
                b'\\' => self.pos += 2,
                b'\'' => self.pos += 1,
                b'"' => {
                    self.pos += 1;
                    self.double_quoted(&mut scratch, &mut lx, true);
                    scratch.clear();
                    if self.st.abort {
                        return false;
                    }
                }
                b'$' => {
                    if !self.dollar(&mut lx, false) {
                        return false;
                    }
                }
                b'`' => {
                    if self.backquote().is_none() {
                        return false;
                    }
                }
                b'\n' => {
                    self.pos += 1;
                }
                _ => self.pos += 1,
            }
        }
        if !self.st.abort {
            self.stop(Reason::Unterminated, at..self.end);
        }
        false
    }

    /// `$[…]`, the old arithmetic form.
    fn old_arithmetic(&mut self, at: usize) -> bool {
        if !self.enter(at) {
            return false;
        }
        let ok = self.old_arithmetic_inner(at);
        self.depth -= 1;
        ok
    }

    fn old_arithmetic_inner(&mut self, at: usize) -> bool {
        let mut depth = 0u32;
        let mut lx = Lexed::default();
        while let Some(b) = self.peek() {
            match b {
                b'[' => {
                    depth += 1;
                    self.pos += 1;
                }
                b']' if depth == 0 => {
                    self.pos += 1;
                    return true;
                }
                b']' => {
                    depth -= 1;
                    self.pos += 1;
                }
                b'$' => {
                    if !self.dollar(&mut lx, false) {
                        return false;
                    }
                }
                b'`' => {
                    if self.backquote().is_none() {
                        return false;
                    }
                }
                _ => self.pos += 1,
            }
        }
        if !self.st.abort {
            self.stop(Reason::Unterminated, at..self.end);
        }
        false
    }
}

/// True for `NAME=…` or `NAME+=…`.
fn assignment_shaped(s: &str) -> bool {
    let b = s.as_bytes();
    if !b.first().copied().is_some_and(is_name_start) {
        return false;
    }
    let n = b.iter().take_while(|&&c| is_name(c)).count();
    matches!(b.get(n..), Some([b'=', ..]) | Some([b'+', b'=', ..]))
}

/// True for an argument shaped like an assignment whose value has an
/// unquoted `~` after `=` or `:` (`make DESTDIR=~/x`): bash expands it.
fn assignment_tilde(src: &[u8]) -> bool {
    if !src.first().copied().is_some_and(is_name_start) {
        return false;
    }
    let n = src.iter().take_while(|&&b| is_name(b)).count();
    let value = match src.get(n..) {
        Some([b'=', rest @ ..]) | Some([b'+', b'=', rest @ ..]) => rest,
        _ => return false,
    };
    value.first() == Some(&b'~') || value.windows(2).any(|w| w == b":~")
}

/// Decodes the source of a word that holds no expansion: quote removal and
/// escapes. Returns the text (`None` when it is not UTF-8) and whether an
/// unquoted glob character is in it.
fn decode_plain(src: &[u8]) -> (Option<String>, bool) {
    let mut out = Vec::with_capacity(src.len());
    let glob = decode_plain_into(src, &mut out);
    (String::from_utf8(out).ok(), glob)
}

/// [`decode_plain`] into `out` (cleared first); returns whether an unquoted
/// glob character is in it.
fn decode_plain_into(src: &[u8], out: &mut Vec<u8>) -> bool {
    out.clear();
    let mut glob = false;
    let mut bracket = false;
    let mut i = 0;
    while i < src.len() {
        let b = src[i];
        match b {
            b'\\' => {
                match src.get(i + 1) {
                    Some(b'\n') => {}
                    Some(&c) => out.push(c),
                    None => out.push(b'\\'),
                }
                i += 2;
            }
            b'\'' => {
                let rest = &src[i + 1..];
                let k = rest.iter().position(|&c| c == b'\'').unwrap_or(rest.len());
                out.extend_from_slice(&rest[..k]);
                i += k + 2;
            }
            b'"' => {
                i += 1;
                while i < src.len() && src[i] != b'"' {
                    if src[i] == b'\\' {
                        match src.get(i + 1) {
                            Some(b'\n') => {
                                i += 2;
                                continue;
                            }
                            Some(&c @ (b'$' | b'`' | b'"' | b'\\')) => {
                                out.push(c);
                                i += 2;
                                continue;
                            }
                            _ => {}
                        }
                    }
                    out.push(src[i]);
                    i += 1;
                }
                i += 1;
            }
            b'$' if src.get(i + 1) == Some(&b'\'') => {
                let mut j = i + 2;
                while j < src.len() && src[j] != b'\'' {
                    j += if src[j] == b'\\' { 2 } else { 1 };
                }
                let inner = src.get(i + 2..j.min(src.len())).unwrap_or(&[]);
                let _ = decode_escapes(inner, out, true);
                i = j + 1;
            }
            b'$' if src.get(i + 1) == Some(&b'"') => {
                i += 1;
            }
            b'*' | b'?' => {
                glob = true;
                out.push(b);
                i += 1;
            }
            b'[' => {
                bracket = true;
                out.push(b);
                i += 1;
            }
            b']' => {
                glob |= bracket;
                out.push(b);
                i += 1;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    glob
}
