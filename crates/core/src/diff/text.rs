//! `pokeshell diff`'s output: the changes as text, coloured as git colours a diff when `colour`
//! (a terminal), plain otherwise (a pipe, a file). Every text in the model is already safe to print
//! (`parse` escapes what a terminal would act on).

use super::{Changes, FileChange, LineKind, Status};

const BOLD: &str = "\x1b[1m";
const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const CYAN: &str = "\x1b[36m";
const YELLOW: &str = "\x1b[33m";
const RESET: &str = "\x1b[m";

/// Paints `text` in `code` when colouring.
fn paint(colour: bool, code: &str, text: &str) -> String {
    if colour && !text.is_empty() {
        format!("{code}{text}{RESET}")
    } else {
        text.to_string()
    }
}

/// A file's heading: "modified src/a.rs (+3 -1)", "renamed a.rs → b.rs, 92% alike (+1 -1)".
pub fn heading(f: &FileChange) -> String {
    let alike = match (f.status, f.similarity) {
        (Status::Renamed | Status::Copied, Some(s)) => format!(", {s}% alike"),
        _ => String::new(),
    };
    format!("{} {}{alike} ({})", f.status.word(), f.title(), f.counts())
}

/// The whole diff: `title` first, then each file with its hunks or what stands for them, then the
/// note of what was left out.
pub fn patch(changes: &Changes, title: &str, colour: bool) -> String {
    let mut out = String::new();
    out.push_str(&paint(colour, BOLD, title));
    out.push('\n');
    for f in &changes.files {
        out.push('\n');
        out.push_str(&paint(colour, BOLD, &heading(f)));
        out.push('\n');
        for h in &f.hunks {
            out.push_str(&paint(colour, CYAN, &h.header));
            out.push('\n');
            for l in &h.lines {
                let line = match l.kind {
                    LineKind::Context => format!(" {}", l.text),
                    LineKind::Added => paint(colour, GREEN, &format!("+{}", l.text)),
                    LineKind::Removed => paint(colour, RED, &format!("-{}", l.text)),
                    LineKind::NoNewline => format!("\\ {}", l.text),
                };
                out.push_str(&line);
                out.push('\n');
            }
        }
        if let Some(note) = &f.note {
            out.push_str(&paint(colour, YELLOW, &format!("({note})")));
            out.push('\n');
        }
    }
    if let Some(note) = &changes.note {
        out.push('\n');
        out.push_str(&paint(colour, YELLOW, &format!("The diff is cut: {note}.")));
        out.push('\n');
    }
    out
}

/// `--stat`: a line per file with its count and a bar of + and - scaled to `width` columns, then
/// the totals, as git's `--stat` lays them out.
pub fn stat(changes: &Changes, title: &str, width: usize, colour: bool) -> String {
    let mut out = paint(colour, BOLD, title);
    out.push('\n');
    let names: Vec<String> = changes.files.iter().map(FileChange::title).collect();
    let name_width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let most = changes
        .files
        .iter()
        .map(|f| f.added.unwrap_or(0) + f.removed.unwrap_or(0))
        .max()
        .unwrap_or(0);
    let count_width = most.to_string().len().max(3);
    let bar_room = width.saturating_sub(name_width + count_width + 5).max(10);
    for (f, name) in changes.files.iter().zip(&names) {
        let pad = " ".repeat(name_width - name.chars().count());
        let (a, r) = match (f.added, f.removed) {
            (Some(a), Some(r)) => (a, r),
            _ => {
                out.push_str(&format!(" {name}{pad} | {:>count_width$}\n", "Bin"));
                continue;
            }
        };
        let total = a + r;
        // Scaled down only when the largest file does not fit, and never to nothing.
        let scale = |n: u64| -> usize {
            if most as usize <= bar_room || n == 0 {
                n as usize
            } else {
                ((n as f64 * bar_room as f64 / most as f64).round() as usize).max(1)
            }
        };
        let plus = paint(colour, GREEN, &"+".repeat(scale(a)));
        let minus = paint(colour, RED, &"-".repeat(scale(r)));
        out.push_str(&format!(" {name}{pad} | {total:>count_width$} {plus}{minus}\n"));
    }
    let (a, r) = changes.totals();
    let files = changes.files.len();
    out.push_str(&format!(
        " {files} file{} changed, {a} insertion{}(+), {r} deletion{}(-)\n",
        if files == 1 { "" } else { "s" },
        if a == 1 { "" } else { "s" },
        if r == 1 { "" } else { "s" },
    ));
    if let Some(note) = &changes.note {
        out.push_str(&paint(colour, YELLOW, &format!("The diff is cut: {note}.")));
        out.push('\n');
    }
    out
}
