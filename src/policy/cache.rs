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

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::LoadedPolicy;
use super::image::{DecidingImage, PolicyImage, build_id};
use crate::compile::Policy;
use crate::compile::image::checksum;
use crate::error::{Error, ErrorKind};
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

/// A cache directory of [`PolicyImage`]s.
#[derive(Clone, Debug)]
pub struct ImageCache {
    dir: PathBuf,
}

impl ImageCache {
    /// A cache in `dir` (created on first store).
    pub fn new(dir: impl Into<PathBuf>) -> ImageCache {
        ImageCache { dir: dir.into() }
    }

    /// The user's cache: `$TOOLGATE_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/toolgate`, else `~/.cache/toolgate`; `None` when
    /// none of them is set.
    pub fn from_env() -> Option<ImageCache> {
        let var = |v: &str| std::env::var_os(v).filter(|x| !x.is_empty());
        if let Some(d) = var("TOOLGATE_CACHE_DIR") {
            return Some(ImageCache::new(d));
        }
        if let Some(d) = var("XDG_CACHE_HOME") {
            return Some(ImageCache::new(Path::new(&d).join("toolgate")));
        }
        var("HOME").map(|h| ImageCache::new(Path::new(&h).join(".cache").join("toolgate")))
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The entry of `recipe` made by this build.
    pub fn entry(&self, recipe: &str) -> PathBuf {
        let key = format!("{}\n{recipe}", build_id());
        self.dir
            .join(format!("{:016x}.tgimage", checksum(key.as_bytes())))
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
    pub(crate) fn load_to_decide(&self, recipe: &str) -> Option<DecidingImage> {
        let (bytes, name) = self.read_entry(recipe)?;
        let image = DecidingImage::from_bytes(bytes, &name).ok()?;
        if image.recipe() != recipe || image.check_fresh(&name).is_err() {
            return None;
        }
        Some(image)
    }

    /// The bytes of the entry of `recipe` and its name, when it exists and
    /// only this user can have written it.
    fn read_entry(&self, recipe: &str) -> Option<(Vec<u8>, String)> {
        let path = self.entry(recipe);
        if !private(&self.dir) || !private(&path) {
            return None;
        }
        let bytes = std::fs::read(&path).ok()?;
        Some((bytes, path.display().to_string()))
    }

    /// Stores `image` as the entry of its recipe, atomically.
    pub fn store(&self, image: &PolicyImage) -> Result<PathBuf, Error> {
        let path = self.entry(image.recipe());
        write_atomic(&path, &image.to_bytes()?)?;
        Ok(path)
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

    /// The evaluator of the fresh entry of `recipe`, else of `load()`
    /// compiled with `compile` (and stored, as [`ImageCache::get_or_build`]
    /// does).
    pub(crate) fn evaluator(
        &self,
        recipe: &str,
        load: impl FnOnce() -> Result<LoadedPolicy, Error>,
        compile: impl FnOnce(&LoadedPolicy) -> Result<Policy, Error>,
    ) -> Result<(Evaluator, Outcome), Error> {
        if let Some(image) = self.load_to_decide(recipe) {
            return Ok((image.into_evaluator()?, Outcome::Hit));
        }
        let (p, c, outcome) = self.build_and_store(recipe, load, compile)?;
        Ok((Evaluator::with_compiled(&p, c)?, outcome))
    }
}

/// Whether only this user can have written `path`: on Unix, it is not
/// writable by group or others and (where `/proc/self` tells this
/// process's user) owned by this user. An image holds a policy; one
/// another user could have planted must not decide anything.
#[cfg(unix)]
fn private(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(m) = std::fs::metadata(path) else {
        return false;
    };
    let me = std::fs::metadata("/proc/self").map(|p| p.uid()).ok();
    m.mode() & 0o022 == 0 && me.is_none_or(|uid| uid == m.uid())
}

#[cfg(not(unix))]
fn private(_path: &Path) -> bool {
    true
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
