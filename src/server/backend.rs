//! A ratatui backend that draws into a buffer instead of a terminal: the server has no terminal of
//! its own, its frames go to the attached clients. Escape sequences come from crossterm (as for the
//! user's own terminal); what crossterm would ask the terminal (its size, the cursor's position) is
//! answered from what the clients told.

use std::io;

use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};

pub struct BufferBackend {
    inner: CrosstermBackend<Vec<u8>>,
    size: Size,
    cursor: Position,
}

impl BufferBackend {
    pub fn new(cols: u16, rows: u16) -> Self {
        Self {
            inner: CrosstermBackend::new(Vec::new()),
            size: Size::new(cols, rows),
            cursor: Position::ORIGIN,
        }
    }

    pub fn set_size(&mut self, cols: u16, rows: u16) {
        self.size = Size::new(cols, rows);
    }

    /// The bytes drawn since the last call.
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(self.inner.writer_mut())
    }

    /// Bytes to go out in order with the frames.
    pub fn push(&mut self, bytes: &[u8]) {
        self.inner.writer_mut().extend_from_slice(bytes);
    }
}

impl Backend for BufferBackend {
    type Error = io::Error;

    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.inner.draw(content)
    }

    fn hide_cursor(&mut self) -> io::Result<()> {
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> io::Result<()> {
        self.inner.show_cursor()
    }

    fn get_cursor_position(&mut self) -> io::Result<Position> {
        Ok(self.cursor)
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        let position = position.into();
        self.cursor = position;
        self.inner.set_cursor_position(position)
    }

    fn clear(&mut self) -> io::Result<()> {
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> io::Result<Size> {
        Ok(self.size)
    }

    fn window_size(&mut self) -> io::Result<WindowSize> {
        Ok(WindowSize {
            columns_rows: self.size,
            pixels: Size::default(),
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn scroll_region_up(&mut self, region: std::ops::Range<u16>, line_count: u16) -> io::Result<()> {
        self.inner.scroll_region_up(region, line_count)
    }

    fn scroll_region_down(&mut self, region: std::ops::Range<u16>, line_count: u16) -> io::Result<()> {
        self.inner.scroll_region_down(region, line_count)
    }
}
