//! Other machines' sessions in the side pane and the switcher: the server asks the machines of
//! `pokeshell.machines` in the background (as `pokeshell ls --all` does, in a blocking thread of its
//! own, so no key and no frame waits on ssh) and lists their sessions after its own. Choosing one in
//! the switcher tells the client to go there ([`pokeshell_core::wire::Down::Hop`]).

use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;

use super::serve::{ServerEvent, ServerMsg};
use crate::machines::ask::{Answer, ask_all};
use crate::machines::parse_machines;
use pokeshell_core::session::{Attention, SessionBrief};

/// Other machines' sessions are numbered from here: above any number of this machine's, and never
/// reached by prefix+1…9.
pub const FIRST_NUMBER: u32 = 10_001;

/// How often the machines are asked again.
const EVERY: Duration = Duration::from_secs(15);

/// The [`Attention`] of a keyword of `ls --json` (a newer one counts as idle).
pub fn attention(keyword: &str) -> Attention {
    match keyword {
        "paused" => Attention::Paused,
        "question" => Attention::Question,
        "gave_up" => Attention::GaveUp,
        "limit" => Attention::Limit,
        "stalled" => Attention::Stalled,
        "working" | "starting" => Attention::Working,
        "exited" => Attention::Exited,
        _ => Attention::Idle,
    }
}

/// The briefs of the machines that answered, numbered from [`FIRST_NUMBER`].
pub fn briefs(answers: &[Answer], now_wall_ms: u64) -> Vec<SessionBrief> {
    let sessions = answers
        .iter()
        .filter_map(|a| Some((&a.dest, a.result.as_ref().ok()?)))
        .flat_map(|(dest, listing)| listing.sessions.iter().map(move |s| (dest, s)));
    (FIRST_NUMBER..)
        .zip(sessions)
        .map(|(number, (dest, s))| SessionBrief {
            number,
            name: s.name.clone(),
            dir: s.dir.clone(),
            attention: attention(&s.attention),
            state: match &s.tool {
                Some(tool) if s.attention == "working" => format!("⏳ {tool}"),
                _ => s.state.clone(),
            },
            tool: None,
            last_intervention: s.last_intervention.clone(),
            created_wall_ms: now_wall_ms.saturating_sub(s.age_secs.saturating_mul(1000)),
            attached: s.attached,
            branch: s.branch.clone(),
            dirty: s.dirty,
            machine: Some(dest.clone()),
            context_percent: None,
            offer: s.offer.clone(),
            spend: pokeshell_core::session::usage::Spend {
                input: s.tokens_in,
                output: s.tokens_out,
                cache_read: s.cache_read,
                cost_usd: s.cost_usd.unwrap_or(0.0),
                priced: s.cost_usd.is_some(),
                ..Default::default()
            },
        })
        .collect()
}

/// The machines and their timeout, from the global settings as they are now.
fn machines() -> (Vec<String>, Duration) {
    let Ok(cli) = crate::cli::Cli::try_parse_from_argv(&[]) else {
        return (Vec::new(), EVERY);
    };
    match crate::cli::launch::settings_here(&cli) {
        Ok(s) => {
            let list = parse_machines(&s.get(pokeshell_core::config::KeyId::Machines).edit_text());
            let secs = s
                .get(pokeshell_core::config::KeyId::MachineTimeoutSeconds)
                .as_int()
                .and_then(|i| u64::try_from(i).ok())
                .unwrap_or(5);
            (list, Duration::from_secs(secs))
        }
        Err(_) => (Vec::new(), EVERY),
    }
}

/// Asks the machines now and every [`EVERY`] after, for as long as the server runs.
pub fn spawn_refresher(tx: UnboundedSender<ServerMsg>) {
    tokio::spawn(async move {
        loop {
            let found = tokio::task::spawn_blocking(|| {
                let (dests, timeout) = machines();
                let answers = if dests.is_empty() {
                    Vec::new()
                } else {
                    ask_all(&dests, timeout)
                };
                briefs(&answers, crate::machines::now_ms())
            })
            .await
            .unwrap_or_default();
            if tx.send(ServerEvent::Remote(found).into()).is_err() {
                return;
            }
            tokio::time::sleep(EVERY).await;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machines::schema::{LsJson, SessionJson};

    fn session(number: u32, name: &str, attention: &str) -> SessionJson {
        SessionJson {
            number,
            name: name.into(),
            label: format!("{number}:{name}"),
            state: attention.into(),
            attention: attention.into(),
            tool: Some("bash 3s".into()),
            last_intervention: None,
            age_secs: 2,
            attached: 0,
            dir: "/w".into(),
            branch: Some("main".into()),
            dirty: Some(false),
            machine: "h".into(),
            tokens_in: 0,
            tokens_out: 0,
            cache_read: 0,
            cost_usd: None,
            offer: None,
        }
    }

    #[test]
    fn answering_machines_become_numbered_briefs_with_their_destination() {
        let ok = |sessions| {
            Ok(LsJson {
                schema: 1,
                version: String::new(),
                machine: "h".into(),
                server: true,
                sessions,
            })
        };
        let answers = vec![
            Answer {
                dest: "gpu".into(),
                result: ok(vec![
                    session(1, "train", "working"),
                    session(2, "eval", "question"),
                ]),
                took: Duration::ZERO,
            },
            Answer {
                dest: "down".into(),
                result: Err("refused".into()),
                took: Duration::ZERO,
            },
            Answer {
                dest: "vm".into(),
                result: ok(vec![session(1, "web", "idle")]),
                took: Duration::ZERO,
            },
        ];
        let b = briefs(&answers, 10_000);
        let got: Vec<(u32, &str, Option<&str>, Attention)> = b
            .iter()
            .map(|b| (b.number, b.name.as_str(), b.machine.as_deref(), b.attention))
            .collect();
        assert_eq!(
            got,
            [
                (10_001, "train", Some("gpu"), Attention::Working),
                (10_002, "eval", Some("gpu"), Attention::Question),
                (10_003, "web", Some("vm"), Attention::Idle),
            ]
        );
        assert_eq!(b[0].state, "⏳ bash 3s");
        assert_eq!(b[0].created_wall_ms, 8_000);
        assert_eq!(attention("from-the-future"), Attention::Idle);
    }
}
