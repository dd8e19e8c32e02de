//! What vt100 leaves to us: answering the child's terminal queries and tracking the modes it asks for
//! (kitty keyboard flags, modifyOtherKeys, synchronized output, focus reports), plus the bytes that
//! must reach the host terminal itself (title, clipboard, bell, desktop notifications, and
//! program-status reports when the host reads them).

use std::time::Instant;

use super::caps::HostCaps;
use super::program_status::{self, Osc7501, ProgramStatus, QUERY_REPLY};

const KITTY_STACK_MAX: usize = 32;

#[derive(Debug, Default)]
pub struct Tracker {
    pub(super) caps: HostCaps,
    /// Answers to queries, for the child's PTY.
    pub(super) replies: Vec<u8>,
    /// Bytes for the host terminal (OSC 2 title, OSC 52 clipboard, OSC 9/777, BEL).
    pub(super) host_out: Vec<u8>,
    kitty_main: Vec<u16>,
    kitty_alt: Vec<u16>,
    pub(super) modify_other_keys: u16,
    pub(super) focus_reports: bool,
    pub(super) sync_since: Option<Instant>,
    /// Size of the pane, for `CSI 18 t`.
    pub(super) size: (u16, u16),
    /// The child's latest OSC 7501 report, and how many it sent so far.
    pub(super) program_status: Option<ProgramStatus>,
    pub(super) program_status_seq: u64,
    /// A colour query the start-up probe had no answer for went to the host; the DA1 that ends the
    /// child's batch goes there too, so that the host's answers reach the child in order.
    colours_asked_of_host: bool,
    /// While the host has not answered the start-up probe yet: every answer owed to the child, in
    /// order, the ones that depend on the host's capabilities still unanswered.
    held: Option<Vec<Held>>,
    /// vt100 scrolled a region that starts at the top row (fast-forward learns the region from it).
    pub(super) scrolled: bool,
}

/// An answer owed to the child while the host's capabilities are still unknown.
#[derive(Debug)]
enum Held {
    /// An answer that does not depend on the host, already computed.
    Ready(Vec<u8>),
    /// The kitty keyboard query, with the flags at the time it was asked.
    Kitty(u16),
    Da1,
    /// OSC 10, 11 or 4 asking for colours, its parameters as received.
    Colour(Vec<Vec<u8>>),
}

impl Tracker {
    pub fn new(caps: HostCaps, rows: u16, cols: u16) -> Self {
        Self {
            caps,
            size: (rows, cols),
            ..Self::default()
        }
    }

    /// A tracker that holds the child's answers until [`Tracker::set_caps`] tells what the host is.
    pub fn awaiting_caps(rows: u16, cols: u16) -> Self {
        Self {
            held: Some(Vec::new()),
            ..Self::new(HostCaps::default(), rows, cols)
        }
    }

    pub fn caps_known(&self) -> bool {
        self.held.is_none()
    }

    /// The host's capabilities are known: the held answers are given, in the order they were asked.
    pub fn set_caps(&mut self, caps: HostCaps) {
        self.caps = caps;
        for held in self.held.take().unwrap_or_default() {
            match held {
                Held::Ready(bytes) => self.replies.extend_from_slice(&bytes),
                Held::Kitty(flags) => self.answer_kitty(flags),
                Held::Da1 => self.da1(),
                Held::Colour(params) => {
                    let params: Vec<&[u8]> = params.iter().map(Vec::as_slice).collect();
                    self.osc_colour(&params);
                }
            }
        }
    }

    /// Every answer goes through here, so held answers keep their order.
    fn reply_bytes(&mut self, bytes: &[u8]) {
        match &mut self.held {
            Some(held) => held.push(Held::Ready(bytes.to_vec())),
            None => self.replies.extend_from_slice(bytes),
        }
    }

    fn answer_kitty(&mut self, flags: u16) {
        // Only a host that speaks the kitty protocol may make pi believe it does.
        if self.caps.kitty {
            self.replies
                .extend_from_slice(format!("\x1b[?{flags}u").as_bytes());
        }
    }

    pub fn kitty_flags(&self, alternate: bool) -> u16 {
        let stack = if alternate {
            &self.kitty_alt
        } else {
            &self.kitty_main
        };
        stack.last().copied().unwrap_or(0)
    }

    fn kitty_stack(&mut self, screen: &vt100::Screen) -> &mut Vec<u16> {
        if screen.alternate_screen() {
            &mut self.kitty_alt
        } else {
            &mut self.kitty_main
        }
    }

    fn kitty(&mut self, screen: &vt100::Screen, marker: u8, params: &[&[u16]]) {
        let first = params.first().and_then(|p| p.first()).copied().unwrap_or(0);
        match marker {
            b'?' => {
                let flags = self.kitty_flags(screen.alternate_screen());
                match &mut self.held {
                    Some(held) => held.push(Held::Kitty(flags)),
                    None => self.answer_kitty(flags),
                }
            }
            b'>' => {
                let stack = self.kitty_stack(screen);
                if stack.len() >= KITTY_STACK_MAX {
                    stack.remove(0);
                }
                stack.push(first);
            }
            b'<' => {
                let stack = self.kitty_stack(screen);
                let n = (first.max(1) as usize).min(stack.len());
                stack.truncate(stack.len() - n);
            }
            b'=' => {
                let mode = params.get(1).and_then(|p| p.first()).copied().unwrap_or(1);
                let stack = self.kitty_stack(screen);
                let cur = stack.last().copied().unwrap_or(0);
                let new = match mode {
                    2 => cur | first,
                    3 => cur & !first,
                    _ => first,
                };
                match stack.last_mut() {
                    Some(top) => *top = new,
                    None => stack.push(new),
                }
            }
            _ => {}
        }
    }

    fn private_mode(&mut self, params: &[&[u16]], on: bool) {
        for p in params {
            match p.first().copied() {
                Some(2026) => {
                    self.sync_since = if on {
                        Some(self.sync_since.unwrap_or_else(Instant::now))
                    } else {
                        None
                    };
                }
                Some(1004) => self.focus_reports = on,
                _ => {}
            }
        }
    }

    fn reply(&mut self, s: &str) {
        self.reply_bytes(s.as_bytes());
    }

    /// OSC 7501: pokeshell reads program-status reports, so the query is always answered; a report
    /// is kept. It is not passed on here: the session merges it with what pokeshell knows and says
    /// that upward (`session/upward.rs`), to the terminals that answered the same query.
    fn osc_program_status(&mut self, params: &[&[u8]]) {
        let body = params.get(1..).unwrap_or_default().join(&b';');
        match program_status::parse(&body) {
            Osc7501::Query => self.reply_bytes(QUERY_REPLY),
            Osc7501::Report(status) => {
                self.program_status = Some(status);
                self.program_status_seq += 1;
            }
            Osc7501::Malformed => {}
        }
    }

    /// OSC 10/11/4 queries are answered with the colours the host reported at start-up. A colour the
    /// host did not report then, from a host that did answer the probe's DA1 (a tmux whose client
    /// attaches later learns its colours late), is asked of the host now: its answer comes back as input and is passed on to the child, as it
    /// would reach the child in the host itself. Answering "no colour" instead makes pi fall back to
    /// its faint theme, where pi alone would be in colour.
    fn osc_colour(&mut self, params: &[&[u8]]) {
        if let Some(held) = &mut self.held {
            held.push(Held::Colour(params.iter().map(|p| p.to_vec()).collect()));
            return;
        }
        match params {
            [b"10", b"?"] => match self.caps.fg.clone() {
                Some(c) => self.reply(&format!("\x1b]10;{c}\x07")),
                None => self.ask_host("10;?"),
            },
            [b"11", b"?"] => match self.caps.bg.clone() {
                Some(c) => self.reply(&format!("\x1b]11;{c}\x07")),
                None => self.ask_host("11;?"),
            },
            [b"4", rest @ ..] => {
                // OSC 4 ; n ; ? [; n ; ?]...
                for pair in rest.chunks(2) {
                    let [idx, b"?"] = pair else {
                        continue;
                    };
                    let Some(i) = std::str::from_utf8(idx)
                        .ok()
                        .and_then(|s| s.parse::<usize>().ok())
                    else {
                        continue;
                    };
                    match self.caps.palette.get(i).cloned().flatten() {
                        Some(c) => self.reply(&format!("\x1b]4;{i};{c}\x07")),
                        None => self.ask_host(&format!("4;{i};?")),
                    }
                }
            }
            _ => {}
        }
    }

    fn ask_host(&mut self, query: &str) {
        // A host that did not even answer the probe's DA1 will not answer this either: the child
        // is left to its own fallback, and its DA1 is answered here.
        if self.caps.da1.is_none() {
            return;
        }
        self.host_out.extend_from_slice(b"\x1b]");
        self.host_out.extend_from_slice(query.as_bytes());
        self.host_out.push(0x07);
        self.colours_asked_of_host = true;
    }

    /// DA1: the host's start-up answer, unless it ends a batch of colour queries the host was asked
    /// (then the host answers it after the colours).
    fn da1(&mut self) {
        if std::mem::take(&mut self.colours_asked_of_host) {
            self.host_out.extend_from_slice(b"\x1b[c");
            return;
        }
        let da1 = self
            .caps
            .da1
            .clone()
            .unwrap_or_else(|| HostCaps::FALLBACK_DA1.to_vec());
        self.replies.extend_from_slice(&da1);
    }
}

impl vt100::Callbacks for Tracker {
    fn on_scroll(&mut self, _: vt100::capture::RowContents<'_>, _: bool) {
        self.scrolled = true;
    }

    fn audible_bell(&mut self, _: &mut vt100::Screen) {
        self.host_out.push(0x07);
    }

    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        let clean: Vec<u8> = title
            .iter()
            .copied()
            .filter(|b| *b >= 0x20 && *b != 0x7f)
            .collect();
        self.host_out.extend_from_slice(b"\x1b]2;");
        self.host_out.extend_from_slice(&clean);
        self.host_out.push(0x07);
    }

    fn copy_to_clipboard(&mut self, _: &mut vt100::Screen, ty: &[u8], data: &[u8]) {
        self.host_out.extend_from_slice(b"\x1b]52;");
        self.host_out.extend_from_slice(ty);
        self.host_out.push(b';');
        self.host_out.extend_from_slice(data);
        self.host_out.push(0x07);
    }

    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        let first = params.first().and_then(|p| p.first()).copied().unwrap_or(0);
        match (i1, i2, c) {
            (None, None, 'c') if first == 0 => match &mut self.held {
                Some(held) => held.push(Held::Da1),
                None => self.da1(),
            },
            (Some(b'>'), None, 'c') => self.reply("\x1b[>0;10;1c"),
            (None, None, 'n') if first == 5 => self.reply("\x1b[0n"),
            (None, None, 'n') if first == 6 => {
                let (row, col) = screen.cursor_position();
                self.reply(&format!("\x1b[{};{}R", row + 1, col + 1));
            }
            (None, None, 't') if first == 18 => {
                let (rows, cols) = self.size;
                self.reply(&format!("\x1b[8;{rows};{cols}t"));
            }
            (Some(b'>'), None, 'q') => {
                self.reply(&format!("\x1bP>|pokeshell({})\x1b\\", env!("CARGO_PKG_VERSION")));
            }
            (Some(b'?'), Some(b'$'), 'p') => {
                let state = match first {
                    2026 => {
                        if self.sync_since.is_some() {
                            1
                        } else {
                            2
                        }
                    }
                    _ => 0,
                };
                self.reply(&format!("\x1b[?{first};{state}$y"));
            }
            (Some(b'?'), None, 'h') => self.private_mode(params, true),
            (Some(b'?'), None, 'l') => self.private_mode(params, false),
            (Some(m @ (b'?' | b'>' | b'<' | b'=')), None, 'u') => self.kitty(screen, m, params),
            (Some(b'>'), None, 'm') if first == 4 => {
                self.modify_other_keys = params.get(1).and_then(|p| p.first()).copied().unwrap_or(0);
            }
            _ => {}
        }
    }

    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        match params.first().copied() {
            Some(b"10" | b"11" | b"4") => self.osc_colour(params),
            Some(b"7501") => self.osc_program_status(params),
            // Desktop notifications are meant for the user, wherever pokeshell runs.
            Some(b"9" | b"777") => {
                self.host_out.extend_from_slice(b"\x1b]");
                self.host_out.extend_from_slice(&params.join(&b';'));
                self.host_out.push(0x07);
            }
            _ => {}
        }
    }
}
