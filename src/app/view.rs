//! Builds the side pane's sections from the app state.

use std::time::{Duration, Instant};

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::App;
use crate::ui::side::{Section, SideView};
use crate::ui::theme;

/// Uptime at minute resolution, so an idle pokeshell redraws at most once a minute.
pub fn uptime(d: Duration) -> String {
    let mins = d.as_secs() / 60;
    match mins {
        0 => "under a minute".into(),
        m if m < 60 => format!("{m}m"),
        m => format!("{}h {:02}m", m / 60, m % 60),
    }
}

pub fn next_uptime_change(started: Instant, now: Instant) -> Instant {
    let elapsed = now.duration_since(started).as_secs();
    started + Duration::from_secs((elapsed / 60 + 1) * 60)
}

fn kv(key: &str, value: String) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{key:<8}"), theme::dim()),
        Span::raw(value),
    ])
}

impl App {
    pub fn side_view(&self, pane: Rect, now: Instant) -> SideView {
        let mut process = vec![kv("command", self.opts.label.clone())];
        match (self.child_pid, self.child_exit) {
            (_, Some(code)) => process.push(kv("exited", format!("code {code}"))),
            (Some(pid), None) => process.push(kv("pid", pid.to_string())),
            (None, None) => process.push(kv("pid", "starting".into())),
        }
        process.push(kv("pane", format!("{}×{}", pane.width, pane.height)));
        process.push(kv("uptime", uptime(now.duration_since(self.started))));
        SideView {
            sections: vec![
                Section {
                    title: "pi".into(),
                    lines: process,
                },
                Section {
                    title: "bridge".into(),
                    lines: vec![Line::from(Span::styled("not connected", theme::dim()))],
                },
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uptime_is_coarse() {
        assert_eq!(uptime(Duration::from_secs(59)), "under a minute");
        assert_eq!(uptime(Duration::from_secs(61)), "1m");
        assert_eq!(uptime(Duration::from_secs(3600 + 5 * 60)), "1h 05m");
    }

    #[test]
    fn next_change_is_the_next_whole_minute() {
        let t0 = Instant::now();
        assert_eq!(
            next_uptime_change(t0, t0 + Duration::from_secs(61)),
            t0 + Duration::from_secs(120)
        );
    }
}
