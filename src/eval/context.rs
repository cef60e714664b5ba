//! The evaluation context: where a call is made (SPEC §9.1).

use crate::error::{Error, ErrorKind};
use crate::paths::{join_lexical, normalize_lexical};
use crate::policy::PermissionMode;

/// Where a call is evaluated: its working directory, the session's project
/// directory, the home directory, the additional working directories, the
/// permission mode, and whether the file system may be asked about
/// symlinks.
///
/// Every directory is absolute and normalised once, here (`.` and `..`
/// collapsed, no trailing `/`), so evaluation compares strings only.
///
/// ```
/// use toolgate::eval::EvalContext;
/// use toolgate::policy::PermissionMode;
///
/// let ctx = EvalContext::new("/home/me/app/src")?
///     .with_project_dir("/home/me/app")?
///     .with_home("/home/me")?
///     .with_additional_dir("../lib")?      // relative to the project
///     .with_mode(Some(PermissionMode::AcceptEdits));
/// assert_eq!(ctx.cwd(), "/home/me/app/src");
/// assert_eq!(ctx.additional_dirs(), ["/home/me/lib"]);
/// assert!(ctx.in_working_dirs("/home/me/lib/x.rs"));
/// assert!(!ctx.in_working_dirs("/home/me/app/x.rs")); // the project is not the cwd
/// # Ok::<(), toolgate::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalContext {
    cwd: String,
    project: String,
    home: Option<String>,
    additional: Vec<String>,
    mode: Option<PermissionMode>,
    follow_symlinks: bool,
}

fn absolute(what: &str, dir: &str) -> Result<String, Error> {
    if !dir.starts_with('/') {
        return Err(Error::new(
            ErrorKind::Call,
            format!("the {what} {dir:?} is not an absolute path"),
        ));
    }
    normalize_lexical(dir).ok_or_else(|| {
        Error::new(
            ErrorKind::Call,
            format!("the {what} {dir:?} cannot be normalised"),
        )
    })
}

impl EvalContext {
    /// A context whose working directory — and project directory, until
    /// [`EvalContext::with_project_dir`] says otherwise — is `cwd`
    /// (absolute). No home directory (`~/x` rules match nothing), no
    /// additional directories, no mode (no-match stays
    /// [`Verdict::None`](super::Verdict::None)), symlinks not followed.
    pub fn new(cwd: &str) -> Result<EvalContext, Error> {
        let cwd = absolute("working directory", cwd)?;
        Ok(EvalContext {
            project: cwd.clone(),
            cwd,
            home: None,
            additional: Vec::new(),
            mode: None,
            follow_symlinks: false,
        })
    }

    /// Sets the session's project directory (absolute): the anchor of
    /// `./x` and `x` rules (SPEC §4.1).
    pub fn with_project_dir(mut self, dir: &str) -> Result<EvalContext, Error> {
        self.project = absolute("project directory", dir)?;
        Ok(self)
    }

    /// Sets the home directory (absolute): the anchor of `~/x` rules and
    /// what a leading `~` in a call's path stands for.
    pub fn with_home(mut self, dir: &str) -> Result<EvalContext, Error> {
        self.home = Some(absolute("home directory", dir)?);
        Ok(self)
    }

    /// Adds an additional working directory: absolute, `~`/`~/x` (needs
    /// the home directory set first) or relative to the project directory.
    pub fn with_additional_dir(mut self, dir: &str) -> Result<EvalContext, Error> {
        let abs = if dir == "~" || dir.starts_with("~/") {
            let home = self.home.as_deref().ok_or_else(|| {
                Error::new(
                    ErrorKind::Call,
                    format!("additional directory {dir:?} needs a home directory"),
                )
            })?;
            join_lexical(home, dir.trim_start_matches('~').trim_start_matches('/'))
        } else {
            join_lexical(&self.project, dir)
        };
        let abs = abs.ok_or_else(|| {
            Error::new(
                ErrorKind::Call,
                format!("additional directory {dir:?} cannot be made absolute"),
            )
        })?;
        if !self.additional.contains(&abs) {
            self.additional.push(abs);
        }
        Ok(self)
    }

    /// Sets the permission mode (SPEC §9.3). `None` — what a hook uses —
    /// leaves a call no rule decided as [`Verdict::None`](super::Verdict::None).
    pub fn with_mode(mut self, mode: Option<PermissionMode>) -> EvalContext {
        self.mode = mode;
        self
    }

    /// Whether symlink chains are followed (SPEC §4.2: only where the file
    /// system is there to look — on in hooks, off in batch runs).
    pub fn with_follow_symlinks(mut self, yes: bool) -> EvalContext {
        self.follow_symlinks = yes;
        self
    }

    /// The working directory.
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    /// The project directory.
    pub fn project_dir(&self) -> &str {
        &self.project
    }

    /// The home directory, if known.
    pub fn home(&self) -> Option<&str> {
        self.home.as_deref()
    }

    /// The additional working directories, absolute and normalised.
    pub fn additional_dirs(&self) -> &[String] {
        &self.additional
    }

    /// The permission mode, if any.
    pub fn mode(&self) -> Option<PermissionMode> {
        self.mode
    }

    /// Whether symlinks are followed.
    pub fn follow_symlinks(&self) -> bool {
        self.follow_symlinks
    }

    /// Whether the absolute, normalised path `abs` (as
    /// [`EvalContext::absolute_path`] gives it) lies inside a working
    /// directory: the cwd or an additional directory (the directory itself
    /// included).
    pub fn in_working_dirs(&self, abs: &str) -> bool {
        std::iter::once(&self.cwd)
            .chain(&self.additional)
            .any(|d| within(abs, d))
    }

    /// A call path made absolute (SPEC §4.2): `~` and `~/x` against the
    /// home directory (a literal `~` segment when none is known), a
    /// relative path against `dir`, `.` and `..` collapsed.
    pub fn absolute_path(&self, dir: &str, path: &str) -> Option<String> {
        if let Some(home) = &self.home {
            if path == "~" {
                return Some(home.clone());
            }
            if let Some(rest) = path.strip_prefix("~/") {
                return join_lexical(home, rest);
            }
        }
        join_fast(dir, path)
    }
}

/// [`join_lexical`] without its allocations when `path` needs no
/// normalising (no empty, `.` or `..` segment): the common case.
fn join_fast(dir: &str, path: &str) -> Option<String> {
    if !is_clean(path.as_bytes()) || !dir.starts_with('/') {
        return join_lexical(dir, path);
    }
    if path.starts_with('/') {
        return Some(path.to_string());
    }
    let mut s = String::with_capacity(dir.len() + 1 + path.len());
    s.push_str(dir);
    if !dir.ends_with('/') {
        s.push('/');
    }
    s.push_str(path);
    Some(s)
}

/// Whether a path has no empty segment (but a first one: an absolute
/// path), no `.` and no `..` segment; passes over the bytes without a
/// branch per byte (a split at `/` costs more than the rest of a call).
fn is_clean(p: &[u8]) -> bool {
    if p.is_empty()
        || matches!(p, b"." | b"..")
        || p.starts_with(b"./")
        || p.starts_with(b"../")
        || p.ends_with(b"/")
        || p.ends_with(b"/.")
        || p.ends_with(b"/..")
    {
        return false;
    }
    // Inside: `//`, and `/.` starting a `.` or `..` segment (rare: most
    // paths have no `/.` at all). A `//` that ends at the last byte ends
    // the path with `/`, looked at above.
    let next = p.get(1..).unwrap_or(&[]);
    let (double, slash_dot) = p.iter().zip(next).fold((false, false), |(d, s), (&a, &b)| {
        let slash = a == b'/';
        (d | (slash & (b == b'/')), s | (slash & (b == b'.')))
    });
    if double {
        return false;
    }
    !slash_dot
        || p.split(|&b| b == b'/')
            .skip(1)
            .all(|seg| !matches!(seg, b"." | b".."))
}

/// Whether the normalised absolute path `abs` is the normalised absolute
/// directory `dir` or lies below it (no allocation; both come normalised).
fn within(abs: &str, dir: &str) -> bool {
    if dir == "/" {
        return abs.starts_with('/');
    }
    match abs.strip_prefix(dir) {
        Some(rest) => rest.is_empty() || rest.starts_with('/'),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan answers as a split at `/` does, on every path of up to
    /// six bytes over `a`, `.` and `/`.
    #[test]
    fn clean_paths_as_a_split() {
        let split = |p: &str| {
            !p.is_empty()
                && p.split('/')
                    .enumerate()
                    .all(|(i, seg)| !matches!(seg, "." | "..") && (!seg.is_empty() || i == 0))
        };
        let mut paths = vec![String::new()];
        let mut wrong = Vec::new();
        for _ in 0..6 {
            paths = paths
                .iter()
                .flat_map(|p| ["a", ".", "/"].map(|c| format!("{p}{c}")))
                .collect();
            for p in &paths {
                if is_clean(p.as_bytes()) != split(p) {
                    wrong.push(p.clone());
                }
            }
        }
        assert!(wrong.is_empty(), "{wrong:?}");
    }

    #[test]
    fn directories() {
        let ctx = EvalContext::new("/p/./a/")
            .unwrap()
            .with_home("/h")
            .unwrap()
            .with_additional_dir("~/lib")
            .unwrap()
            .with_additional_dir("/x/../y")
            .unwrap();
        assert_eq!(ctx.cwd(), "/p/a");
        assert_eq!(ctx.project_dir(), "/p/a");
        assert_eq!(ctx.additional_dirs(), ["/h/lib", "/y"]);
        assert!(ctx.in_working_dirs("/p/a"));
        assert!(ctx.in_working_dirs("/y/z"));
        assert!(!ctx.in_working_dirs("/p/ab"));
        assert_eq!(
            ctx.absolute_path("/p/a", "~/.ssh/id").as_deref(),
            Some("/h/.ssh/id")
        );
        assert_eq!(ctx.absolute_path("/p/a", "../b").as_deref(), Some("/p/b"));
        assert!(EvalContext::new("rel").is_err());
        for (dir, path) in [
            ("/p", "a/b"),
            ("/p", "/x/y"),
            ("/p", "a//b"),
            ("/p", "a/./b"),
            ("/p", "../b"),
            ("/p", "a/"),
            ("/", "a"),
            ("/p", ""),
            ("/p", "//x"),
            ("/p", ".hidden/..x"),
        ] {
            assert_eq!(
                join_fast(dir, path),
                join_lexical(dir, path),
                "{dir} {path}"
            );
        }
        assert!(
            EvalContext::new("/a")
                .unwrap()
                .with_additional_dir("~")
                .is_err()
        );
    }
}
