//! What the pane's tests draw, here and in the binary crate's tests of the mirror (which lives there):
//! pieces of a child's output, and the pane drawn cell by cell to compare with.

use ratatui_core::buffer::Buffer;
use ratatui_core::layout::Rect;

use super::{PaneCache, PaneDrawn};

/// The chunks the cache's test is made of: text, colours, wide characters at the edge, erasing,
/// scrolling, the alternate screen, a reset.
pub const PIECES: &[&str] = &[
    "hello ",
    "\x1b[31mred\x1b[0m",
    "\x1b[1;44mbold on blue\x1b[0m",
    "界界",
    "\x1b[1;9H界",
    "\r\n",
    "\x1b[2J",
    "\x1b[K",
    "\x1b[3;1H\x1b[7mrev\x1b[0m",
    "\x1b[?1049h",
    "\x1b[?1049l",
    "\x1b[2;4r\n\n\n\x1b[r",
    "\x1bc",
    "x",
];

/// The pane drawn into a new buffer by a new cache: every cell looked up.
pub fn every_cell(screen: &vt100::Screen, area: Rect, size: Rect) -> Buffer {
    let mut buf = Buffer::empty(size);
    PaneCache::default().draw(screen.into(), area, &mut buf, &mut PaneDrawn::default());
    buf
}
