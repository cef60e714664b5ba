//! Lexical path normalisation: `.` and `..` collapsed on the text alone,
//! without asking the file system (SPEC §4.2). POSIX paths, `/`-separated.
//!
//! Hand-written: `std::path` does not collapse `..` lexically, and no crate
//! in the dependency set does.

/// A path with its `.` and `..` segments collapsed and its repeated and
/// trailing `/` removed.
///
/// - An absolute path (starting with `/`) stays absolute: `/a/./b/../c` →
///   `/a/c`; `..` at the root stays at the root (`/../x` → `/x`), as the
///   kernel resolves it; the root itself is `/`.
/// - A relative path stays relative: `./src/../lib/x` → `lib/x`; the
///   directory itself is the empty string (`.`, `a/..`, `` → ``). A
///   relative path that climbs out of its directory (`../x`, `a/../../x`)
///   gives `None`.
///
/// ```
/// use toolgate::paths::normalize_lexical;
/// assert_eq!(normalize_lexical("/a/./b/../c/").as_deref(), Some("/a/c"));
/// assert_eq!(normalize_lexical("./src//x.rs").as_deref(), Some("src/x.rs"));
/// assert_eq!(normalize_lexical("a/../../x"), None);
/// ```
pub fn normalize_lexical(path: &str) -> Option<String> {
    let absolute = path.starts_with('/');
    let mut out = String::with_capacity(path.len() + 1);
    push_segments(&mut out, path, absolute)?;
    Some(finish(out, absolute))
}

/// Appends the segments of `path` to `out`, each written as `/segment`:
/// `.` and empty segments dropped, `..` removing the last one written (or,
/// with none left, ignored at an absolute root and `None` otherwise).
fn push_segments(out: &mut String, path: &str, absolute: bool) -> Option<()> {
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => match out.rfind('/') {
                Some(i) => out.truncate(i),
                None if absolute => {}
                None => return None,
            },
            s => {
                out.push('/');
                out.push_str(s);
            }
        }
    }
    Some(())
}

/// The path [`push_segments`] wrote: `/` for an absolute path with no
/// segment, without the leading `/` for a relative one.
fn finish(mut out: String, absolute: bool) -> String {
    if absolute {
        if out.is_empty() {
            out.push('/');
        }
    } else if !out.is_empty() {
        out.remove(0);
    }
    out
}

/// `path` joined onto the absolute directory `dir`, then normalised
/// ([`normalize_lexical`]). An absolute `path` ignores `dir`. `None` when
/// `dir` is not absolute.
///
/// ```
/// use toolgate::paths::join_lexical;
/// assert_eq!(join_lexical("/p", "../q/x").as_deref(), Some("/q/x"));
/// ```
pub fn join_lexical(dir: &str, path: &str) -> Option<String> {
    if path.starts_with('/') {
        return normalize_lexical(path);
    }
    if !dir.starts_with('/') {
        return None;
    }
    let mut out = String::with_capacity(dir.len() + path.len() + 2);
    push_segments(&mut out, dir, true)?;
    push_segments(&mut out, path, true)?;
    Some(finish(out, true))
}

/// The path of `abs` relative to the directory `anchor_dir` (both absolute;
/// both normalised here first): its segments below the anchor joined by
/// `/`, the empty string for the anchor itself, `None` when `abs` lies
/// outside it (or either is not absolute).
///
/// ```
/// use toolgate::paths::relative_to;
/// assert_eq!(relative_to("/p/src/a.rs", "/p").as_deref(), Some("src/a.rs"));
/// assert_eq!(relative_to("/p", "/p").as_deref(), Some(""));
/// assert_eq!(relative_to("/pq/a", "/p"), None);
/// assert_eq!(relative_to("/etc/x", "/").as_deref(), Some("etc/x"));
/// ```
pub fn relative_to(abs: &str, anchor_dir: &str) -> Option<String> {
    if !abs.starts_with('/') || !anchor_dir.starts_with('/') {
        return None;
    }
    let abs = normalize_lexical(abs)?;
    let dir = normalize_lexical(anchor_dir)?;
    if dir == "/" {
        return Some(abs[1..].to_string());
    }
    if abs == dir {
        return Some(String::new());
    }
    abs.strip_prefix(&dir)
        .and_then(|rest| rest.strip_prefix('/'))
        .map(str::to_string)
}

/// A `match-rules` call path in its two forms (SPEC §13 "In match-rules"):
/// absolute (when it can be made so: an absolute path, or a relative one
/// joined to the session directory `cwd`) and relative to the session
/// directory (when it lies inside it). `cwd` must be absolute UTF-8: an
/// error message otherwise.
pub fn session_forms(
    path: &str,
    cwd: Option<&std::path::Path>,
) -> Result<(Option<String>, Option<String>), String> {
    let cwd = match cwd {
        None => None,
        Some(d) => match d.to_str() {
            Some(s) if s.starts_with('/') => Some(s),
            _ => {
                return Err(format!(
                    "the session directory {} is not an absolute UTF-8 path",
                    d.display()
                ));
            }
        },
    };
    Ok(if path.starts_with('/') {
        let abs = normalize_lexical(path);
        let rel = match (&abs, cwd) {
            (Some(a), Some(d)) => relative_to(a, d),
            _ => None,
        };
        (abs, rel)
    } else {
        (
            cwd.and_then(|d| join_lexical(d, path)),
            normalize_lexical(path),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_cases() {
        let cases: &[(&str, Option<&str>)] = &[
            ("", Some("")),
            (".", Some("")),
            ("./", Some("")),
            ("a", Some("a")),
            ("a/", Some("a")),
            ("a//b", Some("a/b")),
            ("a/./b", Some("a/b")),
            ("a/b/..", Some("a")),
            ("a/..", Some("")),
            ("..", None),
            ("../a", None),
            ("a/../../b", None),
            ("a/../b/../c", Some("c")),
            ("/", Some("/")),
            ("//", Some("/")),
            ("/..", Some("/")),
            ("/../etc/passwd", Some("/etc/passwd")),
            ("/a/b/../../..", Some("/")),
            ("/a/.", Some("/a")),
            ("~/x", Some("~/x")),
            ("...", Some("...")),
            ("a/.../b", Some("a/.../b")),
        ];
        let mut bad = Vec::new();
        for &(input, want) in cases {
            let got = normalize_lexical(input);
            if got.as_deref() != want {
                bad.push(format!("{input:?}: got {got:?}, want {want:?}"));
            }
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    /// The plain definition: segments kept in a list, joined.
    fn plain(path: &str) -> Option<String> {
        let absolute = path.starts_with('/');
        let mut out: Vec<&str> = Vec::new();
        for seg in path.split('/') {
            match seg {
                "" | "." => {}
                ".." => {
                    if out.pop().is_none() && !absolute {
                        return None;
                    }
                }
                s => out.push(s),
            }
        }
        let joined = out.join("/");
        Some(if absolute {
            format!("/{joined}")
        } else {
            joined
        })
    }

    /// Every path of up to five pieces from a small alphabet of segments
    /// and separators: normalised and joined as the plain definition says.
    #[test]
    fn normalize_and_join_agree_with_the_plain_definition() {
        let pieces = ["/", "//", ".", "..", "a", "bc", "..."];
        let mut paths = vec![String::new()];
        let mut frontier = vec![String::new()];
        for _ in 0..5 {
            let mut next = Vec::new();
            for p in &frontier {
                for q in pieces {
                    next.push(format!("{p}{q}"));
                }
            }
            paths.extend(next.iter().cloned());
            frontier = next;
        }
        let mut bad = Vec::new();
        for p in &paths {
            if normalize_lexical(p) != plain(p) {
                bad.push(format!(
                    "normalize {p:?}: {:?} vs {:?}",
                    normalize_lexical(p),
                    plain(p)
                ));
            }
            for dir in ["/", "/d", "/d/e"] {
                let want = if p.starts_with('/') {
                    plain(p)
                } else {
                    plain(&format!("{dir}/{p}"))
                };
                if join_lexical(dir, p) != want {
                    bad.push(format!(
                        "join {dir:?} {p:?}: {:?} vs {want:?}",
                        join_lexical(dir, p)
                    ));
                }
            }
        }
        assert!(paths.len() > 10_000);
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    #[test]
    fn relative_cases() {
        let cases: &[(&str, &str, Option<&str>)] = &[
            ("/p/a", "/p", Some("a")),
            ("/p/a", "/p/", Some("a")),
            ("/p", "/p", Some("")),
            ("/p/../q", "/p", None),
            ("/pa", "/p", None),
            ("/p/./a/../b", "/p", Some("b")),
            ("/x", "/", Some("x")),
            ("/", "/", Some("")),
            ("p/a", "/p", None),
            ("/p/a", "p", None),
        ];
        let mut bad = Vec::new();
        for &(abs, dir, want) in cases {
            let got = relative_to(abs, dir);
            if got.as_deref() != want {
                bad.push(format!("{abs:?} in {dir:?}: got {got:?}, want {want:?}"));
            }
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    #[test]
    fn join_cases() {
        assert_eq!(join_lexical("/p", "a/../b").as_deref(), Some("/p/b"));
        assert_eq!(join_lexical("/p", "../../..").as_deref(), Some("/"));
        assert_eq!(join_lexical("/p", "/abs").as_deref(), Some("/abs"));
        assert_eq!(join_lexical("p", "x"), None);
    }
}
