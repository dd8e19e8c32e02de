//! A session's loop as the binary runs it: inputs in, effects performed (keys to pi, commands to its
//! bridge, relaunches, notes for the server), and the observer's report to the server after each
//! input that may change it.

use pokeshell_core::bridge::{BridgeEvent, Command, PiEvent};
use pokeshell_core::server::state::{Report, ServerEvent, SessionStart};
use pokeshell_core::session::{Effect, Input, Session, SessionOptions};

use super::{Ev, Sim, World, at};
use crate::check::SessionCheck;
use crate::pi::{Out, Pi};

const BRIDGE_ARGS: [&str; 2] = ["-e", "/sim/bridge.ts"];

fn settings() -> pokeshell_core::config::Settings {
    let paths = pokeshell_core::config::ConfigPaths::resolve(
        Some(std::path::Path::new("/sim/no-home")),
        None,
        std::path::Path::new("/sim/no-work"),
    )
    .expect("paths");
    pokeshell_core::config::Settings::from_loaded(paths, Vec::new())
}

/// pi's arguments in a pokeshell command line (after `--`), with the bridge's first.
fn pi_args(argv: &[String]) -> Vec<String> {
    let mut args: Vec<String> = BRIDGE_ARGS.iter().map(|s| s.to_string()).collect();
    args.extend(argv.iter().skip_while(|a| *a != "--").skip(1).cloned());
    args
}

fn session_file(args: &[String]) -> Option<String> {
    args.iter()
        .position(|a| a == "--session")
        .and_then(|i| args.get(i + 1).cloned())
}

impl World {
    /// The server asked for a session's thread: the session is built and its pi spawned.
    pub(super) fn start_sim(&mut self, start: SessionStart) {
        let number = start.spec.number;
        let args = pi_args(&start.spec.argv);
        let opts = SessionOptions {
            label: "pi".into(),
            bridge: Some(Ok(())),
            ledger_path: None,
            host_kitty: false,
            child_args: args.clone(),
            spec: start.spec.clone(),
        };
        let now = at(self.now);
        let mut session = Session::new(opts, settings(), start.cols, start.rows, now);
        session.handle(Input::LocalTime { utc_offset_secs: 0 }, now);
        let pi = self.spawn_pi(number, &args, &start.spec.dir);
        let pid = pi.0.pid;
        let stopped = self.check.stopped.contains(&pi.0.file);
        let sim = Sim {
            session,
            pi: pi.0,
            respawn: None,
            shutting_down: false,
            killed: false,
            report: None,
            check: SessionCheck::new(stopped),
            heard: false,
            deadline: None,
        };
        self.note(format!("session {number} starts: pi {pid} {args:?}"));
        if let Some(server) = &mut self.server {
            server.to_restore.remove(&number);
            server.sims.insert(number, sim);
        }
        self.pi_out(number, pid, pi.1);
        self.session_hears(number, Input::ChildStarted { pid });
        self.server_hears(ServerEvent::Started {
            number,
            result: Ok(()),
        });
    }

    fn spawn_pi(&mut self, number: u32, args: &[String], dir: &str) -> (Pi, Vec<Out>) {
        let pid = self.new_pid();
        let file = session_file(args).unwrap_or_else(|| self.new_file(dir));
        self.files.entry(file.clone()).or_default();
        let seed = self.random(0, u64::MAX);
        let _ = number;
        Pi::spawn(pid, args, file, seed)
    }

    /// One input for session `number`, its effects performed, then its report looked at.
    pub fn session_hears(&mut self, number: u32, input: Input) {
        let now = at(self.now);
        // As the server's observer: keys say nothing of the run; nor (here) does the stream's
        // progress or the bridge's heartbeat, which change nothing a report holds.
        let observe = !matches!(
            input,
            Input::Stdin { .. }
                | Input::InputIdle { .. }
                | Input::Bridge(BridgeEvent::Heartbeat { .. })
                | Input::Bridge(BridgeEvent::Event {
                    event: PiEvent::Progress(_),
                    ..
                })
        );
        let Some(sim) = self.sim(number) else { return };
        if let Input::Bridge(ev) = &input {
            sim.check.heard(ev);
            if matches!(ev, BridgeEvent::Connected { .. }) {
                sim.heard = true;
            }
        }
        if let Input::ChildStarted { .. } = &input {
            sim.check.child_started();
        }
        let effects = sim.session.handle(input, now);
        sim.deadline = sim.session.next_deadline(now);
        for effect in effects {
            self.effect(number, effect);
        }
        if observe {
            self.observe(number);
        }
    }

    fn observe(&mut self, number: u32) {
        let now = at(self.now);
        let Some(sim) = self.sim(number) else { return };
        let mut report = Report {
            brief: Some(sim.session.brief(now)),
            base: sim.session.base().map(str::to_string),
            real_dir: sim.session.real_dir().map(str::to_string),
            session_file: sim.session.pi_session_file().map(str::to_string),
            mid_run: sim.session.mid_run(),
            drive: sim.session.drive_marks(),
            at_ms: 0,
            need: sim.session.need(now),
            finished: sim.session.finished().clone(),
            push: sim.session.push_policy(),
        };
        // Compared without its time, as the binary's observer does.
        if sim.report.as_ref() != Some(&report) {
            sim.report = Some(report.clone());
            report.at_ms = now.wall_ms;
            self.count("reports");
            self.server_hears(ServerEvent::Report { number, report });
        }
    }

    pub fn sim(&mut self, number: u32) -> Option<&mut Sim> {
        self.server.as_mut().and_then(|s| s.sims.get_mut(&number))
    }

    fn effect(&mut self, number: u32, effect: Effect) {
        let now = self.now;
        match effect {
            Effect::ToChild(bytes) => {
                let era = self.era;
                self.schedule(now + 1, Ev::Keys { era, number, bytes });
            }
            Effect::Bridge { id, command } => self.command(number, id, command),
            Effect::Respawn { args } => {
                let Some(sim) = self.sim(number) else { return };
                if sim.shutting_down {
                    return;
                }
                sim.respawn = Some(args);
                let (alive, pid) = (sim.pi.alive, sim.pi.pid);
                if alive {
                    let era = self.era;
                    self.with_pi(number, pid, |pi, now, _, _, _| pi.signal(15, now));
                    self.schedule(now + 3_000, Ev::KillDue { era, number, pid });
                } else {
                    self.start_again(number);
                }
            }
            Effect::Ledger(record) => {
                let text = format!("ledger {} {:?}: {}", record.rule, record.kind, record.reason);
                self.note(format!("session {number}: {text}"));
                if let Some(sim) = self.sim(number) {
                    let verdict = sim.check.ledger(&record);
                    if let Err(e) = verdict {
                        self.check.fail(format!("session {number}: {e}"));
                    }
                }
            }
            Effect::Notify { text, bell, desktop } => self.server_hears(ServerEvent::Notify {
                number,
                text,
                bell,
                desktop,
                command: String::new(),
            }),
            Effect::Workspace { client, req } => self.server_hears(ServerEvent::Request { id: client, req }),
            // The guard rails that span sessions (GUARD-B2, GUARD-K1..K3): the server's core decides.
            Effect::Guard(note) => self.server_hears(ServerEvent::Guard { number, note }),
            Effect::Drive(out) => self.server_hears(ServerEvent::Drive { number, out }),
            // Read off the loop's thread in the binary: the answer comes after this input's effects.
            Effect::LoadSettings(_) => {
                let era = self.era;
                self.schedule(now + 2, Ev::SettingsLoaded { era, number });
            }
            _ => {}
        }
    }

    /// A bridge command: a pi that is not connected is answered by the bridge server, with an error.
    fn command(&mut self, number: u32, id: u64, command: Command) {
        let Some(sim) = self.sim(number) else { return };
        if let Command::SendMessage(m) = &command
            && let Err(e) = sim.check.sent(m)
        {
            self.check.fail(format!("session {number}: {e}"));
            return;
        }
        let era = self.era;
        self.schedule(
            self.now + 1,
            Ev::Command {
                era,
                number,
                id,
                command,
            },
        );
    }

    /// A command reaches the bridge: a pi that is not connected is answered by the bridge server,
    /// with an error.
    pub(super) fn deliver_command(&mut self, number: u32, id: u64, command: Command) {
        let Some(sim) = self.sim(number) else { return };
        let reachable = sim.pi.socket_open();
        let pid = sim.pi.pid;
        if let Command::SendMessage(_) = &command
            && reachable
            && sim.pi.compacting()
        {
            self.count("message reached pi while it compacted, unannounced");
        }
        if !reachable {
            let name = command.name();
            let reply = crate::pi::answer(id, name, Err("the bridge is not connected".into()));
            return self.session_hears(number, Input::Bridge(reply));
        }
        self.with_pi(number, pid, |pi, now, _, conv, faults| {
            pi.command(id, command, now, conv, faults)
        });
    }

    /// What pi did, delivered.
    pub fn pi_out(&mut self, number: u32, pid: i32, out: Vec<Out>) {
        for o in out {
            match o {
                Out::Bridge(ev) => {
                    if let BridgeEvent::Event {
                        event: PiEvent::AgentSettled(s),
                        ..
                    } = &ev
                    {
                        let label = if s.aborted { "settled (aborted)" } else { "settled" };
                        self.note(format!("session {number}: pi {label}"));
                    }
                    self.session_hears(number, Input::Bridge(ev));
                }
                Out::After(ms, timer) => {
                    let era = self.era;
                    self.schedule(
                        self.now + ms,
                        Ev::Pi {
                            era,
                            number,
                            pid,
                            timer,
                        },
                    );
                }
                Out::Exit { code, signal } => self.child_exited(number, pid, code, signal),
                Out::Delivered(prompt) => {
                    let file = self.sim(number).map(|s| s.pi.file.clone()).unwrap_or_default();
                    let copies = self.files.get(&file).map_or(0, |c| c.count_prompt(prompt));
                    self.check.delivered(prompt, copies);
                    self.note(format!("session {number}: prompt {prompt} reached the model"));
                }
                Out::UserStopped => {
                    let file = self.sim(number).map(|s| s.pi.file.clone()).unwrap_or_default();
                    self.check.stopped.insert(file);
                    if let Some(sim) = self.sim(number) {
                        sim.check.stopped = true;
                    }
                }
                Out::Lost(prompt) => self.check.lost(prompt),
            }
        }
    }

    /// pi exited: a relaunch goes on, otherwise the session hears it (and may relaunch pi itself),
    /// or it ends.
    fn child_exited(&mut self, number: u32, pid: i32, code: i32, signal: Option<i32>) {
        let Some(sim) = self.sim(number) else { return };
        if sim.pi.pid != pid {
            return;
        }
        let shutting_down = sim.shutting_down;
        let respawn = sim.respawn.is_some();
        let work_left = sim.session.work_left() && (code != 0 || signal.is_some()) && !sim.killed;
        self.note(format!("session {number}: pi {pid} exited ({code})"));
        if shutting_down {
            return self.end_session(number, code, true);
        }
        if respawn {
            return self.start_again(number);
        }
        self.session_hears(number, Input::ChildExited { code, signal });
        let Some(sim) = self.sim(number) else { return };
        if !sim.pi.alive {
            // A night's work must not end with pi: a death while a run or a planned step was
            // under way is a relaunch (RST-D1; soak seed 20261203), unless the session said why
            // not (RST-B1).
            if work_left && !sim.check.restart_refused {
                self.check.fail(format!(
                    "session {number}: pi died ({code}, signal {signal:?}) with work left, and the session ended"
                ));
            }
            self.end_session(number, code, false);
        }
    }

    fn start_again(&mut self, number: u32) {
        let Some(args) = self.sim(number).and_then(|s| s.respawn.take()) else {
            return;
        };
        let dir = String::new();
        let pi = self.spawn_pi(number, &args, &dir);
        let pid = pi.0.pid;
        self.note(format!("session {number}: pi relaunched as {pid} {args:?}"));
        if let Some(sim) = self.sim(number) {
            sim.pi = pi.0;
            sim.heard = false;
        }
        self.count("pi relaunched by its session");
        self.pi_out(number, pid, pi.1);
        self.session_hears(number, Input::ChildStarted { pid });
    }

    pub(super) fn end_session(&mut self, number: u32, code: i32, shutdown: bool) {
        let Some(server) = &mut self.server else { return };
        if server.sims.remove(&number).is_none() {
            return;
        }
        self.note(format!("session {number} ended ({code})"));
        self.server_hears(ServerEvent::Ended {
            number,
            code,
            shutdown,
            farewell: Vec::new(),
        });
    }
}
