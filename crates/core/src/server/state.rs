//! The server's state without any I/O, like [`crate::session::Session`] for a session: events and
//! the time in, [`ServerEffect`]s out. It alone knows the clients, the sessions, which client
//! follows which session, the clients' sizes, the sessions' names and what the saved list holds.
//! Connections, session threads, the socket and the disk only perform its effects
//! ([`super::perform`]).

mod away;
#[cfg(test)]
mod away_tests;
mod clients;
mod drive;
#[cfg(test)]
mod drive_end_tests;
mod drive_news;
#[cfg(test)]
mod drive_tests;
mod events;
mod guards;
#[cfg(test)]
mod guards_tests;
mod lifecycle;
#[cfg(test)]
mod lifecycle_tests;
mod restore_queue;
#[cfg(test)]
mod restore_tests;
mod review;
#[cfg(test)]
mod review_tests;
mod saved;
mod talk;
#[cfg(test)]
mod talk_tests;
#[cfg(test)]
mod tests;
mod to_session;
#[cfg(test)]
mod web_tests;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

pub use self::events::{Report, ServerEffect, ServerEvent, SessionStart};
pub(crate) use self::saved::options_only;
pub use self::saved::relaunch_argv;
pub use crate::spec::SessionSpec;

pub use self::to_session::{AwayAnswer, ClientMsg, SessionMsg, Signal};
use super::notes::AwayNote;
use super::table::Table;
use crate::server::saved_session::SavedSession;
use crate::supervisor::Now;
use crate::wire::Down;

/// The size of a session started with nobody attached, until a client comes.
pub const DETACHED_SIZE: (u16, u16) = (120, 40);
/// At most this much typed ahead while a session starts is kept for it (a paste, say); the rest is
/// dropped and the log says so.
pub const TYPE_AHEAD_MAX: usize = 64 << 10;
/// Why a session's clients are detached when the server ends.
pub const SHUTTING_DOWN: &str = "the pokeshell server is shutting down";

pub(super) struct Client {
    pub(super) session: Option<u32>,
    pub(super) cols: u16,
    pub(super) rows: u16,
    pub(super) caps: Vec<u8>,
    /// The terminal's answers are still coming ([`Up::Caps`]).
    pub(super) caps_pending: bool,
    pub(super) env: Vec<(String, String)>,
    /// Only watching ([`Up::Open`]'s `watch`): its size does not shrink the pane.
    pub(super) watch: bool,
    /// Keys typed while the session it opened is still starting: they go to it once it runs.
    pub(super) typed_ahead: Vec<u8>,
}

/// A session's thread, as far as the server knows.
#[derive(Debug, PartialEq)]
pub(super) enum Run {
    /// Asked to start; these clients follow it once it runs.
    Starting {
        waiting: Vec<u64>,
    },
    Running,
}

#[derive(Default)]
pub struct ServerState {
    pub(super) table: Table,
    pub(super) runs: BTreeMap<u32, Run>,
    pub(super) clients: BTreeMap<u64, Client>,
    /// Sessions being ended by `pokeshell kill`: gone for good once they end.
    pub(super) killing: BTreeSet<u32>,
    /// The terminal capabilities the last client brought, for sessions started with nobody there.
    pub(super) last_caps: Vec<u8>,
    /// The server's environment, for sessions started with no client's.
    pub(super) env: Vec<(String, String)>,
    pub(super) shutting_down: bool,
    /// What was last asked to be saved, and under which number.
    saved: Option<Vec<SavedSession>>,
    save_seq: u64,
    saved_seq: u64,
    /// Answers that wait for a save to be on disk: (save number, client, answer).
    after_save: Vec<(u64, u64, Down)>,
    /// A restore happened: saving is meaningful only after the old list was read.
    restored: bool,
    /// A client came or a session ran: a server with nothing left after that is done (before it,
    /// the client that started the server is still on its way).
    served: bool,
    /// The other machines' sessions (`remote_list`), listed after this machine's.
    pub(super) remote: Vec<crate::session::SessionBrief>,
    /// What happened without anyone asking (a saved list set aside, a session not brought back as
    /// it was), for the next client that opens, lists or kills: told once.
    pub(super) news: Vec<String>,
    /// A note for a restored session's footer, given once it runs.
    pub(super) footer_notes: BTreeMap<u32, String>,
    /// Saved sessions still being brought back (those starting and those queued).
    pub(super) restoring: BTreeSet<u32>,
    /// Saved sessions waiting their turn to start ([`super::restore_plan::RESTORE_PARALLEL`] at once).
    pub(super) restore_queue: VecDeque<SessionStart>,
    /// Saved sessions past [`super::restore_plan::MAX_SESSIONS`]: not brought back, kept in the list.
    pub(super) left_over: Vec<SavedSession>,
    /// The web view listens (it runs in this process, for as long as the server does).
    web: bool,
    /// Clients told the list whenever it changes and every notification ([`Up::Subscribe`]).
    pub(super) subscribers: BTreeSet<u64>,
    /// The wall clock of the last event, for the lists told to subscribers.
    wall_ms: u64,
    /// The events that need the person, and who is where (`server::away`).
    pub(super) away: super::away::Away,
    /// The day's budget across every session (GUARD-B2).
    pub(super) daily: crate::server::guards::daily::DailyBudget,
    /// The circuit breaker across sessions (GUARD-K1..K3).
    pub(super) breakers: crate::server::guards::breaker::Breakers,
    /// Each session's conversation, as its loop heard it (`talk`).
    pub(super) talks: BTreeMap<u32, crate::talk::Talk>,
    /// Clients told each new item of a session's conversation ([`crate::wire::Up::Talk`]).
    pub(super) talkers: BTreeMap<u64, u32>,
    /// Those who drive sessions: messages on their way, waits, reads, event followers.
    pub(super) drive: drive::Drive,
}

impl ServerState {
    pub fn handle(&mut self, ev: ServerEvent, now: Now) -> Vec<ServerEffect> {
        let mut fx = Vec::new();
        self.wall_ms = now.wall_ms;
        match ev {
            ServerEvent::Connected { id } => {
                self.served = true;
                self.clients.insert(
                    id,
                    Client {
                        session: None,
                        cols: 80,
                        rows: 24,
                        caps: Vec::new(),
                        caps_pending: false,
                        env: Vec::new(),
                        watch: false,
                        typed_ahead: Vec::new(),
                    },
                );
            }
            ServerEvent::Up { id, up } => self.on_up(id, up, now, &mut fx),
            ServerEvent::Typed { id } => {
                if let Some(n) = self.clients.get(&id).and_then(|c| c.session) {
                    self.table.touch(n);
                    self.away.typed(id, n, now);
                }
            }
            ServerEvent::Input { id, bytes } => {
                if let Some(n) = self.clients.get(&id).and_then(|c| c.session) {
                    self.away.typed(id, n, now);
                }
                self.input(id, bytes, &mut fx)
            }
            ServerEvent::Garbage { id, reason } => {
                let message = format!("the server dropped this client: {reason}");
                fx.push(ServerEffect::Tell {
                    id,
                    down: Down::Error { message },
                });
                self.forget(id, &mut fx);
            }
            ServerEvent::Gone { id } => self.forget(id, &mut fx),
            ServerEvent::Request { id, req } => self.on_request(id, req, now, &mut fx),
            ServerEvent::Lagged { id, bound } => self.lagged(id, bound, &mut fx),
            ServerEvent::Started { number, result } => self.started(number, result, &mut fx),
            ServerEvent::Report { number, report } => {
                self.away_report(number, &report, now, &mut fx);
                self.on_report(number, report, &mut fx)
            }
            ServerEvent::AwayTick => self.away_look(now, &mut fx),
            ServerEvent::Guard { number, note } => self.on_guard(number, note, now, &mut fx),
            ServerEvent::Ended {
                number,
                code,
                shutdown,
                farewell,
            } => {
                self.away_ended(number, code, shutdown, now, &mut fx);
                self.ended(number, code, shutdown, farewell, &mut fx)
            }
            ServerEvent::Saved { seq } => {
                self.saved_seq = self.saved_seq.max(seq);
                let (due, later) = std::mem::take(&mut self.after_save)
                    .into_iter()
                    .partition(|(s, _, _)| *s <= seq);
                self.after_save = later;
                for (_, id, down) in due {
                    fx.push(ServerEffect::Tell { id, down });
                }
            }
            ServerEvent::Restore { saved, env, news } => {
                for message in news {
                    self.say(message, &mut fx);
                }
                self.restore(saved, env, now, &mut fx);
            }
            ServerEvent::Notify {
                number,
                text,
                bell,
                desktop,
                command,
            } => {
                // Subscribers (the web view's pages) hear every session's note, shown or not.
                if bell || desktop {
                    for &id in &self.subscribers {
                        let down = Down::Note {
                            session: self.label(number),
                            text: text.clone(),
                        };
                        fx.push(ServerEffect::Tell { id, down });
                    }
                }
                if self.attached(number) > 0 {
                    return fx;
                }
                let session = self
                    .table
                    .get(number)
                    .map(|e| e.spec.name.clone())
                    .unwrap_or_default();
                let note = AwayNote {
                    text,
                    bell,
                    desktop,
                    command,
                    session,
                };
                let watching: Vec<u64> = self
                    .clients
                    .iter()
                    .filter(|(_, c)| c.session.is_some())
                    .map(|(id, _)| *id)
                    .collect();
                if watching.is_empty() {
                    fx.push(ServerEffect::RunNotifyCommand(note.clone()));
                }
                for id in watching {
                    let down = Down::Output(crate::notify::desktop(
                        &note.text_for_others(),
                        note.bell,
                        note.desktop,
                    ));
                    fx.push(ServerEffect::Tell { id, down });
                }
            }
            ServerEvent::WebListening => self.web = true,
            ServerEvent::Talk { number, said } => self.on_talk(number, said, &mut fx),
            ServerEvent::Drive { number, out } => self.on_session_answer(number, out, &mut fx),
            ServerEvent::DriveBound(bound) => self.drive.bound = bound,
            ServerEvent::DropBridges => {
                for &number in self.runs.keys() {
                    let ev = SessionMsg::Signal(Signal::Usr1);
                    fx.push(ServerEffect::ToSession { number, ev });
                }
            }
            ServerEvent::Remote(briefs) => {
                if briefs != self.remote {
                    self.remote = briefs;
                    self.share_briefs(&mut fx);
                }
            }
            ServerEvent::Shutdown => {
                if !self.shutting_down {
                    self.save(&mut fx);
                    self.shutting_down = true;
                    // Those not started yet stay saved, as they are.
                    self.drop_restore_queue(SHUTTING_DOWN, &mut fx);
                    for &number in self.runs.keys() {
                        let ev = SessionMsg::Signal(Signal::Term);
                        fx.push(ServerEffect::ToSession { number, ev });
                    }
                }
            }
        }
        // Someone left a session or a page was hidden: what waited for them may be due.
        if self.away.moved() {
            self.away_look(now, &mut fx);
        }
        fx
    }

    /// Nothing left to serve: no session, nobody connected who may ask for one (the web view, while
    /// it listens, may), and the saved list on disk.
    pub fn done(&self) -> bool {
        self.runs.is_empty()
            && self.saved_seq >= self.save_seq
            && (self.shutting_down
                || (self.served && self.table.is_empty() && self.clients.is_empty() && !self.web))
    }

    /// How many clients follow session `n` (they are counted, never kept a second time).
    pub fn attached(&self, n: u32) -> usize {
        self.clients.values().filter(|c| c.session == Some(n)).count()
    }

    /// The clients still connected.
    pub fn has_clients(&self) -> bool {
        !self.clients.is_empty()
    }

    /// "3:api", as the user sees a session named.
    pub(super) fn label(&self, n: u32) -> String {
        self.table
            .get(n)
            .map_or_else(|| n.to_string(), |e| format!("{}:{}", e.spec.number, e.spec.name))
    }

    fn on_report(&mut self, number: u32, report: Report, fx: &mut Vec<ServerEffect>) {
        let Some(e) = self.table.get_mut(number) else {
            return;
        };
        // A relaunched pi says which file it runs on only once its bridge is up: the file known
        // from before stays until then.
        if report.session_file.is_some() {
            e.session_file = report.session_file.clone();
        }
        e.mid_run = report.mid_run;
        if report.base.as_deref().is_some_and(crate::diff::is_commit_id) {
            e.spec.base = report.base.clone();
        }
        if report.real_dir.is_some() {
            e.spec.real_dir = report.real_dir.clone();
        }
        let brief_changed = report.brief.is_some() && e.brief != report.brief;
        if report.brief.is_some() {
            e.brief = report.brief.clone();
        }
        self.save(fx);
        self.drive_report(number, &report, fx);
        if brief_changed {
            self.share_briefs(fx);
        }
    }

    /// Every session hears of every other (its side pane lists them, its switcher offers them).
    /// Logs `message` and keeps it for the next client.
    pub(super) fn say(&mut self, message: String, fx: &mut Vec<ServerEffect>) {
        fx.push(ServerEffect::Log(message.clone()));
        self.news.push(message);
    }

    /// Tells client `id` what it has not heard yet; returns it, for the session the client opens.
    pub(super) fn tell_news(&mut self, id: u64, fx: &mut Vec<ServerEffect>) -> Vec<String> {
        let news = std::mem::take(&mut self.news);
        for message in &news {
            let down = Down::Notice {
                message: message.clone(),
            };
            fx.push(ServerEffect::Tell { id, down });
        }
        news
    }

    pub(super) fn share_briefs(&self, fx: &mut Vec<ServerEffect>) {
        self.publish(fx);
        let mut briefs = self.table.briefs(|n| self.attached(n));
        briefs.extend(self.remote.iter().cloned());
        for (&number, run) in &self.runs {
            if *run == Run::Running {
                let ev = SessionMsg::Sessions(briefs.clone());
                fx.push(ServerEffect::ToSession { number, ev });
            }
        }
    }
}

impl ServerState {
    /// The list as `pokeshell ls` has it, told to every subscriber: whenever a session comes, goes,
    /// changes what it says of itself or gains or loses a client.
    pub(super) fn publish(&self, fx: &mut Vec<ServerEffect>) {
        if self.subscribers.is_empty() {
            return;
        }
        let listing = self.table.listing(self.wall_ms, |n| self.attached(n));
        for &id in &self.subscribers {
            let down = Down::Listing {
                sessions: listing.clone(),
            };
            fx.push(ServerEffect::Tell { id, down });
        }
    }
}

/// A client event for a session.
pub(super) fn client_ev(number: u32, ev: ClientMsg) -> ServerEffect {
    ServerEffect::ToSession {
        number,
        ev: SessionMsg::Client(ev),
    }
}
