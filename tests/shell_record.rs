//! A command's assignments and redirections, read from the reading's
//! vectors: a group's redirections follow each command's own, however
//! groups nest and whichever commands have their own.

use toolgate::shell::read;

/// Each command's program and the targets of its redirections, in order.
fn redirections(cmd: &str) -> Vec<(String, Vec<String>)> {
    let r = read(cmd);
    assert!(r.is_complete(), "{cmd}: {:?}", r.incomplete);
    r.commands
        .iter()
        .map(|c| {
            let program = c.program(&r).map_or("", |w| w.text()).to_string();
            let targets = c
                .redirections(&r)
                .iter()
                .map(|x| x.target.text().to_string())
                .collect();
            (program, targets)
        })
        .collect()
}

/// A command's program and the targets of its redirections, as written.
type Expected<'a> = (&'a str, &'a [&'a str]);

fn owned(v: &[Expected<'_>]) -> Vec<(String, Vec<String>)> {
    v.iter()
        .map(|(p, t)| (p.to_string(), t.iter().map(|s| s.to_string()).collect()))
        .collect()
}

#[test]
fn a_groups_redirections_follow_each_commands_own() {
    let cases: &[(&str, &[Expected<'_>])] = &[
        ("{ a; b; } >f", &[("a", &["f"]), ("b", &["f"])]),
        ("{ a >x; b; } >f", &[("a", &["x", "f"]), ("b", &["f"])]),
        (
            "{ a; b >y 2>z; } >f",
            &[("a", &["f"]), ("b", &["y", "z", "f"])],
        ),
        ("{ { a; } >f; } >g", &[("a", &["f", "g"])]),
        ("{ { a >x; } >f; } >g", &[("a", &["x", "f", "g"])]),
        (
            "{ { a; } >f; c >y; } >g",
            &[("a", &["f", "g"]), ("c", &["y", "g"])],
        ),
        (
            "{ { a; b >x; } >f; c; } >g 2>h",
            &[
                ("a", &["f", "g", "h"]),
                ("b", &["x", "f", "g", "h"]),
                ("c", &["g", "h"]),
            ],
        ),
        (
            "( a >x; { b; } >f ) >g; c >y",
            &[("a", &["x", "g"]), ("b", &["f", "g"]), ("c", &["y"])],
        ),
        // A substitution's command is read in the group's script: it gets
        // them too.
        (
            "{ a $(b >x) >y; } >f",
            &[("b", &["x", "f"]), ("a", &["y", "f"])],
        ),
    ];
    for (cmd, want) in cases {
        assert_eq!(redirections(cmd), owned(want), "{cmd}");
    }
}

#[test]
fn assignments_are_each_commands_own() {
    let r = read("A=1 B=$(C=2 d) e; F=3; g");
    assert!(r.is_complete());
    let got: Vec<Vec<&str>> = r
        .commands
        .iter()
        .map(|c| c.assignments(&r).iter().map(|a| a.name.as_str()).collect())
        .collect();
    assert_eq!(got, [vec!["C"], vec!["A", "B"], vec!["F"], vec![]]);
}

#[test]
fn a_here_documents_body_is_its_own_commands() {
    let r = read("cat <<A >x; { cat <<B; } >f\na\nA\nb\nB\n");
    let bodies: Vec<Option<&str>> = r
        .commands
        .iter()
        .flat_map(|c| c.redirections(&r))
        .map(|x| x.body.as_ref().map(|b| b.text()))
        .collect();
    assert_eq!(bodies, [Some("a\n"), None, Some("b\n"), None]);
}

/// A command whose own redirections are copied to add its group's keeps
/// its here-document's body (read after the group closes), and a shell
/// it feeds still reads it.
#[test]
fn a_copied_here_document_gets_its_body() {
    let r = read("{ bash <<EOF; echo hi >y; } >f\nrm -rf /\nEOF\n");
    assert!(r.is_complete(), "{:?}", r.incomplete);
    let programs: Vec<&str> = r
        .commands
        .iter()
        .filter_map(|c| c.program(&r).map(|w| w.text()))
        .collect();
    assert_eq!(programs, ["bash", "rm", "echo"]);
    let bash = &r.commands[0];
    let bodies: Vec<Option<&str>> = bash
        .redirections(&r)
        .iter()
        .map(|x| x.body.as_ref().map(|b| b.text()))
        .collect();
    assert_eq!(bodies, [Some("rm -rf /\n"), None]);
}
