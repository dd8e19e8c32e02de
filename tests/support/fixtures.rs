//! The recorded pi output under `tests/fixtures/pi/`: what the recorder (`examples/record_fixtures.rs`)
//! writes and the replay tests read. The fixtures are consecutive slices of one pi session, so a
//! slice is only meaningful after the ones before it (pi redraws only the rows that changed).

use std::path::PathBuf;

use pokeshell::term::screen::{HostCaps, Mirror};

/// One slice of the recorded session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fixture {
    /// File name under `tests/fixtures/pi/`.
    pub file: &'static str,
    /// pi's terminal size while this slice was written, rows × columns.
    pub rows: u16,
    pub cols: u16,
    /// The size of pokeshell's terminal whose pane is `cols`×`rows` (columns, rows): the replay
    /// tests draw pokeshell's whole screen at this size.
    pub host: (u16, u16),
}

/// pi's start-up in a 120×40 terminal (pokeshell with the side pane in a 152×41 terminal).
pub const STARTUP: Fixture = Fixture {
    file: "startup.ansi",
    rows: 40,
    cols: 120,
    host: (152, 41),
};
pub const PROMPT: Fixture = Fixture {
    file: "prompt.ansi",
    rows: 40,
    cols: 120,
    host: (152, 41),
};
pub const TOOL: Fixture = Fixture {
    file: "tool.ansi",
    rows: 40,
    cols: 120,
    host: (152, 41),
};
/// To the pane pokeshell gives pi in a 120×40 terminal with the side pane (120 − 32, 40 − 1).
pub const RESIZE: Fixture = Fixture {
    file: "resize.ansi",
    rows: 39,
    cols: 88,
    host: (120, 40),
};
/// To the pane of a 90×30 terminal, where the side pane hides itself (90, 30 − 1).
pub const RESIZE_NARROW: Fixture = Fixture {
    file: "resize-narrow.ansi",
    rows: 29,
    cols: 90,
    host: (90, 30),
};

/// In recording order.
pub const ALL: [Fixture; 5] = [STARTUP, PROMPT, TOOL, RESIZE, RESIZE_NARROW];

/// The pi the fixtures come from; the recorder refuses any other.
pub const PI_VERSION: &str = "1.6.0";

/// What the user types and the scripted model answers in the `prompt` slice.
pub const PROMPT_TEXT: &str = "what is the answer";
pub const ANSWER_TEXT: &str = "The answer is forty-two.";
/// The `tool` slice: the model runs `bash` with this command, then says `TOOL_DONE_TEXT`.
pub const TOOL_PROMPT_TEXT: &str = "say hi in the shell";
pub const TOOL_COMMAND: &str = "echo hi";
pub const TOOL_DONE_TEXT: &str = "The shell said hi.";

/// The temp root of the recording session is replaced by this in the fixtures. Same length as the
/// real `/tmp/pokeshell-pi-XXXXXX` root, so pi's layout (paths are padded and truncated) holds.
pub const ROOT_PLACEHOLDER: &str = "/tmp/pokeshell-pi-FIXTUR";

pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi")
}

/// A slice's bytes; panics with the fix when the file is missing.
#[track_caller]
pub fn read(fixture: Fixture) -> Vec<u8> {
    let path = dir().join(fixture.file);
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read the pi fixture {}: {e}; scripts/record-fixtures.sh records it",
            path.display()
        )
    })
}

/// The recorded session as pokeshell's mirror took it in.
pub struct Replay {
    pub mirror: Mirror,
    /// What the mirror answered pi during each slice, in order.
    pub replies: Vec<(Fixture, Vec<u8>)>,
    /// What the mirror passed on to the host terminal (title, bell, ...).
    pub host_out: Vec<u8>,
}

impl Replay {
    /// The answers given during `fixture`'s slice.
    #[track_caller]
    pub fn replies_to(&self, fixture: Fixture) -> &[u8] {
        self.replies
            .iter()
            .find(|(f, _)| *f == fixture)
            .map(|(_, r)| r.as_slice())
            .unwrap_or_else(|| panic!("{} was not replayed", fixture.file))
    }
}

/// Replays the session from the start up to and including `last` through a mirror that answers
/// for a host with `caps`, resizing it where the recording did.
#[track_caller]
pub fn replay(last: Fixture, caps: HostCaps) -> Replay {
    let mut mirror = Mirror::new(STARTUP.rows, STARTUP.cols, caps);
    let mut replies = Vec::new();
    let mut host_out = Vec::new();
    for fixture in ALL {
        let (rows, cols) = mirror.screen().size();
        if (rows.get(), cols.get()) != (fixture.rows, fixture.cols) {
            mirror.resize(fixture.rows, fixture.cols);
        }
        mirror.process(&read(fixture));
        replies.push((fixture, mirror.take_replies()));
        host_out.extend(mirror.take_host_output());
        if fixture == last {
            return Replay {
                mirror,
                replies,
                host_out,
            };
        }
    }
    panic!("{} is not one of the recorded slices", last.file);
}
