//! The status overlay (prefix+i): what supervision is set to do, a few live facts the caller passes
//! in (tools running, pokes sent, …), any configuration warnings, and how to poke by hand.

use ratatui_core::buffer::Buffer;
use ratatui_core::layout::Rect;
use ratatui_core::text::{Line, Span};
use ratatui_core::widgets::Widget;

use crate::config::{EffectiveSettings, Settings};
use crate::ui::commands::{CommandId, command};
use crate::ui::overlay::{OverlayFrame, fill, wrap};
use crate::ui::theme;

const MAX_WIDTH: u16 = 70;
const LABEL_WIDTH: usize = 22;

/// One live fact, e.g. `("Tools running", "2")`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveLine {
    pub label: String,
    pub value: String,
}

impl LiveLine {
    pub fn new(label: impl Into<String>, value: impl Into<String>) -> Self {
        LiveLine {
            label: label.into(),
            value: value.into(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Item {
    Pair(String, String),
    Heading(String),
    Warning(String),
    Hint(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusOverlay {
    items: Vec<Item>,
}

fn on_off(b: bool) -> &'static str {
    if b { "on" } else { "off" }
}

impl StatusOverlay {
    pub fn new(settings: &Settings, live: &[LiveLine]) -> Self {
        let e = settings.effective();
        let mut items = config_items(&e);
        if !live.is_empty() {
            items.push(Item::Heading("Now".to_string()));
            items.extend(live.iter().map(|l| Item::Pair(l.label.clone(), l.value.clone())));
        }
        let warnings = settings.warnings();
        if !warnings.is_empty() {
            items.push(Item::Heading(format!("Warnings ({})", warnings.len())));
            items.extend(warnings.iter().map(|w| Item::Warning(w.to_string())));
        }
        let prefix = &e.display.prefix_key;
        let poke = command(CommandId::Poke).help_key();
        let settings = command(CommandId::Settings).help_key();
        items.push(Item::Hint(format!(
            "Poke by hand: {prefix} then {poke} · settings: {prefix} then {settings} · Esc closes"
        )));
        StatusOverlay { items }
    }

    /// The content as plain text, one line per item (for logs and tests).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for item in &self.items {
            match item {
                Item::Pair(l, v) => out.push_str(&format!("{l:<LABEL_WIDTH$}{v}\n")),
                Item::Heading(t) | Item::Warning(t) | Item::Hint(t) => out.push_str(&format!("{t}\n")),
            }
        }
        out
    }

    fn lines(&self, width: usize) -> Vec<Line<'static>> {
        let dim = theme::muted();
        let mut lines = Vec::new();
        for item in &self.items {
            match item {
                Item::Pair(label, value) => {
                    let value_width = width.saturating_sub(LABEL_WIDTH).max(1);
                    for (i, part) in wrap(value, value_width).into_iter().enumerate() {
                        let label = if i == 0 {
                            format!("{label:<LABEL_WIDTH$}")
                        } else {
                            " ".repeat(LABEL_WIDTH)
                        };
                        lines.push(Line::from(vec![Span::styled(label, dim), Span::raw(part)]));
                    }
                }
                Item::Heading(text) => {
                    lines.push(Line::default());
                    lines.push(Line::from(Span::styled(text.clone(), theme::heading())));
                }
                Item::Warning(text) => {
                    for part in wrap(&format!("⚠ {text}"), width) {
                        lines.push(Line::from(Span::styled(part, theme::warn())));
                    }
                }
                Item::Hint(text) => {
                    lines.push(Line::default());
                    lines.extend(
                        wrap(text, width)
                            .into_iter()
                            .map(|p| Line::from(Span::styled(p, dim))),
                    );
                }
            }
        }
        lines
    }
}

fn config_items(e: &EffectiveSettings) -> Vec<Item> {
    let pair = |l: &str, v: String| Item::Pair(l.to_string(), v);
    let p = &e.poke;
    let overdue = if p.auto_abort {
        "aborted"
    } else {
        "flagged in the footer"
    };
    let mut threshold = format!("{}s, then the call is {overdue}", p.threshold_seconds);
    if let Some(ms) = e.tool_timeout_ms {
        threshold.push_str(&format!(" (pi's own tool timeout: {ms} ms)"));
    }
    let mid_tool = if p.auto_abort && p.auto_poke {
        "off while auto-abort is on"
    } else {
        on_off(p.auto_poke)
    };
    let r = &e.recovery;
    let h = &e.handoff;
    let handoff = if h.enabled {
        format!(
            "at {}% context use, documents {}",
            h.percent,
            if h.save { "kept" } else { "not kept" }
        )
    } else {
        "only when asked".to_string()
    };
    vec![
        pair("Automatic supervision", on_off(p.enabled).to_string()),
        pair("Tool call overdue", threshold),
        pair("Mid-tool stall poke", mid_tool.to_string()),
        pair(
            "Compaction stall poke",
            if p.post_compact_poke {
                format!(
                    "on, {}s apart, at most {} per episode",
                    p.post_compact_cooldown_seconds, p.post_compact_max_pokes
                )
            } else {
                "off".to_string()
            },
        ),
        pair("Empty-reply retries", r.max_retries.to_string()),
        pair(
            "Loop nudges",
            format!(
                "every {} identical failures, up to {}",
                r.loop_threshold, r.max_loop_nudges
            ),
        ),
        pair(
            "Promise poke",
            match (
                r.promise_poke && r.max_promise_pokes > 0,
                r.promise_second_opinion,
            ) {
                (false, _) => "off".to_string(),
                (true, ask) => format!(
                    "on, at most {} per episode{}",
                    r.max_promise_pokes,
                    if ask { ", asks the model when unsure" } else { "" }
                ),
            },
        ),
        pair("Injection pause", format!("{}s", r.injection_cooldown_seconds)),
        pair(
            "Wakeup delays",
            format!("{}s to {}s", e.wakeups.min_seconds, e.wakeups.max_seconds),
        ),
        pair("Handoff", handoff),
        pair("Guard rails", guard_rails(&e.guard)),
    ]
}

/// The guard rails' limits in a line (0 is off for each).
fn guard_rails(g: &crate::config::effective::GuardSettings) -> String {
    let money = |usd: f64, per: &str| {
        if usd > 0.0 {
            format!("{} {per}", crate::brief::dollars(usd))
        } else {
            format!("no budget {per}")
        }
    };
    let count = |n: u32| if n == 0 { "off".to_string() } else { n.to_string() };
    format!(
        "{}, {}, {} calls without you; repeats: same call {}, taking turns {}, same reply {}, idle pokes {}; \
         a wait of {}s makes a poll",
        money(g.budget_usd, "a session"),
        money(g.daily_budget_usd, "a day"),
        count(g.max_calls_per_run),
        count(g.same_call_repeats),
        count(g.alternating_repeats),
        count(g.same_reply_repeats),
        count(g.idle_pokes),
        g.poll_wait_seconds
    )
}

impl Widget for &StatusOverlay {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let width = area.width.min(MAX_WIDTH);
        let text_width = usize::from(width.saturating_sub(4));
        let lines = self.lines(text_width);
        let inner = OverlayFrame::accent("pokeshell status").draw(area, width, lines.len(), buf);
        fill(inner, &lines, buf);
    }
}
