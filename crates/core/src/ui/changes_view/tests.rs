use ratatui_core::buffer::Buffer;
use ratatui_core::layout::Rect;

use super::*;
use crate::diff::{Hunk, Line as DiffLine};

fn screen(view: &ChangesView, cols: u16, rows: u16) -> String {
    let area = Rect::new(0, 0, cols, rows);
    let mut buf = Buffer::empty(area);
    view.render(area, &mut buf);
    (0..rows)
        .map(|y| {
            (0..cols)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn file(path: &str, status: Status, lines: usize) -> FileChange {
    let hunk = Hunk {
        header: "@@ -1,1 +1,1 @@".into(),
        lines: (1..=lines as u32)
            .map(|n| DiffLine {
                kind: LineKind::Added,
                old: None,
                new: Some(n),
                text: format!("line {n} of {path}"),
            })
            .collect(),
    };
    FileChange {
        path: path.into(),
        from: None,
        status,
        similarity: None,
        added: Some(lines as u64),
        removed: Some(0),
        binary: false,
        hunks: vec![hunk],
        note: None,
    }
}

fn changes() -> Changes {
    Changes {
        base: "0123456789abcdef".into(),
        files: vec![
            file("src/a.rs", Status::Modified, 50),
            file("notes.txt", Status::Added, 2),
        ],
        note: None,
    }
}

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::from(code)
}

#[test]
fn it_reads_first_then_lists_the_files_then_shows_one_and_scrolls() {
    let mut v = ChangesView::reading("3:api");
    assert!(screen(&v, 80, 20).contains("reading the changes…"));
    v.arrived(Ok(changes()));
    let list = screen(&v, 80, 20);
    assert!(list.contains("Changes of 3:api since 0123456789"), "{list}");
    assert!(list.contains("2 files changed, +52 -0"), "{list}");
    assert!(
        list.contains("M src/a.rs") && list.contains("A notes.txt"),
        "{list}"
    );
    assert_eq!(v.handle_key(key(KeyCode::Down)), ChangesOutcome::None);
    v.handle_key(key(KeyCode::Enter));
    let one = screen(&v, 80, 20);
    assert!(one.contains("3:api · notes.txt"), "{one}");
    assert!(one.contains("+line 2 of notes.txt"), "{one}");
    v.handle_key(key(KeyCode::Char('p')));
    let a = screen(&v, 80, 20);
    assert!(
        a.contains("+line 1 of src/a.rs") && !a.contains("line 40 of"),
        "{a}"
    );
    v.handle_key(key(KeyCode::PageDown));
    let paged = screen(&v, 80, 20);
    assert!(!paged.contains("+line 1 of src/a.rs"), "{paged}");
    v.handle_key(key(KeyCode::End));
    let end = screen(&v, 80, 20);
    assert!(
        end.contains("line 50 of src/a.rs") && end.contains("of 51"),
        "{end}"
    );
    v.handle_key(key(KeyCode::Left));
    assert!(screen(&v, 80, 20).contains("A notes.txt"));
    assert_eq!(v.handle_key(key(KeyCode::Char('r'))), ChangesOutcome::Refresh);
    assert_eq!(v.handle_key(key(KeyCode::Esc)), ChangesOutcome::Close);
}

#[test]
fn a_failure_is_said_and_a_fresh_reading_keeps_the_open_file() {
    let mut v = ChangesView::reading("1:x");
    v.arrived(Err("/tmp/x is not in a git repository".into()));
    assert!(screen(&v, 60, 12).contains("not in a git repository"));
    v.arrived(Ok(changes()));
    v.handle_key(key(KeyCode::Down));
    v.handle_key(key(KeyCode::Enter));
    let mut again = changes();
    again.files.insert(0, file("b.rs", Status::Deleted, 1));
    v.arrived(Ok(again));
    assert!(
        screen(&v, 60, 12).contains("1:x · notes.txt"),
        "the same file stays open"
    );
}
