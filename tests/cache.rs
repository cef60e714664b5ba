//! The image cache, end to end through `toolgate hook claude`: the first
//! call stores an image, later calls load it; a new settings file, an edited
//! rule or another toolgate build each make a fresh image; a corrupt,
//! foreign or misplaced entry is ignored and replaced, never trusted; a
//! cache that cannot be written still answers.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use std::io::Write as _;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolgate-cache-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A project with `.claude/settings.json` holding `allow`, and a home
/// and cache directory of its own.
struct Setup {
    project: PathBuf,
    home: PathBuf,
    cache: PathBuf,
}

impl Setup {
    fn new(name: &str, allow: &[&str]) -> Setup {
        let root = temp_dir(name);
        let project = root.join("project");
        let home = root.join("home");
        let cache = root.join("cache");
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let s = Setup {
            project,
            home,
            cache,
        };
        s.write("settings.json", allow, &[]);
        s
    }

    fn write(&self, file: &str, allow: &[&str], deny: &[&str]) {
        let json = serde_json::json!({"permissions": {"allow": allow, "deny": deny}});
        std::fs::write(self.project.join(".claude").join(file), json.to_string()).unwrap();
    }

    /// Runs the hook on a Bash `command`: (decision or "none", exit code,
    /// stderr).
    fn hook(&self, command: &str, build: Option<&str>) -> (String, i32, String) {
        self.hook_in(command, build, &self.cache)
    }

    fn hook_in(&self, command: &str, build: Option<&str>, cache: &Path) -> (String, i32, String) {
        self.hook_env(command, build, cache, &[])
    }

    fn hook_env(
        &self,
        command: &str,
        build: Option<&str>,
        cache: &Path,
        env: &[(&str, &str)],
    ) -> (String, i32, String) {
        let input = serde_json::json!({
            "session_id": "s", "cwd": self.project, "permission_mode": "default",
            "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command}, "tool_use_id": "t"
        });
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
        cmd.args(["hook", "claude", "--claude-settings"])
            .env("HOME", &self.home)
            .env("CLAUDE_PROJECT_DIR", &self.project)
            .env("TOOLGATE_CACHE_DIR", cache)
            .env_remove("XDG_CACHE_HOME")
            .env_remove("TOOLGATE_CACHE_MAX_ENTRIES")
            .env_remove("TOOLGATE_CACHE_MAX_BYTES")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        match build {
            Some(b) => cmd.env("TOOLGATE_TEST_BUILD_ID", b),
            None => cmd.env_remove("TOOLGATE_TEST_BUILD_ID"),
        };
        let mut child = cmd.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let decision = if stdout.trim().is_empty() {
            "none".to_string()
        } else {
            let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            v["hookSpecificOutput"]["permissionDecision"]
                .as_str()
                .unwrap()
                .to_string()
        };
        (
            decision,
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    }

    /// The cache's entries: (path, inode).
    fn entries(&self) -> Vec<(PathBuf, u64)> {
        let mut v: Vec<(PathBuf, u64)> = std::fs::read_dir(&self.cache)
            .map(|d| {
                d.flatten()
                    .map(|e| (e.path(), e.metadata().unwrap().ino()))
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }
}

#[test]
fn first_call_stores_and_later_calls_load() {
    let s = Setup::new("hit", &["Bash(git status)"]);
    assert_eq!(s.hook("git status", None).0, "allow");
    let stored = s.entries();
    assert_eq!(stored.len(), 1, "one entry after the first call");
    assert!(stored[0].0.extension().is_some_and(|e| e == "tgimage"));
    assert_eq!(s.hook("git status", None).0, "allow");
    assert_eq!(s.hook("rm -rf x", None).0, "none");
    // Loaded, not rewritten: the same file (a store renames a new one in).
    assert_eq!(s.entries(), stored);
}

#[test]
fn a_new_settings_local_json_makes_a_fresh_image() {
    let s = Setup::new("local", &["Bash(git status)"]);
    assert_eq!(s.hook("git push", None).0, "none");
    let before = s.entries();
    s.write("settings.local.json", &[], &["Bash(git push)"]);
    assert_eq!(s.hook("git push", None).0, "deny");
    let after = s.entries();
    assert_eq!(after.len(), 1, "the same recipe, one entry");
    assert_ne!(after, before, "the entry was rebuilt");
    assert_eq!(s.hook("git status", None).0, "allow");
    assert_eq!(s.entries(), after);
}

#[test]
fn an_edited_rule_makes_a_fresh_image() {
    let s = Setup::new("edit", &["Bash(git status)"]);
    assert_eq!(s.hook("git status", None).0, "allow");
    let before = s.entries();
    s.write("settings.json", &[], &["Bash(git status)"]);
    assert_eq!(s.hook("git status", None).0, "deny");
    assert_ne!(s.entries(), before);
    // Removing the file is a change too.
    std::fs::remove_file(s.project.join(".claude/settings.json")).unwrap();
    assert_eq!(s.hook("git status", None).0, "none");
}

#[test]
fn another_build_makes_its_own_image_and_never_reads_a_foreign_one() {
    let s = Setup::new("build", &["Bash(git status)"]);
    assert_eq!(s.hook("git status", Some("build-a")).0, "allow");
    let a = s.entries();
    assert_eq!(a.len(), 1);
    assert_eq!(s.hook("git status", Some("build-b")).0, "allow");
    let ab = s.entries();
    assert_eq!(ab.len(), 2, "each build its own entry");
    // build-a's image put where build-b looks is refused and replaced.
    let b_path = ab.iter().find(|e| !a.contains(e)).unwrap().0.clone();
    std::fs::copy(&a[0].0, &b_path).unwrap();
    let planted = std::fs::metadata(&b_path).unwrap().ino();
    assert_eq!(s.hook("git status", Some("build-b")).0, "allow");
    assert_ne!(std::fs::metadata(&b_path).unwrap().ino(), planted);
}

#[test]
fn a_corrupt_or_misplaced_entry_is_ignored_and_replaced() {
    let s = Setup::new("corrupt", &["Bash(git status)"]);
    s.write("settings.local.json", &[], &["Bash(rm *)"]);
    assert_eq!(s.hook("rm x", None).0, "deny");
    let entry = s.entries()[0].0.clone();
    let good = std::fs::read(&entry).unwrap();
    for damage in ["truncate", "flip", "garbage", "empty"] {
        let bytes = match damage {
            "truncate" => good[..good.len() / 2].to_vec(),
            "flip" => {
                let mut b = good.clone();
                let i = b.len() - 10;
                b[i] ^= 0x55;
                b
            }
            "garbage" => b"toolgate-not-an-image".to_vec(),
            _ => Vec::new(),
        };
        std::fs::write(&entry, &bytes).unwrap();
        let (d, code, err) = s.hook("rm x", None);
        assert_eq!((d.as_str(), code), ("deny", 0), "{damage}: {err}");
        assert_eq!(std::fs::read(&entry).unwrap(), good, "{damage}: replaced");
    }
    // An allow-everything image of another policy, planted under this
    // policy's entry: its recipe differs, so it is not used.
    let other = Setup::new("corrupt-other", &["Bash(echo hi)"]);
    assert_eq!(other.hook("echo hi", None).0, "allow");
    std::fs::copy(&other.entries()[0].0, &entry).unwrap();
    assert_eq!(s.hook("echo hi", None).0, "none");
    assert_eq!(s.hook("rm x", None).0, "deny");
}

#[test]
fn an_unwritable_cache_still_answers() {
    let s = Setup::new("unwritable", &["Bash(git status)"]);
    // A regular file where the cache directory should be.
    let blocker = s.home.join("not-a-dir");
    std::fs::write(&blocker, "x").unwrap();
    let (d, code, err) = s.hook_in("git status", None, &blocker.join("cache"));
    assert_eq!((d.as_str(), code), ("allow", 0), "{err}");
    let (d, code, _) = s.hook_in("git status", None, &blocker);
    assert_eq!((d.as_str(), code), ("allow", 0));
}

#[test]
fn no_cache_writes_nothing() {
    let s = Setup::new("nocache", &["Bash(git status)"]);
    let input = serde_json::json!({
        "session_id": "s", "cwd": s.project, "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "git status"}
    });
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["hook", "claude", "--claude-settings", "--no-cache"])
        .env("HOME", &s.home)
        .env("CLAUDE_PROJECT_DIR", &s.project)
        .env("TOOLGATE_CACHE_DIR", &s.cache)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"allow\""));
    assert!(s.entries().is_empty());
}

#[test]
fn a_cache_others_can_write_is_not_read() {
    use std::os::unix::fs::PermissionsExt;
    let s = Setup::new("shared", &["Bash(git status)"]);
    assert_eq!(s.hook("git status", None).0, "allow");
    let mode = std::fs::metadata(&s.cache).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "the cache directory is private");
    std::fs::set_permissions(&s.cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    let before = s.entries();
    assert_eq!(s.hook("git status", None).0, "allow");
    assert_ne!(s.entries(), before, "rebuilt, not read");
    // A world-writable entry in a private directory is not read either.
    std::fs::set_permissions(&s.cache, std::fs::Permissions::from_mode(0o700)).unwrap();
    let entry = s.entries()[0].0.clone();
    std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o666)).unwrap();
    let before = s.entries();
    assert_eq!(s.hook("git status", None).0, "allow");
    assert_ne!(s.entries(), before);
}

#[test]
fn eval_uses_the_cache_too() {
    let s = Setup::new("eval", &["Bash(git status)"]);
    let run = || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["eval", "--claude-settings", "--project-dir"])
            .arg(&s.project)
            .env("HOME", &s.home)
            .env("TOOLGATE_CACHE_DIR", &s.cache)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = child
            .stdin
            .take()
            .unwrap()
            .write_all(br#"{"tool":"Bash","input":{"command":"git status"}}"#);
        let out = child.wait_with_output().unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    assert!(run().contains(r#""decision":"allow""#));
    let stored = s.entries();
    assert_eq!(stored.len(), 1);
    assert!(run().contains(r#""decision":"allow""#));
    assert_eq!(s.entries(), stored, "loaded, not rebuilt");
    s.write("settings.local.json", &[], &["Bash(git status)"]);
    assert!(run().contains(r#""decision":"deny""#));
}

#[test]
fn projects_sharing_a_cache_keep_to_its_entry_budget() {
    let shared = temp_dir("budget-shared");
    let env = [("TOOLGATE_CACHE_MAX_ENTRIES", "2")];
    let projects: Vec<Setup> = (0..4)
        .map(|i| Setup::new(&format!("budget-{i}"), &["Bash(git status)"]))
        .collect();
    let count = || std::fs::read_dir(&shared).unwrap().count();
    let mut seen = Vec::new();
    for p in &projects {
        let (d, code, err) = p.hook_env("git status", None, &shared, &env);
        assert_eq!((d.as_str(), code), ("allow", 0), "{err}");
        seen.push(count());
    }
    assert_eq!(seen, [1, 2, 2, 2]);
    // Without the variable, the default budget keeps them all.
    for p in &projects {
        assert_eq!(p.hook_env("git status", None, &shared, &[]).0, "allow");
    }
    assert_eq!(count(), 4);
}

#[test]
fn a_settled_settings_file_edited_in_place_makes_a_fresh_image() {
    // Settled: changed more than the three seconds before it is read
    // that let an entry record its status and check freshness by it.
    let s = Setup::new("settled", &["Bash(git status)"]);
    std::thread::sleep(std::time::Duration::from_millis(3500));
    assert_eq!(s.hook("git status", None).0, "allow");
    let stored = s.entries();
    assert_eq!(s.hook("git status", None).0, "allow");
    assert_eq!(s.entries(), stored, "a hit");
    // The same length, another rule, written in place at once.
    s.write("settings.json", &["Bash(git statux)"], &[]);
    assert_eq!(s.hook("git status", None).0, "none");
    assert_eq!(s.hook("git statux", None).0, "allow");
}
