//! Symlink chains, where the file system is there to look (SPEC §4.2,
//! §13 "New files"): deny and ask rules match the path or any hop of its
//! chain or its real path; an allow rule applies only if the path and its
//! real path both match. Off unless the context asks for it.

use serde_json::json;
use std::path::PathBuf;
use toolgate::eval::{EvalContext, Evaluator, Verdict};
use toolgate::policy::LoadedPolicy;
use toolgate::reference_eval::ReferenceEvaluator;
use toolgate::{Effect, ToolCall};

struct Tmp(PathBuf);

impl Drop for Tmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tmp(name: &str) -> Tmp {
    let base = std::fs::canonicalize(std::env::temp_dir()).expect("a temp dir");
    let dir = base.join(format!("toolgate-eval-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a test dir");
    Tmp(dir)
}

#[cfg(unix)]
#[test]
fn chains_and_real_paths() {
    let t = tmp("links");
    let root = t.0.to_str().expect("utf-8").to_string();
    let proj = format!("{root}/proj");
    std::fs::create_dir_all(format!("{proj}/src")).unwrap();
    std::fs::create_dir_all(format!("{root}/secret")).unwrap();
    std::fs::write(format!("{root}/secret/key"), "k").unwrap();
    std::fs::write(format!("{proj}/src/a.rs"), "a").unwrap();
    // proj/src/link -> ../../secret/key ; proj/src/hop -> link
    std::os::unix::fs::symlink("../../secret/key", format!("{proj}/src/link")).unwrap();
    std::os::unix::fs::symlink("link", format!("{proj}/src/hop")).unwrap();
    // proj/docs -> src (a directory link)
    std::os::unix::fs::symlink("src", format!("{proj}/docs")).unwrap();

    let mut p = LoadedPolicy::new();
    p.add_rule(Effect::Allow, "Read(./src/**)").unwrap();
    p.add_rule(Effect::Allow, "Read(./docs/**)").unwrap();
    p.add_rule(Effect::Deny, &format!("Read(/{root}/secret/**)"))
        .unwrap();
    p.add_rule(Effect::Ask, "Edit(./src/**)").unwrap();
    let engine = Evaluator::new(&p).unwrap();
    let reference = ReferenceEvaluator::new(&p);
    let read = |path: &str| {
        ToolCall::from_json(&json!({"tool": "Read", "input": {"file_path": path}})).unwrap()
    };
    let edit = |path: &str| {
        ToolCall::from_json(&json!({"tool": "Write", "input": {"file_path": path, "content": ""}}))
            .unwrap()
    };
    let on = EvalContext::new(&proj).unwrap().with_follow_symlinks(true);
    let off = EvalContext::new(&proj).unwrap();
    let rows: &[(ToolCall, &EvalContext, Verdict, Option<&str>)] = &[
        // The real path is denied: the link and a hop to it are too.
        (read("src/link"), &on, Verdict::Deny, Some("secret")),
        (read("src/hop"), &on, Verdict::Deny, Some("secret")),
        // Without following links the path alone is matched.
        (read("src/link"), &off, Verdict::Allow, Some("./src/**")),
        // An allow needs the path and its real path: docs/a.rs is really
        // src/a.rs, which Read(./docs/**) does not cover, but
        // Read(./src/**) covers the real path and not docs/a.rs.
        (read("docs/a.rs"), &on, Verdict::None, None),
        (read("docs/a.rs"), &off, Verdict::Allow, Some("./docs/**")),
        (read("src/a.rs"), &on, Verdict::Allow, Some("./src/**")),
        // Writing through a link: the ask rule sees the path, the deny
        // rule (a claude-code Read deny also denies edits) its target.
        (edit("src/link"), &on, Verdict::Deny, Some("secret")),
        // A new file under a linked directory: its real path is the real
        // path of its deepest existing ancestor, then the rest.
        (edit("docs/new.rs"), &on, Verdict::Ask, Some("./src/**")),
    ];
    let mut bad = Vec::new();
    for (k, (call, ctx, verdict, rule)) in rows.iter().enumerate() {
        for (who, d) in [
            ("engine", engine.evaluate(call, ctx).unwrap()),
            ("reference", reference.evaluate(call, ctx).unwrap()),
        ] {
            let text = d.rule_text().map(str::to_string);
            let ok = d.verdict == *verdict
                && match rule {
                    Some(r) => text.as_deref().is_some_and(|t| t.contains(r)),
                    None => text.is_none(),
                };
            if !ok {
                bad.push(format!(
                    "row {k} [{who}]: got {} {text:?}, want {verdict} {rule:?} ({})",
                    d.verdict,
                    d.reason()
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
