use super::*;
use crate::term::screen::HostCaps;
use crate::term::screen::row_changes::Seen;

fn mirror(rows: u16, cols: u16) -> Mirror {
    Mirror::new(rows, cols, HostCaps::default())
}

/// The rows `bytes` marked, fed as one batch.
fn marks(m: &mut Mirror, bytes: &[u8]) -> Vec<u16> {
    let seen = m.changes().seen();
    m.process(bytes);
    marked(m, seen)
}

fn marked(m: &Mirror, seen: Seen) -> Vec<u16> {
    m.changes().since(seen).expect("the mirror keeps one record")
}

fn all(rows: u16) -> Vec<u16> {
    (0..rows).collect()
}

/// The rows in which two screens of one size differ, cell by cell.
fn differing(a: &vt100::Screen, b: &vt100::Screen) -> Vec<u16> {
    let (rows, cols) = a.size();
    (0..rows.get())
        .filter(|r| (0..cols.get()).any(|c| a.cell(*r, c) != b.cell(*r, c)))
        .collect()
}

#[test]
fn an_echo_marks_its_own_row_alone() {
    let mut m = mirror(10, 40);
    m.process(b"\x1b[2J\x1b[1;9r\x1b[10;1Hecho: ready\x1b[1;1H");
    let echo = "\x1b7\x1b[10;1Hecho: \u{3b1}\x1b[K\x1b8";
    assert_eq!(marks(&mut m, echo.as_bytes()), vec![9]);
    assert_eq!(m.screen().contents().lines().last(), Some("echo: \u{3b1}"));
}

#[test]
fn text_marks_its_row_and_a_wrap_marks_every_row() {
    let mut m = mirror(6, 20);
    m.process(b"\x1b[3;1H");
    assert_eq!(marks(&mut m, b"hello"), vec![2]);
    // Wide characters move the cursor two cells each.
    assert_eq!(marks(&mut m, "\u{6f22}\u{5b57}!".as_bytes()), vec![2]);
    m.process(b"\x1b[4;18H");
    assert_eq!(marks(&mut m, b"wraps"), all(6));
    // A character that joins the one before is not followed.
    assert_eq!(marks(&mut m, "e\u{301}".as_bytes()), all(6));
}

#[test]
fn a_line_feed_marks_nothing_unless_it_scrolls() {
    let mut m = mirror(5, 10);
    m.process(b"a\r\nb\r\nc");
    assert_eq!(marks(&mut m, b"\r\n"), Vec::<u16>::new());
    m.process(b"\x1b[5;1H");
    assert_eq!(marks(&mut m, b"\n"), all(5));
    // A scroll region that does not start at the top scrolls just as well.
    m.process(b"\x1b[2;4r\x1b[4;1H");
    assert_eq!(marks(&mut m, b"\n"), all(5));
    assert_eq!(marks(&mut m, b"\x1b[2;1H\x1bM"), all(5));
    assert_eq!(marks(&mut m, b"\x1b[3;1H\x1bM"), Vec::<u16>::new());
}

#[test]
fn erasing_marks_the_rows_it_reaches() {
    let mut m = mirror(6, 10);
    m.process(b"\x1b[3;4H");
    assert_eq!(marks(&mut m, b"\x1b[K"), vec![2]);
    assert_eq!(marks(&mut m, b"\x1b[2X\x1b[P\x1b[2@"), vec![2]);
    assert_eq!(marks(&mut m, b"\x1b[J"), vec![2, 3, 4, 5]);
    assert_eq!(marks(&mut m, b"\x1b[1J"), vec![0, 1, 2]);
    assert_eq!(marks(&mut m, b"\x1b[2J"), all(6));
    assert_eq!(marks(&mut m, b"\x1b[L"), all(6));
}

#[test]
fn cursor_moves_colours_and_modes_mark_nothing() {
    let mut m = mirror(6, 10);
    let quiet = b"\x1b[2;3H\x1b[A\x1b[2B\x1b[C\x1b[D\x1b[5G\x1b[31;1m\x1b[m\x1b[?25l\x1b[?2026h\
        \x1b[?2026l\x1b[>1u\x1b[2 q\x1b7\x1b8\x1b(B\x1b[2;5r\x1b[r\r\x08\t\x07";
    assert_eq!(marks(&mut m, quiet), Vec::<u16>::new());
}

#[test]
fn a_sequence_split_between_batches_is_followed_to_its_end() {
    let mut m = mirror(6, 10);
    let seen = m.changes().seen();
    m.process(b"\x1b");
    m.process(b"[5;3");
    m.process(b"H");
    assert_eq!(marked(&m, seen), Vec::<u16>::new());
    m.process(b"x\x1b[2");
    assert_eq!(marked(&m, seen), vec![4]);
    let seen = m.changes().seen();
    m.process(b"K");
    assert_eq!(marked(&m, seen), vec![4]);
    // Text split inside a character is not followed.
    let bytes = "\u{3b1}".as_bytes();
    assert_eq!(marks(&mut m, &bytes[..1]), all(6));
    assert_eq!(marks(&mut m, &bytes[1..]), all(6));
}

#[test]
fn what_is_not_followed_marks_every_row() {
    let mut m = mirror(6, 10);
    for unsure in [
        &b"\x1b[?1049h"[..],
        b"\x1b[?1049l",
        b"\x1b]0;a title\x07",
        b"\x1bP1$r\x1b\\",
        b"\x1b[2\n;1H",
        b"\x1b[b",
        b"\x1bc",
        b"\x1b#8",
        b"\x9b",
    ] {
        assert_eq!(marks(&mut m, unsure), all(6), "{unsure:?}");
    }
    // A string command still open at the end of a batch is not waited for.
    assert_eq!(marks(&mut m, b"\x1b]2;half"), all(6));
    assert_eq!(marks(&mut m, b" a title\x07"), all(6));
    assert_eq!(marks(&mut m, b"\x1b[3;1Hok"), vec![2]);
}

#[test]
fn a_flood_and_a_resize_mark_every_row() {
    let mut m = mirror(6, 10);
    let flood = "line\r\n".repeat(TRACKED_BATCH);
    assert_eq!(marks(&mut m, flood.as_bytes()), all(6));
    let seen = m.changes().seen();
    m.resize(8, 12);
    assert_eq!(marked(&m, seen), all(8));
    // The follower kept up with the flood: a key after it is followed again.
    assert_eq!(marks(&mut m, b"\x1b[2;1Hx"), vec![1]);
}

/// Pieces of output, many of them meant to trip the follower up on a 5 × 8 screen.
const PIECES: &[&str] = &[
    "ab",
    "hello wo",
    "x",
    "\u{6f22}",
    "e\u{301}",
    "\u{263a}\u{fe0f}",
    "\r",
    "\n",
    "\r\n",
    "\x08",
    "\t",
    "\x0b",
    "\x1b7",
    "\x1b8",
    "\x1bD",
    "\x1bE",
    "\x1bM",
    "\x1b[H",
    "\x1b[3;5H",
    "\x1b[5;8H",
    "\x1b[5;1H",
    "\x1b[2A",
    "\x1b[B",
    "\x1b[3C",
    "\x1b[D",
    "\x1b[7G",
    "\x1b[K",
    "\x1b[1K",
    "\x1b[2K",
    "\x1b[J",
    "\x1b[1J",
    "\x1b[2J",
    "\x1b[2X",
    "\x1b[P",
    "\x1b[2@",
    "\x1b[L",
    "\x1b[M",
    "\x1b[S",
    "\x1b[T",
    "\x1b[2;4r",
    "\x1b[r",
    "\x1b[?1049h",
    "\x1b[?1049l",
    "\x1b[?6h",
    "\x1b[?6l",
    "\x1b[?7l",
    "\x1b[?7h",
    "\x1b[4h",
    "\x1b[4l",
    "\x1b[31;1m",
    "\x1b[m",
    "\x1b]0;title\x07",
    "\x1b]2;t\x1b\\",
    "\x1bP1$r\x1b\\",
    "\x1b[2\n;1H",
    "\x1b[3\x18x",
    "\x1b[2b",
    "\x1bc",
    "\x1b#8",
    "\u{9b}",
    "\x1b[?25l",
    "\x1b[?2026h",
    "\x1b[>1u",
    "\x1b[ q",
    "\x1b(0",
    "qqq",
    "\x1b\x1b[A",
    "\x1b[?1;2c",
    "\x1b[6n",
];

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(512))]

    /// Whatever the child writes and however its output is cut into batches, every row that
    /// changed is marked (the pane drawn from the marks: `core/ui/pane/tests.rs`).
    #[test]
    fn every_row_that_changed_is_marked(
        pieces in proptest::collection::vec((0..=PIECES.len(), proptest::num::u8::ANY), 1..50),
        cuts in proptest::collection::vec(1..14usize, 1..20),
    ) {
        let (rows, cols) = (5u16, 8u16);
        let mut stream = Vec::new();
        for (i, byte) in pieces {
            match PIECES.get(i) {
                Some(piece) => stream.extend_from_slice(piece.as_bytes()),
                None => stream.push(byte),
            }
        }
        let mut m = mirror(rows, cols);
        let mut at = 0;
        for cut in cuts.iter().cycle() {
            if at >= stream.len() {
                break;
            }
            let end = (at + cut).min(stream.len());
            let before = m.screen().clone();
            let seen = m.changes().seen();
            m.process(&stream[at..end]);
            let marked = marked(&m, seen);
            for row in differing(&before, m.screen()) {
                proptest::prop_assert!(
                    marked.contains(&row),
                    "row {} changed unmarked after {:?}", row, String::from_utf8_lossy(&stream[..end])
                );
            }
            at = end;
        }
    }
}

/// Bytes a control sequence may hold, the odd ones included.
const CSI_BYTES: &[u8] = b"0123456789;:<=>? !\"/#mHJKABCDhlrtq@~\x07\x08\n\x18\x1b\x7f\x9b";

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(2048))]

    /// The shortcut for a whole plain control sequence ends where reading it byte by byte ends,
    /// with the same effect and the same state; it leaves anything else to the long way.
    #[test]
    fn a_whole_sequence_read_in_one_go_is_the_piece_read_byte_by_byte(
        body in proptest::collection::vec(proptest::sample::select(CSI_BYTES), 0..70),
    ) {
        let mut seq = b"\x1b[".to_vec();
        seq.extend_from_slice(&body);
        let mut quick = Follower { began_here: true, ..Follower::default() };
        let Some(fast) = quick.whole_csi(&seq) else {
            return Ok(());
        };
        let mut slow = Follower { began_here: true, ..Follower::default() };
        let by_byte = seq.iter().enumerate().find_map(|(i, b)| slow.step(*b, i));
        proptest::prop_assert_eq!(Some(fast), by_byte);
        proptest::prop_assert_eq!(quick.state, slow.state);
        proptest::prop_assert_eq!(&quick.params, &slow.params);
    }
}

#[test]
fn the_shortcut_takes_plain_sequences_and_leaves_the_rest() {
    let quick = |s: &[u8]| {
        Follower::default()
            .whole_csi(s)
            .map(|p| (p.len, p.effect, p.plain))
    };
    assert_eq!(
        quick(b"\x1b[38;5;12mtext"),
        Some((10, Some(Effect::Nothing), true))
    );
    assert_eq!(quick(b"\x1b[2K"), Some((4, Some(Effect::Row), false)));
    assert_eq!(quick(b"\x1b[J"), Some((3, Some(Effect::Below), false)));
    // A private marker, an intermediate, a control inside, a sequence the batch cuts.
    for long_way in [&b"\x1b[?25l"[..], b"\x1b[ q", b"\x1b[1\n2m", b"\x1b[38;5"] {
        assert_eq!(quick(long_way), None, "{:?}", String::from_utf8_lossy(long_way));
    }
}
