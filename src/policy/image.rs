//! Precompiled policies: a [`LoadedPolicy`] and its compiled matchers in
//! one file that loads without parsing or compiling anything.
//!
//! A [`PolicyImage`] holds
//! - the toolgate build that made it ([`build_id`]) and the recipe it was
//!   made from (the policy options, as text);
//! - every file the load read, with the checksum of its text, every file
//!   it looked for and did not find, and every directory it listed
//!   ([`Probe`]s);
//! - the policy itself: its sources, its rules with their provenance (file,
//!   list, index, text, tuff `reason`), the load's warnings, the settings
//!   that bear on evaluation;
//! - the compiled matchers ([`Policy::matchers_to_bytes`]).
//!
//! # Trust
//!
//! An image is never trusted. [`PolicyImage::from_bytes`] refuses one that
//! is not an image, has another format version, fails its checksum, was
//! made by another toolgate build, or does not decode to a consistent
//! policy (every id, count and enumeration is checked; the matchers must
//! have been built from exactly these rules). [`PolicyImage::check_fresh`]
//! refuses one whose files changed: a file read has other contents or is
//! gone, a file looked for now exists, a directory listed holds other
//! files. Each refusal is an [`ErrorKind::Image`] error naming the image.
//!
//! A [`DecidingImage`] (what a hook loads) checks the same, but leaves its
//! rules in the image: every rule record is walked and checked at load,
//! as decoding would check it, and a rule is decoded when a decision
//! first asks for it. A damaged rule is refused at load, never found when
//! a call is decided.
//!
//! # Format
//!
//! The frame of `crate::compile` images (magic, kind `compiled`, version,
//! length, checksum), then: the build id, the recipe, the policy's strings
//! (one block, checked as UTF-8 once), the policy (probes, sources, rules,
//! warnings, settings; each string an offset and a length in the block),
//! the matchers — blocks and lists length-prefixed, integers
//! little-endian.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use super::{AdditionalDirectory, LoadedPolicy, PermissionMode, Source, SourceKind, SourceRoot};
use super::{Warning, settings};
use crate::compile::Policy;
use crate::compile::image::{
    Bad, KIND_COMPILED, PatternKind, Reader, RuleSource, RuleTable, Writer, checksum, frame,
    image_error, unframe,
};
use crate::error::{Error, ErrorKind};
use crate::eval::Evaluator;
use crate::rule::{
    Anchor, CommandForm, CommandPattern, Dialect, DomainLabel, DomainPattern, Effect, GlobPiece,
    List, PathPattern, Pattern, Provenance, Rule, SegPiece, Segment, ToolMatch,
};

/// The magic bytes every toolgate image starts with.
const MAGIC: &[u8] = b"toolgate";

/// Something a policy load depended on, recorded so that an image of it
/// can tell whether it is still what a load would give.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    /// A file read, and the checksum of the text read.
    File {
        /// The file, as it was opened.
        path: PathBuf,
        /// The checksum of its contents.
        hash: u64,
        /// Its status when read, when that status can later stand for
        /// its contents ([`Stamp`]).
        stamp: Option<Stamp>,
    },
    /// A file looked for and not found (a settings file of the hierarchy, a
    /// place an installed tuff policy was searched for).
    Missing {
        /// The file, as it was looked for.
        path: PathBuf,
    },
    /// A directory of managed drop-in settings, and the files it held.
    Listing {
        /// The directory.
        dir: PathBuf,
        /// The settings files it held, sorted.
        names: Vec<String>,
    },
}

/// What a file's status said when its contents were read: device, inode,
/// size, and the times of its last modification and last status change
/// (to the nanosecond). A file whose status still says all of this has
/// the contents it had, so freshness is one `stat` instead of reading
/// and checksumming the file.
///
/// That holds only for a status that had *settled* when it was taken: a
/// file changed within [`Stamp::SETTLE`] of its reading gets no stamp
/// (and is read and checksummed at every check, as files without one
/// are). Every change of a file's contents sets its status-change time to
/// the present, which nobody can set otherwise; a change after the
/// reading therefore gives a later time than one taken more than
/// `SETTLE` before it, even on file systems with coarse times (FAT's
/// two-second modification times) and with the kernel's file clock a tick
/// behind the system clock. What it does not cover is a file server
/// whose clock runs more than `SETTLE` behind, changing a file twice
/// within one of its clock ticks around the reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    /// How long before a file is read its last change must lie for its
    /// status to be recorded.
    pub const SETTLE: std::time::Duration = std::time::Duration::from_secs(3);

    /// The stamp of a file's status (`None` where the platform has no
    /// inode numbers and status-change times).
    #[cfg(unix)]
    pub fn of(m: &std::fs::Metadata) -> Option<Stamp> {
        use std::os::unix::fs::MetadataExt;
        Some(Stamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }

    /// The stamp of a file's status (`None` where the platform has no
    /// inode numbers and status-change times).
    #[cfg(not(unix))]
    pub fn of(_m: &std::fs::Metadata) -> Option<Stamp> {
        None
    }

    /// The stamp of the file at `path` whose contents have the checksum
    /// `hash`, if it can stand for them: the file is read again through
    /// one open, between two identical statuses of the open file, its
    /// contents have that checksum, and its last change lies more than
    /// `settle` before this began.
    pub(crate) fn taken(path: &Path, hash: u64, settle: std::time::Duration) -> Option<Stamp> {
        use std::io::Read as _;
        let began = std::time::SystemTime::now();
        let mut file = std::fs::File::open(path).ok()?;
        let before = Stamp::of(&file.metadata().ok()?)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).ok()?;
        let after = Stamp::of(&file.metadata().ok()?)?;
        let settled = |(secs, nanos): (i64, i64)| {
            let limit = began.checked_sub(settle)?;
            let since = limit.duration_since(std::time::UNIX_EPOCH).ok()?;
            let (limit_secs, limit_nanos) = (
                i64::try_from(since.as_secs()).ok()?,
                i64::from(since.subsec_nanos()),
            );
            Some((secs, nanos) < (limit_secs, limit_nanos))
        };
        let good = before == after
            && checksum(&bytes) == hash
            && settled(before.mtime) == Some(true)
            && settled(before.ctime) == Some(true);
        good.then_some(before)
    }
}

impl Probe {
    /// A file read with contents `text`.
    pub(crate) fn read(path: &Path, text: &str) -> Probe {
        let hash = checksum(text.as_bytes());
        Probe::File {
            path: absolute(path),
            hash,
            stamp: Stamp::taken(path, hash, Stamp::SETTLE),
        }
    }

    /// A file looked for and not found.
    pub(crate) fn missing(path: &Path) -> Probe {
        Probe::Missing {
            path: absolute(path),
        }
    }

    /// `None` when what was recorded still holds, else why not (a clause).
    /// A file read is unchanged when its status is still its [`Stamp`]
    /// (one `stat`), else when its contents still have their checksum.
    pub fn changed(&self) -> Option<String> {
        match self {
            Probe::File { path, stamp, .. }
                if stamp.is_some()
                    && std::fs::metadata(path).is_ok_and(|m| Stamp::of(&m) == *stamp) =>
            {
                None
            }
            Probe::File { path, hash, .. } => match std::fs::read(path) {
                Ok(bytes) if checksum(&bytes) == *hash => None,
                Ok(_) => Some(format!("{} changed", path.display())),
                Err(_) => Some(format!("{} can no longer be read", path.display())),
            },
            Probe::Missing { path } => path
                .is_file()
                .then(|| format!("{} appeared", path.display())),
            Probe::Listing { dir, names } => match settings::drop_in_names(dir) {
                Ok(now) if now == *names => None,
                _ => Some(format!("the files in {} changed", dir.display())),
            },
        }
    }
}

/// `path` made absolute against the current directory (as it is when
/// that fails).
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The toolgate build this process is: the crate version, the image format,
/// and the size and modification time of the running executable (so a
/// rebuilt or reinstalled toolgate never trusts images of another).
/// Debug builds honour `TOOLGATE_TEST_BUILD_ID` in its place (for tests).
pub fn build_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        if cfg!(debug_assertions) {
            if let Ok(id) = std::env::var("TOOLGATE_TEST_BUILD_ID") {
                return id;
            }
        }
        let exe = std::env::current_exe()
            .and_then(std::fs::metadata)
            .map(|m| {
                let t = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                format!("{}-{t}", m.len())
            })
            .unwrap_or_else(|_| "unknown".to_string());
        format!(
            "toolgate {} {}-{} {exe}",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::ARCH,
            if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
        )
    })
}

/// Whether the file at `path` starts like a toolgate image (false when it
/// cannot be read).
pub fn file_is_image(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| is_image(&head))
}

/// The bytes of the file at `path` when it starts like a toolgate image,
/// read through one open (`None` when it does not, or cannot be opened or
/// read that far: what loading it as a policy file reports); an error
/// naming it when an image cannot be read to its end.
pub fn read_if_image(path: &Path) -> Result<Option<Vec<u8>>, Error> {
    use std::io::Read as _;
    let Ok(mut file) = std::fs::File::open(path) else {
        return Ok(None);
    };
    let mut head = [0u8; MAGIC.len()];
    if file.read_exact(&mut head).is_err() || !is_image(&head) {
        return Ok(None);
    }
    let name = path.display().to_string();
    let fail = |e: std::io::Error| unreadable(&e, &name);
    // As long as the file was when opened: an image that is being
    // rewritten in place fails its frame's length and checksum anyway.
    let len = file.metadata().map_err(fail)?.len();
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(usize::try_from(len).unwrap_or(usize::MAX))
        .map_err(|_| fail(std::io::Error::from(std::io::ErrorKind::OutOfMemory)))?;
    bytes.extend_from_slice(&head);
    // Into the buffer as it is (not zeroed first), and no read past the
    // length.
    let rest = len.saturating_sub(head.len() as u64);
    (&mut file)
        .take(rest)
        .read_to_end(&mut bytes)
        .map_err(fail)?;
    Ok(Some(bytes))
}

/// Whether `bytes` start like a toolgate image (of any kind or version).
pub fn is_image(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// A precompiled policy: see the [module docs](self).
#[derive(Clone, Debug)]
pub struct PolicyImage {
    build: String,
    recipe: String,
    policy: LoadedPolicy,
    compiled: Policy,
}

impl PolicyImage {
    /// An image of `policy` compiled as `compiled` (which must hold its
    /// rules), made from `recipe` (the options that name its sources).
    pub fn new(recipe: &str, policy: LoadedPolicy, compiled: Policy) -> PolicyImage {
        PolicyImage {
            build: build_id().to_string(),
            recipe: recipe.to_string(),
            policy,
            compiled,
        }
    }

    /// The toolgate build that made the image.
    pub fn build(&self) -> &str {
        &self.build
    }

    /// The recipe the image was made from.
    pub fn recipe(&self) -> &str {
        &self.recipe
    }

    /// The policy.
    pub fn policy(&self) -> &LoadedPolicy {
        &self.policy
    }

    /// The policy and its compiled matchers.
    pub fn into_parts(self) -> (LoadedPolicy, Policy) {
        (self.policy, self.compiled)
    }

    /// The image as bytes; an error when a path it must record is not
    /// UTF-8.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        let mut w = Writer::default();
        w.bytes(self.build.as_bytes());
        w.bytes(self.recipe.as_bytes());
        let mut p = Enc::default();
        write_policy(&mut p, &self.policy)?;
        w.bytes(&p.strings);
        w.bytes(&p.w.buf);
        // Loading reads the rules from these same bytes and does not
        // compare their fingerprint (see `decode`): none is computed.
        let matchers = self.compiled.matchers_to_bytes_with(false);
        w.bytes(&matchers);
        Ok(frame(KIND_COMPILED, w.buf))
    }

    /// Loads an image, validating everything but freshness (see
    /// [`PolicyImage::check_fresh`]); `name` names it in errors.
    pub fn from_bytes(bytes: &[u8], name: &str) -> Result<PolicyImage, Error> {
        PolicyImage::decode(bytes).map_err(|e| {
            image_error(format!("{}: rebuild it with toolgate compile", e.message()))
                .with_source(name)
        })
    }

    fn decode(bytes: &[u8]) -> Result<PolicyImage, Error> {
        let (recipe, policy, compiled) = decode_parts(bytes, true)?;
        Ok(PolicyImage {
            build: build_id().to_string(),
            recipe,
            policy,
            compiled,
        })
    }

    /// Reads the image from `path` ([`PolicyImage::from_bytes`]).
    pub fn read(path: &Path) -> Result<PolicyImage, Error> {
        let name = path.display().to_string();
        PolicyImage::from_bytes(&read_file(path, &name)?, &name)
    }

    /// An error naming the image (`name`) and the first of its files that
    /// changed since it was made, if one did.
    pub fn check_fresh(&self, name: &str) -> Result<(), Error> {
        check_fresh(self.policy.probes(), name)
    }
}

/// An image decoded to decide calls with, and nothing else (a hook): its
/// rules are checked and left in the image, each decoded when a decision
/// first asks for it (the image is kept as long as the matchers are);
/// they are neither kept a second time in policy order nor compared with
/// themselves; the load's warnings are skipped. Validated as
/// [`PolicyImage::from_bytes`] does.
#[derive(Debug)]
pub struct DecidingImage {
    recipe: String,
    /// The policy without its rules and warnings: its sources, settings
    /// and probes.
    facts: LoadedPolicy,
    compiled: Policy,
}

impl DecidingImage {
    /// Loads an image ([`PolicyImage::from_bytes`]), keeping its bytes.
    pub fn from_bytes(bytes: Vec<u8>, name: &str) -> Result<DecidingImage, Error> {
        let bytes = Arc::new(bytes);
        let (recipe, facts, compiled) = decode_image(&bytes, Keep::Lazy(Arc::clone(&bytes)))
            .map_err(|e| {
                image_error(format!("{}: rebuild it with toolgate compile", e.message()))
                    .with_source(name)
            })?;
        Ok(DecidingImage {
            recipe,
            facts,
            compiled,
        })
    }

    /// Reads the image from `path` ([`PolicyImage::read`]).
    pub fn read(path: &Path) -> Result<DecidingImage, Error> {
        let name = path.display().to_string();
        DecidingImage::from_bytes(read_file(path, &name)?, &name)
    }

    /// The recipe the image was made from.
    pub fn recipe(&self) -> &str {
        &self.recipe
    }

    /// [`PolicyImage::check_fresh`].
    pub fn check_fresh(&self, name: &str) -> Result<(), Error> {
        check_fresh(self.facts.probes(), name)
    }

    /// The evaluator of the image's policy.
    pub fn into_evaluator(self) -> Result<Evaluator, Error> {
        Evaluator::with_compiled_facts(&self.facts, self.compiled)
    }
}

/// The bytes of the image at `path` (`name` names it in errors).
fn read_file(path: &Path, name: &str) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|e| unreadable(&e, name))
}

/// The error of an image (`name`) that cannot be read.
fn unreadable(e: &std::io::Error, name: &str) -> Error {
    Error::new(
        ErrorKind::Io,
        format!("cannot read the image: {}", crate::rule::tuff::io_clause(e)),
    )
    .with_source(name)
}

/// An error naming the image (`name`) and the first of `probes` that
/// changed since it was made, if one did.
fn check_fresh(probes: &[Probe], name: &str) -> Result<(), Error> {
    for p in probes {
        if let Some(why) = p.changed() {
            return Err(image_error(format!(
                "image is stale: {why} since it was compiled; compile it again"
            ))
            .with_source(name));
        }
    }
    Ok(())
}

/// Decodes an image made by this build: its recipe, its policy and the
/// compiled matchers. With `whole`, the policy keeps its rules (a copy of
/// those the matchers hold) and its warnings; without, it has neither.
fn decode_parts(bytes: &[u8], whole: bool) -> Result<(String, LoadedPolicy, Policy), Error> {
    decode_image(bytes, if whole { Keep::Whole } else { Keep::Facts })
}

/// What a decoding keeps of the policy and how it holds its rules.
enum Keep {
    /// The policy with its rules (a copy of those the matchers hold) and
    /// warnings; the matchers' rules decoded.
    Whole,
    /// The policy without rules and warnings; the matchers' rules decoded.
    Facts,
    /// The policy without rules and warnings; the matchers' rules left in
    /// the image (which is `bytes`), checked, and decoded one by one when
    /// first asked for ([`ImageRules`]).
    Lazy(Arc<Vec<u8>>),
}

fn decode_image(bytes: &[u8], keep: Keep) -> Result<(String, LoadedPolicy, Policy), Error> {
    let payload = unframe(KIND_COMPILED, bytes)?;
    let mut r = Reader::new(payload);
    let build = r.str()?;
    if build != build_id() {
        return Err(image_error(format!(
            "image was made by another toolgate build ({build}; this is {})",
            build_id()
        )));
    }
    let recipe = r.str()?.to_string();
    let strings = r.bytes()?;
    let records = r.bytes()?;
    let mut d = Dec {
        r: Reader::new(records),
        strings: Strings::Checked(std::str::from_utf8(strings).map_err(|_| bad("string"))?),
    };
    let (policy, rules, order) = read_policy(&mut d, &keep)?;
    // The buffer the matchers may point into (a hook's image, kept).
    let shared = match &keep {
        Keep::Lazy(buf) => Some(Arc::clone(buf)),
        Keep::Whole | Keep::Facts => None,
    };
    let rules = match (rules, keep) {
        (Rules::Decoded(rules), _) => RuleTable::Owned(rules),
        (Rules::Heads(heads, names), Keep::Lazy(buf)) => {
            // Where the two blocks are in the image (both lie in it).
            let at = |part: &[u8]| part.as_ptr() as usize - bytes.as_ptr() as usize;
            let cells = (0..heads.len()).map(|_| OnceLock::new()).collect();
            RuleTable::Image(Arc::new(ImageRules {
                strings: at(strings)..at(strings) + strings.len(),
                records: at(records)..at(records) + records.len(),
                buf,
                names,
                heads,
                cells,
                all: OnceLock::new(),
            }))
        }
        (Rules::Heads(..), _) => return Err(image_error("image rules were not decoded")),
    };
    if d.r.pos != d.r.buf.len() {
        return Err(image_error("image has trailing bytes"));
    }
    let matchers = r.bytes()?;
    if r.pos != payload.len() {
        return Err(image_error("image has trailing bytes"));
    }
    // The rules were read from this checksummed image, written with the
    // matchers by this very build: their fingerprint need not be computed
    // again (the costliest part of a load), nor their precedence order.
    let compiled = Policy::from_image_numbered(rules, order, matchers, false, shared.as_ref())?;
    Ok((recipe, policy, compiled))
}

// ---------------------------------------------------------------------------
// Encoding. Every enumeration is a byte; decoding refuses unknown values.
// The policy's strings are kept apart, in one block: each string is its
// offset and length in the block, checked as UTF-8 when it is read.

/// Writer of the policy: its structure, and its strings apart.
#[derive(Default)]
struct Enc {
    w: Writer,
    strings: Vec<u8>,
    /// Where the text of the rule being written is in `strings`: the
    /// strings of its pattern, most often pieces of its text, point into
    /// it instead of being written again (a smaller image to read).
    text: Option<(usize, usize)>,
}

impl Enc {
    fn u8(&mut self, x: u8) {
        self.w.u8(x);
    }
    fn u32(&mut self, x: u32) {
        self.w.u32(x);
    }
    fn u64(&mut self, x: u64) {
        self.w.u64(x);
    }
    fn len(&mut self, x: usize) {
        self.w.len(x);
    }
    /// A string (as bytes: always a `str`'s).
    fn bytes(&mut self, b: &[u8]) {
        use bstr::ByteSlice as _;
        let within = self.text.and_then(|(at, n)| {
            let text = self.strings.get(at..at + n)?;
            Some(at + text.find(b)?)
        });
        let at = match within {
            Some(at) => at,
            None => {
                let at = self.strings.len();
                self.strings.extend_from_slice(b);
                at
            }
        };
        self.w.len(at);
        self.w.len(b.len());
    }

    /// The text of a rule, which the strings after it may point into.
    fn text(&mut self, text: &str) {
        self.text = None;
        let at = self.strings.len();
        self.bytes(text.as_bytes());
        self.text = Some((at, text.len()));
    }
}

/// Reader of the policy written by [`Enc`].
struct Dec<'a> {
    r: Reader<'a>,
    /// The block of strings: checked as UTF-8 as a whole when an image is
    /// loaded (one pass, far cheaper than thousands of short ones), or,
    /// for a rule decoded on first use, string by string.
    strings: Strings<'a>,
}

/// The block of strings of a policy.
#[derive(Clone, Copy)]
enum Strings<'a> {
    /// Checked as a whole: a string's ends must fall on character
    /// boundaries.
    Checked(&'a str),
    /// Not checked: each string is checked as it is read.
    Raw(&'a [u8]),
}

impl<'a> Dec<'a> {
    fn u8(&mut self) -> Result<u8, Bad> {
        self.r.u8()
    }
    fn u32(&mut self) -> Result<u32, Bad> {
        self.r.u32()
    }
    fn u64(&mut self) -> Result<u64, Bad> {
        self.r.u64()
    }
    fn len(&mut self) -> Result<usize, Bad> {
        self.r.len()
    }
    /// A string: its offset and length in the block, its bytes UTF-8.
    fn str(&mut self) -> Result<&'a str, Bad> {
        let at = self.r.u32()? as usize;
        let n = self.r.u32()? as usize;
        let end = at.checked_add(n).ok_or_else(|| bad("string"))?;
        match self.strings {
            Strings::Checked(s) => s.get(at..end),
            Strings::Raw(b) => b.get(at..end).and_then(|b| std::str::from_utf8(b).ok()),
        }
        .ok_or_else(|| bad("string"))
    }

    /// Skips a string, checking it as [`Dec::str`] does.
    fn skip_str(&mut self) -> Result<(), Bad> {
        self.str().map(drop)
    }
}

fn bad(what: &str) -> Bad {
    Bad::from(image_error(format!("image holds an invalid {what}")))
}

fn path_str(p: &Path) -> Result<&str, Error> {
    p.to_str().ok_or_else(|| {
        Error::new(
            ErrorKind::Image,
            format!("cannot record {} in an image: not utf-8", p.display()),
        )
    })
}

fn w_opt(w: &mut Enc, s: Option<&str>) {
    match s {
        None => w.u8(0),
        Some(s) => {
            w.u8(1);
            w.bytes(s.as_bytes());
        }
    }
}

fn r_opt(r: &mut Dec<'_>) -> Result<Option<String>, Bad> {
    match r.u8()? {
        0 => Ok(None),
        1 => Ok(Some(r.str()?.to_string())),
        _ => Err(bad("option")),
    }
}

fn r_bool(r: &mut Dec<'_>) -> Result<bool, Bad> {
    match r.u8()? {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(bad("flag")),
    }
}

fn r_index(r: &mut Dec<'_>, bound: usize) -> Result<usize, Bad> {
    let i = r.u32()? as usize;
    if i >= bound {
        return Err(bad("index"));
    }
    Ok(i)
}

fn write_policy(w: &mut Enc, p: &LoadedPolicy) -> Result<(), Error> {
    w.len(p.probes.len());
    for probe in &p.probes {
        match probe {
            Probe::File { path, hash, stamp } => {
                w.u8(if stamp.is_some() { 3 } else { 0 });
                w.bytes(path_str(path)?.as_bytes());
                w.u64(*hash);
                if let Some(st) = stamp {
                    for x in [st.dev, st.ino, st.size] {
                        w.u64(x);
                    }
                    for (secs, nanos) in [st.mtime, st.ctime] {
                        w.u64(secs as u64);
                        w.u64(nanos as u64);
                    }
                }
            }
            Probe::Missing { path } => {
                w.u8(1);
                w.bytes(path_str(path)?.as_bytes());
            }
            Probe::Listing { dir, names } => {
                w.u8(2);
                w.bytes(path_str(dir)?.as_bytes());
                w.len(names.len());
                for n in names {
                    w.bytes(n.as_bytes());
                }
            }
        }
    }
    w.len(p.sources.len());
    for s in &p.sources {
        w.bytes(s.name.as_bytes());
        w_opt(w, s.path.as_deref().map(path_str).transpose()?);
        w.u8(source_kind_code(s.kind));
        match &s.root {
            SourceRoot::Project => w.u8(0),
            SourceRoot::Dir(d) => {
                w.u8(1);
                w.bytes(path_str(d)?.as_bytes());
            }
        }
        w_opt(w, s.tuff_id.as_deref());
    }
    let names: Vec<Arc<str>> = p.sources.iter().map(|s| s.name.clone()).collect();
    // In precedence order, as the compiled policy numbers them (see
    // `read_policy`), each with its place in policy order.
    let mut order: Vec<usize> = (0..p.rules.len().min(p.rule_sources.len())).collect();
    order.sort_by_key(|&i| (p.rules.get(i).map(|r| r.effect), i));
    w.len(order.len());
    for i in order {
        if let (Some(rule), Some(src)) = (p.rules.get(i), p.rule_sources.get(i)) {
            write_rule(w, rule, &names);
            w.len(i);
            w.len(*src);
        }
    }
    w.len(p.warnings.len());
    for warning in &p.warnings {
        write_error(w, warning.as_error());
    }
    match p.default_mode {
        None => w.u8(0),
        Some((rank, mode, source)) => {
            w.u8(1);
            w.u8(rank);
            w.u8(mode_code(mode));
            w.len(source);
        }
    }
    w.len(p.additional_directories.len());
    for d in &p.additional_directories {
        w.bytes(d.path.as_bytes());
        w.len(d.source);
    }
    w.u8(u8::from(p.disable_bypass));
    match p.command_line {
        None => w.u8(0),
        Some(i) => {
            w.u8(1);
            w.len(i);
        }
    }
    for c in p.command_line_counts {
        w.len(c);
    }
    Ok(())
}

/// The rules of an image in precedence order (deny, ask, allow, each in
/// policy order: the numbering of the compiled policy).
enum Rules {
    /// Decoded.
    Decoded(Vec<Rule>),
    /// Checked and left in the image: where each is, its effect and its
    /// pattern's kind; and the sources' names.
    Heads(Vec<Head>, Vec<Arc<str>>),
}

/// A rule left in the image: where its record starts in the block of
/// records, its effect and the kind of its pattern.
#[derive(Clone, Copy, Debug)]
struct Head {
    at: u32,
    effect: Effect,
    kind: PatternKind,
}

/// Reads the policy and its rules in precedence order, with the place of
/// each in policy order. With [`Keep::Whole`], the policy holds its rules
/// (in policy order) and its warnings, else neither; with [`Keep::Lazy`]
/// the rules are checked, not decoded.
fn read_policy(r: &mut Dec<'_>, keep: &Keep) -> Result<(LoadedPolicy, Rules, Vec<usize>), Bad> {
    let whole = matches!(keep, Keep::Whole);
    let lazy = matches!(keep, Keep::Lazy(_));
    let mut p = LoadedPolicy::new();
    let n = r.len()?;
    for _ in 0..n {
        let probe = match r.u8()? {
            code @ (0 | 3) => Probe::File {
                path: PathBuf::from(r.str()?),
                hash: r.u64()?,
                stamp: if code == 3 {
                    Some(Stamp {
                        dev: r.u64()?,
                        ino: r.u64()?,
                        size: r.u64()?,
                        mtime: (r.u64()? as i64, r.u64()? as i64),
                        ctime: (r.u64()? as i64, r.u64()? as i64),
                    })
                } else {
                    None
                },
            },
            1 => Probe::Missing {
                path: PathBuf::from(r.str()?),
            },
            2 => {
                let dir = PathBuf::from(r.str()?);
                let k = r.len()?;
                let mut names = Vec::with_capacity(k);
                for _ in 0..k {
                    names.push(r.str()?.to_string());
                }
                Probe::Listing { dir, names }
            }
            _ => return Err(bad("probe")),
        };
        p.probes.push(probe);
    }
    let n = r.len()?;
    for _ in 0..n {
        let name: Arc<str> = Arc::from(r.str()?);
        let path = r_opt(r)?.map(PathBuf::from);
        let kind = source_kind(r.u8()?)?;
        let root = match r.u8()? {
            0 => SourceRoot::Project,
            1 => SourceRoot::Dir(PathBuf::from(r.str()?)),
            _ => return Err(bad("source root")),
        };
        let tuff_id = r_opt(r)?;
        p.sources.push(Source {
            name,
            path,
            kind,
            root,
            tuff_id,
        });
    }
    let names: Vec<Arc<str>> = p.sources.iter().map(|s| s.name.clone()).collect();
    let n = r.len()?;
    let mut rules = Vec::with_capacity(if lazy { 0 } else { n });
    let mut heads = Vec::with_capacity(if lazy { n } else { 0 });
    let mut order = Vec::with_capacity(n);
    let mut rule_sources = Vec::with_capacity(if whole { n } else { 0 });
    for _ in 0..n {
        if lazy {
            let at = u32::try_from(r.r.pos).map_err(|_| bad("rule"))?;
            let (effect, kind) = skip_rule(r, names.len())?;
            heads.push(Head { at, effect, kind });
        } else {
            rules.push(read_rule(r, &names)?);
        }
        order.push(r_index(r, n)?);
        let src = r_index(r, p.sources.len())?;
        if whole {
            rule_sources.push(src);
        }
    }
    // Whether the rules are in precedence order, each place in policy
    // order given once, is checked where they are numbered
    // (`Policy::from_image_numbered`); the policy-order list is checked
    // for the same when it is made.
    if whole {
        let mut slots: Vec<Option<(Rule, usize)>> = vec![None; n];
        for ((rule, &i), src) in rules.iter().zip(&order).zip(rule_sources) {
            match slots.get_mut(i) {
                Some(slot @ None) => *slot = Some((rule.clone(), src)),
                _ => return Err(bad("rule order")),
            }
        }
        for slot in slots {
            let (rule, src) = slot.ok_or_else(|| bad("rule order"))?;
            p.rules.push(rule);
            p.rule_sources.push(src);
        }
    }
    let n = r.len()?;
    for _ in 0..n {
        let w = read_error(r)?;
        if whole {
            p.warnings.push(Warning::new(w));
        }
    }
    p.default_mode = match r.u8()? {
        0 => None,
        1 => {
            let rank = r.u8()?;
            let mode = mode(r.u8()?)?;
            Some((rank, mode, r_index(r, p.sources.len())?))
        }
        _ => return Err(bad("default mode")),
    };
    let n = r.len()?;
    for _ in 0..n {
        let path = r.str()?.to_string();
        let source = r_index(r, p.sources.len())?;
        p.additional_directories
            .push(AdditionalDirectory { path, source });
    }
    p.disable_bypass = r_bool(r)?;
    p.command_line = match r.u8()? {
        0 => None,
        1 => Some(r_index(r, p.sources.len())?),
        _ => return Err(bad("source index")),
    };
    for c in &mut p.command_line_counts {
        *c = r.u32()? as usize;
    }
    let rules = if lazy {
        Rules::Heads(heads, names)
    } else {
        Rules::Decoded(rules)
    };
    Ok((p, rules, order))
}

fn source_kind_code(k: SourceKind) -> u8 {
    match k {
        SourceKind::Managed => 0,
        SourceKind::User => 1,
        SourceKind::Project => 2,
        SourceKind::Local => 3,
        SourceKind::Settings => 4,
        SourceKind::Tuff => 5,
        SourceKind::TuffInstalled => 6,
        SourceKind::CommandLine => 7,
    }
}

fn source_kind(c: u8) -> Result<SourceKind, Bad> {
    Ok(match c {
        0 => SourceKind::Managed,
        1 => SourceKind::User,
        2 => SourceKind::Project,
        3 => SourceKind::Local,
        4 => SourceKind::Settings,
        5 => SourceKind::Tuff,
        6 => SourceKind::TuffInstalled,
        7 => SourceKind::CommandLine,
        _ => return Err(bad("source kind")),
    })
}

fn mode_code(m: PermissionMode) -> u8 {
    match m {
        PermissionMode::Default => 0,
        PermissionMode::AcceptEdits => 1,
        PermissionMode::Plan => 2,
        PermissionMode::DontAsk => 3,
        PermissionMode::BypassPermissions => 4,
    }
}

fn mode(c: u8) -> Result<PermissionMode, Bad> {
    Ok(match c {
        0 => PermissionMode::Default,
        1 => PermissionMode::AcceptEdits,
        2 => PermissionMode::Plan,
        3 => PermissionMode::DontAsk,
        4 => PermissionMode::BypassPermissions,
        _ => return Err(bad("permission mode")),
    })
}

fn error_kind_code(k: ErrorKind) -> u8 {
    match k {
        ErrorKind::Rule => 0,
        ErrorKind::Unsupported => 1,
        ErrorKind::Call => 2,
        ErrorKind::Policy => 3,
        ErrorKind::Limit => 4,
        ErrorKind::Image => 5,
        ErrorKind::Io => 6,
    }
}

fn error_kind(c: u8) -> Result<ErrorKind, Bad> {
    Ok(match c {
        0 => ErrorKind::Rule,
        1 => ErrorKind::Unsupported,
        2 => ErrorKind::Call,
        3 => ErrorKind::Policy,
        4 => ErrorKind::Limit,
        5 => ErrorKind::Image,
        6 => ErrorKind::Io,
        _ => return Err(bad("warning kind")),
    })
}

fn write_error(w: &mut Enc, e: &Error) {
    w.u8(error_kind_code(e.kind()));
    w.bytes(e.message().as_bytes());
    let l = e.location();
    w_opt(w, l.source.as_deref());
    w_opt(w, l.item.as_deref());
    w_opt(w, l.text.as_deref());
    match l.column {
        None => w.u8(0),
        Some(c) => {
            w.u8(1);
            w.len(c);
        }
    }
}

fn read_error(r: &mut Dec<'_>) -> Result<Error, Bad> {
    let kind = error_kind(r.u8()?)?;
    let mut e = Error::new(kind, r.str()?);
    if let Some(s) = r_opt(r)? {
        e = e.with_source(s);
    }
    if let Some(i) = r_opt(r)? {
        e = e.with_item(i);
    }
    let text = r_opt(r)?;
    let column = match r.u8()? {
        0 => None,
        1 => Some(r.u32()? as usize),
        _ => return Err(bad("column")),
    };
    match (text, column) {
        (Some(t), Some(c)) => e = e.with_text(t, c),
        (None, None) => {}
        _ => return Err(bad("warning location")),
    }
    Ok(e)
}

fn effect_code(e: Effect) -> u8 {
    match e {
        Effect::Deny => 0,
        Effect::Ask => 1,
        Effect::Allow => 2,
    }
}

fn list_code(l: List) -> u8 {
    match l {
        List::Allow => 0,
        List::Ask => 1,
        List::Deny => 2,
        List::Rules => 3,
    }
}

fn dialect_code(d: Dialect) -> u8 {
    match d {
        Dialect::Strict => 0,
        Dialect::ClaudeCode => 1,
        Dialect::Tuff => 2,
    }
}

fn write_pieces(w: &mut Enc, pieces: &[GlobPiece]) {
    w.len(pieces.len());
    for p in pieces {
        match p {
            GlobPiece::Literal(s) => {
                w.u8(0);
                w.bytes(s.as_bytes());
            }
            GlobPiece::Star => w.u8(1),
            GlobPiece::Question => w.u8(2),
        }
    }
}

fn read_pieces(r: &mut Dec<'_>) -> Result<Vec<GlobPiece>, Bad> {
    let n = r.len()?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(match r.u8()? {
            0 => GlobPiece::Literal(r.str()?.to_string()),
            1 => GlobPiece::Star,
            2 => GlobPiece::Question,
            _ => return Err(bad("glob piece")),
        });
    }
    Ok(v)
}

fn write_form(w: &mut Enc, f: &CommandForm) {
    match f {
        CommandForm::Exact(s) => {
            w.u8(0);
            w.bytes(s.as_bytes());
        }
        CommandForm::Prefix(s) => {
            w.u8(1);
            w.bytes(s.as_bytes());
        }
        CommandForm::Glob(p) => {
            w.u8(2);
            write_pieces(w, p);
        }
        CommandForm::PrefixGlob(p) => {
            w.u8(3);
            write_pieces(w, p);
        }
    }
}

fn read_form(r: &mut Dec<'_>) -> Result<CommandForm, Bad> {
    Ok(match r.u8()? {
        0 => CommandForm::Exact(r.str()?.to_string()),
        1 => CommandForm::Prefix(r.str()?.to_string()),
        2 => CommandForm::Glob(read_pieces(r)?),
        3 => CommandForm::PrefixGlob(read_pieces(r)?),
        _ => return Err(bad("command form")),
    })
}

fn write_rule(w: &mut Enc, rule: &Rule, names: &[Arc<str>]) {
    w.text(&rule.text);
    w.u8(effect_code(rule.effect));
    w.u8(dialect_code(rule.dialect));
    match &rule.tool {
        ToolMatch::Name(n) => {
            w.u8(0);
            w.bytes(n.as_bytes());
        }
        ToolMatch::McpServer(s) => {
            w.u8(1);
            w.bytes(s.as_bytes());
        }
        ToolMatch::Glob(p) => {
            w.u8(2);
            write_pieces(w, p);
        }
    }
    match &rule.pattern {
        Pattern::Any => w.u8(0),
        Pattern::Command(c) => {
            w.u8(1);
            write_form(w, &c.form);
            w.u8(u8::from(c.case_insensitive));
        }
        Pattern::Path(p) => {
            w.u8(2);
            w.u8(match p.anchor {
                Anchor::Root => 0,
                Anchor::Home => 1,
                Anchor::Source => 2,
                Anchor::Project => 3,
            });
            w.len(p.segments.len());
            for s in &p.segments {
                match s {
                    Segment::DoubleStar => w.u8(0),
                    Segment::Pieces(ps) => {
                        w.u8(1);
                        w.len(ps.len());
                        for piece in ps {
                            match piece {
                                SegPiece::Literal(l) => {
                                    w.u8(0);
                                    w.bytes(l.as_bytes());
                                }
                                SegPiece::Star => w.u8(1),
                                SegPiece::Question => w.u8(2),
                                SegPiece::Class { negated, ranges } => {
                                    w.u8(3);
                                    w.u8(u8::from(*negated));
                                    w.len(ranges.len());
                                    for (a, b) in ranges {
                                        w.u32(*a as u32);
                                        w.u32(*b as u32);
                                    }
                                }
                            }
                        }
                    }
                }
            }
            w.u8(u8::from(p.anchored));
            w.u8(u8::from(p.case_insensitive));
        }
        Pattern::Domain(d) => {
            w.u8(3);
            match d {
                DomainPattern::Any => w.u8(0),
                DomainPattern::Host { subdomains, labels } => {
                    w.u8(1);
                    w.u8(u8::from(*subdomains));
                    w.len(labels.len());
                    for l in labels {
                        match l {
                            DomainLabel::Literal(s) => {
                                w.u8(0);
                                w.bytes(s.as_bytes());
                            }
                            DomainLabel::Star => w.u8(1),
                        }
                    }
                }
            }
        }
        Pattern::Field { field, form } => {
            w.u8(4);
            w.bytes(field.as_bytes());
            write_form(w, form);
        }
        Pattern::Tokens(t) => {
            w.u8(5);
            w.len(t.len());
            for s in t {
                w.bytes(s.as_bytes());
            }
        }
        Pattern::Opaque(s) => {
            w.u8(6);
            w.bytes(s.as_bytes());
        }
    }
    match names.iter().position(|n| *n == rule.provenance.source) {
        Some(i) => {
            w.u8(0);
            w.len(i);
        }
        None => {
            w.u8(1);
            w.bytes(rule.provenance.source.as_bytes());
        }
    }
    w.u8(list_code(rule.provenance.list));
    w.len(rule.provenance.index);
    w_opt(w, rule.reason.as_deref());
    w.text = None;
}

/// The rules of an image left in it, checked, and decoded one by one when
/// first asked for: a call is decided by a few rules, and decoding all of
/// them (some 180 bytes and three strings each) was most of the cost of
/// loading an image.
struct ImageRules {
    /// The image.
    buf: Arc<Vec<u8>>,
    /// Where the block of strings is in `buf`.
    strings: std::ops::Range<usize>,
    /// Where the block of records (the policy's structure) is in `buf`.
    records: std::ops::Range<usize>,
    /// The sources' names, which rules name by index.
    names: Vec<Arc<str>>,
    /// Each rule, by id.
    heads: Vec<Head>,
    /// Each rule decoded, by id.
    cells: Box<[OnceLock<Box<Rule>>]>,
    /// Every rule decoded, for [`RuleSource::all`].
    all: OnceLock<Vec<Rule>>,
}

impl std::fmt::Debug for ImageRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageRules")
            .field("rules", &self.heads.len())
            .field("image_bytes", &self.buf.len())
            .finish_non_exhaustive()
    }
}

impl ImageRules {
    /// Decodes the rule with this id. Every rule was checked by
    /// [`skip_rule`] when the image was loaded, which accepts exactly what
    /// [`read_rule`] decodes (a test holds them to each other); should one
    /// not decode anyway, it stands in as [`undecodable`], a deny rule.
    fn decode(&self, head: Head) -> Rule {
        let (Some(records), Some(strings)) = (
            self.buf.get(self.records.clone()),
            self.buf.get(self.strings.clone()),
        ) else {
            return undecodable();
        };
        let mut d = Dec {
            r: Reader::new(records),
            strings: Strings::Raw(strings),
        };
        d.r.pos = head.at as usize;
        read_rule(&mut d, &self.names).unwrap_or_else(|_| undecodable())
    }
}

impl RuleSource for ImageRules {
    fn len(&self) -> usize {
        self.heads.len()
    }

    fn head(&self, id: u32) -> Option<(Effect, PatternKind)> {
        self.heads.get(id as usize).map(|h| (h.effect, h.kind))
    }

    fn rule(&self, id: u32) -> Option<&Rule> {
        // Once every rule is decoded, a rule not asked for before is
        // taken from there rather than decoded a second time.
        if let (Some(all), Some(None)) = (
            self.all.get(),
            self.cells.get(id as usize).map(OnceLock::get),
        ) {
            return all.get(id as usize);
        }
        let head = *self.heads.get(id as usize)?;
        let cell = self.cells.get(id as usize)?;
        Some(cell.get_or_init(|| Box::new(self.decode(head))))
    }

    fn all(&self) -> &[Rule] {
        self.all.get_or_init(|| {
            (0..self.heads.len())
                .map(|id| {
                    match (
                        self.cells.get(id).and_then(OnceLock::get),
                        self.heads.get(id),
                    ) {
                        (Some(rule), _) => Rule::clone(rule),
                        (None, Some(&head)) => self.decode(head),
                        (None, None) => undecodable(),
                    }
                })
                .collect()
        })
    }
}

/// What stands in for a rule of an image that does not decode after all:
/// a deny rule of every call, so that it can never widen what is allowed.
fn undecodable() -> Rule {
    Rule {
        text: "<a rule the image does not hold intact>".to_string(),
        effect: Effect::Deny,
        dialect: Dialect::Strict,
        tool: ToolMatch::Glob(vec![GlobPiece::Star]),
        pattern: Pattern::Any,
        provenance: Provenance::standalone(List::Deny),
        reason: None,
    }
}

/// Checks a rule record as [`read_rule`] reads it, without decoding it
/// (no allocation): its effect and the kind of its pattern. `sources` is
/// the number of sources a rule may name.
fn skip_rule(r: &mut Dec<'_>, sources: usize) -> Result<(Effect, PatternKind), Bad> {
    r.skip_str()?;
    let effect = match r.u8()? {
        0 => Effect::Deny,
        1 => Effect::Ask,
        2 => Effect::Allow,
        _ => return Err(bad("effect")),
    };
    if r.u8()? > 2 {
        return Err(bad("dialect"));
    }
    match r.u8()? {
        0 | 1 => r.skip_str()?,
        2 => skip_pieces(r)?,
        _ => return Err(bad("tool")),
    }
    let kind = match r.u8()? {
        0 => PatternKind::Any,
        1 => {
            skip_form(r)?;
            r_bool(r)?;
            PatternKind::Command
        }
        2 => {
            if r.u8()? > 3 {
                return Err(bad("anchor"));
            }
            let n = r.len()?;
            for _ in 0..n {
                match r.u8()? {
                    0 => {}
                    1 => {
                        let k = r.len()?;
                        for _ in 0..k {
                            match r.u8()? {
                                0 => r.skip_str()?,
                                1 | 2 => {}
                                3 => {
                                    r_bool(r)?;
                                    let m = r.len()?;
                                    for _ in 0..m {
                                        read_char(r)?;
                                        read_char(r)?;
                                    }
                                }
                                _ => return Err(bad("path piece")),
                            }
                        }
                    }
                    _ => return Err(bad("path segment")),
                }
            }
            r_bool(r)?;
            r_bool(r)?;
            PatternKind::Path
        }
        3 => {
            match r.u8()? {
                0 => {}
                1 => {
                    r_bool(r)?;
                    let n = r.len()?;
                    for _ in 0..n {
                        match r.u8()? {
                            0 => r.skip_str()?,
                            1 => {}
                            _ => return Err(bad("domain label")),
                        }
                    }
                }
                _ => return Err(bad("domain pattern")),
            }
            PatternKind::Domain
        }
        4 => {
            r.skip_str()?;
            skip_form(r)?;
            PatternKind::Field
        }
        5 => {
            let n = r.len()?;
            for _ in 0..n {
                r.skip_str()?;
            }
            PatternKind::Tokens
        }
        6 => {
            r.skip_str()?;
            PatternKind::Opaque
        }
        _ => return Err(bad("pattern")),
    };
    match r.u8()? {
        0 => {
            if r.u32()? as usize >= sources {
                return Err(bad("source index"));
            }
        }
        1 => r.skip_str()?,
        _ => return Err(bad("rule source")),
    }
    if r.u8()? > 3 {
        return Err(bad("list"));
    }
    r.u32()?;
    match r.u8()? {
        0 => {}
        1 => r.skip_str()?,
        _ => return Err(bad("option")),
    }
    Ok((effect, kind))
}

fn skip_pieces(r: &mut Dec<'_>) -> Result<(), Bad> {
    let n = r.len()?;
    for _ in 0..n {
        match r.u8()? {
            0 => r.skip_str()?,
            1 | 2 => {}
            _ => return Err(bad("glob piece")),
        }
    }
    Ok(())
}

fn skip_form(r: &mut Dec<'_>) -> Result<(), Bad> {
    match r.u8()? {
        0 | 1 => r.skip_str(),
        2 | 3 => skip_pieces(r),
        _ => Err(bad("command form")),
    }
}

fn read_char(r: &mut Dec<'_>) -> Result<char, Bad> {
    char::from_u32(r.u32()?).ok_or_else(|| bad("character"))
}

fn read_rule(r: &mut Dec<'_>, names: &[Arc<str>]) -> Result<Rule, Bad> {
    let text = r.str()?.to_string();
    let effect = match r.u8()? {
        0 => Effect::Deny,
        1 => Effect::Ask,
        2 => Effect::Allow,
        _ => return Err(bad("effect")),
    };
    let dialect = match r.u8()? {
        0 => Dialect::Strict,
        1 => Dialect::ClaudeCode,
        2 => Dialect::Tuff,
        _ => return Err(bad("dialect")),
    };
    let tool = match r.u8()? {
        0 => ToolMatch::Name(r.str()?.to_string()),
        1 => ToolMatch::McpServer(r.str()?.to_string()),
        2 => ToolMatch::Glob(read_pieces(r)?),
        _ => return Err(bad("tool")),
    };
    let pattern = match r.u8()? {
        0 => Pattern::Any,
        1 => Pattern::Command(CommandPattern {
            form: read_form(r)?,
            case_insensitive: r_bool(r)?,
        }),
        2 => {
            let anchor = match r.u8()? {
                0 => Anchor::Root,
                1 => Anchor::Home,
                2 => Anchor::Source,
                3 => Anchor::Project,
                _ => return Err(bad("anchor")),
            };
            let n = r.len()?;
            let mut segments = Vec::with_capacity(n);
            for _ in 0..n {
                segments.push(match r.u8()? {
                    0 => Segment::DoubleStar,
                    1 => {
                        let k = r.len()?;
                        let mut ps = Vec::with_capacity(k);
                        for _ in 0..k {
                            ps.push(match r.u8()? {
                                0 => SegPiece::Literal(r.str()?.to_string()),
                                1 => SegPiece::Star,
                                2 => SegPiece::Question,
                                3 => {
                                    let negated = r_bool(r)?;
                                    let m = r.len()?;
                                    let mut ranges = Vec::with_capacity(m);
                                    for _ in 0..m {
                                        ranges.push((read_char(r)?, read_char(r)?));
                                    }
                                    SegPiece::Class { negated, ranges }
                                }
                                _ => return Err(bad("path piece")),
                            });
                        }
                        Segment::Pieces(ps)
                    }
                    _ => return Err(bad("path segment")),
                });
            }
            Pattern::Path(PathPattern {
                anchor,
                segments,
                anchored: r_bool(r)?,
                case_insensitive: r_bool(r)?,
            })
        }
        3 => Pattern::Domain(match r.u8()? {
            0 => DomainPattern::Any,
            1 => {
                let subdomains = r_bool(r)?;
                let n = r.len()?;
                let mut labels = Vec::with_capacity(n);
                for _ in 0..n {
                    labels.push(match r.u8()? {
                        0 => DomainLabel::Literal(r.str()?.to_string()),
                        1 => DomainLabel::Star,
                        _ => return Err(bad("domain label")),
                    });
                }
                DomainPattern::Host { subdomains, labels }
            }
            _ => return Err(bad("domain pattern")),
        }),
        4 => Pattern::Field {
            field: r.str()?.to_string(),
            form: read_form(r)?,
        },
        5 => {
            let n = r.len()?;
            let mut t = Vec::with_capacity(n);
            for _ in 0..n {
                t.push(r.str()?.to_string());
            }
            Pattern::Tokens(t)
        }
        6 => Pattern::Opaque(r.str()?.to_string()),
        _ => return Err(bad("pattern")),
    };
    let source = match r.u8()? {
        0 => names
            .get(r.u32()? as usize)
            .cloned()
            .ok_or_else(|| bad("source index"))?,
        1 => Arc::from(r.str()?),
        _ => return Err(bad("rule source")),
    };
    let list = match r.u8()? {
        0 => List::Allow,
        1 => List::Ask,
        2 => List::Deny,
        3 => List::Rules,
        _ => return Err(bad("list")),
    };
    let index = r.u32()? as usize;
    let reason = r_opt(r)?;
    Ok(Rule {
        text,
        effect,
        dialect,
        tool,
        pattern,
        provenance: Provenance {
            source,
            list,
            index,
        },
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::Config;

    fn sample() -> PolicyImage {
        let mut p = LoadedPolicy::new();
        p.add_settings_text(
            r#"{"permissions": {"allow": ["Bash(git *)", "Read(src/**)", "mcp__db", 3],
                "ask": ["WebFetch(domain:*.example.com)"],
                "deny": ["Bash(rm -rf *)", "Edit(//etc/[a-c]*)", "Agent(Explore)"]},
                "additionalDirectories": ["~/notes"], "defaultMode": "plan"}"#,
            "s.json",
            None,
            SourceKind::Settings,
            SourceRoot::Dir("/p".into()),
        )
        .unwrap();
        p.add_rule(Effect::Deny, "Bash(curl *)").unwrap();
        let c = Policy::builder()
            .configure(Config::one_shot())
            .build(p.rules().to_vec())
            .unwrap();
        PolicyImage::new("recipe", p, c)
    }

    #[test]
    fn round_trip_keeps_everything() {
        let img = sample();
        let back = PolicyImage::from_bytes(&img.to_bytes().unwrap(), "x").unwrap();
        assert_eq!(back.policy(), img.policy());
        assert_eq!(back.recipe(), "recipe");
        assert!(!back.policy().warnings().is_empty());
    }

    /// A file of its own in the temporary directory, holding `text`.
    fn temp_file(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("toolgate-stamp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn probes_round_trip_with_and_without_stamps() {
        let mut img = sample();
        let path = temp_file("round-trip.json", "{}");
        std::thread::sleep(std::time::Duration::from_millis(20));
        let hash = checksum(b"{}");
        let stamp = Stamp::taken(&path, hash, std::time::Duration::ZERO);
        assert!(stamp.is_some());
        img.policy.probes = vec![
            Probe::File {
                path: path.clone(),
                hash,
                stamp,
            },
            Probe::File {
                path: "/b.json".into(),
                hash: 7,
                stamp: None,
            },
            Probe::Missing {
                path: "/c.json".into(),
            },
            Probe::Listing {
                dir: "/d".into(),
                names: vec!["e.json".into()],
            },
        ];
        let bytes = img.to_bytes().unwrap();
        let back = PolicyImage::from_bytes(&bytes, "x").unwrap();
        assert_eq!(back.policy(), img.policy());
        let deciding = DecidingImage::from_bytes(bytes, "x").unwrap();
        assert_eq!(deciding.facts.probes(), img.policy().probes());
    }

    #[test]
    fn a_file_changed_within_the_settle_time_gets_no_stamp() {
        let path = temp_file("settle.json", "{\"a\": 1}");
        let hash = checksum(b"{\"a\": 1}");
        assert_eq!(Stamp::taken(&path, hash, Stamp::SETTLE), None);
        assert!(matches!(
            Probe::read(&path, "{\"a\": 1}"),
            Probe::File { stamp: None, .. }
        ));
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(Stamp::taken(&path, hash, std::time::Duration::ZERO).is_some());
        // Not the contents it is said to stand for: no stamp either.
        assert_eq!(
            Stamp::taken(&path, hash ^ 1, std::time::Duration::ZERO),
            None
        );
        assert_eq!(
            Stamp::taken(
                &path.with_extension("gone"),
                hash,
                std::time::Duration::ZERO
            ),
            None
        );
    }

    #[test]
    fn a_matching_stamp_is_trusted_without_reading_the_file() {
        let path = temp_file("trusted.json", "[1]");
        std::thread::sleep(std::time::Duration::from_millis(20));
        let hash = checksum(b"[1]");
        let stamp = Stamp::taken(&path, hash, std::time::Duration::ZERO);
        assert!(stamp.is_some());
        let probe = |hash, stamp| Probe::File {
            path: path.clone(),
            hash,
            stamp,
        };
        // A wrong checksum under a matching stamp is never looked at.
        assert_eq!(probe(hash ^ 1, stamp).changed(), None);
        assert_eq!(probe(hash, None).changed(), None);
        assert!(probe(hash ^ 1, None).changed().is_some());
    }

    #[test]
    fn a_file_whose_status_moved_is_read_and_checksummed() {
        let path = temp_file("moved.json", "[1]");
        std::thread::sleep(std::time::Duration::from_millis(20));
        let hash = checksum(b"[1]");
        let stamp = Stamp::taken(&path, hash, std::time::Duration::ZERO);
        assert!(stamp.is_some());
        let probe = Probe::File {
            path: path.clone(),
            hash,
            stamp,
        };
        // The same contents written again: the status moved, the
        // checksum holds.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&path, "[1]").unwrap();
        assert_eq!(probe.changed(), None);
        // Other contents of the same length.
        std::fs::write(&path, "[2]").unwrap();
        assert!(probe.changed().is_some());
        // Replaced by another file with the old contents and times.
        let other = temp_file("moved-other.json", "[1]");
        let mtime = std::fs::metadata(&other).unwrap().modified().unwrap();
        std::fs::rename(&other, &path).unwrap();
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        f.set_modified(mtime).unwrap();
        assert_eq!(probe.changed(), None);
        std::fs::remove_file(&path).unwrap();
        assert!(probe.changed().is_some());
    }

    /// The image decoded to decide with gives every call the verdict and
    /// the deciding rule the whole image gives it.
    #[test]
    fn an_image_decoded_to_decide_decides_as_the_whole_image() {
        use crate::eval::{EvalContext, Verdict};
        let img = sample();
        let bytes = img.to_bytes().unwrap();
        let whole = PolicyImage::from_bytes(&bytes, "x").unwrap();
        let (p, c) = whole.into_parts();
        let whole = Evaluator::with_compiled(&p, c).unwrap();
        let lean = DecidingImage::from_bytes(bytes.clone(), "x").unwrap();
        assert_eq!(lean.recipe(), "recipe");
        assert!(lean.facts.rules().is_empty() && lean.facts.warnings().is_empty());
        let lean = lean.into_evaluator().unwrap();
        let ctx = EvalContext::new("/p")
            .unwrap()
            .with_project_dir("/p")
            .unwrap();
        let calls = [
            ("Bash", serde_json::json!({"command": "git status"})),
            ("Bash", serde_json::json!({"command": "rm -rf /"})),
            ("Bash", serde_json::json!({"command": "curl x && git log"})),
            ("Bash", serde_json::json!({"command": "ls"})),
            ("Read", serde_json::json!({"file_path": "/p/src/a.rs"})),
            ("Edit", serde_json::json!({"file_path": "/etc/b"})),
            (
                "WebFetch",
                serde_json::json!({"url": "https://a.example.com/x"}),
            ),
            ("mcp__db__query", serde_json::json!({})),
            ("Agent", serde_json::json!({"subagent_type": "Explore"})),
        ];
        let mut seen = Vec::new();
        for (tool, input) in calls {
            let serde_json::Value::Object(input) = input else {
                unreachable!()
            };
            let call = crate::ToolCall::new(tool, input).unwrap();
            let a = whole.evaluate(&call, &ctx).unwrap();
            let b = lean.evaluate(&call, &ctx).unwrap();
            let text = |d: &crate::eval::Decision<'_>| d.rule.map(|r| r.rule.text.clone());
            assert_eq!((a.verdict, text(&a)), (b.verdict, text(&b)), "{tool}");
            seen.push(a.verdict);
        }
        for v in [Verdict::Allow, Verdict::Ask, Verdict::Deny, Verdict::None] {
            assert!(seen.contains(&v), "no call is decided {v:?}");
        }
    }

    /// The matchers load only from rules in precedence order, each place
    /// in policy order given once: an image that lists them otherwise is
    /// refused, never numbered wrongly.
    #[test]
    fn rules_out_of_precedence_order_are_refused() {
        let (p, c) = sample().into_parts();
        let bytes = c.matchers_to_bytes_with(false);
        let mut order: Vec<usize> = (0..p.rules().len()).collect();
        order.sort_by_key(|&i| (p.rules()[i].effect, i));
        let rules: Vec<Rule> = order.iter().map(|&i| p.rules()[i].clone()).collect();
        let load = |rules: Vec<Rule>, order: Vec<usize>| {
            Policy::from_image_numbered(RuleTable::Owned(rules), order, &bytes, false, None)
        };
        let right = load(rules.clone(), order.clone()).unwrap();
        assert_eq!(right.rules(), &rules[..]);
        let refused = |rules: Vec<Rule>, order: Vec<usize>, what: &str| {
            let e = load(rules, order).expect_err(what);
            assert!(e.message().contains("out of order"), "{what}: {e}");
        };
        let n = rules.len();
        let (mut a, mut b) = (rules.clone(), order.clone());
        a.swap(0, n - 1);
        b.swap(0, n - 1);
        refused(a, b, "a deny rule after an allow rule");
        let mut b = order.clone();
        b.swap(0, 1);
        refused(rules.clone(), b, "two deny rules out of policy order");
        let mut b = order.clone();
        b[1] = b[0];
        refused(rules.clone(), b, "a place given twice");
        let mut b = order.clone();
        b[n - 1] = n;
        refused(rules.clone(), b, "a place out of range");
        let mut b = order.clone();
        b.pop();
        refused(rules.clone(), b, "a place missing");
    }

    proptest::proptest! {
        /// Any change to the payload, checksummed again so that it gets
        /// past the frame, is decoded or refused, never a panic.
        #[test]
        fn a_damaged_payload_never_panics(
            edits in proptest::collection::vec((0usize..1 << 20, 0u8..=255), 1..6),
            cut in proptest::option::of(0usize..1 << 20),
        ) {
            let bytes = sample().to_bytes().unwrap();
            let header = 40;
            let mut payload = bytes[header..].to_vec();
            for (at, b) in edits {
                let i = at % payload.len();
                payload[i] = b;
            }
            if let Some(c) = cut {
                payload.truncate(c % (payload.len() + 1));
            }
            let framed = frame(KIND_COMPILED, payload);
            let _ = PolicyImage::from_bytes(&framed, "x");
            let _ = DecidingImage::from_bytes(framed, "x");
        }

        /// A damaged block of strings or of records (the policy and its
        /// rules), checksummed again: the image whose rules are left in it
        /// is refused exactly when the image decoded whole is, and
        /// otherwise holds the same rules.
        #[test]
        fn rules_left_in_the_image_are_checked_as_decoding_checks_them(
            edits in proptest::collection::vec((0usize..1 << 20, 0u8..=255), 1..4),
            in_strings in proptest::bool::ANY,
        ) {
            let bytes = sample().to_bytes().unwrap();
            let mut payload = bytes[40..].to_vec();
            let (strings, records) = blocks(&payload);
            let block = if in_strings { strings } else { records };
            for (at, b) in edits {
                payload[block.start + at % block.len()] = b;
            }
            let framed = frame(KIND_COMPILED, payload);
            let whole = PolicyImage::from_bytes(&framed, "x");
            let lean = DecidingImage::from_bytes(framed, "x");
            proptest::prop_assert_eq!(whole.is_ok(), lean.is_ok());
            if let (Ok(whole), Ok(lean)) = (whole, lean) {
                proptest::prop_assert_eq!(whole.compiled.rules(), lean.compiled.rules());
                for id in 0..lean.compiled.rule_count() as u32 {
                    proptest::prop_assert_eq!(whole.compiled.rule(id), lean.compiled.rule(id));
                    let rule = whole.compiled.rule(id).unwrap();
                    proptest::prop_assert_eq!(
                        lean.compiled.rule_head(id),
                        Some((rule.effect, PatternKind::of(&rule.pattern)))
                    );
                }
            }
        }

        /// Any bytes as a rule record: [`skip_rule`] accepts exactly what
        /// [`read_rule`] decodes, and stops where it stops.
        #[test]
        fn skipping_a_rule_accepts_what_reading_it_accepts(
            record in proptest::collection::vec(
                proptest::prop_oneof![0u8..8, proptest::num::u8::ANY], 0..64),
            strings in "[a-z*é]{0,12}",
        ) {
            let names: Vec<Arc<str>> = vec![Arc::from("a"), Arc::from("b")];
            let strings = strings.as_bytes();
            let mut a = Dec { r: Reader::new(&record), strings: Strings::Raw(strings) };
            let mut b = Dec { r: Reader::new(&record), strings: Strings::Checked(std::str::from_utf8(strings).unwrap()) };
            let read = read_rule(&mut a, &names);
            let skipped = skip_rule(&mut b, names.len());
            proptest::prop_assert_eq!(read.is_ok(), skipped.is_ok());
            if let (Ok(rule), Ok(head)) = (read, skipped) {
                proptest::prop_assert_eq!(a.r.pos, b.r.pos);
                proptest::prop_assert_eq!(head, (rule.effect, PatternKind::of(&rule.pattern)));
            }
        }
    }

    /// Each byte of the block of records (the policy and its rules)
    /// changed in turn, checksummed again: the image whose rules are left
    /// in it is refused at load whenever the image decoded whole is, and
    /// when it loads, every rule decodes (none stands in as
    /// [`undecodable`]) and decides as the whole image's.
    #[test]
    fn each_byte_of_the_records_changed_is_refused_at_load_or_decodes() {
        let bytes = sample().to_bytes().unwrap();
        let (_, records) = blocks(&bytes[40..]);
        let mut refused = 0;
        for at in records.clone() {
            for flip in [0x01, 0x80, 0xff] {
                let mut payload = bytes[40..].to_vec();
                payload[at] ^= flip;
                let framed = frame(KIND_COMPILED, payload);
                let whole = PolicyImage::from_bytes(&framed, "x");
                let lean = DecidingImage::from_bytes(framed, "x");
                assert_eq!(whole.is_ok(), lean.is_ok(), "byte {at} ^ {flip:#x}");
                let (Ok(whole), Ok(lean)) = (whole, lean) else {
                    refused += 1;
                    continue;
                };
                for id in 0..lean.compiled.rule_count() as u32 {
                    let rule = lean.compiled.rule(id).unwrap();
                    assert_ne!(rule, &undecodable(), "byte {at} ^ {flip:#x}");
                    assert_eq!(Some(rule), whole.compiled.rule(id));
                }
            }
        }
        assert!(
            refused > records.len(),
            "too few damaged images refused: {refused}"
        );
    }

    /// Where the blocks of strings and of records are in a payload.
    fn blocks(payload: &[u8]) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
        let mut r = Reader::new(payload);
        r.bytes().unwrap();
        r.bytes().unwrap();
        let strings = r.bytes().unwrap().len();
        let s = r.pos - strings..r.pos;
        let records = r.bytes().unwrap().len();
        (s, r.pos - records..r.pos)
    }

    /// Every rule of a sample record, made of each kind of pattern, goes
    /// through [`skip_rule`] as through [`read_rule`].
    #[test]
    fn every_rule_of_an_image_is_skipped_as_it_is_read() {
        let bytes = sample().to_bytes().unwrap();
        let lean = DecidingImage::from_bytes(bytes.clone(), "x").unwrap();
        let whole = PolicyImage::from_bytes(&bytes, "x").unwrap();
        assert!(format!("{:?}", lean.compiled).contains("ImageRules"));
        assert_eq!(lean.compiled.rules(), whole.compiled.rules());
        let kinds: Vec<_> = (0..lean.compiled.rule_count() as u32)
            .filter_map(|id| lean.compiled.rule_head(id).map(|h| h.1))
            .collect();
        for k in [
            PatternKind::Any,
            PatternKind::Command,
            PatternKind::Path,
            PatternKind::Domain,
        ] {
            assert!(kinds.contains(&k), "no rule of kind {k:?}");
        }
    }

    /// A policy of every shape of command and path rule the lazy engine
    /// defers or tables: exact commands, prefixes, globs with runs inside,
    /// before and after, path prefixes, any-depth names.
    fn shapes() -> PolicyImage {
        let mut p = LoadedPolicy::new();
        p.add_settings_text(
            r#"{"permissions": {
                "allow": ["Bash(go vet ./internal/config/)", "Bash(npm ls:*)", "Bash(git *)",
                    "Bash(wc -l src/*.json)", "Bash(ls -la *)", "Bash(* --version)",
                    "Bash(grep -r * src --include=*.ts)", "Bash(go vet ./a/)",
                    "Read(./src/**)", "Read(**/*.md)", "Read(./docs/*.txt)", "Read(//tmp/x/**)"],
                "ask": ["Bash(git push:*)", "Bash(*--force*)", "Bash(curl ?)", "Read(**/.env)"],
                "deny": ["Bash(rm -rf:*)", "Bash(git push --force *)", "Bash(sudo *)",
                    "Read(./secrets/**)", "Edit(//etc/**)"]}}"#,
            "s.json",
            None,
            SourceKind::Settings,
            SourceRoot::Dir("/p".into()),
        )
        .unwrap();
        let c = Policy::builder()
            .configure(Config::one_shot())
            .build(p.rules().to_vec())
            .unwrap();
        PolicyImage::new("recipe", p, c)
    }

    const COMMANDS: &[&str] = &[
        "go vet ./internal/config/",
        "go vet ./a/",
        "go vet ./a",
        "npm ls",
        "npm ls -a",
        "npm lsx",
        "git status",
        "git",
        "git push",
        "git push --force origin",
        "git push origin",
        "wc -l src/a.json",
        "wc -l src/.json",
        "wc -l src/a.jsonx",
        "ls -la /",
        "ls -la",
        "node --version",
        "--version",
        "a --versions",
        "grep -r x src --include=*.ts",
        "grep -r src --include=*.ts",
        "rm -rf /",
        "rm -rf",
        "rm -rfv",
        "sudo ls",
        "sudo",
        "curl a",
        "curl ab",
        "x --force y",
        "",
    ];
    const PATHS: &[&str] = &[
        "/p/src/a.rs",
        "/p/src",
        "/p/src/",
        "/p/docs/a.txt",
        "/p/docs/a/b.txt",
        "/p/README.md",
        "/p/x/.env",
        "/p/.env",
        "/p/secrets/k",
        "/tmp/x/y",
        "/tmp/x",
        "/etc/passwd",
        "/q/a.md",
    ];

    /// What `c` finds for every command and path above.
    fn finds(c: &Policy) -> Vec<Vec<u32>> {
        use crate::compile::{AnchorDirs, Kind, Matches};
        let dirs = AnchorDirs {
            home: Some("/h"),
            project: Some("/p"),
            sources: &[("s.json", "/p")],
        };
        let mut m = Matches::new();
        let mut out = Vec::new();
        for hay in COMMANDS {
            c.find(Kind::Command, None, hay, &mut m);
            out.push(m.ids().to_vec());
        }
        for kind in [Kind::Read, Kind::Edit] {
            for path in PATHS {
                c.find_path(kind, None, path, &dirs, &mut m);
                out.push(m.ids().to_vec());
            }
        }
        out
    }

    /// The matchers of an image decoded to decide with point into the
    /// image (exact literals, deferred rules): they find what the compiled
    /// policy and the whole image find.
    #[test]
    fn matchers_left_in_the_image_find_what_the_compiled_policy_finds() {
        let img = shapes();
        let bytes = img.to_bytes().unwrap();
        let want = finds(&img.compiled);
        assert!(
            want.iter().filter(|f| !f.is_empty()).count() > 20,
            "{want:?}"
        );
        let whole = PolicyImage::from_bytes(&bytes, "x").unwrap();
        assert_eq!(finds(&whole.compiled), want);
        let lean = DecidingImage::from_bytes(bytes, "x").unwrap();
        assert!(format!("{:?}", lean.compiled).contains("SharedExact"));
        assert_eq!(finds(&lean.compiled), want);
    }

    /// Where the matchers are in a payload (an image of their own, framed).
    fn matchers_block(payload: &[u8]) -> std::ops::Range<usize> {
        let mut r = Reader::new(payload);
        for _ in 0..4 {
            r.bytes().unwrap();
        }
        let n = r.bytes().unwrap().len();
        r.pos - n..r.pos
    }

    /// Each byte of the matchers changed in turn, both checksums written
    /// again: the image whose matchers are left in it is refused whenever
    /// the image decoded whole is, and when it loads it finds the same.
    #[test]
    fn each_byte_of_the_matchers_changed_is_refused_at_load_or_finds_the_same() {
        let bytes = shapes().to_bytes().unwrap();
        let payload = &bytes[40..];
        let block = matchers_block(payload);
        let inner = &payload[block.clone()];
        let mut refused = 0;
        let mut flips = 0;
        for at in 40..inner.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut m = inner[40..].to_vec();
                m[at - 40] ^= flip;
                let m = frame(b"policy\0\0", m);
                let mut p = payload.to_vec();
                p[block.clone()].copy_from_slice(&m);
                let framed = frame(KIND_COMPILED, p);
                let whole = PolicyImage::from_bytes(&framed, "x");
                let lean = DecidingImage::from_bytes(framed, "x");
                flips += 1;
                assert_eq!(whole.is_ok(), lean.is_ok(), "byte {at} ^ {flip:#x}");
                match (whole, lean) {
                    (Ok(whole), Ok(lean)) => {
                        assert_eq!(
                            finds(&whole.compiled),
                            finds(&lean.compiled),
                            "byte {at} ^ {flip:#x}"
                        );
                    }
                    _ => refused += 1,
                }
            }
        }
        assert!(
            refused > flips / 4,
            "too few damaged images refused: {refused} of {flips}"
        );
    }
}
