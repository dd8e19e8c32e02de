//! Fast-forwarding must be invisible: random output, cut into random batches, leaves a mirror that
//! skips in exactly the state of one that parses every byte.

use proptest::prelude::*;

use super::Mirror;

const PIECES: &[&[u8]] = &[
    b"\x1b[0m",
    b"\x1b[m",
    b"\x1b[1;31m",
    b"\x1b[38;5;200m",
    b"\x1b[48;2;1;2;3m",
    b"\x1b[4m",
    b"\x1b[3;5H",
    b"\x1b[H",
    b"\x1b[2J",
    b"\x1b[K",
    b"\x1b[2;6r",
    b"\x1b[1;4r",
    b"\x1b[3;8r",
    b"\x1b[r",
    b"\x1b[?1049h",
    b"\x1b[?1049l",
    b"\x1b[?7l",
    b"\x1b[?7h",
    b"\x1b[4h",
    b"\x1b[4l",
    b"\x1b[3b",
    b"\x1b[6n",
    b"\x1b[?u",
    b"\x1b[>1u",
    b"\x1b7",
    b"\x1b8",
    b"\x1bM",
    b"\x1b]0;title\x07",
    b"\x1b]0;ti",
    b"\x1bPq#0\x1b\\",
    b"\x1b_apc",
    b"\x9c",
    b"\xe6\x97",
    b"\xff",
    b"\x07",
    b"\t",
    b"\x08",
    b"\x18",
    b"\x1b",
    b"\x1b[",
    "漢字".as_bytes(),
    "é".as_bytes(),
    "\u{301}".as_bytes(),
    b"\r",
    b"\n",
    b"\r\n",
];

fn line(n: u8, colour: bool, ending: u8) -> String {
    let mut s = String::new();
    if colour {
        s.push_str("\x1b[38;5;33m");
    }
    for i in 0..n {
        s.push((b'a' + (i % 26)) as char);
    }
    if colour {
        s.push_str("\x1b[0m");
    }
    s.push_str(match ending % 4 {
        0 => "\n",
        1 => "",
        _ => "\r\n",
    });
    s
}

fn output() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        (0..PIECES.len()).prop_map(|i| PIECES[i].to_vec()),
        (0u8..30, any::<bool>(), any::<u8>()).prop_map(|(n, c, e)| line(n, c, e).into_bytes()),
        (1usize..60, 0u8..25, any::<bool>()).prop_map(|(k, n, c)| {
            (0..k)
                .flat_map(|i| line(n + (i % 3) as u8, c, 2).into_bytes())
                .collect()
        }),
    ];
    prop::collection::vec(piece, 1..40).prop_map(|v| v.concat())
}

/// Everything a mirror shows or answers: cells with colours, modes, cursor, wrapped rows, replies,
/// bytes for the host.
type Seen = (String, String, (u16, u16), Vec<bool>, Vec<u8>, Vec<u8>);

fn state(m: &mut Mirror) -> Seen {
    let s = m.screen();
    let (rows, _) = s.size();
    let wrapped = (0..rows.get()).map(|r| s.row_wrapped(r)).collect();
    (
        s.contents_formatted(),
        format!("{:?}", m.modes()),
        s.cursor_position(),
        wrapped,
        m.take_replies(),
        m.take_host_output(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn skipping_leaves_the_same_screen(
        bytes in output(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
        rows in 3u16..9,
        cols in 5u16..30,
    ) {
        let mut fast = Mirror::new(rows, cols, super::HostCaps::default());
        let mut plain = Mirror::parsing_everything(rows, cols);
        let mut at: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
        at.push(0);
        at.push(bytes.len());
        at.sort_unstable();
        for pair in at.windows(2) {
            fast.process(&bytes[pair[0]..pair[1]]);
            plain.process(&bytes[pair[0]..pair[1]]);
            prop_assert_eq!(state(&mut fast), state(&mut plain));
        }
        // What is not on screen but still counts: the character `CSI b` repeats, the colours.
        for m in [&mut fast, &mut plain] {
            m.process(b"\x1b[2bz\x1b[6n");
        }
        prop_assert_eq!(state(&mut fast), state(&mut plain));
    }
}

#[test]
fn a_flood_is_skipped_and_ends_like_parsing_it_all() {
    let mut flood = String::from("\x1b[2J\x1b[H");
    for i in 0..500 {
        flood.push_str(&format!("\x1b[38;5;{}m{i:>6}\x1b[0m line\r\n", i % 256));
    }
    flood.push_str("\x1b[1mtail");
    let mut fast = Mirror::new(10, 40, super::HostCaps::default());
    let mut plain = Mirror::parsing_everything(10, 40);
    fast.process(flood.as_bytes());
    plain.process(flood.as_bytes());
    assert_eq!(state(&mut fast), state(&mut plain));
    assert!(fast.screen().contents().contains("   499 line"));
    assert!(
        fast.skipped > flood.len() / 2,
        "most of the flood is skipped: {} of {}",
        fast.skipped,
        flood.len()
    );
}
