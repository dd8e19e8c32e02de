//! The server's side, performed as `server::perform` does: clients told and followed, sessions
//! started and signalled, the saved list written by a saver that answers a moment later. The server
//! starts when a client finds none (and reads the saved list then), and ends when its core is done.

use pokeshell_core::server::restore_plan::Found;
use pokeshell_core::server::state::{ClientMsg, ServerEffect, ServerEvent, ServerState, SessionMsg, Signal};
use pokeshell_core::session::Input;
use pokeshell_core::wire::{Down, Target, Up};

use super::{Client, Ev, Server, World, at};

impl World {
    pub fn server_hears(&mut self, event: ServerEvent) {
        let Some(server) = &mut self.server else { return };
        let effects = server.state.handle(event, at(self.now));
        for effect in effects {
            self.server_effect(effect);
        }
        if self
            .server
            .as_ref()
            .is_some_and(|s| s.state.done() && s.sims.is_empty())
        {
            self.note("the server ends".into());
            self.server = None;
            self.era += 1;
            self.clients.clear();
        }
    }

    /// A server starts (a client found none): it reads the saved list and brings its sessions back.
    fn start_server(&mut self) {
        self.note("a server starts".into());
        self.era += 1;
        let saved: Vec<_> = self
            .disk
            .clone()
            .unwrap_or_default()
            .into_iter()
            .map(|s| {
                let file = s.session_file.as_ref().map(|f| self.files.contains_key(f));
                (
                    s,
                    Found {
                        dir: Ok(()),
                        session_file: file,
                    },
                )
            })
            .collect();
        let to_restore = saved.iter().map(|(s, _)| s.spec.number).collect();
        self.server = Some(Server {
            state: ServerState::default(),
            sims: Default::default(),
            save_asked: 0,
            save_done: 0,
            to_restore,
            stopping: false,
        });
        self.server_hears(ServerEvent::Restore {
            saved,
            env: Vec::new(),
            news: Vec::new(),
        });
    }

    /// A client connects (starting the server if none runs), as `pokeshell kill` does.
    pub fn connect_client(&mut self) -> u64 {
        if self.server.is_none() {
            self.start_server();
        }
        let id = self.next_client;
        self.next_client += 1;
        self.clients.insert(id, Client { following: None });
        self.server_hears(ServerEvent::Connected { id });
        id
    }

    /// A terminal runs pokeshell: it connects and opens a session or attaches to one.
    pub fn open_client(&mut self, target: Target) -> u64 {
        let id = self.connect_client();
        let up = Up::Open {
            target,
            cols: 120,
            rows: 40,
            caps: Vec::new(),
            caps_follow: false,
            env: Vec::new(),
            watch: false,
            terminal: None,
        };
        self.server_hears(ServerEvent::Up { id, up });
        id
    }

    fn server_effect(&mut self, effect: ServerEffect) {
        match effect {
            ServerEffect::Tell { id, down } => self.told(id, down),
            ServerEffect::Follow { id, number, .. } => {
                if let Some(c) = self.clients.get_mut(&id) {
                    c.following = Some(number);
                }
            }
            ServerEffect::Unfollow { id, number } => {
                if let Some(c) = self.clients.get_mut(&id) {
                    c.following = None;
                }
                self.session_hears(number, Input::ClientLeft { client: id });
            }
            ServerEffect::ToSession { number, ev } => self.session_msg(number, ev),
            ServerEffect::Start(start) => self.start_sim(start),
            ServerEffect::SaveList { seq, list } => {
                if let Some(s) = &mut self.server {
                    s.save_asked = seq;
                }
                // One saver thread, in order: a list never lands after a newer one.
                let later = self.saver_free_at.max(self.now) + self.random(2, 60);
                self.saver_free_at = later;
                let era = self.era;
                self.schedule(later, Ev::Saved { era, seq, list });
            }
            ServerEffect::Forget { id } => {
                self.clients.remove(&id);
            }
            ServerEffect::Log(line) => self.note(format!("server log: {line}")),
            ServerEffect::RunNotifyCommand(_) => self.count("notify command run"),
            _ => {}
        }
    }

    /// What a client is told: an end of its session, a detach or an error ends the client.
    fn told(&mut self, id: u64, down: Down) {
        let ends = matches!(
            down,
            Down::Exited { .. } | Down::Detached { .. } | Down::Error { .. }
        );
        if let Down::Error { message } = &down {
            self.note(format!("client {id} told: {message}"));
        }
        if ends || matches!(down, Down::Done { .. }) {
            if let Some(c) = self.clients.get_mut(&id) {
                c.following = None;
            }
            let era = self.era;
            self.schedule(self.now + 5, Ev::ClientGone { era, id });
        }
    }

    fn session_msg(&mut self, number: u32, ev: SessionMsg) {
        match ev {
            SessionMsg::Signal(Signal::Term) => {
                let Some(sim) = self.sim(number) else { return };
                sim.shutting_down = true;
                let pid = sim.pi.pid;
                let alive = sim.pi.alive;
                if !alive {
                    let code = 1;
                    return self.end_session(number, code, true);
                }
                let era = self.era;
                self.with_pi(number, pid, |pi, now, _, _, _| pi.signal(15, now));
                self.schedule(self.now + 5_000, Ev::KillDue { era, number, pid });
            }
            SessionMsg::Signal(Signal::Usr1) => {
                let Some(pid) = self.sim(number).map(|s| s.pi.pid) else {
                    return;
                };
                self.with_pi(number, pid, |pi, now, _, _, _| pi.drop_bridge(now));
            }
            SessionMsg::Notice(text) => self.session_hears(
                number,
                Input::Notice {
                    text,
                    tone: pokeshell_core::ui::theme::Tone::Warn,
                },
            ),
            SessionMsg::Sessions(briefs) => self.session_hears(number, Input::Sessions(briefs)),
            SessionMsg::Request(request) => self.session_hears(number, Input::Request(request)),
            SessionMsg::Drive(msg) => self.session_hears(number, Input::Drive(msg)),
            SessionMsg::Away(answer) => self.session_hears(number, Input::Away(answer)),
            SessionMsg::Client(ClientMsg::Input { id, bytes }) => {
                self.session_hears(number, Input::Stdin { client: id, bytes });
                self.session_hears(number, Input::InputIdle { client: id });
            }
            SessionMsg::Guard(order) => self.session_hears(number, Input::Guard(order)),
            SessionMsg::Client(_) => {}
        }
    }

    /// SIGKILL to the server: its pis lose their terminal (SIGHUP) and die with what they did not
    /// save; its clients lose their connection and end. Saves not yet on disk are lost.
    pub fn crash_server(&mut self) {
        let Some(server) = self.server.take() else { return };
        self.note("the server is killed".into());
        self.era += 1;
        for (number, mut sim) in server.sims {
            // SIGHUP; one stopped (SIGSTOP) keeps it pending, and is no one's any more: either way
            // nothing it did not read will reach the model.
            let out = sim.pi.signal(9, self.now);
            for o in out {
                if let crate::pi::Out::Lost(p) = o {
                    self.check.lost(p);
                }
            }
            let _ = number;
        }
        self.clients.clear();
    }

    /// A terminal's `pokeshell` client ends on its own (the connection closes).
    pub fn client_leaves(&mut self, id: u64) {
        if self.clients.remove(&id).is_some() {
            self.server_hears(ServerEvent::Gone { id });
        }
    }
}
