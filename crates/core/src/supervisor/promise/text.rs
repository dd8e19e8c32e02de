//! Cuts a final message down to what the classifier reads: its last paragraph, split into sentences,
//! lowercased with typographic quotes made plain.

/// The end of a final message.
#[derive(Debug, Default)]
pub(crate) struct Ending {
    /// The sentences the verdict rests on, in order, as written (whitespace folded).
    pub sentences: Vec<String>,
    /// The last paragraph, lowercased, quotes made plain.
    pub paragraph: String,
    /// The message closed with a fenced code block: what it shows was written, not run.
    pub code_after: bool,
    /// The last paragraph is a list, introduced by the sentences above.
    pub list: bool,
}

impl Ending {
    /// The last sentence, lowercased, quotes made plain, markdown marks trimmed.
    pub(crate) fn last_lower(&self) -> String {
        self.sentences
            .last()
            .map(|sentence| trim_marks(&plain(sentence)).to_lowercase())
            .unwrap_or_default()
    }
}

pub(crate) fn ending_of(text: &str) -> Ending {
    let text = plain(text);
    let (body, code_after) = without_closing_code(text.trim_end());
    let paragraphs: Vec<&str> = paragraphs(body);
    let Some(last) = paragraphs.last() else {
        return Ending {
            code_after,
            ..Ending::default()
        };
    };
    let lines: Vec<&str> = last.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let first_item = lines.iter().position(|line| is_list_item(line));
    let (source, list) = match first_item {
        // A list closes the message: what introduced it is the ending (a plan "I'll do these:" or a
        // summary's heading), in this paragraph or the one before.
        Some(first)
            if lines[first..]
                .iter()
                .all(|line| is_list_item(line) || is_continuation(line)) =>
        {
            let lead = if first > 0 {
                lines[..first].join(" ")
            } else if paragraphs.len() >= 2 {
                paragraphs[paragraphs.len() - 2]
                    .lines()
                    .last()
                    .unwrap_or("")
                    .trim()
                    .to_string()
            } else {
                String::new()
            };
            (lead, true)
        }
        _ => (lines.join(" "), false),
    };
    Ending {
        sentences: sentences(&source),
        paragraph: last.to_lowercase(),
        code_after,
        list,
    }
}

/// Typographic quotes and apostrophes as plain ASCII, so one spelling of each cue is enough.
fn plain(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{02BC}' => '\'',
            '\u{201C}' | '\u{201D}' => '"',
            c => c,
        })
        .collect()
}

/// Markdown emphasis and heading marks around a sentence.
fn trim_marks(text: &str) -> &str {
    text.trim_matches(|c: char| c.is_whitespace() || matches!(c, '*' | '_' | '`' | '#' | '>'))
}

/// Strips a fenced code block that ends the message; says whether there was one.
fn without_closing_code(text: &str) -> (&str, bool) {
    if !text.ends_with("```") {
        return (text, false);
    }
    let inner = &text[..text.len() - 3];
    match inner.rfind("```") {
        Some(open) => (inner[..open].trim_end(), true),
        None => (text, false),
    }
}

fn paragraphs(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim().is_empty() {
            let chunk = text[start..offset].trim();
            if !chunk.is_empty() {
                out.push(chunk);
            }
            start = offset + line.len();
        }
        offset += line.len();
    }
    let chunk = text[start..].trim();
    if !chunk.is_empty() {
        out.push(chunk);
    }
    out
}

fn is_list_item(line: &str) -> bool {
    if let Some(rest) = line.strip_prefix(['-', '*', '+', '\u{2022}']) {
        return rest.starts_with(' ');
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && (line[digits..].starts_with(". ") || line[digits..].starts_with(") "))
}

/// A line inside a list item (indented code, a wrapped line) rather than a new paragraph of prose.
fn is_continuation(line: &str) -> bool {
    line.starts_with("```") || line.starts_with('|')
}

/// Splits prose into sentences at `.`, `!` or `?` followed by a space; a trailing colon stays on its
/// sentence (it is a cue).
fn sentences(text: &str) -> Vec<String> {
    let folded = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = folded.chars().peekable();
    while let Some(c) = chars.next() {
        current.push(c);
        let boundary = matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|next| *next == ' ');
        if boundary && !ends_with_abbreviation(&current) {
            push_sentence(&mut out, &current);
            current.clear();
        }
    }
    push_sentence(&mut out, &current);
    out
}

fn push_sentence(out: &mut Vec<String>, sentence: &str) {
    let sentence = sentence.trim();
    if !sentence.is_empty() {
        out.push(sentence.to_string());
    }
}

fn ends_with_abbreviation(text: &str) -> bool {
    let lower = text.to_lowercase();
    ["e.g.", "i.e.", "vs.", "approx."]
        .iter()
        .any(|abbreviation| lower.ends_with(abbreviation))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_paragraph_is_split_into_sentences() {
        let ending = ending_of("Did X.\n\nOk, the parser is in. Now I'll run the suite:\n");
        assert_eq!(
            ending.sentences,
            ["Ok, the parser is in.", "Now I'll run the suite:"]
        );
        assert!(!ending.code_after && !ending.list);
    }

    #[test]
    fn a_closing_code_block_is_cut_and_remembered() {
        let ending = ending_of("Now I'll run:\n\n```bash\ncargo test\n```");
        assert!(ending.code_after);
        assert_eq!(ending.sentences, ["Now I'll run:"]);
    }

    #[test]
    fn a_closing_list_is_read_through_its_lead() {
        let ending = ending_of("Summary of the changes:\n- parser fixed\n- tests added");
        assert!(ending.list);
        assert_eq!(ending.sentences, ["Summary of the changes:"]);
        let ending = ending_of("I'll now do the following:\n\n1. run the tests\n2. fix lints");
        assert_eq!(ending.sentences, ["I'll now do the following:"]);
    }

    #[test]
    fn curly_apostrophes_and_markdown_marks_are_plain() {
        let ending = ending_of("**Now I\u{2019}ll run the tests:**");
        assert_eq!(ending.last_lower(), "now i'll run the tests:");
        assert_eq!(ending_of("e.g. this works. Then that").sentences.len(), 2);
    }
}
