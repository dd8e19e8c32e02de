//! Every style pokeshell's own chrome uses, so its colours are chosen in one place; everything inside
//! the pane keeps pi's colours.

use ratatui_core::style::{Color, Modifier, Style};

use crate::config::Source;

pub fn dim() -> Style {
    Style::new().add_modifier(Modifier::DIM)
}

pub fn title() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

pub fn ok() -> Style {
    Style::new().fg(Color::Green)
}

pub fn warn() -> Style {
    Style::new().fg(Color::Yellow)
}

pub fn error() -> Style {
    Style::new().fg(Color::Red)
}

pub fn accent() -> Style {
    Style::new().fg(Color::Cyan)
}

pub fn key() -> Style {
    Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
}

/// A heading inside an overlay.
pub fn heading() -> Style {
    Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
}

/// Secondary text in a fixed grey rather than the terminal's dim: labels and hints in the dialogs.
pub fn muted() -> Style {
    Style::new().fg(Color::DarkGray)
}

/// The characters a filter matched.
pub fn highlight() -> Style {
    Style::new()
        .fg(Color::Yellow)
        .add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
}

/// Where a setting's value comes from, each layer in its own colour.
pub fn source_style(source: &Source) -> Style {
    match source {
        Source::Default => muted(),
        Source::Global(_) => Style::new().fg(Color::Blue),
        Source::Project(_) => Style::new().fg(Color::Green),
        Source::Session => Style::new().fg(Color::Magenta),
        Source::CommandLine => Style::new().fg(Color::LightRed),
    }
}

pub fn border() -> Style {
    Style::new().fg(Color::DarkGray)
}

/// How a piece of status text should look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Plain,
    Dim,
    Ok,
    Warn,
    Error,
    Accent,
}

impl Tone {
    pub fn style(self) -> Style {
        match self {
            Tone::Plain => Style::new(),
            Tone::Dim => dim(),
            Tone::Ok => ok(),
            Tone::Warn => warn(),
            Tone::Error => error(),
            Tone::Accent => accent(),
        }
    }
}
