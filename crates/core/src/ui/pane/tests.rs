use super::*;

/// A screen of `rows` × `cols`, no scrollback.
fn parser(rows: u16, cols: u16) -> vt100::Parser {
    vt100::Parser::new(
        std::num::NonZeroU16::new(rows).expect("rows"),
        std::num::NonZeroU16::new(cols).expect("cols"),
        0,
    )
}

fn render(bytes: &[u8], w: u16, h: u16) -> Buffer {
    let mut p = parser(h, w);
    p.process(bytes);
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    PaneCache::default().draw(p.screen().into(), area, &mut buf, &mut PaneDrawn::default());
    buf
}

#[test]
fn colours_and_attributes_survive() {
    let buf = render(b"\x1b[1;31mR\x1b[0;2;38;5;200mD\x1b[0;3;4;7;48;2;1;2;3mX", 5, 1);
    let r = &buf[(0, 0)];
    assert_eq!(r.symbol(), "R");
    assert_eq!(r.fg, Color::Indexed(1));
    assert!(r.modifier.contains(Modifier::BOLD));
    let d = &buf[(1, 0)];
    assert_eq!(d.fg, Color::Indexed(200));
    assert!(d.modifier.contains(Modifier::DIM));
    let x = &buf[(2, 0)];
    assert_eq!(x.bg, Color::Rgb(1, 2, 3));
    assert!(
        x.modifier
            .contains(Modifier::ITALIC | Modifier::UNDERLINED | Modifier::REVERSED)
    );
}

#[test]
fn nothing_of_what_the_buffer_held_stays_on_the_childs_cells() {
    let mut p = parser(1, 3);
    p.process(b"a\x1b[1mb\x1b[0mc");
    let area = Rect::new(0, 0, 3, 1);
    let mut buf = Buffer::empty(area);
    buf.set_style(
        area,
        Style::new()
            .fg(Color::Red)
            .add_modifier(Modifier::DIM | Modifier::ITALIC),
    );
    PaneCache::default().draw(p.screen().into(), area, &mut buf, &mut PaneDrawn::default());
    assert_eq!(buf[(0, 0)].modifier, Modifier::empty());
    assert_eq!(buf[(0, 0)].fg, Color::Reset);
    assert_eq!(buf[(1, 0)].modifier, Modifier::BOLD);
    assert_eq!(buf[(2, 0)].modifier, Modifier::empty());
}

#[test]
fn wide_characters_take_two_cells() {
    let buf = render("a漢b".as_bytes(), 5, 1);
    assert_eq!(buf[(1, 0)].symbol(), "漢");
    assert_eq!(buf[(3, 0)].symbol(), "b");
}

#[test]
fn cursor_follows_the_child_and_hides_with_it() {
    let mut p = parser(5, 10);
    p.process(b"\x1b[3;4H");
    let area = Rect::new(0, 0, 10, 5);
    assert_eq!(cursor(p.screen(), area), Some(Position::new(3, 2)));
    p.process(b"\x1b[?25l");
    assert_eq!(cursor(p.screen(), area), None);
}

use super::samples::{PIECES, every_cell};

proptest::proptest! {
    /// Whatever the child writes, two buffers the cache draws into (as the shared frame and a
    /// client's own are), each drawn at its own pace, show exactly what drawing every cell shows.
    #[test]
    fn the_cache_draws_what_every_cell_would(
        steps in proptest::collection::vec((0..PIECES.len(), 0..3u8), 1..40),
    ) {
        let (w, h) = (10u16, 5u16);
        let mut p = parser(h, w);
        let area = Rect::new(2, 1, w, h);
        let size = Rect::new(0, 0, w + 4, h + 2);
        let mut cache = PaneCache::default();
        let mut kept = [
            (Buffer::empty(size), PaneDrawn::default()),
            (Buffer::empty(size), PaneDrawn::default()),
        ];
        for (step, which) in steps {
            p.process(PIECES[step].as_bytes());
            // 0: the first buffer is drawn, 1: the second, 2: neither (no frame this time).
            let Some((buf, drawn)) = kept.get_mut(usize::from(which)) else {
                continue;
            };
            let before = buf.clone();
            let drew = cache.draw(p.screen().into(), area, buf, drawn);
            proptest::prop_assert_eq!(&*buf, &every_cell(p.screen(), area, size));
            // A frame compares only the rows said drawn with what the terminal shows.
            for row in (0..size.height).filter(|r| !drew.contains(r)) {
                let same = (0..size.width).all(|x| buf[(x, row)] == before[(x, row)]);
                proptest::prop_assert!(same, "row {} changed but was not said drawn", row);
            }
        }
    }
}

#[test]
fn only_the_rows_that_changed_are_drawn_again() {
    let mut p = parser(4, 6);
    p.process(b"ab\r\ncd\r\nef");
    let area = Rect::new(0, 1, 6, 4);
    let mut cache = PaneCache::default();
    let mut buf = Buffer::empty(Rect::new(0, 0, 6, 5));
    let mut drawn = PaneDrawn::default();
    assert_eq!(
        cache.draw(p.screen().into(), area, &mut buf, &mut drawn),
        vec![1, 2, 3, 4]
    );
    p.process(b"\x1b[2;3Hx");
    assert_eq!(cache.draw(p.screen().into(), area, &mut buf, &mut drawn), vec![2]);
    assert_eq!(
        cache.draw(p.screen().into(), area, &mut buf, &mut drawn),
        Vec::<u16>::new()
    );
    // A buffer the cache has not drawn into gets every row.
    let mut other = Buffer::empty(Rect::new(0, 0, 6, 5));
    let drew = cache.draw(p.screen().into(), area, &mut other, &mut PaneDrawn::default());
    assert_eq!(drew, vec![1, 2, 3, 4]);
    assert_eq!(other, buf);
}

#[test]
fn a_buffer_drawn_by_another_cache_is_drawn_whole() {
    let mut p = parser(2, 4);
    p.process(b"one");
    let area = Rect::new(0, 0, 4, 2);
    let (mut first, mut second) = (PaneCache::default(), PaneCache::default());
    let mut buf = Buffer::empty(area);
    let mut drawn = PaneDrawn::default();
    first.draw(p.screen().into(), area, &mut buf, &mut drawn);
    second.draw(
        p.screen().into(),
        area,
        &mut Buffer::empty(area),
        &mut PaneDrawn::default(),
    );
    p.process(b"\r\ntwo");
    second.draw(
        p.screen().into(),
        area,
        &mut Buffer::empty(area),
        &mut PaneDrawn::default(),
    );
    // The second cache's version is ahead of the first's, but it never drew into this buffer.
    assert_eq!(
        second.draw(p.screen().into(), area, &mut buf, &mut drawn),
        vec![0, 1]
    );
    assert_eq!(buf, every_cell(p.screen(), area, area));
}

#[test]
fn a_resized_screen_is_drawn_whole_again() {
    let mut p = parser(3, 6);
    p.process(b"abcdef\r\nghi");
    let mut cache = PaneCache::default();
    let mut drawn = PaneDrawn::default();
    let mut buf = Buffer::empty(Rect::new(0, 0, 8, 4));
    cache.draw(p.screen().into(), Rect::new(0, 0, 6, 3), &mut buf, &mut drawn);
    p.screen_mut().set_size(
        std::num::NonZeroU16::new(4).expect("rows"),
        std::num::NonZeroU16::new(8).expect("cols"),
    );
    p.process(b"\x1b[4;1Hlast");
    let mut cached = Buffer::empty(Rect::new(0, 0, 8, 4));
    let drew = cache.draw(p.screen().into(), Rect::new(0, 0, 8, 4), &mut cached, &mut drawn);
    assert_eq!(drew, vec![0, 1, 2, 3]);
    assert_eq!(
        cached,
        every_cell(p.screen(), Rect::new(0, 0, 8, 4), Rect::new(0, 0, 8, 4))
    );
}

#[test]
fn a_screen_smaller_than_the_pane_leaves_nothing_of_a_bigger_one_behind() {
    let area = Rect::new(0, 0, 6, 3);
    let mut big = parser(3, 6);
    big.process(b"abcdef\r\nghijkl\r\nmnopqr");
    let mut cache = PaneCache::default();
    let mut drawn = PaneDrawn::default();
    let mut buf = Buffer::empty(area);
    cache.draw(big.screen().into(), area, &mut buf, &mut drawn);
    let mut small = parser(2, 4);
    small.process(b"xy");
    let drew = cache.draw(small.screen().into(), area, &mut buf, &mut drawn);
    assert_eq!(drew, vec![0, 1, 2]);
    assert_eq!(buf, every_cell(small.screen(), area, area));
}
