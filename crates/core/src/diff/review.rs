//! A review the person wrote on the Changes view: comments on lines of the diff, sent to the
//! agent as one message that quotes each file, line and the line's text. The bounds hold whatever a
//! page sends.

use serde::{Deserialize, Serialize};

/// Most comments in one review.
pub const MAX_COMMENTS: usize = 100;
/// Longest comment, and longest quoted line, in characters.
pub const MAX_COMMENT_CHARS: usize = 4_000;
pub const MAX_QUOTE_CHARS: usize = 400;
/// Longest path, in characters.
pub const MAX_PATH_CHARS: usize = 1_000;

/// Which file a commented line's number counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// A line the change added or kept: its number in the file as it is now.
    New,
    /// A line the change removed: its number in the file as it was at the base.
    Old,
}

/// One comment on one line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comment {
    pub file: String,
    pub line: u32,
    pub side: Side,
    /// The line's text, as the diff showed it.
    pub text: String,
    /// What the person wrote.
    pub comment: String,
}

/// Why a review cannot be sent, said so that the page can show it.
pub fn check(comments: &[Comment]) -> Result<(), String> {
    if comments.is_empty() {
        return Err("the review has no comments".to_string());
    }
    if comments.len() > MAX_COMMENTS {
        return Err(format!(
            "a review holds at most {MAX_COMMENTS} comments ({} given)",
            comments.len()
        ));
    }
    for (i, c) in comments.iter().enumerate() {
        let n = i + 1;
        if c.comment.trim().is_empty() {
            return Err(format!("comment {n} ({}:{}) is empty", c.file, c.line));
        }
        let too_long = |what: &str, text: &str, max: usize| {
            (text.chars().count() > max)
                .then(|| format!("comment {n}: its {what} is longer than {max} characters"))
        };
        if let Some(e) = too_long("text", &c.comment, MAX_COMMENT_CHARS)
            .or_else(|| too_long("quoted line", &c.text, MAX_QUOTE_CHARS))
            .or_else(|| too_long("file", &c.file, MAX_PATH_CHARS))
        {
            return Err(e);
        }
    }
    Ok(())
}

/// The message the agent receives: every comment, in the order given, each quoting its file, line
/// and the line's text.
pub fn message(comments: &[Comment]) -> String {
    let count = if comments.len() == 1 {
        "1 comment".to_string()
    } else {
        format!("{} comments", comments.len())
    };
    let mut out = format!(
        "Review of your changes ({count}). Please work through each comment below; where one asks a \
         question, answer it before changing anything for it.\n"
    );
    for (i, c) in comments.iter().enumerate() {
        let which = match c.side {
            Side::New => format!("line {}", c.line),
            Side::Old => format!("line {} before your change (removed)", c.line),
        };
        out.push_str(&format!("\n{}. {}, {which}:\n", i + 1, c.file.trim()));
        out.push_str(&format!("   > {}\n", c.text.trim_end()));
        for line in c.comment.trim().lines() {
            out.push_str(&format!("   {line}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comment(file: &str, line: u32, side: Side, text: &str, comment: &str) -> Comment {
        Comment {
            file: file.into(),
            line,
            side,
            text: text.into(),
            comment: comment.into(),
        }
    }

    #[test]
    fn the_message_quotes_every_file_line_and_text_in_order() {
        let m = message(&[
            comment("src/a.rs", 12, Side::New, "let x = 1;", "use a constant"),
            comment(
                "notes.txt",
                3,
                Side::Old,
                "old words",
                "why remove this?\nit was useful",
            ),
        ]);
        assert!(m.starts_with("Review of your changes (2 comments)."), "{m}");
        let first = m.find("1. src/a.rs, line 12:\n   > let x = 1;\n   use a constant\n");
        let second = m.find(
            "2. notes.txt, line 3 before your change (removed):\n   > old words\n   why remove this?\n   it was useful\n",
        );
        assert!(first.is_some() && second.is_some() && first < second, "{m}");
    }

    #[test]
    fn empty_long_or_too_many_comments_are_refused_with_the_reason() {
        assert!(check(&[]).unwrap_err().contains("no comments"));
        let blank = comment("a", 1, Side::New, "x", "  ");
        assert!(check(&[blank]).unwrap_err().contains("comment 1 (a:1) is empty"));
        let long = comment("a", 1, Side::New, "x", &"y".repeat(MAX_COMMENT_CHARS + 1));
        assert!(check(&[long]).unwrap_err().contains("longer than"));
        let ok = comment("a", 1, Side::New, "x", "fine");
        assert_eq!(check(std::slice::from_ref(&ok)), Ok(()));
        let many = vec![ok; MAX_COMMENTS + 1];
        assert!(check(&many).unwrap_err().contains("at most"));
    }
}
