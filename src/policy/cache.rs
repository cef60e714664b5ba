//! The image cache: precompiled policies kept in the user's cache
//! directory, so that a process answering one call (a hook) loads its
//! policy instead of parsing and compiling it.
//!
//! An entry is named by a checksum of the toolgate build and the *recipe*
//! (the policy options and the directories they are looked up from, as
//! text), and holds a [`PolicyImage`]. It is used only when it decodes,
//! was made by this build from this very recipe, and every file the load
//! read, looked for or listed is unchanged ([`PolicyImage::check_fresh`]):
//! a new `settings.local.json`, an edited rule or another toolgate build
//! each make a fresh image. Anything else — a corrupt or truncated entry,
//! another build's — is ignored and replaced. Entries are written to a
//! temporary file and renamed into place, so a reader never sees half of
//! one. A cache that cannot be written costs speed, never an answer. On
//! Unix an entry is read only when neither it nor the directory can have
//! been written by another user (created `0700`; not group- or
//! world-writable, and owned by this user).
//!
//! # Staying bounded
//!
//! Every toolgate build and every project leaves entries of its own, so
//! the cache is trimmed whenever it stores one (a miss, which has just
//! paid for a compile; a hit never lists the directory). [`ImageCache::evict`]
//! removes, among the files of the directory whose names are the cache's
//! own (entries `<build>-<key>.tgimage` and `<key>.tgimage`, temporary
//! files `.<entry>.<pid>.<nanos>.tmp`):
//! - temporary files older than an hour (a writer that died; a write in
//!   progress takes milliseconds);
//! - entries unused for [`Limits::max_idle`] (30 days), and entries of
//!   another build unused for [`Limits::other_build_idle`] (a day: two
//!   builds in use side by side each keep their entries);
//! - then the least recently used entries, until at most
//!   [`Limits::max_entries`] (64) entries of at most [`Limits::max_bytes`]
//!   (128 MiB) together are left. The entry just stored always stays.
//!
//! An entry's modification time is its last use: a hit sets it to the
//! present when it is more than an hour old (so a hit writes at most once
//! an hour per entry, one `futimens` on the file already open). Files of
//! other names, directories and symbolic links are never touched, nor is
//! a directory another user can write; a failure to remove is ignored.
//! [`Limits::from_env`] reads `TOOLGATE_CACHE_MAX_ENTRIES` and
//! `TOOLGATE_CACHE_MAX_BYTES` (a number of bytes, or with `K`, `M` or `G`
//! for KiB, MiB, GiB).

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use super::LoadedPolicy;
#[cfg(feature = "cli")]
use super::image::DecidingImage;
use super::image::{PolicyImage, build_id};
use crate::compile::Policy;
use crate::compile::image::checksum;
use crate::error::{Error, ErrorKind};
#[cfg(feature = "cli")]
use crate::eval::Evaluator;

/// Where a cache lookup's policy came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A fresh entry was loaded.
    Hit,
    /// The policy was loaded and compiled, and stored.
    Stored,
    /// The policy was loaded and compiled; it could not be stored.
    NotStored,
}

/// How much an [`ImageCache`] keeps (see the [module docs](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    max_entries: usize,
    max_bytes: u64,
    max_idle: Duration,
    other_build_idle: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_entries: 64,
            max_bytes: 128 << 20,
            max_idle: Duration::from_secs(30 * DAY),
            other_build_idle: Duration::from_secs(DAY),
        }
    }
}

/// A day in seconds.
const DAY: u64 = 24 * 60 * 60;

/// How old a temporary file must be to be taken for one a writer left.
const TEMP_AGE: Duration = Duration::from_secs(60 * 60);

/// How stale an entry's time of last use may be before a hit renews it.
const MARK_INTERVAL: Duration = Duration::from_secs(60 * 60);

/// The most directory entries an eviction looks at (a directory of
/// millions of foreign files must not hold up a store).
const MAX_SCAN: usize = 10_000;

impl Limits {
    /// The default limits: 64 entries, 128 MiB, entries unused for 30
    /// days removed, another build's entries unused for a day removed.
    pub fn new() -> Limits {
        Limits::default()
    }

    /// The defaults, with `TOOLGATE_CACHE_MAX_ENTRIES` (a count) and
    /// `TOOLGATE_CACHE_MAX_BYTES` (bytes, or a number with `K`, `M` or
    /// `G`) in place of theirs when set; a value that does not parse is
    /// ignored.
    pub fn from_env() -> Limits {
        let var = |v: &str| std::env::var(v).ok();
        let mut limits = Limits::default();
        if let Some(n) = var("TOOLGATE_CACHE_MAX_ENTRIES").and_then(|v| v.trim().parse().ok()) {
            limits = limits.max_entries(n);
        }
        if let Some(n) = var("TOOLGATE_CACHE_MAX_BYTES").and_then(|v| parse_size(&v)) {
            limits = limits.max_bytes(n);
        }
        limits
    }

    /// The most entries kept (the one just stored always is).
    pub fn max_entries(self, n: usize) -> Limits {
        Limits {
            max_entries: n,
            ..self
        }
    }

    /// The most bytes the entries kept may take together (the one just
    /// stored is kept even when it alone takes more).
    pub fn max_bytes(self, n: u64) -> Limits {
        Limits {
            max_bytes: n,
            ..self
        }
    }

    /// How long an entry may go unused before it is removed.
    pub fn max_idle(self, d: Duration) -> Limits {
        Limits {
            max_idle: d,
            ..self
        }
    }

    /// How long an entry of another toolgate build may go unused before
    /// it is removed.
    pub fn other_build_idle(self, d: Duration) -> Limits {
        Limits {
            other_build_idle: d,
            ..self
        }
    }

    /// [`Limits::max_entries`].
    pub fn get_max_entries(&self) -> usize {
        self.max_entries
    }

    /// [`Limits::max_bytes`].
    pub fn get_max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// [`Limits::max_idle`].
    pub fn get_max_idle(&self) -> Duration {
        self.max_idle
    }

    /// [`Limits::other_build_idle`].
    pub fn get_other_build_idle(&self) -> Duration {
        self.other_build_idle
    }
}

/// A size in bytes: digits, then optionally `K`, `M` or `G` (powers of
/// 1024; a trailing `B` or `iB` allowed).
fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (digits, shift) = match t.as_bytes().last()? {
        b'K' | b'k' => (t.get(..t.len() - 1)?, 10),
        b'M' | b'm' => (t.get(..t.len() - 1)?, 20),
        b'G' | b'g' => (t.get(..t.len() - 1)?, 30),
        _ => (t, 0),
    };
    let n: u64 = digits.trim().parse().ok()?;
    n.checked_mul(1 << shift)
}

/// What an eviction removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Evicted {
    /// Entries removed.
    pub entries: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Temporary files a writer left, removed.
    pub temporaries: usize,
}

/// A cache directory of [`PolicyImage`]s.
#[derive(Clone, Debug)]
pub struct ImageCache {
    dir: PathBuf,
    limits: Limits,
}

impl ImageCache {
    /// A cache in `dir` (created on first store), with the default
    /// [`Limits`].
    pub fn new(dir: impl Into<PathBuf>) -> ImageCache {
        ImageCache {
            dir: dir.into(),
            limits: Limits::default(),
        }
    }

    /// The cache with `limits` in place of its own.
    pub fn limits(self, limits: Limits) -> ImageCache {
        ImageCache { limits, ..self }
    }

    /// The user's cache: `$TOOLGATE_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/toolgate`, else `~/.cache/toolgate`; `None` when
    /// none of them is set. Its limits are [`Limits::from_env`].
    pub fn from_env() -> Option<ImageCache> {
        let var = |v: &str| std::env::var_os(v).filter(|x| !x.is_empty());
        let dir = if let Some(d) = var("TOOLGATE_CACHE_DIR") {
            PathBuf::from(d)
        } else if let Some(d) = var("XDG_CACHE_HOME") {
            Path::new(&d).join("toolgate")
        } else {
            Path::new(&var("HOME")?).join(".cache").join("toolgate")
        };
        Some(ImageCache::new(dir).limits(Limits::from_env()))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The limits.
    pub fn get_limits(&self) -> &Limits {
        &self.limits
    }

    /// The entry of `recipe` made by this build:
    /// `<build>-<key>.tgimage`, `<build>` a checksum of the build alone
    /// (what eviction tells builds apart by), `<key>` one of the build and
    /// the recipe.
    pub fn entry(&self, recipe: &str) -> PathBuf {
        let key = format!("{}\n{recipe}", build_id());
        self.dir.join(format!(
            "{:08x}-{:016x}.tgimage",
            build_tag(),
            checksum(key.as_bytes())
        ))
    }

    /// The fresh entry of `recipe`, if there is one.
    pub fn load(&self, recipe: &str) -> Option<(LoadedPolicy, Policy)> {
        let (bytes, name) = self.read_entry(recipe)?;
        let image = PolicyImage::from_bytes(&bytes, &name).ok()?;
        if image.recipe() != recipe || image.check_fresh(&name).is_err() {
            return None;
        }
        Some(image.into_parts())
    }

    /// The fresh entry of `recipe` decoded to decide with, if there is one
    /// ([`ImageCache::load`]).
    #[cfg(feature = "cli")]
    pub(crate) fn load_to_decide(&self, recipe: &str) -> Option<DecidingImage> {
        let (bytes, name) = self.read_entry(recipe)?;
        let image = DecidingImage::from_bytes(bytes, &name).ok()?;
        if image.recipe() != recipe || image.check_fresh(&name).is_err() {
            return None;
        }
        Some(image)
    }

    /// The bytes of the entry of `recipe` and its name, when it exists and
    /// only this user can have written it; its time of last use renewed
    /// when stale. One open, one status of the open file, one read (and
    /// the directory's status): a missing entry costs one failed open.
    fn read_entry(&self, recipe: &str) -> Option<(Vec<u8>, String)> {
        let path = self.entry(recipe);
        let mut file = std::fs::File::open(&path).ok()?;
        let meta = file.metadata().ok()?;
        if !meta.is_file() || !written_by_me(&meta) || !private(&self.dir) {
            return None;
        }
        // The whole entry, as long as it was when opened: an entry is
        // replaced by renaming, never rewritten, and a short or long read
        // fails the frame's length and checksum anyway.
        let len = usize::try_from(meta.len()).ok()?;
        let mut bytes = Vec::new();
        bytes.try_reserve_exact(len).ok()?;
        // Into the buffer as it is (not zeroed first), and no read past
        // the length.
        (&mut file).take(meta.len()).read_to_end(&mut bytes).ok()?;
        mark_used(&file, &meta);
        Some((bytes, path.display().to_string()))
    }

    /// Stores `image` as the entry of its recipe, atomically, then trims
    /// the cache to its limits ([`ImageCache::evict`], the new entry
    /// kept; a failure to trim is ignored).
    pub fn store(&self, image: &PolicyImage) -> Result<PathBuf, Error> {
        let path = self.entry(image.recipe());
        write_atomic(&path, &image.to_bytes()?)?;
        self.evict(Some(&path));
        Ok(path)
    }

    /// Trims the cache to its [`Limits`] (see the [module docs](self)),
    /// never removing `keep`: returns what was removed. Only files named
    /// as the cache names its own are looked at; nothing is removed from
    /// a directory another user can write.
    pub fn evict(&self, keep: Option<&Path>) -> Evicted {
        let mut evicted = Evicted::default();
        if !private(&self.dir) {
            return evicted;
        }
        let Ok(listing) = std::fs::read_dir(&self.dir) else {
            return evicted;
        };
        let keep = keep.and_then(Path::file_name);
        let now = SystemTime::now();
        let this_build = build_tag();
        let limits = &self.limits;
        // The size of the entry kept, if it is there.
        let mut kept: Option<u64> = None;
        // (last use, name, bytes) of the entries that may stay.
        let mut candidates: Vec<(SystemTime, std::ffi::OsString, u64)> = Vec::new();
        let remove = |name: &std::ffi::OsStr| std::fs::remove_file(self.dir.join(name)).is_ok();
        for item in listing.take(MAX_SCAN).flatten() {
            let name = item.file_name();
            let Some(kind) = name.to_str().map(file_kind) else {
                continue;
            };
            if kind == FileKind::Other {
                continue;
            }
            // The entry itself, never what a symbolic link points to.
            let Ok(meta) = item.metadata() else {
                continue;
            };
            if !meta.file_type().is_file() {
                continue;
            }
            let used = meta.modified().unwrap_or(now);
            let idle = now.duration_since(used).unwrap_or(Duration::ZERO);
            match kind {
                FileKind::Other => {}
                FileKind::Temporary => {
                    if idle > TEMP_AGE && remove(&name) {
                        evicted.temporaries += 1;
                    }
                }
                FileKind::Entry { build } => {
                    if Some(name.as_os_str()) == keep {
                        kept = Some(meta.len());
                        continue;
                    }
                    let expired = idle > limits.max_idle
                        || (build != Some(this_build) && idle > limits.other_build_idle);
                    if !expired {
                        candidates.push((used, name, meta.len()));
                    } else if remove(&name) {
                        evicted.entries += 1;
                        evicted.bytes = evicted.bytes.saturating_add(meta.len());
                    }
                }
            }
        }
        // Most recently used first; the newest that fit stay.
        candidates.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let mut count = usize::from(kept.is_some());
        let mut bytes = kept.unwrap_or(0);
        let mut full = false;
        for (_, name, len) in candidates {
            full =
                full || count >= limits.max_entries || bytes.saturating_add(len) > limits.max_bytes;
            if !full {
                count += 1;
                bytes += len;
            } else if remove(&name) {
                evicted.entries += 1;
                evicted.bytes = evicted.bytes.saturating_add(len);
            }
        }
        evicted
    }

    /// The fresh entry of `recipe`, else `load()` compiled with `compile`
    /// and stored (a store that fails is reported in the [`Outcome`]
    /// only).
    pub fn get_or_build(
        &self,
        recipe: &str,
        load: impl FnOnce() -> Result<LoadedPolicy, Error>,
        compile: impl FnOnce(&LoadedPolicy) -> Result<Policy, Error>,
    ) -> Result<(LoadedPolicy, Policy, Outcome), Error> {
        if let Some((p, c)) = self.load(recipe) {
            return Ok((p, c, Outcome::Hit));
        }
        self.build_and_store(recipe, load, compile)
    }

    /// The miss path of both lookups: `load()` compiled with `compile`,
    /// stored under `recipe` when the cache can take it.
    fn build_and_store(
        &self,
        recipe: &str,
        load: impl FnOnce() -> Result<LoadedPolicy, Error>,
        compile: impl FnOnce(&LoadedPolicy) -> Result<Policy, Error>,
    ) -> Result<(LoadedPolicy, Policy, Outcome), Error> {
        let policy = load()?;
        let compiled = compile(&policy)?;
        let image = PolicyImage::new(recipe, policy, compiled);
        let outcome = match self.store(&image) {
            Ok(_) => Outcome::Stored,
            Err(_) => Outcome::NotStored,
        };
        let (p, c) = image.into_parts();
        Ok((p, c, outcome))
    }

    /// The evaluator of `load()` compiled with `compile`, stored under
    /// `recipe` when the cache can take it: the miss after
    /// [`ImageCache::load_to_decide`].
    #[cfg(feature = "cli")]
    pub(crate) fn build_evaluator(
        &self,
        recipe: &str,
        load: impl FnOnce() -> Result<LoadedPolicy, Error>,
        compile: impl FnOnce(&LoadedPolicy) -> Result<Policy, Error>,
    ) -> Result<(Evaluator, Outcome), Error> {
        let (p, c, outcome) = self.build_and_store(recipe, load, compile)?;
        Ok((Evaluator::with_compiled(&p, c)?, outcome))
    }
}

/// The first half of an entry's name: a checksum of this build alone.
fn build_tag() -> u32 {
    static TAG: OnceLock<u32> = OnceLock::new();
    *TAG.get_or_init(|| (checksum(build_id().as_bytes()) >> 32) as u32)
}

/// What a file of the cache directory is, by its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FileKind {
    /// An entry: `<build>-<key>.tgimage` (`build` its build's tag), or
    /// `<key>.tgimage` as earlier toolgate versions named them (no build).
    Entry { build: Option<u32> },
    /// A temporary file of [`write_atomic`] writing an entry:
    /// `.<entry>.<pid>.<nanos>.tmp`.
    Temporary,
    /// Anything else: never touched.
    Other,
}

/// The kind of the file named `name`.
fn file_kind(name: &str) -> FileKind {
    if let Some(body) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")) {
        let mut parts = body.rsplitn(3, '.');
        let (Some(nanos), Some(pid), Some(entry)) = (parts.next(), parts.next(), parts.next())
        else {
            return FileKind::Other;
        };
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        return match file_kind(entry) {
            FileKind::Entry { .. } if digits(nanos) && digits(pid) => FileKind::Temporary,
            _ => FileKind::Other,
        };
    }
    let hex = |s: &str, n: usize| {
        s.len() == n && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    let Some(stem) = name.strip_suffix(".tgimage") else {
        return FileKind::Other;
    };
    match stem.split_once('-') {
        None if hex(stem, 16) => FileKind::Entry { build: None },
        Some((build, key)) if hex(build, 8) && hex(key, 16) => FileKind::Entry {
            build: u32::from_str_radix(build, 16).ok(),
        },
        _ => FileKind::Other,
    }
}

/// Renews the time of last use of the entry open as `file` (status
/// `meta`) when it is more than [`MARK_INTERVAL`] away from the present;
/// a failure changes nothing but the order of eviction.
fn mark_used(file: &std::fs::File, meta: &std::fs::Metadata) {
    let now = SystemTime::now();
    let stale = meta.modified().is_ok_and(|t| {
        let apart = match now.duration_since(t) {
            Ok(d) => d,
            // A time of last use in the future (a clock set back).
            Err(e) => e.duration(),
        };
        apart > MARK_INTERVAL
    });
    if stale {
        let _ = file.set_modified(now);
    }
}

/// This process's user, where `/proc/self` tells it.
#[cfg(unix)]
fn my_uid() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    static UID: OnceLock<Option<u32>> = OnceLock::new();
    *UID.get_or_init(|| std::fs::metadata("/proc/self").map(|p| p.uid()).ok())
}

/// Whether only this user can have written the file of status `m`: on
/// Unix, it is not writable by group or others and (where `/proc/self`
/// tells this process's user) owned by this user. An image holds a
/// policy; one another user could have planted must not decide anything.
#[cfg(unix)]
fn written_by_me(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    m.mode() & 0o022 == 0 && my_uid().is_none_or(|uid| uid == m.uid())
}

#[cfg(not(unix))]
fn written_by_me(_m: &std::fs::Metadata) -> bool {
    true
}

/// [`written_by_me`] of the file at `path` (false when it cannot be
/// examined).
fn private(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| written_by_me(&m))
}

/// Creates `dir` (and its parents), readable and writable by this user
/// only when it is new.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
}

/// Writes `bytes` to `path` through a temporary file in the same directory
/// renamed into place (creating the directory).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let io = |what: &str, e: std::io::Error| {
        Error::new(
            ErrorKind::Io,
            format!("cannot {what}: {}", crate::rule::tuff::io_clause(&e)),
        )
        .with_source(path.display().to_string())
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    create_private_dir(&dir).map_err(|e| io("create its directory", e))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = dir.join(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io("write it", e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        let cases = [
            ("1000", Some(1000)),
            ("64K", Some(64 << 10)),
            ("64k", Some(64 << 10)),
            ("128M", Some(128 << 20)),
            ("128MiB", Some(128 << 20)),
            ("2G", Some(2 << 30)),
            ("2GB", Some(2 << 30)),
            (" 5 M ", Some(5 << 20)),
            ("", None),
            ("M", None),
            ("-1", None),
            ("1.5M", None),
            ("12T", None),
            ("99999999999999999999G", None),
            ("18446744073709551615G", None),
        ];
        let wrong: Vec<_> = cases
            .iter()
            .filter(|(text, want)| parse_size(text) != *want)
            .map(|(text, want)| format!("{text:?}: {:?}, not {want:?}", parse_size(text)))
            .collect();
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    #[test]
    fn files_are_told_apart_by_name() {
        let cases = [
            ("0123456789abcdef.tgimage", FileKind::Entry { build: None }),
            (
                "89abcdef-0123456789abcdef.tgimage",
                FileKind::Entry {
                    build: Some(0x89ab_cdef),
                },
            ),
            (".0123456789abcdef.tgimage.12.345.tmp", FileKind::Temporary),
            (
                ".89abcdef-0123456789abcdef.tgimage.1.2.tmp",
                FileKind::Temporary,
            ),
            ("0123456789ABCDEF.tgimage", FileKind::Other),
            ("0123456789abcde.tgimage", FileKind::Other),
            ("89abcdef-0123456789abcdef.tgimage.tmp", FileKind::Other),
            ("89abcdef_0123456789abcdef.tgimage", FileKind::Other),
            ("-0123456789abcdef.tgimage", FileKind::Other),
            (".0123456789abcdef.tgimage.1.tmp", FileKind::Other),
            (".0123456789abcdef.tgimage..2.tmp", FileKind::Other),
            (".x.tgimage.1.2.tmp", FileKind::Other),
            ("policy.tgimage", FileKind::Other),
            ("é.tgimage", FileKind::Other),
            ("", FileKind::Other),
        ];
        let wrong: Vec<_> = cases
            .iter()
            .filter(|(name, want)| file_kind(name) != *want)
            .map(|(name, want)| format!("{name:?}: {:?}, not {want:?}", file_kind(name)))
            .collect();
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    #[test]
    fn an_entry_is_named_by_this_builds_tag() {
        let cache = ImageCache::new("/nonexistent-cache");
        let entry = cache.entry("{}");
        let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or("");
        assert_eq!(
            file_kind(name),
            FileKind::Entry {
                build: Some(build_tag())
            }
        );
        assert_ne!(cache.entry("{}"), cache.entry("{\"x\":1}"));
    }
}
