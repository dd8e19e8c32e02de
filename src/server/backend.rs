//! A ratatui backend that draws into a buffer instead of a terminal: the server has no terminal of
//! its own, its frames go to the attached clients. Escape sequences come from crossterm (as for the
//! user's own terminal); what crossterm would ask the terminal (its size, the cursor's position) is
//! answered from what the clients told.

use std::cell::RefCell;
use std::io;
use std::rc::Rc;

use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};

/// The buffer crossterm writes into, kept by the backend too (crossterm's backend does not hand
/// its writer out).
#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl io::Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

pub struct BufferBackend {
    inner: CrosstermBackend<Shared>,
    buf: Shared,
    size: Size,
    cursor: Position,
}

impl BufferBackend {
    pub fn new(cols: u16, rows: u16) -> Self {
        let buf = Shared::default();
        Self {
            inner: CrosstermBackend::new(buf.clone()),
            buf,
            size: Size::new(cols, rows),
            cursor: Position::ORIGIN,
        }
    }

    pub fn set_size(&mut self, cols: u16, rows: u16) {
        self.size = Size::new(cols, rows);
    }

    /// The bytes drawn since the last call.
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut *self.buf.0.borrow_mut())
    }

    /// Bytes to go out in order with the frames.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.0.borrow_mut().extend_from_slice(bytes);
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
        self.inner.flush()
    }
}
