//! The pane drawn from the mirror's record of the rows its output changed shows what the pane drawn
//! cell by cell shows (the pane is the pure crate's; the record is the mirror's, here).

use pokeshell_core::ui::pane::samples::{PIECES, every_cell};
use pokeshell_core::ui::pane::{PaneCache, PaneDrawn, PaneScreen};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::{HostCaps, Mirror};

proptest::proptest! {
    /// Drawn from the mirror's record of changed rows, with its output cut into batches anywhere,
    /// the pane shows what drawing every cell shows (the record itself: `term/screen/damage`).
    #[test]
    fn the_cache_draws_from_the_mirrors_record_what_every_cell_would(
        steps in proptest::collection::vec(0..PIECES.len(), 1..40),
        cuts in proptest::collection::vec(1..9usize, 1..12),
    ) {
        let (w, h) = (10u16, 5u16);
        let stream: Vec<u8> = steps.iter().flat_map(|i| PIECES[*i].bytes()).collect();
        let mut m = Mirror::new(h, w, HostCaps::default());
        let area = Rect::new(2, 1, w, h);
        let size = Rect::new(0, 0, w + 4, h + 2);
        let mut cache = PaneCache::default();
        let (mut buf, mut drawn) = (Buffer::empty(size), PaneDrawn::default());
        let mut at = 0;
        for cut in cuts.iter().cycle() {
            if at >= stream.len() {
                break;
            }
            let end = (at + cut).min(stream.len());
            m.process(&stream[at..end]);
            let screen = PaneScreen { screen: m.screen(), changes: Some(m.changes()) };
            cache.draw(screen, area, &mut buf, &mut drawn);
            proptest::prop_assert_eq!(&buf, &every_cell(m.screen(), area, size));
            at = end;
        }
    }
}
