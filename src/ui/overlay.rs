//! Helpers shared by the overlays drawn over the main layout.

use ratatui::layout::Rect;
use unicode_width::UnicodeWidthStr;

/// A `width` × `height` box centred in `area`, shrunk to fit.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    }
}

/// Greedy word wrap by display width; a word longer than the width is cut.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let needed = if line.is_empty() {
            word.width()
        } else {
            line.width() + 1 + word.width()
        };
        if needed > width && !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
        while line.width() > width {
            let cut = cut_at_width(&line, width);
            let rest = line.split_off(cut);
            lines.push(std::mem::replace(&mut line, rest));
        }
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

fn cut_at_width(text: &str, width: usize) -> usize {
    let mut used = 0;
    for (i, c) in text.char_indices() {
        let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > width {
            return i.max(c.len_utf8());
        }
        used += w;
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centered_fits_and_centres() {
        let area = Rect::new(0, 0, 100, 40);
        assert_eq!(centered(area, 60, 20), Rect::new(20, 10, 60, 20));
        assert_eq!(centered(Rect::new(5, 5, 10, 4), 60, 20), Rect::new(5, 5, 10, 4));
    }

    #[test]
    fn wrap_breaks_on_words_and_cuts_long_ones() {
        assert_eq!(wrap("one two three", 7), vec!["one two", "three"]);
        assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert!(wrap("   ", 5).is_empty());
    }
}
