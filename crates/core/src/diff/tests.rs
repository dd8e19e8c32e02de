use super::*;

/// What git 2.47 printed for a checkout with a modified file (no newline at its end), a binary
/// one, a deleted one, a rename with a change, a name git quotes and a new file (untracked, added
/// with intent), against its first commit.
const SAMPLE: &[u8] = b":100644 100644 4cb29ea 0000000 M\x00a.txt\x00:100644 100644 d5d0b8b 0000000 M\x00bin.dat\x00:100644 000000 abaddc0 0000000 D\x00del.txt\x00:100644 100644 0ff3bbb 6c69c71 R092\x00ren.txt\x00moved.txt\x00:100644 100644 bca70f3 0000000 M\x00q\"uote.txt\x00:000000 100644 0000000 1433feb A\x00untracked.txt\x002\t1\ta.txt\x00-\t-\tbin.dat\x000\t1\tdel.txt\x001\t1\t\x00ren.txt\x00moved.txt\x001\t1\tq\"uote.txt\x002\t0\tuntracked.txt\x00\x00diff --git a/a.txt b/a.txt\nindex 4cb29ea..047ece5 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,4 @@\n one\n-two\n+2\n three\n+four\n\\ No newline at end of file\ndiff --git a/bin.dat b/bin.dat\nindex d5d0b8b..35dcd07 100644\nBinary files a/bin.dat and b/bin.dat differ\ndiff --git a/del.txt b/del.txt\ndeleted file mode 100644\nindex abaddc0..0000000\ndiff --git a/ren.txt b/moved.txt\nsimilarity index 92%\nrename from ren.txt\nrename to moved.txt\nindex 0ff3bbb..6c69c71 100644\n--- a/ren.txt\n+++ b/moved.txt\n@@ -7,7 +7,7 @@\n 7\n 8\n 9\n-10\n+ten\n 11\n 12\n 13\ndiff --git \"a/q\\\"uote.txt\" \"b/q\\\"uote.txt\"\nindex bca70f3..3e75765 100644\n--- \"a/q\\\"uote.txt\"\n+++ \"b/q\\\"uote.txt\"\n@@ -1 +1 @@\n-q\n+new\ndiff --git a/untracked.txt b/untracked.txt\nnew file mode 100644\nindex 0000000..1433feb\n--- /dev/null\n+++ b/untracked.txt\n@@ -0,0 +1,2 @@\n+fresh\n+\tindented\n";

fn file<'a>(c: &'a Changes, path: &str) -> &'a FileChange {
    c.files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("no {path} in {c:#?}"))
}

fn line(kind: LineKind, old: Option<u32>, new: Option<u32>, text: &str) -> Line {
    Line {
        kind,
        old,
        new,
        text: text.into(),
    }
}

#[test]
fn every_kind_of_change_is_read_with_its_status_counts_and_lines() {
    let c = parse(SAMPLE, false, "abc123", Limits::VIEW);
    assert_eq!(c.base, "abc123");
    assert_eq!(c.note, None);
    let paths: Vec<&str> = c.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "a.txt",
            "bin.dat",
            "del.txt",
            "moved.txt",
            "q\"uote.txt",
            "untracked.txt"
        ]
    );
    let a = file(&c, "a.txt");
    assert_eq!(
        (a.status, a.added, a.removed),
        (Status::Modified, Some(2), Some(1))
    );
    assert_eq!(a.hunks.len(), 1);
    assert_eq!(a.hunks[0].header, "@@ -1,3 +1,4 @@");
    assert_eq!(
        a.hunks[0].lines,
        vec![
            line(LineKind::Context, Some(1), Some(1), "one"),
            line(LineKind::Removed, Some(2), None, "two"),
            line(LineKind::Added, None, Some(2), "2"),
            line(LineKind::Context, Some(3), Some(3), "three"),
            line(LineKind::Added, None, Some(4), "four"),
            line(LineKind::NoNewline, None, None, "no newline at end of file"),
        ]
    );
    assert_eq!(a.note, None);
    let bin = file(&c, "bin.dat");
    assert!(bin.binary && bin.hunks.is_empty() && bin.added.is_none());
    assert_eq!(bin.note.as_deref(), Some("binary file: not shown"));
    let del = file(&c, "del.txt");
    assert_eq!(del.status, Status::Deleted);
    assert_eq!(del.note.as_deref(), Some("deleted (1 lines): not shown"));
    let moved = file(&c, "moved.txt");
    assert_eq!(
        (moved.status, moved.from.as_deref(), moved.similarity),
        (Status::Renamed, Some("ren.txt"), Some(92))
    );
    assert_eq!(moved.title(), "ren.txt → moved.txt");
    let ten = &moved.hunks[0].lines[4];
    assert_eq!(*ten, line(LineKind::Added, None, Some(10), "ten"));
    let quoted = file(&c, "q\"uote.txt");
    assert_eq!(quoted.lines(), 2, "found by its quoted header");
    let new = file(&c, "untracked.txt");
    assert_eq!(new.status, Status::Added);
    assert_eq!(
        new.hunks[0].lines[1],
        line(LineKind::Added, None, Some(2), "    indented"),
        "a tab is four columns in every view"
    );
    assert_eq!(c.summary(), "6 files changed, +6 -4");
}

#[test]
fn nothing_changed_is_an_empty_model() {
    let c = parse(b"", false, "abc", Limits::VIEW);
    assert!(c.files.is_empty() && c.note.is_none());
    assert_eq!(c.summary(), "no changes");
}

#[test]
fn lines_past_the_limit_are_counted_in_notes_and_the_first_ones_kept() {
    let limits = Limits {
        lines: 4,
        ..Limits::VIEW
    };
    let c = parse(SAMPLE, false, "abc", limits);
    let kept: usize = c.files.iter().map(FileChange::lines).sum();
    assert_eq!(kept, 4);
    assert_eq!(file(&c, "a.txt").lines(), 4);
    assert_eq!(
        file(&c, "a.txt").note.as_deref(),
        Some("1 changed lines not shown: the diff is cut")
    );
    assert!(file(&c, "moved.txt").hunks.is_empty());
    assert_eq!(
        file(&c, "moved.txt").note.as_deref(),
        Some("2 changed lines not shown: the diff is cut")
    );
    let note = c.note.expect("a note for the cut");
    // a.txt's last two lines (one a "no newline" mark, not counted), the rename's 7+1, the quoted
    // file's 2, the new file's 2.
    assert!(note.starts_with("13 lines left out: at most 4 lines"), "{note}");
}

#[test]
fn output_cut_at_git_s_bound_names_the_files_it_never_reached() {
    let at = SAMPLE
        .windows(b"diff --git a/ren.txt".len())
        .position(|w| w == b"diff --git a/ren.txt")
        .expect("the rename's section")
        + 30;
    let c = parse(&SAMPLE[..at], true, "abc", Limits::VIEW);
    assert_eq!(c.files.len(), 6, "the list came whole before the patch");
    assert_eq!(file(&c, "a.txt").lines(), 6);
    let unread = file(&c, "untracked.txt");
    assert!(unread.hunks.is_empty());
    assert_eq!(
        unread.note.as_deref(),
        Some("not shown: git's output was cut before this file")
    );
    let note = c.note.expect("a note");
    assert!(note.contains("3 files (6 changed lines) not shown"), "{note}");
    // Cut inside the list itself: what was read is listed, and the cut is said.
    let c = parse(&SAMPLE[..60], true, "abc", Limits::VIEW);
    assert_eq!(c.files.len(), 1);
    assert!(c.note.expect("a note").contains("the list of files is cut"));
}

#[test]
fn control_characters_and_long_lines_never_reach_a_view_raw() {
    let out = b":100644 100644 1 2 M\x00x\x1b]0;t\x07.txt\x001\t1\tx\x1b]0;t\x07.txt\x00\x00diff --git \"a/x\\033]0;t\\a.txt\" \"b/x\\033]0;t\\a.txt\"\n@@ -1 +1 @@\n-\x1b[31mred\n+aaaaaaaaaa\n";
    let limits = Limits {
        line_chars: 5,
        ..Limits::VIEW
    };
    let c = parse(out, false, "abc", limits);
    let f = &c.files[0];
    assert_eq!(f.path, "x\\x1b]0;t\\x07.txt");
    assert_eq!(f.hunks[0].lines[0].text, "\\x1b[…");
    assert_eq!(f.hunks[0].lines[1].text, "aaaaa…");
}

#[test]
fn the_text_views_colour_only_for_a_terminal_and_stat_scales_its_bars() {
    let c = parse(SAMPLE, false, "abc", Limits::VIEW);
    let plain = text::patch(&c, "Changes of 1:api", false);
    assert!(!plain.contains('\x1b'), "{plain}");
    assert!(
        plain.contains("\nmodified a.txt (+2 -1)\n@@ -1,3 +1,4 @@\n one\n-two\n+2\n"),
        "{plain}"
    );
    assert!(
        plain.contains("renamed ren.txt → moved.txt, 92% alike (+1 -1)"),
        "{plain}"
    );
    assert!(plain.contains("(binary file: not shown)"), "{plain}");
    let coloured = text::patch(&c, "Changes of 1:api", true);
    assert!(coloured.contains("\x1b[32m+2\x1b[m"), "{coloured}");
    let stat = text::stat(&c, "Changes", 80, false);
    assert!(stat.contains(" a.txt               |   3 ++-\n"), "{stat}");
    assert!(stat.contains(" bin.dat             | Bin\n"), "{stat}");
    assert!(
        stat.ends_with(" 6 files changed, 6 insertions(+), 4 deletions(-)\n"),
        "{stat}"
    );
}
