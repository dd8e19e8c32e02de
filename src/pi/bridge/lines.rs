//! Splits a byte stream into `\n`-terminated lines of bounded length. Chunks may end anywhere (half
//! lines across reads); a line over the bound is skipped, not buffered, and reported once its end
//! arrives.

/// What the splitter found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A complete line without its `\n` (and without a `\r` before it).
    Complete(Vec<u8>),
    /// A line longer than the bound was skipped; `bytes` is its length.
    Oversized { bytes: usize },
}

#[derive(Debug)]
pub struct LineSplitter {
    max: usize,
    buf: Vec<u8>,
    /// Bytes of an oversized line seen so far, while skipping to its end.
    skipping: Option<usize>,
}

impl LineSplitter {
    pub fn new(max: usize) -> Self {
        LineSplitter {
            max,
            buf: Vec::new(),
            skipping: None,
        }
    }

    /// Feeds one chunk; appends every line it completes to `out`.
    pub fn push(&mut self, mut chunk: &[u8], out: &mut Vec<Line>) {
        while !chunk.is_empty() {
            let newline = chunk.iter().position(|&b| b == b'\n');
            let (head, rest) = match newline {
                Some(i) => (&chunk[..i], Some(&chunk[i + 1..])),
                None => (chunk, None),
            };
            if let Some(seen) = self.skipping.as_mut() {
                *seen += head.len();
            } else if self.buf.len() + head.len() > self.max {
                self.skipping = Some(self.buf.len() + head.len());
                self.buf = Vec::new();
            } else {
                self.buf.extend_from_slice(head);
            }
            match rest {
                Some(rest) => {
                    out.push(self.take_line());
                    chunk = rest;
                }
                None => break,
            }
        }
    }

    /// Bytes of an unfinished line (what is lost when the peer closes now).
    pub fn pending_bytes(&self) -> usize {
        self.skipping.unwrap_or(self.buf.len())
    }

    fn take_line(&mut self) -> Line {
        if let Some(bytes) = self.skipping.take() {
            return Line::Oversized { bytes };
        }
        let mut line = std::mem::take(&mut self.buf);
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        Line::Complete(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn split(max: usize, chunks: &[&[u8]]) -> (Vec<Line>, usize) {
        let mut s = LineSplitter::new(max);
        let mut out = Vec::new();
        for c in chunks {
            s.push(c, &mut out);
        }
        (out, s.pending_bytes())
    }

    fn complete(s: &str) -> Line {
        Line::Complete(s.as_bytes().to_vec())
    }

    #[test]
    fn lines_split_across_chunks_are_joined() {
        let (lines, pending) = split(100, &[b"{\"a\"", b":1}\n{\"b", b"\":2}\n{\"c"]);
        assert_eq!(lines, vec![complete("{\"a\":1}"), complete("{\"b\":2}")]);
        assert_eq!(pending, 3);
    }

    #[test]
    fn crlf_and_empty_lines() {
        let (lines, _) = split(100, &[b"x\r\n\ny\n"]);
        assert_eq!(lines, vec![complete("x"), complete(""), complete("y")]);
    }

    #[test]
    fn an_oversized_line_is_skipped_and_the_next_one_survives() {
        let (lines, pending) = split(10, &[b"0123456", b"789abcdef", b"XYZ\nok\n"]);
        assert_eq!(lines, vec![Line::Oversized { bytes: 19 }, complete("ok")]);
        assert_eq!(pending, 0);
    }

    #[test]
    fn a_line_of_exactly_the_bound_is_kept() {
        let (lines, _) = split(4, &[b"abcd\nabcde\n"]);
        assert_eq!(lines, vec![complete("abcd"), Line::Oversized { bytes: 5 }]);
    }

    #[test]
    fn pending_counts_an_unfinished_oversized_line() {
        let (lines, pending) = split(4, &[b"abcdefgh"]);
        assert!(lines.is_empty());
        assert_eq!(pending, 8);
    }

    proptest! {
        /// However the stream is cut into chunks, the lines are the same.
        #[test]
        fn chunking_does_not_change_lines(
            lines in proptest::collection::vec("[a-z{}:\" ]{0,30}", 0..8),
            cuts in proptest::collection::vec(0usize..300, 0..10),
        ) {
            let stream: Vec<u8> = lines.iter().flat_map(|l| format!("{l}\n").into_bytes()).collect();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(stream.len())).collect();
            cuts.sort_unstable();
            let mut chunks = Vec::new();
            let mut from = 0;
            for c in cuts.into_iter().chain([stream.len()]) {
                chunks.push(&stream[from..c]);
                from = c;
            }
            let (got, pending) = split(20, &chunks);
            let expected: Vec<Line> = lines
                .iter()
                .map(|l| if l.len() > 20 { Line::Oversized { bytes: l.len() } } else { complete(l) })
                .collect();
            prop_assert_eq!(got, expected);
            prop_assert_eq!(pending, 0);
        }
    }
}
