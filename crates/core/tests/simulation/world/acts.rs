//! A history's steps, done to the world: what a person at a terminal does, and the faults.

use pokeshell_core::server::state::ServerEvent;
use pokeshell_core::wire::{Target, Up};

use super::{Ev, World};
use crate::history::Act;
use crate::pi::prompt_text;

impl World {
    /// The `i`-th session that runs (taken modulo how many do).
    fn nth_session(&self, i: u8) -> Option<u32> {
        let sims = &self.server.as_ref()?.sims;
        let n = sims.len();
        (n > 0).then(|| *sims.keys().nth(i as usize % n).expect("in range"))
    }

    fn nth_client(&self, i: u8, following: bool) -> Option<(u64, Option<u32>)> {
        let clients: Vec<(u64, Option<u32>)> = self
            .clients
            .iter()
            .filter(|(_, c)| !following || c.following.is_some())
            .map(|(id, c)| (*id, c.following))
            .collect();
        (!clients.is_empty()).then(|| clients[i as usize % clients.len()])
    }

    /// The user typed a prompt or poked: the stop of their Esc is over.
    fn user_acted(&mut self, number: u32) {
        if let Some(sim) = self.sim(number) {
            sim.check.user_acted();
            let file = sim.pi.file.clone();
            self.check.stopped.remove(&file);
        }
    }

    fn type_keys(&mut self, id: u64, bytes: &[u8]) {
        let up = Up::Input(bytes.to_vec());
        self.server_hears(ServerEvent::Up { id, up });
    }

    pub(super) fn act(&mut self, act: Act) {
        match act {
            Act::OpenNew { dir, prompt } => {
                let mut args = vec!["--".to_string()];
                if let Some(task) = prompt {
                    let id = self.next_prompt;
                    self.next_prompt += 1;
                    args.push(prompt_text(id, task));
                    self.check.typed(id);
                }
                self.open_client(Target::New {
                    name: None,
                    dir: format!("/w/d{dir}"),
                    args,
                    base: None,
                });
            }
            Act::Attach { session } => {
                let known = self
                    .server
                    .as_ref()
                    .map(|_| self.nth_session(session))
                    .unwrap_or_else(|| self.disk.as_ref().and_then(|l| l.first()).map(|s| s.spec.number));
                if let Some(n) = known {
                    self.open_client(Target::Attach {
                        name: Some(n.to_string()),
                    });
                }
            }
            Act::Detach { client } => {
                if let Some((id, _)) = self.nth_client(client, true) {
                    self.server_hears(ServerEvent::Up { id, up: Up::Detach });
                }
            }
            Act::Close { client } => {
                if let Some((id, _)) = self.nth_client(client, false) {
                    self.client_leaves(id);
                }
            }
            Act::Prompt { client, task } => {
                let Some((id, Some(number))) = self.nth_client(client, true) else {
                    return;
                };
                let editable = self.sim(number).is_some_and(|s| s.pi.editable());
                if !editable {
                    return self.count("prompt not typed: pi was busy");
                }
                let prompt = self.next_prompt;
                self.next_prompt += 1;
                self.check.typed(prompt);
                self.user_acted(number);
                self.count("prompt typed");
                let text = format!("{}\r", prompt_text(prompt, task));
                self.type_keys(id, text.as_bytes());
            }
            Act::Esc { client } => {
                if let Some((id, _)) = self.nth_client(client, true) {
                    self.count("Esc typed");
                    self.type_keys(id, b"\x1b");
                }
            }
            Act::Poke { client } => {
                if let Some((id, Some(number))) = self.nth_client(client, true) {
                    self.user_acted(number);
                    self.count("manual poke");
                    self.type_keys(id, b"\x1dp");
                }
            }
            Act::Kill { session } => {
                if let Some(n) = self.nth_session(session) {
                    if let Some(sim) = self.sim(n) {
                        sim.killed = true;
                    }
                    self.count("pokeshell kill");
                    let id = self.connect_client();
                    self.server_hears(ServerEvent::Up {
                        id,
                        up: Up::Kill {
                            name: n.to_string(),
                            from: None,
                        },
                    });
                }
            }
            Act::Stall { session } => {
                if let Some(n) = self.nth_session(session) {
                    self.faults.entry(n).or_default().stall_next = true;
                }
            }
            Act::Provider {
                session,
                status,
                reset_s,
                lasts_s,
            } => {
                if let Some(n) = self.nth_session(session) {
                    let until = self.now + lasts_s * 1_000;
                    self.faults.entry(n).or_default().outage = Some((status, reset_s, until));
                }
            }
            Act::Compact { session, how } => {
                if let Some(n) = self.nth_session(session) {
                    self.faults.entry(n).or_default().compact_next = Some(how);
                }
            }
            Act::Wakeup { session, delay_s } => {
                if let Some(n) = self.nth_session(session) {
                    self.faults.entry(n).or_default().wakeup_next = Some(delay_s);
                }
            }
            Act::KillPi { session } => {
                if let Some((n, pid)) = self
                    .nth_session(session)
                    .and_then(|n| Some((n, self.sim(n)?.pi.pid)))
                {
                    self.count("pi killed");
                    self.with_pi(n, pid, |pi, now, _, _, _| pi.signal(9, now));
                }
            }
            Act::Freeze { session, for_s } => {
                if let Some((n, pid)) = self
                    .nth_session(session)
                    .and_then(|n| Some((n, self.sim(n)?.pi.pid)))
                {
                    self.count("pi frozen");
                    if let Some(sim) = self.sim(n) {
                        sim.pi.freeze();
                    }
                    let era = self.era;
                    self.schedule(self.now + for_s * 1_000, Ev::Thaw { era, number: n, pid });
                }
            }
            Act::DropBridges => {
                self.count("bridges dropped");
                self.server_hears(ServerEvent::DropBridges);
            }
            Act::CrashServer { back_s } => {
                if self.server.is_some() {
                    self.count("server killed");
                    self.crash_server();
                    self.schedule(self.now + back_s * 1_000, Ev::ServerBack);
                }
            }
            Act::StopServer { back_s } => {
                if self.server.is_some() {
                    self.count("server stopped");
                    if let Some(s) = &mut self.server {
                        s.stopping = true;
                    }
                    self.server_hears(ServerEvent::Shutdown);
                    self.schedule(self.now + back_s * 1_000, Ev::ServerBack);
                }
            }
        }
    }
}
