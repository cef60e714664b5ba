//! Policy sources: every fixture under `tests/data/policy/` is loaded and
//! its rendering compared with the `.expected` file beside it; all
//! differences are reported at once.
//!
//! - `tuff/NAME.toml`: a tuff policy given by path;
//! - `settings/NAME.json`: a Claude settings file given by path (root
//!   `/project`);
//! - `discovery/NAME/`: a settings hierarchy, with `managed/`, `home/` and
//!   `project/` as the three roots (each may be missing);
//! - `installed/NAME/`: installed tuff policies, looked up from the
//!   directories listed in the case's `starts` file (one per line, relative
//!   to the case) with the `dir-prefix` file's prefix and `id` file's id.

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toolgate::Effect;
use toolgate::policy::{ClaudeRoots, LoadedPolicy, PermissionMode, SourceKind, SourceRoot};
use toolgate::rule::{GlobPiece, PathPattern, Pattern, SegPiece, Segment, ToolMatch};

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/policy")
}

/// Runs every case of `kind`, collecting mismatches.
fn run_kind(kind: &str, load: impl Fn(&Path) -> Result<LoadedPolicy, toolgate::Error>) {
    let dir = data().join(kind);
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_none_or(|e| e != "expected"))
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no cases in {}", dir.display());
    let mut failures = Vec::new();
    for case in &cases {
        let expected_path =
            PathBuf::from(format!("{}.expected", case.with_extension("").display()));
        let expected = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", expected_path.display()));
        let actual = match load(case) {
            Ok(p) => render(&p, case),
            Err(e) => format!("error: {e}\n"),
        };
        let actual = actual.replace(&format!("{}/", case.display()), "");
        if actual.trim_end() != expected.trim_end() {
            failures.push(format!(
                "{}:\n--- expected\n{}\n--- actual\n{}",
                case.display(),
                expected.trim_end(),
                actual.trim_end()
            ));
        }
    }
    if !failures.is_empty() {
        panic!(
            "{} of {} {kind} cases failed:\n\n{}",
            failures.len(),
            cases.len(),
            failures.join("\n\n")
        );
    }
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

fn render(p: &LoadedPolicy, case: &Path) -> String {
    let mut out = String::new();
    for (i, s) in p.sources().iter().enumerate() {
        let root = match &s.root {
            SourceRoot::Dir(d) => d.display().to_string(),
            SourceRoot::Project => "<project>".into(),
        };
        let id = s
            .tuff_id
            .as_deref()
            .map(|i| format!(" id={i}"))
            .unwrap_or_default();
        writeln!(
            out,
            "source {i} {} {} root={root}{id}",
            s.kind.as_str(),
            s.name
        )
        .unwrap();
    }
    for (i, r) in p.rules().iter().enumerate() {
        let src = p.source_of(i).map(|s| s.kind.as_str()).unwrap_or("?");
        write!(
            out,
            "rule {} {} {}:{} {}",
            r.effect,
            r.provenance.source,
            r.provenance.item(),
            src,
            r.text
        )
        .unwrap();
        if r.dialect == toolgate::Dialect::Tuff {
            write!(out, " => {} {}", tool(&r.tool), pattern(&r.pattern)).unwrap();
        }
        if let Some(reason) = &r.reason {
            write!(out, " | {reason}").unwrap();
        }
        out.push('\n');
    }
    for w in p.warnings() {
        writeln!(out, "warning: {w}").unwrap();
    }
    if let Some(m) = p.default_mode() {
        writeln!(out, "default mode: {m}").unwrap();
    }
    if p.disable_bypass() {
        let m = p.effective_mode(Some(PermissionMode::BypassPermissions));
        writeln!(out, "bypass disabled: bypassPermissions -> {}", m.unwrap()).unwrap();
    }
    for d in p.additional_directories() {
        writeln!(out, "additional directory {} (source {})", d.path, d.source).unwrap();
    }
    let _ = case;
    out
}

fn tool(t: &ToolMatch) -> String {
    match t {
        ToolMatch::Name(n) => n.clone(),
        ToolMatch::McpServer(s) => format!("mcp server {s}"),
        ToolMatch::Glob(pieces) => format!(
            "glob {}",
            pieces
                .iter()
                .map(|p| match p {
                    GlobPiece::Literal(l) => format!("'{l}'"),
                    GlobPiece::Star => "*".into(),
                    GlobPiece::Question => "?".into(),
                })
                .collect::<String>()
        ),
    }
}

fn pattern(p: &Pattern) -> String {
    match p {
        Pattern::Any => "any".into(),
        Pattern::Tokens(words) => format!("tokens {words:?}"),
        Pattern::Path(path) => format!("path {}", path_text(path)),
        other => format!("{other:?}"),
    }
}

fn path_text(p: &PathPattern) -> String {
    let segs: Vec<String> = p
        .segments
        .iter()
        .map(|s| match s {
            Segment::DoubleStar => "**".to_string(),
            Segment::Pieces(pieces) => pieces
                .iter()
                .map(|piece| match piece {
                    SegPiece::Literal(l) => format!("'{l}'"),
                    SegPiece::Star => "*".into(),
                    SegPiece::Question => "?".into(),
                    SegPiece::Class { negated, ranges } => format!("[{negated} {ranges:?}]"),
                })
                .collect(),
        })
        .collect();
    format!(
        "{:?} {} {}{}",
        p.anchor,
        if p.anchored { "anchored" } else { "any-depth" },
        segs.join("/"),
        if p.case_insensitive { " (nocase)" } else { "" }
    )
}

#[test]
fn tuff_policies() {
    run_kind("tuff", |case| {
        let text = std::fs::read_to_string(case).unwrap();
        let mut p = LoadedPolicy::new();
        p.add_tuff_text(
            &text,
            &file_name(case),
            Some(case),
            SourceKind::Tuff,
            SourceRoot::Project,
        )?;
        Ok(p)
    });
}

#[test]
fn settings_files() {
    run_kind("settings", |case| {
        let text = std::fs::read_to_string(case).unwrap();
        let mut p = LoadedPolicy::new();
        p.add_settings_text(
            &text,
            &file_name(case),
            Some(case),
            SourceKind::Settings,
            SourceRoot::Dir("/project".into()),
        )?;
        Ok(p)
    });
}

#[test]
fn discovery() {
    run_kind("discovery", |case| {
        let roots = ClaudeRoots {
            managed_dir: Some(case.join("managed")),
            home: Some(case.join("home")),
            project: case.join("project"),
        };
        LoadedPolicy::discover(&roots)
    });
}

#[test]
fn installed_tuff_policies() {
    run_kind("installed", |case| {
        let read = |name: &str| std::fs::read_to_string(case.join(name)).unwrap();
        let starts: Vec<PathBuf> = read("starts").lines().map(|l| case.join(l)).collect();
        let mut p = LoadedPolicy::new();
        p.add_installed_tuff(
            &starts,
            Path::new(read("dir-prefix").trim()),
            read("id").trim(),
        )?;
        Ok(p)
    });
}

#[test]
fn command_line_rules_count_per_list() {
    let mut p = LoadedPolicy::new();
    p.add_rule(Effect::Deny, "Bash(rm *)")
        .unwrap()
        .add_rule(Effect::Allow, "Read")
        .unwrap()
        .add_rule(Effect::Deny, "Read(.env)")
        .unwrap();
    let got: Vec<String> = p
        .rules()
        .iter()
        .map(|r| format!("{} {} {}", r.provenance.source, r.provenance.item(), r.text))
        .collect();
    assert_eq!(
        got,
        [
            "<command line> deny[0] Bash(rm *)",
            "<command line> allow[0] Read",
            "<command line> deny[1] Read(.env)"
        ]
    );
    assert_eq!(p.sources().len(), 1);
    assert_eq!(p.sources()[0].root, SourceRoot::Project);
    assert_eq!(p.sources()[0].kind, SourceKind::CommandLine);
}

#[test]
fn a_bad_command_line_deny_rule_fails_and_adds_nothing() {
    let mut p = LoadedPolicy::new();
    let e = p.add_rule(Effect::Deny, "Bash(ls").unwrap_err();
    assert_eq!(e.location().source.as_deref(), Some("<command line>"));
    assert_eq!(e.location().item.as_deref(), Some("deny[0]"));
    assert!(p.sources().is_empty() && p.rules().is_empty());
    // A bad allow rule is dropped with a warning, and still counts.
    p.add_rule(Effect::Allow, "Bash(ls").unwrap();
    p.add_rule(Effect::Allow, "Bash(ls)").unwrap();
    assert_eq!(p.warnings().len(), 1);
    assert_eq!(p.rules()[0].provenance.item(), "allow[1]");
}

#[test]
fn add_file_dispatches_by_extension_and_sets_roots() {
    let d = data().join("files");
    let p = LoadedPolicy::from_file(&d.join("project/.claude/settings.local.json")).unwrap();
    assert_eq!(p.sources()[0].kind, SourceKind::Settings);
    assert_eq!(p.sources()[0].root, SourceRoot::Dir(d.join("project")));
    let p = LoadedPolicy::from_file(&d.join("project/conf/settings.json")).unwrap();
    assert_eq!(p.sources()[0].root, SourceRoot::Dir(d.join("project/conf")));
    let p = LoadedPolicy::from_file(&d.join("guard.toml")).unwrap();
    assert_eq!(p.sources()[0].kind, SourceKind::Tuff);
    assert_eq!(p.sources()[0].root, SourceRoot::Project);
    assert_eq!(p.sources()[0].tuff_id.as_deref(), Some("guard"));
    let e = LoadedPolicy::from_file(&d.join("missing.json")).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: cannot read the policy: no such file",
            d.join("missing.json").display()
        )
    );
}

#[test]
fn several_files_given_by_path_the_last_default_mode_wins() {
    let d = data().join("files");
    let mut p = LoadedPolicy::new();
    p.add_file(&d.join("mode-plan.json"))
        .unwrap()
        .add_file(&d.join("project/conf/settings.json"))
        .unwrap();
    assert_eq!(p.default_mode(), Some(PermissionMode::Plan));
    p.add_file(&d.join("mode-accept-edits.json")).unwrap();
    assert_eq!(p.default_mode(), Some(PermissionMode::AcceptEdits));
    // A mode asked for wins over the settings' default.
    assert_eq!(
        p.effective_mode(Some(PermissionMode::DontAsk)),
        Some(PermissionMode::DontAsk)
    );
    assert_eq!(p.effective_mode(None), Some(PermissionMode::AcceptEdits));
}

#[test]
fn corpus_settings_files_load_or_are_refused_cleanly() {
    let Some(dir) = common::corpus("claude-settings-files") else {
        return;
    };
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    let (mut loaded, mut with_warnings, mut refused, mut rules, mut warnings) = (0, 0, 0, 0, 0);
    let mut problems = Vec::new();
    for path in &names {
        let name = path.display().to_string();
        match LoadedPolicy::from_file(path) {
            Ok(p) => {
                loaded += 1;
                rules += p.rules().len();
                warnings += p.warnings().len();
                if !p.warnings().is_empty() {
                    with_warnings += 1;
                }
                for w in p.warnings() {
                    eprintln!("warning: {w}");
                    if w.location().source.as_deref() != Some(&name) {
                        problems.push(format!("warning without its file: {w}"));
                    }
                }
            }
            Err(e) => {
                refused += 1;
                let loc = e.location();
                if loc.source.as_deref() != Some(&name) {
                    problems.push(format!("refusal without its file: {e}"));
                }
                eprintln!("refused: {e}");
            }
        }
    }
    eprintln!(
        "claude-settings-files: {} files, {loaded} loaded ({with_warnings} with warnings, \
         {warnings} warnings, {rules} rules), {refused} refused",
        names.len()
    );
    assert_eq!(loaded + refused, names.len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every rule of every real policy is either loaded or dropped with a
/// warning that names it: none is lost silently, none is loaded twice.
#[test]
fn corpus_policies_account_for_every_rule() {
    let Some(lines) = common::corpus_lines("claude-policies.jsonl") else {
        return;
    };
    let mut problems = Vec::new();
    let (mut kept, mut dropped, mut refused) = (0, 0, 0);
    for (n, line) in lines.iter().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let block = serde_json::json!({"allow": v["allow"], "ask": v["ask"], "deny": v["deny"]});
        let name = format!("line {}", n + 1);
        let mut expected: Vec<String> = Vec::new();
        for list in ["allow", "ask", "deny"] {
            for i in 0..block[list].as_array().map_or(0, Vec::len) {
                expected.push(format!("{list}[{i}]"));
            }
        }
        let mut p = LoadedPolicy::new();
        match p.add_settings_text(
            &block.to_string(),
            &name,
            None,
            SourceKind::Settings,
            SourceRoot::Dir("/project".into()),
        ) {
            Ok(_) => {
                let mut got: Vec<String> = p.rules().iter().map(|r| r.provenance.item()).collect();
                kept += got.len();
                for w in p.warnings() {
                    dropped += 1;
                    match &w.location().item {
                        Some(item) => got.push(item.clone()),
                        None => problems.push(format!("{name}: warning without an item: {w}")),
                    }
                }
                got.sort();
                expected.sort();
                if got != expected {
                    problems.push(format!("{name}: rules {got:?}, expected {expected:?}"));
                }
            }
            Err(e) => {
                refused += 1;
                if e.location().source.as_deref() != Some(&name) || e.location().item.is_none() {
                    problems.push(format!("{name}: refusal without file and rule: {e}"));
                }
            }
        }
    }
    eprintln!(
        "claude-policies.jsonl: {} policies, {} refused; {kept} rules kept, {dropped} dropped",
        lines.len(),
        refused
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn find_policy_root_climbs_from_each_start_in_order() {
    use toolgate::rule::tuff::find_policy_root;
    let case = data().join("installed/starts-in-order");
    let prefix = Path::new(".claude");
    let starts = [case.join("b/x/y"), case.join("a/x")];
    assert_eq!(
        find_policy_root(&starts, prefix, "guard"),
        Some(case.join("b"))
    );
    assert_eq!(find_policy_root(&starts, prefix, "other"), None);
    assert_eq!(find_policy_root(&starts, prefix, ".."), None);
    assert_eq!(find_policy_root(&[], prefix, "guard"), None);
}

#[test]
fn load_installed_policy_reads_and_validates_the_record() {
    use toolgate::rule::tuff::{Subject, load_installed_policy};
    let case = data().join("installed/found-above/repo/.claude/policies/guard/policy.toml");
    let p = load_installed_policy(&case).unwrap();
    assert_eq!(p.id.as_deref(), Some("guard"));
    assert_eq!(p.rules.len(), 1);
    assert_eq!(p.rules[0].effect, Effect::Deny);
    assert_eq!(p.rules[0].subject, Subject::Read(vec!["secrets/**".into()]));
    let bad = data().join("installed/invalid/repo/.claude/policies/guard/policy.toml");
    let e = load_installed_policy(&bad).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: rule 2: a policy rule cannot allow anything: policies only narrow what an \
             agent may do",
            bad.display()
        )
    );
    let missing = data().join("installed/none.toml");
    let e = load_installed_policy(&missing).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: cannot read the policy: no such file",
            missing.display()
        )
    );
}

/// Each odd real rule, alone in its list: it loads, is dropped or ignored
/// with a warning naming it, or fails the load with an error naming it —
/// an allow rule never fails the load.
#[test]
fn corpus_odd_rules_load_warn_or_fail_by_their_list() {
    let Some(lines) = common::corpus_lines("odd-rules.tsv") else {
        return;
    };
    let (mut kept, mut warned, mut refused) = (0, 0, 0);
    let mut problems = Vec::new();
    for (n, line) in lines.iter().enumerate().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (Some(list), Some(rule)) = (cols.get(1), cols.get(2)) else {
            problems.push(format!("line {}: not 4 columns", n + 1));
            continue;
        };
        if !matches!(*list, "allow" | "ask" | "deny") {
            continue;
        }
        let Ok(rule) = serde_json::from_str::<serde_json::Value>(rule) else {
            problems.push(format!("line {}: rule is not json", n + 1));
            continue;
        };
        let block = serde_json::json!({ *list: [rule] });
        let name = format!("odd-rules.tsv line {}", n + 1);
        let item = format!("{list}[0]");
        let mut p = LoadedPolicy::new();
        let loaded = p
            .add_settings_text(
                &block.to_string(),
                &name,
                None,
                SourceKind::Settings,
                SourceRoot::Dir("/project".into()),
            )
            .map(|_| ());
        match loaded {
            Ok(_) if p.rules().len() == 1 => kept += 1,
            Ok(_) => {
                warned += 1;
                let w = p.warnings().first();
                let named = w.is_some_and(|w| {
                    w.location().source.as_deref() == Some(&name)
                        && w.location().item.as_deref() == Some(&item)
                });
                if !named {
                    problems.push(format!("{name}: dropped without a warning naming it"));
                }
            }
            Err(e) => {
                refused += 1;
                if *list == "allow" {
                    problems.push(format!("{name}: an allow rule failed the load: {e}"));
                }
                if e.location().source.as_deref() != Some(&name)
                    || e.location().item.as_deref() != Some(&item)
                {
                    problems.push(format!("{name}: refusal without file and rule: {e}"));
                }
            }
        }
    }
    eprintln!("odd-rules.tsv: {kept} kept, {warned} dropped with a warning, {refused} refused");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_source_that_fails_adds_nothing() {
    let d = data().join("settings");
    let mut p = LoadedPolicy::from_file(&d.join("malformed-allow.json")).unwrap();
    let before = p.clone();
    for bad in [
        "malformed-deny.json",
        "invalid-json.json",
        "non-string-deny.json",
    ] {
        assert!(p.add_file(&d.join(bad)).is_err(), "{bad}");
        assert_eq!(p, before, "{bad}");
    }
    let tuff = data().join("tuff/allow.toml");
    assert!(p.add_file(&tuff).is_err());
    assert_eq!(p, before);
    let roots = ClaudeRoots {
        managed_dir: None,
        home: Some(data().join("discovery/bad-file/home")),
        project: data().join("discovery/bad-file/project"),
    };
    assert!(p.add_claude_settings(&roots).is_err());
    assert_eq!(p, before);
}
