//! One list out of every machine's answer: the sessions needing the user first, a machine that did
//! not answer shown with the last sessions it reported and how old that is.

use serde::Serialize;

use super::ask::Answer;
use super::cache::{Cache, Known};
use super::schema::{SCHEMA, SessionJson, attention_rank};
use pokeshell_core::safe_text::escape;
use pokeshell_core::session::usage::{dollars, tokens};

/// What `ls --all` calls this machine.
pub const LOCAL: &str = "local";

/// One machine's part in the list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MachineState {
    pub machine: String,
    pub reachable: bool,
    /// Why it is not.
    pub error: Option<String>,
    /// When its sessions were reported (Unix ms): now for a reachable one, the cache's time else.
    pub as_of_ms: Option<u64>,
}

/// A session in the list; `stale` when it is the last known state of an unreachable machine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    #[serde(flatten)]
    pub session: SessionJson,
    pub stale: bool,
}

/// The merged list, as `ls --all --json` writes it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Merged {
    pub schema: u32,
    pub version: String,
    pub sessions: Vec<Row>,
    pub machines: Vec<MachineState>,
}

/// Merges this machine's sessions and the others' answers, updating `cache` with every answer.
pub fn merge(local: Vec<SessionJson>, answers: Vec<Answer>, cache: &mut Cache, now_ms: u64) -> Merged {
    let mut rows: Vec<Row> = local
        .into_iter()
        .map(|mut s| {
            s.machine = LOCAL.to_string();
            Row {
                session: s,
                stale: false,
            }
        })
        .collect();
    let mut machines = vec![MachineState {
        machine: LOCAL.to_string(),
        reachable: true,
        error: None,
        as_of_ms: Some(now_ms),
    }];
    for answer in answers {
        let (sessions, state) = match answer.result {
            Ok(listing) => {
                let sessions = listing.sessions.clone();
                cache.insert(
                    answer.dest.clone(),
                    Known {
                        at_ms: now_ms,
                        listing,
                    },
                );
                let state = MachineState {
                    machine: answer.dest.clone(),
                    reachable: true,
                    error: None,
                    as_of_ms: Some(now_ms),
                };
                ((sessions, false), state)
            }
            Err(error) => {
                let known = cache.get(&answer.dest);
                let state = MachineState {
                    machine: answer.dest.clone(),
                    reachable: false,
                    error: Some(error),
                    as_of_ms: known.map(|k| k.at_ms),
                };
                (
                    (
                        known.map(|k| k.listing.sessions.clone()).unwrap_or_default(),
                        true,
                    ),
                    state,
                )
            }
        };
        let (sessions, stale) = sessions;
        rows.extend(sessions.into_iter().map(|mut s| {
            s.machine = answer.dest.clone();
            Row { session: s, stale }
        }));
        machines.push(state);
    }
    let order = |m: &str| machines.iter().position(|s| s.machine == m).unwrap_or(usize::MAX);
    rows.sort_by_key(|r| {
        (
            attention_rank(&r.session.attention),
            r.stale,
            order(&r.session.machine),
            r.session.number,
        )
    });
    Merged {
        schema: SCHEMA,
        version: env!("CARGO_PKG_VERSION").to_string(),
        sessions: rows,
        machines,
    }
}

/// How long ago, in a few characters.
pub fn ago(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        s => format!("{}d{:02}h", s / 86_400, s % 86_400 / 3600),
    }
}

/// `ls --all` as text: a table of every session, then a line for each machine that did not answer.
pub fn format(merged: &Merged, now_ms: u64) -> String {
    let head = [
        "MACHINE",
        "SESSION",
        "STATE",
        "TOOL",
        "LAST INTERVENTION",
        "AGE",
        "ATTACHED",
        "TOKENS IN/OUT",
        "COST",
        "BRANCH",
        "DIRECTORY",
    ];
    let rows: Vec<[String; 11]> = merged
        .sessions
        .iter()
        .map(|r| {
            let s = &r.session;
            let state = if r.stale {
                format!("(last known) {}", s.state)
            } else {
                s.state.clone()
            };
            // Another machine's answer is not trusted to be plain text: every cell is written out
            // safe, as `ls` does with this server's.
            [
                escape(&s.machine),
                escape(&s.label),
                escape(&state),
                s.tool.as_deref().map_or_else(|| "-".into(), escape),
                s.last_intervention.as_deref().map_or_else(|| "-".into(), escape),
                ago(s.age_secs),
                if s.attached > 0 {
                    s.attached.to_string()
                } else {
                    "-".into()
                },
                token_cell(s.tokens_in, s.tokens_out, s.cache_read),
                s.cost_usd.map_or_else(|| "-".into(), dollar_cell),
                escape(&branch_cell(s.branch.as_deref(), s.dirty)),
                escape(&s.dir),
            ]
        })
        .collect();
    let mut out = if rows.is_empty() {
        "no sessions\n".to_string()
    } else {
        table(&head, &rows)
    };
    for m in merged.machines.iter().filter(|m| !m.reachable) {
        let error = m.error.as_deref().unwrap_or("");
        let seen = match m.as_of_ms {
            Some(at) => format!(
                "sessions shown as it reported them {} ago",
                ago(now_ms.saturating_sub(at) / 1000)
            ),
            None => "it never answered, so nothing is known of it".to_string(),
        };
        let (machine, error) = (escape(&m.machine), escape(error));
        out.push_str(&format!("{machine}: unreachable: {error}; {seen}\n"));
    }
    out
}

/// `13.4k/2.1k`: the tokens in (cache reads counted) and out; `-` before the first reply.
pub fn token_cell(tokens_in: u64, tokens_out: u64, cache_read: u64) -> String {
    if tokens_in + tokens_out + cache_read == 0 {
        "-".into()
    } else {
        format!("{}/{}", tokens(tokens_in + cache_read), tokens(tokens_out))
    }
}

/// What the replies cost, as pi priced them. Another machine's figure is not trusted to be sane: a
/// sum that is not a finite, non-negative number is shown as unknown.
pub fn dollar_cell(usd: f64) -> String {
    if usd.is_finite() && usd >= 0.0 {
        dollars(usd)
    } else {
        "?".into()
    }
}

/// `feat/x*`: the branch, a star when its tree has uncommitted changes; `-` outside a checkout.
pub fn branch_cell(branch: Option<&str>, dirty: Option<bool>) -> String {
    match (branch, dirty) {
        (Some(b), Some(true)) => format!("{b}*"),
        (Some(b), _) => b.to_string(),
        (None, Some(true)) => "(detached)*".to_string(),
        (None, Some(false)) => "(detached)".to_string(),
        (None, None) => "-".to_string(),
    }
}

/// Columns lined up, each cut at 48 characters, the last one left whole.
pub fn table<const N: usize>(head: &[&str; N], rows: &[[String; N]]) -> String {
    let mut widths = head.map(str::len);
    for r in rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count()).min(48);
        }
    }
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == cells.len() {
                s.push_str(cell);
            } else {
                let cell: String = cell.chars().take(48).collect();
                s.push_str(&format!("{cell:<w$}  "));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(&head.map(String::from));
    for r in rows {
        out.push_str(&line(r));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machines::schema::LsJson;
    use std::time::Duration;

    fn session(number: u32, name: &str, attention: &str) -> SessionJson {
        SessionJson {
            number,
            name: name.into(),
            label: format!("{number}:{name}"),
            state: attention.replace('_', " "),
            attention: attention.into(),
            tool: None,
            last_intervention: None,
            age_secs: 10,
            attached: 0,
            dir: format!("/w/{name}"),
            branch: None,
            dirty: None,
            machine: "its-own-name".into(),
            tokens_in: 0,
            tokens_out: 0,
            cache_read: 0,
            cost_usd: None,
            offer: None,
        }
    }

    fn listing(sessions: Vec<SessionJson>) -> LsJson {
        LsJson {
            schema: 1,
            version: "v".into(),
            machine: "h".into(),
            server: true,
            sessions,
        }
    }

    fn answer(dest: &str, result: Result<LsJson, String>) -> Answer {
        Answer {
            dest: dest.into(),
            result,
            took: Duration::ZERO,
        }
    }

    #[test]
    fn the_sessions_needing_the_user_come_first_whatever_their_machine() {
        let mut cache = Cache::new();
        let merged = merge(
            vec![session(1, "api", "working"), session(2, "web", "idle")],
            vec![answer(
                "gpu",
                Ok(listing(vec![
                    session(1, "train", "question"),
                    session(2, "eval", "stalled"),
                ])),
            )],
            &mut cache,
            1_000_000,
        );
        let order: Vec<(&str, &str)> = merged
            .sessions
            .iter()
            .map(|r| (r.session.machine.as_str(), r.session.name.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                ("gpu", "train"),
                ("gpu", "eval"),
                ("local", "api"),
                ("local", "web")
            ]
        );
        assert_eq!(cache["gpu"].at_ms, 1_000_000, "the answer is kept");
    }

    #[test]
    fn an_unreachable_machine_shows_its_last_answer_and_when() {
        let mut cache = Cache::new();
        cache.insert(
            "gpu".into(),
            Known {
                at_ms: 400_000,
                listing: listing(vec![session(1, "train", "working")]),
            },
        );
        let merged = merge(
            Vec::new(),
            vec![
                answer("gpu", Err("no answer within 5 s".into())),
                answer("vm", Err("ssh failed: Connection refused".into())),
            ],
            &mut cache,
            1_000_000,
        );
        assert_eq!(merged.sessions.len(), 1);
        assert!(merged.sessions[0].stale);
        assert_eq!(cache["gpu"].at_ms, 400_000, "a failure keeps the old answer");
        let text = format(&merged, 1_000_000);
        assert!(text.contains("(last known) working"), "{text}");
        assert!(
            text.contains(
                "gpu: unreachable: no answer within 5 s; sessions shown as it reported them 10m ago"
            ),
            "{text}"
        );
        assert!(
            text.contains("vm: unreachable: ssh failed: Connection refused; it never answered"),
            "{text}"
        );
    }

    #[test]
    fn another_machines_text_reaches_the_terminal_written_out() {
        let mut cache = Cache::new();
        let mut evil = session(1, "x\u{1b}]0;pwned\u{7}", "idle");
        evil.dir = "/w/\u{1b}[2J".into();
        let merged = merge(
            Vec::new(),
            vec![
                answer("gpu", Ok(listing(vec![evil]))),
                answer("vm", Err("refused \u{1b}[31mred".into())),
            ],
            &mut cache,
            1_000_000,
        );
        let text = format(&merged, 1_000_000);
        assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'), "{text:?}");
    }

    #[test]
    fn every_machines_spend_is_in_the_table() {
        let mut cache = Cache::new();
        let mut train = session(1, "train", "working");
        (train.tokens_in, train.cache_read, train.tokens_out) = (1200, 800, 300);
        train.cost_usd = Some(0.35);
        let mut odd = session(2, "odd", "idle");
        (odd.tokens_out, odd.cost_usd) = (5, Some(f64::NAN));
        let merged = merge(
            vec![session(3, "api", "idle")],
            vec![answer("gpu", Ok(listing(vec![train, odd])))],
            &mut cache,
            1_000_000,
        );
        let text = format(&merged, 1_000_000);
        let lines: Vec<&str> = text.lines().collect();
        let (tokens, cost) = (
            lines[0].find("TOKENS IN/OUT").expect("a tokens column"),
            lines[0].find("COST").expect("a cost column"),
        );
        let cell = |name: &str, at: usize| {
            let line = lines
                .iter()
                .find(|l| l.contains(name))
                .expect("the session's line");
            line[at..].split_whitespace().next().unwrap_or("").to_string()
        };
        assert_eq!(cell("1:train", tokens), "2.0k/300", "{text}");
        assert_eq!(cell("1:train", cost), "$0.3500", "{text}");
        assert_eq!(cell("3:api", tokens), "-", "before the first reply: {text}");
        assert_eq!(cell("3:api", cost), "-", "{text}");
        assert_eq!(cell("2:odd", cost), "?", "not a sum: {text}");
    }

    #[test]
    fn the_branch_cell_marks_changes() {
        assert_eq!(branch_cell(Some("feat"), Some(true)), "feat*");
        assert_eq!(branch_cell(Some("feat"), Some(false)), "feat");
        assert_eq!(branch_cell(None, None), "-");
        assert_eq!(branch_cell(None, Some(false)), "(detached)");
    }
}
