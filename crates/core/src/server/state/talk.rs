//! Each session's conversation (`crate::talk`), kept by the server's state: what sessions' loops
//! heard, who asked to be told (a page's conversation view), and what happened meanwhile for a page
//! that was away.

use super::{ServerEffect, ServerState};
use crate::talk::{Entry, Said, Talk};
use crate::wire::{AwayDigest, Down, Seen};

/// The text an answer carries in one frame at most: JSON may escape a character into six, and a
/// frame holds 1 MiB.
const FRAME_TEXT: usize = 96 << 10;
/// Sessions a client may ask about at once (more than a server holds).
const SEEN_MAX: usize = 128;

impl ServerState {
    /// Session `number`'s loop heard these items.
    pub(super) fn on_talk(&mut self, number: u32, said: Vec<Said>, fx: &mut Vec<ServerEffect>) {
        if self.table.get(number).is_none() || said.is_empty() {
            return;
        }
        // Sessions that are gone keep no log.
        let table = &self.table;
        self.talks.retain(|n, _| table.get(*n).is_some());
        let wall_ms = self.wall_ms;
        let talk = self.talks.entry(number).or_insert_with(|| Talk::new(wall_ms));
        let entries: Vec<Entry> = said.into_iter().map(|s| talk.push(s, wall_ms)).collect();
        let epoch = talk.epoch();
        let clients = &self.clients;
        self.talkers.retain(|id, _| clients.contains_key(id));
        let session = self.label(number);
        for (&id, _) in self.talkers.iter().filter(|(_, n)| **n == number) {
            tell_entries(id, &session, epoch, false, &entries, fx);
        }
    }

    /// [`crate::wire::Up::Talk`]: the items after `since`, then each new one.
    pub(super) fn ask_talk(
        &mut self,
        id: u64,
        session: &str,
        epoch: u64,
        since: u64,
        fx: &mut Vec<ServerEffect>,
    ) {
        let number = match self.resolve(session) {
            Ok(n) => n,
            Err(message) => {
                fx.push(ServerEffect::Tell {
                    id,
                    down: Down::Error { message },
                });
                return;
            }
        };
        self.talkers.insert(id, number);
        let (log_epoch, entries) = match self.talks.get(&number) {
            Some(t) => (t.epoch(), t.since(epoch, since)),
            None => (0, Vec::new()),
        };
        let session = self.label(number);
        tell_entries(id, &session, log_epoch, true, &entries, fx);
    }

    /// [`crate::wire::Up::Away`]: a digest for each session asked about that exists.
    pub(super) fn ask_away(&self, id: u64, seen: &[Seen], fx: &mut Vec<ServerEffect>) {
        let digests = seen
            .iter()
            .take(SEEN_MAX)
            .filter_map(|s| {
                let number = self.resolve(&s.session).ok()?;
                let digest = match self.talks.get(&number) {
                    Some(t) => t.digest(s.epoch, s.seq),
                    None => Default::default(),
                };
                Some(AwayDigest {
                    session: self.label(number),
                    digest,
                })
            })
            .collect();
        fx.push(ServerEffect::Tell {
            id,
            down: Down::Meanwhile { digests },
        });
    }

    /// A session as a page names it: "3:api" (its number counts), a name, or a number.
    fn resolve(&self, label: &str) -> Result<u32, String> {
        if let Some((n, _)) = label.split_once(':')
            && let Ok(n) = n.parse::<u32>()
            && self.table.get(n).is_some()
        {
            return Ok(n);
        }
        self.table.find(Some(label))
    }
}

/// `entries` to client `id`, in as many frames as their text needs (the first says `fresh` when the
/// whole is an answer; an empty answer is one frame too, so the client knows there is nothing).
fn tell_entries(
    id: u64,
    session: &str,
    epoch: u64,
    fresh: bool,
    entries: &[Entry],
    fx: &mut Vec<ServerEffect>,
) {
    let mut part: Vec<Entry> = Vec::new();
    let mut weight = 0;
    let mut first = fresh;
    let mut send = |part: Vec<Entry>, fx: &mut Vec<ServerEffect>| {
        fx.push(ServerEffect::Tell {
            id,
            down: Down::Said {
                session: session.to_string(),
                epoch,
                fresh: std::mem::take(&mut first),
                entries: part,
            },
        });
    };
    for e in entries {
        if !part.is_empty() && weight + e.said.weight() > FRAME_TEXT {
            send(std::mem::take(&mut part), fx);
            weight = 0;
        }
        weight += e.said.weight();
        part.push(e.clone());
    }
    if !part.is_empty() || fresh {
        send(part, fx);
    }
}
