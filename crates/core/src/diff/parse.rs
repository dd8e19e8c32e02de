//! Reads what `git diff --raw --numstat -p -z -M -D` printed into [`Changes`]. Its first part is
//! NUL-separated: one `--raw` record per file (modes, status, paths), then one `--numstat` record
//! per file (lines added and removed), then an empty record; the patch follows as text. The raw
//! list is what the model lists (git's order); the patch gives each file its hunks, found by the
//! `diff --git` line its paths make.

use std::collections::HashMap;

use super::quote;
use super::{Changes, FileChange, Hunk, Limits, Line, LineKind, Status};
use crate::safe_text;

/// Columns of a tab in a shown line.
const TAB: usize = 4;

/// One file of the raw list, its paths kept as bytes to find its patch.
struct Raw {
    status: Status,
    similarity: Option<u8>,
    from: Option<Vec<u8>>,
    path: Vec<u8>,
}

/// The NUL-separated records, one at a time.
struct Records<'a> {
    out: &'a [u8],
    pos: usize,
}

impl<'a> Records<'a> {
    /// The next whole record; `None` at the end or at a record cut short.
    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = &self.out[self.pos..];
        let end = rest.iter().position(|&b| b == 0)?;
        self.pos += end + 1;
        Some(&rest[..end])
    }

    fn at_patch(&self) -> bool {
        let rest = &self.out[self.pos..];
        rest.starts_with(b"diff --") || rest.starts_with(b"* Unmerged")
    }
}

/// `out`: git's output; `cut`: it was stopped at its output bound (the end is missing); `base`: the
/// commit compared against.
pub fn parse(out: &[u8], cut: bool, base: &str, limits: Limits) -> Changes {
    let mut records = Records { out, pos: 0 };
    let mut raws: Vec<Raw> = Vec::new();
    let mut counts: HashMap<Vec<u8>, (Option<u64>, Option<u64>)> = HashMap::new();
    let mut whole_list = false;
    while records.pos < out.len() && !records.at_patch() {
        let Some(record) = records.next() else { break };
        if record.is_empty() {
            whole_list = true;
            break;
        }
        if let Some(fields) = record.strip_prefix(b":") {
            let text = String::from_utf8_lossy(fields);
            let status_field = text.split(' ').nth(4).unwrap_or("M");
            let letter = status_field.chars().next().unwrap_or('M');
            let similarity = status_field[letter.len_utf8()..].parse().ok();
            let status = Status::from_letter(letter);
            let (from, path) = if matches!(status, Status::Renamed | Status::Copied) {
                let (Some(from), Some(path)) = (records.next(), records.next()) else {
                    break;
                };
                (Some(from.to_vec()), path.to_vec())
            } else {
                let Some(path) = records.next() else { break };
                (None, path.to_vec())
            };
            raws.push(Raw {
                status,
                similarity,
                from,
                path,
            });
        } else {
            let mut parts = record.splitn(3, |&b| b == b'\t');
            let num = |p: Option<&[u8]>| p.and_then(|n| std::str::from_utf8(n).ok()?.parse::<u64>().ok());
            let (added, removed) = (num(parts.next()), num(parts.next()));
            let path = match parts.next() {
                Some(p) if !p.is_empty() => p.to_vec(),
                _ => {
                    let (Some(_from), Some(to)) = (records.next(), records.next()) else {
                        break;
                    };
                    to.to_vec()
                }
            };
            counts.insert(path, (added, removed));
        }
    }
    whole_list |= records.at_patch();
    let mut files: Vec<FileChange> = raws
        .iter()
        .map(|r| {
            let (added, removed) = counts.get(&r.path).copied().unwrap_or((None, None));
            FileChange {
                path: shown(&r.path),
                from: r.from.as_deref().map(shown),
                status: r.status,
                similarity: r.similarity,
                added,
                removed,
                binary: counts.contains_key(&r.path) && added.is_none(),
                hunks: Vec::new(),
                note: None,
            }
        })
        .collect();
    let by_header: HashMap<Vec<u8>, usize> = raws
        .iter()
        .enumerate()
        .map(|(i, r)| (quote::header(r.from.as_deref().unwrap_or(&r.path), &r.path), i))
        .collect();
    let mut patch = Patch {
        files: &mut files,
        limits,
        kept: 0,
        left_out: 0,
        seen: vec![false; raws.len()],
        current: None,
        hunk: None,
        hunk_kept: false,
    };
    let patch_text = &out[records.pos.min(out.len())..];
    let mut lines = patch_text.split(|&b| b == b'\n').peekable();
    while let Some(line) = lines.next() {
        // The last piece of a cut output is a line cut short: not read as a line.
        if cut && lines.peek().is_none() {
            break;
        }
        patch.line(line, &by_header);
    }
    let seen = patch.seen;
    let left_out = patch.left_out;
    finish(files, &seen, left_out, cut, whole_list, base, limits)
}

/// Reading the patch, one line at a time.
struct Patch<'a> {
    files: &'a mut [FileChange],
    limits: Limits,
    /// Lines kept so far, over all files.
    kept: usize,
    /// Lines past the limit, over all files.
    left_out: u64,
    /// The files whose section was read.
    seen: Vec<bool>,
    current: Option<usize>,
    /// The hunk being read: lines still due of the old and the new file, and the next numbers.
    hunk: Option<HunkAt>,
    /// The hunk being read has its place in the model (it started before the limit).
    hunk_kept: bool,
}

#[derive(Clone, Copy)]
struct HunkAt {
    old_left: u32,
    new_left: u32,
    old: u32,
    new: u32,
}

impl Patch<'_> {
    fn line(&mut self, line: &[u8], by_header: &HashMap<Vec<u8>, usize>) {
        let in_hunk = self.hunk.is_some_and(|h| h.old_left > 0 || h.new_left > 0);
        if !in_hunk && line.starts_with(b"diff --") {
            self.hunk = None;
            self.current = by_header
                .get(line)
                .copied()
                // A header written otherwise than expected: the next file not read yet, in order.
                .or_else(|| self.seen.iter().position(|s| !s));
            if let Some(i) = self.current {
                self.seen[i] = true;
            }
            return;
        }
        let Some(i) = self.current else { return };
        if in_hunk || (line.starts_with(b"\\") && self.hunk.is_some()) {
            self.hunk_line(i, line);
        } else if line.starts_with(b"@@ ") {
            self.start_hunk(i, line);
        } else if line.starts_with(b"Binary files ") {
            self.files[i].binary = true;
        }
    }

    fn start_hunk(&mut self, i: usize, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        let Some((old, new)) = hunk_ranges(&text) else {
            self.hunk = None;
            return;
        };
        self.hunk = Some(HunkAt {
            old_left: old.1,
            new_left: new.1,
            old: old.0,
            new: new.0,
        });
        self.hunk_kept = self.room();
        if self.hunk_kept {
            self.files[i].hunks.push(Hunk {
                header: shown(line),
                lines: Vec::new(),
            });
        }
    }

    fn room(&self) -> bool {
        self.kept < self.limits.lines
    }

    fn hunk_line(&mut self, i: usize, line: &[u8]) {
        let Some(h) = self.hunk.as_mut() else { return };
        let (kind, old, new) = match line.first() {
            Some(b'+') => {
                h.new_left = h.new_left.saturating_sub(1);
                h.new += 1;
                (LineKind::Added, None, Some(h.new - 1))
            }
            Some(b'-') => {
                h.old_left = h.old_left.saturating_sub(1);
                h.old += 1;
                (LineKind::Removed, Some(h.old - 1), None)
            }
            Some(b'\\') => (LineKind::NoNewline, None, None),
            // A context line (an empty one too: some tools strip its space).
            _ => {
                h.old_left = h.old_left.saturating_sub(1);
                h.new_left = h.new_left.saturating_sub(1);
                h.old += 1;
                h.new += 1;
                (LineKind::Context, Some(h.old - 1), Some(h.new - 1))
            }
        };
        let body = line.get(1..).unwrap_or_default();
        let text = if kind == LineKind::NoNewline {
            "no newline at end of file".to_string()
        } else {
            cut_line(&shown_line(body), self.limits.line_chars)
        };
        // A hunk started past the limit has nowhere to go: its lines are counted, as the rest.
        if self.hunk_kept && self.room() {
            self.kept += 1;
            if let Some(hunk) = self.files[i].hunks.last_mut() {
                hunk.lines.push(Line { kind, old, new, text });
            }
        } else if kind != LineKind::NoNewline {
            self.left_out += 1;
        }
    }
}

/// `@@ -a,b +c,d @@`: (start, count) of the old and the new side.
fn hunk_ranges(text: &str) -> Option<((u32, u32), (u32, u32))> {
    let rest = text.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let range = |r: &str| -> Option<(u32, u32)> {
        match r.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    Some((range(old)?, range(new)?))
}

/// A path or header as shown: valid text, with nothing a terminal would act on.
fn shown(bytes: &[u8]) -> String {
    safe_text::escape(&String::from_utf8_lossy(bytes))
}

/// A line's text as shown: tabs to spaces (every view lines them up alike), the rest as [`shown`].
fn shown_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    let mut col = 0;
    for c in text.chars() {
        if c == '\t' {
            let n = TAB - col % TAB;
            out.extend(std::iter::repeat_n(' ', n));
            col += n;
        } else if c == '\r' && out.len() + 1 == text.len() {
            // A CRLF file's line ending is not part of the line.
        } else {
            out.push(c);
            col += 1;
        }
    }
    safe_text::escape(&out)
}

fn cut_line(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// The files' notes and the model's, from what was read and what was not.
fn finish(
    mut files: Vec<FileChange>,
    seen: &[bool],
    left_out: u64,
    cut: bool,
    whole_list: bool,
    base: &str,
    limits: Limits,
) -> Changes {
    let mut unread_files = 0usize;
    let mut unread_lines = 0u64;
    for (f, seen) in files.iter_mut().zip(seen) {
        let total = f.added.unwrap_or(0) + f.removed.unwrap_or(0);
        f.note = if f.binary {
            Some("binary file: not shown".to_string())
        } else if f.status == Status::Deleted {
            Some(format!("deleted ({} lines): not shown", f.removed.unwrap_or(0)))
        } else if f.status == Status::Unmerged {
            Some("in a merge conflict: not shown".to_string())
        } else if !*seen && total > 0 {
            unread_files += 1;
            unread_lines += total;
            Some("not shown: git's output was cut before this file".to_string())
        } else {
            let missing = total.saturating_sub(changed_lines(f));
            (missing > 0).then(|| format!("{missing} changed lines not shown: the diff is cut"))
        };
    }
    let mut notes = Vec::new();
    if left_out > 0 {
        notes.push(format!(
            "{left_out} lines left out: at most {} lines are shown",
            limits.lines
        ));
    }
    if unread_files > 0 {
        notes.push(format!(
            "{unread_files} files ({unread_lines} changed lines) not shown: git's output passed its bound"
        ));
    }
    if cut && !whole_list {
        notes.push("the list of files is cut: git's output passed its bound".to_string());
    }
    if files.len() > limits.files {
        let more = files.len() - limits.files;
        files.truncate(limits.files);
        notes.push(format!(
            "{more} more files not listed: at most {} are",
            limits.files
        ));
    }
    Changes {
        base: base.to_string(),
        files,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}

/// The added and removed lines kept of a file.
fn changed_lines(f: &FileChange) -> u64 {
    f.hunks
        .iter()
        .flat_map(|h| &h.lines)
        .filter(|l| matches!(l.kind, LineKind::Added | LineKind::Removed))
        .count() as u64
}
