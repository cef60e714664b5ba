//! The image cache stays bounded: every store trims it to its limits
//! (entries and bytes, least recently used first; idle entries; entries of
//! other builds; temporary files a writer left), keeps the entry it just
//! stored, and touches nothing that is not the cache's own.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use toolgate::Effect;
use toolgate::compile::Policy;
use toolgate::policy::LoadedPolicy;
use toolgate::policy::PolicyImage;
use toolgate::policy::cache::{ImageCache, Limits};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolgate-evict-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An image of one allow rule, made from `recipe`.
fn image(recipe: &str) -> PolicyImage {
    let mut p = LoadedPolicy::new();
    p.add_rule(Effect::Allow, "Bash(git status)").unwrap();
    let compiled = Policy::builder().build(p.rules().to_vec()).unwrap();
    PolicyImage::new(recipe, p, compiled)
}

/// The names of the files in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The cache's entries (`*.tgimage` files) in `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    names(dir)
        .into_iter()
        .filter(|n| n.ends_with(".tgimage") && !n.starts_with('.'))
        .collect()
}

fn total_bytes(dir: &Path) -> u64 {
    entries(dir)
        .iter()
        .map(|n| std::fs::metadata(dir.join(n)).unwrap().len())
        .sum()
}

/// Sets the modification time of `path` to `ago` before now.
fn age(path: &Path, ago: Duration) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - ago).unwrap();
}

fn mtime(path: &Path) -> SystemTime {
    std::fs::metadata(path).unwrap().modified().unwrap()
}

const HOUR: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(24 * 3600);

/// The recipes of a run, all of one length (so entries are alike in size).
fn recipe(i: usize) -> String {
    format!("{{\"test\":\"recipe {i:04}\"}}")
}

#[test]
fn the_entry_budget_holds_after_many_stores() {
    let dir = temp_dir("count");
    let cache = ImageCache::new(&dir).limits(Limits::new().max_entries(5));
    let mut failures = Vec::new();
    for i in 0..20 {
        let path = cache.store(&image(&recipe(i))).unwrap();
        let n = entries(&dir).len();
        if n > 5 {
            failures.push(format!("after store {i}: {n} entries"));
        }
        if !path.exists() {
            failures.push(format!("store {i}: the entry just stored is gone"));
        }
    }
    assert_eq!(entries(&dir).len(), 5);
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn the_byte_budget_holds_after_many_stores() {
    let dir = temp_dir("bytes");
    let one = image(&recipe(0)).to_bytes().unwrap().len() as u64;
    let budget = 3 * one + one / 2;
    let cache = ImageCache::new(&dir).limits(Limits::new().max_bytes(budget));
    let mut failures = Vec::new();
    for i in 0..12 {
        let path = cache.store(&image(&recipe(i))).unwrap();
        let total = total_bytes(&dir);
        if total > budget {
            failures.push(format!("after store {i}: {total} bytes > {budget}"));
        }
        if !path.exists() {
            failures.push(format!("store {i}: the entry just stored is gone"));
        }
    }
    assert_eq!(entries(&dir).len(), 3, "three entries fit");
    assert!(failures.is_empty(), "{failures:#?}");
    // An entry larger than the whole budget is still kept when stored.
    let tiny = ImageCache::new(&dir).limits(Limits::new().max_bytes(1));
    let path = tiny.store(&image(&recipe(99))).unwrap();
    assert_eq!(entries(&dir), [path.file_name().unwrap().to_str().unwrap()]);
}

#[test]
fn the_least_recently_used_entries_go_first() {
    let dir = temp_dir("lru");
    let cache = ImageCache::new(&dir);
    let paths: Vec<PathBuf> = (0..4)
        .map(|i| cache.store(&image(&recipe(i))).unwrap())
        .collect();
    // Last used: 0 ten minutes ago, 1 forty, 2 twenty, 3 thirty.
    for (i, minutes) in [10, 40, 20, 30].into_iter().enumerate() {
        age(&paths[i], Duration::from_secs(60 * minutes));
    }
    let small = ImageCache::new(&dir).limits(Limits::new().max_entries(3));
    let new = small.store(&image(&recipe(4))).unwrap();
    let alive: Vec<bool> = paths.iter().map(|p| p.exists()).collect();
    assert_eq!(alive, [true, false, true, false]);
    assert!(new.exists());
}

#[test]
fn a_hit_renews_an_entrys_last_use_at_most_hourly() {
    let dir = temp_dir("hit");
    let cache = ImageCache::new(&dir);
    let r = recipe(0);
    let path = cache.store(&image(&r)).unwrap();
    // Used ten minutes ago: a hit leaves the time as it is.
    age(&path, Duration::from_secs(600));
    let before = mtime(&path);
    assert!(cache.load(&r).is_some());
    assert_eq!(mtime(&path), before);
    // Used two hours ago: a hit makes it now.
    age(&path, 2 * HOUR);
    let stale = mtime(&path);
    assert!(cache.load(&r).is_some());
    let renewed = mtime(&path);
    assert!(renewed > stale + HOUR, "{renewed:?} {stale:?}");
    // And so it outlives entries used since it was stored.
    let other = cache.store(&image(&recipe(1))).unwrap();
    age(&other, Duration::from_secs(60));
    let small = ImageCache::new(&dir).limits(Limits::new().max_entries(2));
    small.store(&image(&recipe(2))).unwrap();
    assert!(path.exists());
    assert!(!other.exists());
}

#[test]
fn files_that_are_not_the_caches_own_are_left_alone() {
    let dir = temp_dir("foreign");
    let cache = ImageCache::new(&dir).limits(Limits::new().max_entries(1).max_bytes(1));
    let stored = cache.store(&image(&recipe(0))).unwrap();
    let outside = temp_dir("foreign-outside").join("target.tgimage");
    std::fs::write(&outside, "not in the cache").unwrap();
    age(&outside, 100 * DAY);
    let foreign = [
        "notes.txt",
        "abc.tgimage",
        "0123456789abcdef.tgimage.bak",
        "0123456789ABCDEF.tgimage",
        "0123456789abcdef0.tgimage",
        "0123456-0123456789abcdef.tgimage",
        ".0123456789abcdef.tgimage.x.1.tmp",
        ".notours.1.2.tmp",
    ];
    for name in foreign {
        std::fs::write(dir.join(name), "x").unwrap();
        age(&dir.join(name), 100 * DAY);
    }
    // A directory and a symbolic link named as entries are not entries.
    std::fs::create_dir(dir.join("00000000-0123456789abcdef.tgimage")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("11111111-0123456789abcdef.tgimage")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("2222222222222222.tgimage")).unwrap();
    let before = names(&dir);
    let evicted = cache.evict(Some(&stored));
    assert_eq!(evicted.entries + evicted.temporaries, 0, "{evicted:?}");
    assert_eq!(names(&dir), before);
    assert!(outside.exists());
    // The next store removes the entry stored before, and only it.
    let next = cache.store(&image(&recipe(1))).unwrap();
    let mut expected: Vec<String> = before
        .into_iter()
        .filter(|n| **n != *stored.file_name().unwrap().to_string_lossy())
        .collect();
    expected.push(next.file_name().unwrap().to_string_lossy().into_owned());
    expected.sort();
    assert_eq!(names(&dir), expected);
    assert_eq!(std::fs::read(&outside).unwrap(), b"not in the cache");
}

#[test]
fn a_young_temporary_file_of_another_writer_is_kept_an_old_one_removed() {
    let dir = temp_dir("temp");
    let cache = ImageCache::new(&dir);
    let stored = cache.store(&image(&recipe(0))).unwrap();
    let entry = stored.file_name().unwrap().to_string_lossy().into_owned();
    let young = dir.join(format!(".{entry}.999999.12345.tmp"));
    let old = dir.join(format!(".{entry}.999998.12345.tmp"));
    let other_old = dir.join(".0123456789abcdef.tgimage.7.8.tmp");
    for p in [&young, &old, &other_old] {
        std::fs::write(p, "half an image").unwrap();
    }
    age(&young, Duration::from_secs(60));
    age(&old, 2 * HOUR);
    age(&other_old, 2 * HOUR);
    let evicted = cache.evict(Some(&stored));
    assert_eq!(evicted.temporaries, 2);
    assert!(young.exists());
    assert!(!old.exists());
    assert!(!other_old.exists());
    assert!(stored.exists());
}

#[test]
fn idle_entries_and_other_builds_idle_entries_are_removed() {
    let dir = temp_dir("idle");
    let cache = ImageCache::new(&dir);
    let mine_old = cache.store(&image(&recipe(0))).unwrap();
    let mine_idle = cache.store(&image(&recipe(1))).unwrap();
    let mine_name = mine_old.file_name().unwrap().to_string_lossy().into_owned();
    let (tag, _) = mine_name.split_once('-').unwrap();
    let other_tag = if tag == "00000000" {
        "00000001"
    } else {
        "00000000"
    };
    let file = |name: &str, ago: Duration| {
        let p = dir.join(name);
        std::fs::write(&p, "an entry of another build").unwrap();
        age(&p, ago);
        p
    };
    let other_recent = file(&format!("{other_tag}-0000000000000001.tgimage"), HOUR);
    let other_idle = file(&format!("{other_tag}-0000000000000002.tgimage"), 2 * DAY);
    let unnamed_build_idle = file("0000000000000003.tgimage", 2 * DAY);
    let unnamed_build_recent = file("0000000000000004.tgimage", HOUR);
    age(&mine_old, 2 * DAY);
    age(&mine_idle, 31 * DAY);
    let kept = cache.store(&image(&recipe(2))).unwrap();
    let alive = |p: &PathBuf| p.exists();
    assert!(alive(&kept));
    assert!(
        alive(&mine_old),
        "this build's entry used two days ago stays"
    );
    assert!(!alive(&mine_idle), "unused for 31 days");
    assert!(alive(&other_recent));
    assert!(!alive(&other_idle));
    assert!(!alive(&unnamed_build_idle));
    assert!(alive(&unnamed_build_recent));
}

#[test]
fn nothing_is_removed_from_a_directory_others_can_write() {
    let dir = temp_dir("shared");
    let cache = ImageCache::new(&dir).limits(Limits::new().max_entries(1));
    let first = cache.store(&image(&recipe(0))).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let second = cache.store(&image(&recipe(1))).unwrap();
    let both = first.exists() && second.exists();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert!(both);
}

#[test]
fn concurrent_stores_keep_the_budget() {
    let dir = temp_dir("concurrent");
    let cache = ImageCache::new(&dir).limits(Limits::new().max_entries(5));
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let cache = &cache;
                s.spawn(move || {
                    (0..10)
                        .filter_map(|i| cache.store(&image(&recipe(t * 100 + i))).err())
                        .map(|e| e.to_string())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert!(failures.is_empty(), "{failures:#?}");
    let left = names(&dir);
    assert!(entries(&dir).len() <= 5, "{left:#?}");
    assert!(left.iter().all(|n| !n.ends_with(".tmp")), "{left:#?}");
}
