//! Byte scanning over ASCII-lowercased text. Every read goes through `get`, so no input can make
//! the scanner index out of bounds; non-ASCII bytes simply never match a letter or a digit.

/// True for the bytes that continue an identifier: a trigger word must not sit inside one
/// (`await` is not `wait`, `retry_after_ms` is not `retry_after`).
pub(super) fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Every offset where `needle` starts, with a word boundary before it (and after it when
/// `end_boundary` is set).
pub(super) fn find_words<'a>(
    hay: &'a [u8],
    needle: &'a [u8],
    end_boundary: bool,
) -> impl Iterator<Item = usize> + 'a {
    starts(hay, needle).filter(move |&i| {
        let before_ok = i == 0 || !hay.get(i - 1).copied().is_some_and(is_word);
        let after_ok = !end_boundary || !hay.get(i + needle.len()).copied().is_some_and(is_word);
        before_ok && after_ok
    })
}

pub(super) fn contains(hay: &[u8], needle: &[u8]) -> bool {
    starts(hay, needle).next().is_some()
}

/// Every offset where `needle` starts; the first-byte test keeps the scan cheap.
fn starts<'a>(hay: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    let first = needle.first().copied();
    hay.iter()
        .enumerate()
        .filter(move |&(_, &b)| Some(b) == first)
        .map(|(i, _)| i)
        .filter(move |&i| hay.get(i..).is_some_and(|rest| rest.starts_with(needle)))
}

/// A read position in a byte string.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cur<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
}

impl<'a> Cur<'a> {
    pub(super) fn at(bytes: &'a [u8], pos: usize) -> Self {
        Self { bytes, pos }
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    pub(super) fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos.saturating_add(ahead)).copied()
    }

    pub(super) fn rest(&self) -> &'a [u8] {
        self.bytes.get(self.pos..).unwrap_or(&[])
    }

    /// Consumes `lit` if the text continues with it.
    pub(super) fn eat(&mut self, lit: &[u8]) -> bool {
        if self.rest().starts_with(lit) {
            self.pos += lit.len();
            true
        } else {
            false
        }
    }

    /// Consumes `word` only when no letter or digit follows it.
    pub(super) fn eat_word(&mut self, word: &[u8]) -> bool {
        let rest = self.rest();
        if rest.starts_with(word) && !rest.get(word.len()).copied().is_some_and(is_word) {
            self.pos += word.len();
            true
        } else {
            false
        }
    }

    pub(super) fn skip_while(&mut self, pred: impl Fn(u8) -> bool, max: usize) -> usize {
        let mut n = 0;
        while n < max && self.peek().is_some_and(&pred) {
            self.pos += 1;
            n += 1;
        }
        n
    }

    pub(super) fn skip_spaces(&mut self) -> usize {
        self.skip_while(|b| b == b' ' || b == b'\t', 8)
    }

    /// Reads up to `max_len` decimal digits; `None` when there are none, or more than `max_len`.
    pub(super) fn digits(&mut self, max_len: usize) -> Option<(u64, usize)> {
        let start = self.pos;
        let mut value: u64 = 0;
        while let Some(b) = self.peek().filter(u8::is_ascii_digit) {
            if self.pos - start == max_len {
                self.pos = start;
                return None;
            }
            value = value.saturating_mul(10).saturating_add(u64::from(b - b'0'));
            self.pos += 1;
        }
        let len = self.pos - start;
        (len > 0).then_some((value, len))
    }

    /// Exactly `len` digits, not followed by another digit.
    pub(super) fn fixed_digits(&mut self, len: usize) -> Option<u64> {
        let start = self.pos;
        match self.digits(len) {
            Some((v, n)) if n == len => Some(v),
            _ => {
                self.pos = start;
                None
            }
        }
    }

    /// A decimal number as whole units plus thousandths (`47.434392449` → 47, 434).
    pub(super) fn decimal(&mut self) -> Option<(u64, u64)> {
        let start = self.pos;
        let (whole, _) = self.digits(15)?;
        let mut thousandths = 0;
        if self.peek() == Some(b'.') && self.peek_at(1).is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
            let mut scale = 100;
            while let Some(b) = self.peek().filter(u8::is_ascii_digit) {
                thousandths += u64::from(b - b'0') * scale;
                scale /= 10;
                self.pos += 1;
                if self.pos - start > 40 {
                    break;
                }
            }
        }
        Some((whole, thousandths))
    }
}
