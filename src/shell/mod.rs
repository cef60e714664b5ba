//! The shell reader: a command string → a [`Reading`] (no policy knowledge).
//!
//! [`read`] lists every command a shell command line runs, in execution
//! order (the substitutions a command contains come before it), with its
//! words, leading assignments and redirections, and says whether the reading
//! is **complete**. What it cannot read with certainty makes the reading
//! incomplete with a [`Reason`]; it never guesses. What was read before a
//! problem or a limit is still returned, so deny rules still see it.
//!
//! ```
//! use toolgate::shell::{read, WordKind};
//!
//! let r = read("FOO=1 git status && echo $(whoami) > out.txt");
//! assert!(r.is_complete());
//! let programs: Vec<&str> = r.commands.iter().map(|c| r.words(c)[0].text()).collect();
//! assert_eq!(programs, ["git", "whoami", "echo"]);
//! assert_eq!(r.commands[0].assignments(&r)[0].name, "FOO");
//! assert_eq!(r.commands[2].words(&r)[1].kind, WordKind::Dynamic);
//!
//! // `$'…'` escapes are decoded; a dynamic program name is incomplete.
//! let rm = read(r"$'\x72\x6d' -rf /");
//! assert_eq!(rm.words(&rm.commands[0])[0].text(), "rm");
//! assert!(!read("$CMD -rf /").is_complete());
//! ```
//!
//! # How it reads
//!
//! The reader is hand-written over bytes: shell syntax is small, a general
//! parser crate either mis-reads some inputs silently or leaves substitution
//! bodies as raw text, and a hand-written reader can refuse everything it does
//! not understand (fail closed). It runs in one pass, linear in the input;
//! recursion is bounded by the nesting limit ([`MAX_DEPTH`]), so no input can
//! overflow the stack, and nothing panics on any input. Text the reading
//! makes from its input (scripts given to shells, brace-expanded words, a
//! group's redirections copied onto its commands) is bounded for the whole
//! reading by [`MAX_MADE_TEXT`], however it nests. The work a reading does
//! (commands, their parts, substitutions, scripts) is bounded by
//! [`MAX_WORK`], so that its time is bounded whatever the shape of the
//! input: at the limit reading stops, and the command being read is kept.
//!
//! Shells started with `-c SCRIPT` (`sh bash zsh dash ksh mksh ash fish`), and
//! shells fed a here-document, a here-string or a literal script through a
//! pipe (`echo 'ls' | sh`, `cat <<'EOF' | bash`) have their script read as
//! well: its commands follow the shell's own command, with
//! [`Origin::Script`] and their spans pointing into [`Reading::scripts`].
//!
//! A reading keeps the words of all its commands in one vector; a command
//! holds a range of it ([`Reading::words`], [`Command::words`]). Words are
//! text ([`Word::text`]): a word that is its own source text shares its
//! script's text (no allocation); a decoded word owns its text (kept in
//! place when it is short: no allocation either).
//! A word whose decoded bytes are not UTF-8 (`$'\xff'`) is kept as its
//! source text and is dynamic.

use serde::{Serialize, Serializer};
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

mod brace;
mod evaluating;
pub mod files;
mod parse;
#[rustfmt::skip]
pub mod programs;
pub mod reduce;

/// The longest command read in full, in bytes; longer input is read up to
/// this limit and the reading is incomplete.
pub const MAX_INPUT: usize = 64 * 1024;
/// The deepest nesting read (substitutions, subshells, groups, compound
/// commands, nested scripts); deeper is incomplete.
pub const MAX_DEPTH: u8 = 16;
/// The most words one brace word expands to.
pub const MAX_BRACE_WORDS: usize = 256;
/// The most words brace expansion may give one command.
pub const MAX_COMMAND_BRACE_WORDS: usize = 4096;
/// The most text one reading may make beyond its input, in bytes: the
/// scripts shells are given to read (`sh -c`, here-documents and
/// here-strings fed to a shell, literal text piped into one, decoded
/// backquotes) and the words brace expansion makes, counted together. Text
/// made from text made before counts again, so the reader's whole work
/// stays a small multiple of [`MAX_INPUT`] however scripts and braces nest;
/// past it a script is not read and a brace word is dynamic, and the
/// reading is incomplete ([`Reason::TooMuchText`]).
pub const MAX_MADE_TEXT: usize = 64 * 1024;
/// The most work one reading does, in units: a simple command that is
/// one plain word counts 1 (2 when it names a shell); any other simple
/// command 4, plus 3 for each of its assignments and 2 for each
/// redirection, here-document body and word that is not plain (4 for a
/// word holding a brace group); a pipe 1; a compound command or a function definition 3 (a
/// function's body counts too); a command or process substitution 2; a script a
/// shell reads 6 (beside its commands); a reason the reading is
/// incomplete 1. Past it the reading stops where it is, incomplete
/// ([`Reason::TooMuchWork`]), and what was read is kept (the simple
/// command being read with the words read so far). It bounds the
/// time a reading takes whatever the shape of its 64 KiB: 10,000
/// one-word commands are read in full, and about 2,000 commands of a few
/// quoted words each, or 1,000 shells each given a script.
pub const MAX_WORK: u32 = 12_288;

/// Reads a shell command line. Never panics; see the [module](self) docs.
pub fn read(command: &str) -> Reading {
    parse::read(command)
}

/// What a command line runs, as far as it can be read.
///
/// Serialized, each command carries its words (`"words": [...]`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    /// Every command, in execution order (substitutions first).
    pub commands: Vec<Command>,
    /// The words of every command, each command's a range of it (see
    /// [`Reading::words`]).
    pub(crate) words: Vec<Word>,
    /// The leading assignments of every command, each command's a range of
    /// it.
    pub(crate) assignments: Vec<Assignment>,
    /// The redirections of every command, each command's a range of it
    /// (the commands of a redirected group share the group's when they
    /// have none of their own).
    pub(crate) redirections: Vec<Redirection>,
    /// The texts spans point into: `scripts[0]` is the input itself (cut at
    /// [`MAX_INPUT`]); later ones are scripts that a shell reads.
    pub scripts: Vec<Script>,
    /// Why the reading is incomplete; empty when it is complete.
    pub incomplete: Vec<Incomplete>,
    /// The shell environments commands run in: `envs[e]` is the one `e`
    /// was forked from (`envs[0] == 0`, the shell given the command line;
    /// empty when every command runs in that one).
    /// A subshell, a substitution, each command of a pipeline, a list put
    /// in the background and a script a shell reads each get their own; a
    /// group or a compound command runs in its list's.
    pub(crate) envs: Vec<u32>,
}

/// A command with its words, for serializing.
#[derive(Serialize)]
struct CommandOut<'a> {
    script: usize,
    span: &'a Range<usize>,
    words: &'a [Word],
    assignments: &'a [Assignment],
    redirections: &'a [Redirection],
    connector: Connector,
    origin: Origin,
    depth: u8,
    conditional: bool,
}

/// Serialized as `commands` (each with its words), `scripts`, `incomplete`.
impl Serialize for Reading {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeSeq, SerializeStruct};
        struct Commands<'a>(&'a Reading);
        impl Serialize for Commands<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut seq = s.serialize_seq(Some(self.0.commands.len()))?;
                for c in &self.0.commands {
                    seq.serialize_element(&CommandOut {
                        script: c.script(),
                        span: &c.span(),
                        words: c.words(self.0),
                        assignments: c.assignments(self.0),
                        redirections: c.redirections(self.0),
                        connector: c.connector,
                        origin: c.origin,
                        depth: c.depth,
                        conditional: c.conditional,
                    })?;
                }
                seq.end()
            }
        }
        let mut st = s.serialize_struct("Reading", 3)?;
        st.serialize_field("commands", &Commands(self))?;
        st.serialize_field("scripts", &self.scripts)?;
        st.serialize_field("incomplete", &self.incomplete)?;
        st.end()
    }
}

impl Reading {
    /// True when every command was read with certainty.
    pub fn is_complete(&self) -> bool {
        self.incomplete.is_empty()
    }

    /// A command's words (empty for a command of another reading).
    pub fn words(&self, command: &Command) -> &[Word] {
        let r = &command.words;
        self.words
            .get(r.start as usize..r.end as usize)
            .unwrap_or(&[])
    }

    /// The source text of a span of a script (empty when out of range).
    pub fn source(&self, script: usize, span: &Range<usize>) -> &str {
        self.scripts
            .get(script)
            .and_then(|s| s.text.get(span.clone()))
            .unwrap_or("")
    }
}

/// A text commands were read from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Script {
    /// The text (shared with the words that are its source text).
    #[serde(serialize_with = "serialize_arc")]
    pub text: Arc<str>,
    /// How this text came to be read.
    pub kind: ScriptKind,
    /// The script this one came from (`None` for the input).
    pub parent: Option<usize>,
    /// Where in the parent script it came from (the word, here-document
    /// body or here-string); `0..0` for the input.
    pub span: Range<usize>,
}

/// How a script came to be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptKind {
    /// The command line given to [`read`].
    Input,
    /// The argument of a shell's `-c`.
    ShellArgument,
    /// A here-document a shell reads.
    HereDocument,
    /// A here-string a shell reads.
    HereString,
    /// Literal text piped into a shell (`echo '…' | sh`).
    Piped,
    /// The decoded body of a backquoted substitution that holds escapes.
    Backquote,
}

/// One command: a program invocation. Its words are in the [`Reading`]
/// ([`Command::words`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// The script its span points into (an index into [`Reading::scripts`]).
    /// (32-bit, as the ranges below: a reading's scripts and texts are
    /// bounded far below that, and a long command's records are much of
    /// its reading's memory.)
    pub(crate) script: u32,
    /// Its source, a byte range of that script (assignments, words and
    /// redirections included).
    pub(crate) span: Range<u32>,
    /// Its words after brace expansion and quote removal (the first is the
    /// program; none for an assignment-only or redirection-only command): a
    /// range of [`Reading::words`].
    pub(crate) words: Range<u32>,
    /// Leading `NAME=value` assignments: a range of
    /// `Reading::assignments`.
    pub(crate) assignments: Range<u32>,
    /// Redirections, its own first, then those of the compound commands
    /// around it (`{ a; b; } > f` gives both `a` and `b` the `> f`): a
    /// range of `Reading::redirections`.
    pub(crate) redirections: Range<u32>,
    /// How it is joined to the command before it in the same list.
    pub connector: Connector,
    /// Where it was read.
    pub origin: Origin,
    /// Nesting depth: 0 at the top level, +1 for each substitution,
    /// subshell, group, compound command or script around it.
    pub depth: u8,
    /// True when control flow decides whether it runs, or how often: inside
    /// a loop (`while`, `until`, `for`, `select`, conditions included), an
    /// `if` (its first condition excepted), a `case` item, a function body,
    /// or after `||`.
    pub conditional: bool,
    /// The shell environment it runs in (an index into `Reading::envs`):
    /// what `cd` changes there lasts for the later commands in it.
    pub(crate) env: u32,
}

impl Command {
    /// Its words after brace expansion and quote removal, from the reading
    /// it is in; the first is the program. Empty for an assignment-only or
    /// redirection-only command (and for a reading it is not in).
    pub fn words<'r>(&self, reading: &'r Reading) -> &'r [Word] {
        reading.words(self)
    }

    /// The program word, if the command has words.
    pub fn program<'r>(&self, reading: &'r Reading) -> Option<&'r Word> {
        self.words(reading).first()
    }

    /// The script its span points into (an index into [`Reading::scripts`]).
    pub fn script(&self) -> usize {
        self.script as usize
    }

    /// Its source, a byte range of its script (assignments, words and
    /// redirections included).
    pub fn span(&self) -> Range<usize> {
        self.span.start as usize..self.span.end as usize
    }

    /// Its leading `NAME=value` assignments, from the reading it is in.
    pub fn assignments<'a>(&'a self, reading: &'a Reading) -> &'a [Assignment] {
        let r = &self.assignments;
        reading
            .assignments
            .get(r.start as usize..r.end as usize)
            .unwrap_or(&[])
    }

    /// Its redirections, from the reading it is in: its own first, then
    /// those of the compound commands around it (`{ a; b; } > f` gives both
    /// `a` and `b` the `> f`).
    pub fn redirections<'a>(&'a self, reading: &'a Reading) -> &'a [Redirection] {
        let r = &self.redirections;
        reading
            .redirections
            .get(r.start as usize..r.end as usize)
            .unwrap_or(&[])
    }

    /// Writes the command on one line (see [`CommandDisplay`]).
    pub fn display<'a>(&'a self, reading: &'a Reading) -> CommandDisplay<'a> {
        CommandDisplay {
            command: self,
            reading,
        }
    }
}

/// A command with the reading its words are in, for [`fmt::Display`]
/// ([`Command::display`]).
#[derive(Clone, Copy, Debug)]
pub struct CommandDisplay<'a> {
    command: &'a Command,
    reading: &'a Reading,
}

/// How a command is joined to the command before it in the same list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Connector {
    /// First of its list.
    None,
    /// After `;` or a newline.
    Seq,
    /// After a command put in the background with `&`.
    Background,
    /// After `&&`.
    And,
    /// After `||`.
    Or,
    /// After `|`.
    Pipe,
    /// After `|&`.
    PipeAll,
}

/// Where a command was read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// In the command line's own lists (subshells, groups and compound
    /// commands included).
    Top,
    /// Inside a command substitution `$(…)` or `` `…` ``.
    Substitution,
    /// Inside a process substitution `<(…)` or `>(…)`.
    ProcessSubstitution,
    /// In a script a shell reads (`sh -c`, a here-document, a pipe).
    Script,
}

fn serialize_arc<S: Serializer>(text: &Arc<str>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(text)
}

/// One word.
#[derive(Clone)]
pub struct Word {
    /// Its source, a byte range of the command's script. Words made by
    /// brace expansion share the span of the word they came from. (A word
    /// whose value is its source reads its text through this range: a copy
    /// given another span reads another text.)
    pub span: Range<usize>,
    /// Its value (see [`Word::text`]).
    text: Text,
    /// What kind of value it is.
    pub kind: WordKind,
}

/// A word's text: its script's text when it is its source (no allocation;
/// the word's span is the range), or its own decoded text — kept in place
/// when it is short (no allocation either), else a string. (24 bytes: a
/// word is 48, and a long command's words are most of its reading's
/// memory.)
#[derive(Clone)]
pub(crate) enum Text {
    /// The script whose `[span]` is the text, a valid `str` range.
    Shared(Arc<str>),
    /// Decoded text.
    Owned(Box<str>),
    /// A short decoded text: its first `len` bytes, a valid `str`. (Not
    /// used for source text: each access checks the bytes are UTF-8, which
    /// costs more than sharing the script's text when a word is read often.)
    Inline(u8, [u8; INLINE]),
}

/// The longest text a word keeps in place (it keeps [`Text`] 24 bytes).
const INLINE: usize = 22;

impl Text {
    /// A copy of `s`: in place when it is short.
    fn copy(s: &str) -> Text {
        let b = s.as_bytes();
        if b.len() <= INLINE {
            let mut buf = [0u8; INLINE];
            buf[..b.len()].copy_from_slice(b);
            Text::Inline(b.len() as u8, buf)
        } else {
            Text::Owned(s.into())
        }
    }
}

impl PartialEq for Word {
    fn eq(&self, other: &Self) -> bool {
        self.span == other.span && self.kind == other.kind && self.text() == other.text()
    }
}

impl Eq for Word {}

impl fmt::Debug for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Word")
            .field("span", &self.span)
            .field("text", &self.text())
            .field("kind", &self.kind)
            .finish()
    }
}

impl Serialize for Word {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Word", 3)?;
        st.serialize_field("span", &self.span)?;
        st.serialize_field("text", self.text())?;
        st.serialize_field("kind", &self.kind)?;
        st.end()
    }
}

impl Word {
    /// A word whose text is `script[span]` (falls back to a copy when the
    /// span does not fall on character boundaries).
    #[inline(always)]
    pub(crate) fn source(script: &Arc<str>, span: Range<usize>, kind: WordKind) -> Word {
        let text = match script.get(span.clone()) {
            Some(_) => Text::Shared(Arc::clone(script)),
            None => {
                let bytes = script.as_bytes().get(span.clone()).unwrap_or(&[]);
                Text::Owned(String::from_utf8_lossy(bytes).into())
            }
        };
        Word { span, text, kind }
    }

    /// A word whose text is `script[span]`, a span on character
    /// boundaries (else its text reads as empty).
    #[inline(always)]
    pub(crate) fn plain(script: &Arc<str>, span: Range<usize>, kind: WordKind) -> Word {
        debug_assert!(script.get(span.clone()).is_some());
        Word {
            span,
            text: Text::Shared(Arc::clone(script)),
            kind,
        }
    }

    /// A word with a copy of `text` (kept in place when it is short).
    pub(crate) fn copied(span: Range<usize>, text: &str, kind: WordKind) -> Word {
        Word {
            span,
            text: Text::copy(text),
            kind,
        }
    }

    /// A word with its own text.
    pub(crate) fn owned(span: Range<usize>, text: String, kind: WordKind) -> Word {
        Word {
            span,
            text: Text::Owned(text.into_boxed_str()),
            kind,
        }
    }

    /// Its value: the decoded text for literal and decoded words, the source
    /// text for dynamic and glob words.
    pub fn text(&self) -> &str {
        match &self.text {
            Text::Shared(s) => s.get(self.span.clone()).unwrap_or(""),
            Text::Owned(s) => s,
            Text::Inline(n, b) => b
                .get(..*n as usize)
                .and_then(|b| std::str::from_utf8(b).ok())
                .unwrap_or(""),
        }
    }

    /// True for a word whose value the shell decides at run time (dynamic or
    /// glob).
    pub fn is_dynamic(&self) -> bool {
        matches!(self.kind, WordKind::Dynamic | WordKind::Glob)
    }
}

/// What kind of value a word has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WordKind {
    /// Its text is its source, unchanged.
    Literal,
    /// Its text is its source with quotes removed and escapes decoded (or
    /// brace-expanded).
    Decoded,
    /// It holds unquoted glob characters (`*`, `?`, `[…]`): the shell may
    /// replace it with file names. Its text is its source.
    Glob,
    /// It holds an expansion (`$X`, `${…}`, `$(…)`, `` `…` ``, `<(…)`,
    /// `$((…))`, a leading `~`), or brace expansion over the limits. Its
    /// text is its source.
    Dynamic,
}

/// A leading `NAME=value` (or `NAME+=value`) assignment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Assignment {
    /// Its source span.
    pub span: Range<usize>,
    /// The variable name.
    pub name: String,
    /// True for `+=`.
    pub append: bool,
    /// The value (an array `(…)` is a dynamic word with its source text).
    pub value: Word,
}

/// A redirection.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Redirection {
    /// Its source span (the operator and its target).
    pub span: Range<usize>,
    /// The file descriptor written before the operator (`2>`), if any.
    pub fd: Option<u32>,
    /// The operator.
    pub op: RedirectionOp,
    /// The target: a file, a descriptor (`>&2`), a here-document's
    /// delimiter, or a here-string's word.
    pub target: Word,
    /// A here-document's body (its text decoded when the delimiter is
    /// quoted; dynamic when it holds expansions). (Boxed: most
    /// redirections have none, and the record stays small.)
    pub body: Option<Box<Word>>,
    /// The first of a compound command's redirections. A command's list
    /// holds its own, then those of each compound command around it,
    /// innermost first; bash applies the outer ones first, so for one
    /// descriptor the last of the first part that has one wins.
    #[serde(skip)]
    pub(crate) compound_first: bool,
}

/// A redirection operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RedirectionOp {
    /// `<`
    Read,
    /// `>`
    Write,
    /// `>>`
    Append,
    /// `>|`
    Clobber,
    /// `<>`
    ReadWrite,
    /// `&>`
    WriteAll,
    /// `&>>`
    AppendAll,
    /// `>&` (a descriptor, or a file when the target is not a number or `-`)
    DupOut,
    /// `<&`
    DupIn,
    /// `<<`
    HereDoc,
    /// `<<-`
    HereDocStrip,
    /// `<<<`
    HereString,
}

impl RedirectionOp {
    /// The operator as written.
    pub fn as_str(self) -> &'static str {
        match self {
            RedirectionOp::Read => "<",
            RedirectionOp::Write => ">",
            RedirectionOp::Append => ">>",
            RedirectionOp::Clobber => ">|",
            RedirectionOp::ReadWrite => "<>",
            RedirectionOp::WriteAll => "&>",
            RedirectionOp::AppendAll => "&>>",
            RedirectionOp::DupOut => ">&",
            RedirectionOp::DupIn => "<&",
            RedirectionOp::HereDoc => "<<",
            RedirectionOp::HereDocStrip => "<<-",
            RedirectionOp::HereString => "<<<",
        }
    }
}

/// Why a reading is incomplete, and where.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Incomplete {
    /// The reason.
    pub reason: Reason,
    /// The script the span points into.
    pub script: usize,
    /// Where (a byte range of that script).
    pub span: Range<usize>,
}

/// Why a reading is incomplete.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Reason {
    /// A quote, parenthesis, brace, substitution, compound command or
    /// here-document is not closed.
    Unterminated,
    /// A separator or operator with an empty side (`ls ;; pwd`, `ls &&`).
    EmptyCommand,
    /// A token where it cannot stand (`echo (`, `fi` without `if`).
    Unexpected,
    /// A redirection without its target.
    MissingTarget,
    /// The program name is dynamic (`$CMD`, `$(…)`, a glob).
    DynamicProgram,
    /// A shell reads text that is not literal (`sh -c "$X"`, `curl … | sh`),
    /// `eval` a dynamic argument, or `source` a file named at run time.
    DynamicScript,
    /// Nesting deeper than [`MAX_DEPTH`].
    TooDeep,
    /// Input longer than [`MAX_INPUT`].
    TooLong,
    /// Brace expansion over [`MAX_BRACE_WORDS`] or
    /// [`MAX_COMMAND_BRACE_WORDS`].
    TooManyWords,
    /// The scripts and brace expansions the command makes are over
    /// [`MAX_MADE_TEXT`] together.
    TooMuchText,
    /// The command line holds more commands, substitutions and scripts
    /// than one reading reads ([`MAX_WORK`]); reading stopped there.
    TooMuchWork,
    /// A construct the reader does not read (`coproc`, an ambiguous `$((`).
    Unsupported,
    /// A value the command sets could run as code: arithmetic, a subscript,
    /// `${!x}` or `${x@P}` on it, or on a positional parameter
    /// (`x='a[$(…)]'; echo $((x))`).
    ValueRunsCode,
}

impl Reason {
    /// A one-clause description.
    pub fn describe(self) -> &'static str {
        match self {
            Reason::Unterminated => "unterminated quote, substitution, group or here-document",
            Reason::EmptyCommand => "a separator or operator has an empty side",
            Reason::Unexpected => "a token stands where it cannot",
            Reason::MissingTarget => "a redirection has no target",
            Reason::DynamicProgram => "the program name is dynamic",
            Reason::DynamicScript => "a shell reads text that is not literal",
            Reason::TooDeep => "nesting is deeper than 16",
            Reason::TooLong => "the command is longer than 64 KiB",
            Reason::TooManyWords => "brace expansion gives too many words",
            Reason::TooMuchText => {
                "the scripts and brace expansions it makes are longer than 64 KiB together"
            }
            Reason::TooMuchWork => {
                "it holds more commands, substitutions and scripts than one reading reads"
            }
            Reason::Unsupported => "a construct the reader does not read",
            Reason::ValueRunsCode => "a value the command sets could run as code",
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// Writes a word as the case files and `explain` show it: a literal or
/// decoded word as itself (single-quoted when it is empty or holds blanks,
/// quotes, backslashes, operators, `*`, `?`, `«»`, or starts with `~` or `#`), a dynamic or glob word as `«source»`.
impl fmt::Display for Word {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_dynamic() {
            return write!(f, "«{}»", self.text());
        }
        write_quoted(f, self.text())
    }
}

fn write_quoted(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    let plain = !s.is_empty()
        && !s.starts_with(['~', '#'])
        && !s.chars().any(|c| {
            matches!(
                c,
                ' ' | '\t'
                    | '\n'
                    | '\''
                    | '"'
                    | '\\'
                    | '«'
                    | '»'
                    | ';'
                    | '&'
                    | '|'
                    | '<'
                    | '>'
                    | '('
                    | ')'
                    | '*'
                    | '?'
            )
        });
    if plain {
        return f.write_str(s);
    }
    f.write_str("'")?;
    for (i, part) in s.split('\'').enumerate() {
        if i > 0 {
            f.write_str("'\\''")?;
        }
        f.write_str(part)?;
    }
    f.write_str("'")
}

/// Writes a command on one line: assignments, words, then redirections
/// (`FOO=1 git status 2>/dev/null`); a here-document as `<<delimiter`.
impl fmt::Display for CommandDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.command;
        let mut first = true;
        let mut sep = |f: &mut fmt::Formatter<'_>| -> fmt::Result {
            if !first {
                f.write_str(" ")?;
            }
            first = false;
            Ok(())
        };
        for a in c.assignments(self.reading) {
            sep(f)?;
            write!(
                f,
                "{}{}={}",
                a.name,
                if a.append { "+" } else { "" },
                a.value
            )?;
        }
        for w in c.words(self.reading) {
            sep(f)?;
            write!(f, "{w}")?;
        }
        for r in c.redirections(self.reading) {
            sep(f)?;
            if let Some(fd) = r.fd {
                write!(f, "{fd}")?;
            }
            write!(f, "{}{}", r.op.as_str(), r.target)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long command's words are most of its reading's memory (a 64 KiB
    /// command of one-letter words makes 32,000 of them).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn a_word_is_48_bytes_and_a_command_44() {
        assert_eq!(std::mem::size_of::<Text>(), 24);
        assert_eq!(std::mem::size_of::<Word>(), 48);
        assert_eq!(std::mem::size_of::<Command>(), 44);
        assert_eq!(std::mem::size_of::<Redirection>(), 88);
    }

    #[test]
    fn a_word_of_source_text_reads_its_span() {
        let script: Arc<str> = Arc::from("echo héllo 'a b'");
        let w = Word::source(&script, 5..11, WordKind::Literal);
        assert_eq!(w.text(), "héllo");
        // A span off the character boundaries keeps a lossy copy.
        let w = Word::source(&script, 5..7, WordKind::Literal);
        assert_eq!(w.text(), "h\u{fffd}");
        let long = "x".repeat(INLINE + 1);
        let w = Word::copied(0..0, &long, WordKind::Decoded);
        assert_eq!(w.text(), long);
        let w = Word::copied(0..0, "a b", WordKind::Decoded);
        assert_eq!(w.text(), "a b");
        assert_eq!(
            format!("{w:?}"),
            "Word { span: 0..0, text: \"a b\", kind: Decoded }"
        );
        assert_eq!(
            serde_json::to_string(&w).unwrap_or_default(),
            r#"{"span":{"start":0,"end":0},"text":"a b","kind":"decoded"}"#
        );
    }
}
