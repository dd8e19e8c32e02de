//! What reaches pi from outside its runs: keys through its terminal, commands through its bridge,
//! and signals (SIGKILL, SIGTERM, SIGSTOP and SIGCONT), and the bridge's socket dropped.

use pokeshell_core::bridge::{BridgeEvent, Command, CompactReason};
use serde_json::{Value, json};

use super::run::answer;
use super::{Out, Phase, Pi, Queued, Then, Timer};
use crate::conv::{Conv, Msg};
use crate::pi::{Faults, parse_prompt};

impl Pi {
    /// Bytes written to pi's terminal: kept there while pi does not read.
    pub fn keys(&mut self, bytes: &[u8], now: u64, conv: &mut Conv, faults: &mut Faults) -> Vec<Out> {
        self.now = now;
        if !self.alive {
            return Vec::new();
        }
        if !self.up || self.frozen {
            self.pty.extend_from_slice(bytes);
            return Vec::new();
        }
        self.read_keys(bytes, conv, faults);
        self.done()
    }

    pub(super) fn read_keys(&mut self, bytes: &[u8], conv: &mut Conv, faults: &mut Faults) {
        for &b in bytes {
            match b {
                0x1b => {
                    self.editor.clear();
                    self.abort(true, conv, faults);
                }
                b'\r' => {
                    let text = String::from_utf8_lossy(&std::mem::take(&mut self.editor)).into_owned();
                    if let Some((id, task)) = parse_prompt(&text) {
                        self.submit(id, task, conv, faults);
                    }
                }
                b => self.editor.push(b),
            }
        }
    }

    /// A command through the bridge (the world answers for a pi that is not connected).
    pub fn command(
        &mut self,
        id: u64,
        command: Command,
        now: u64,
        conv: &mut Conv,
        faults: &mut Faults,
    ) -> Vec<Out> {
        self.now = now;
        if self.frozen {
            self.held_commands.push((id, command));
            return Vec::new();
        }
        let name = command.name();
        let result: Result<Value, String> = match command {
            Command::SendMessage(m) => {
                let busy = self.run.is_some() || self.compaction.is_some();
                if busy {
                    self.queue.push(Queued::Custom(m.custom_type, m.display));
                } else {
                    conv.messages.push(Msg::Custom {
                        custom_type: m.custom_type,
                        display: m.display,
                    });
                }
                self.out
                    .push(Out::Bridge(answer(id, name, Ok(json!({ "idleBefore": !busy })))));
                if !busy && m.trigger_turn {
                    self.start_run(conv, faults);
                }
                return self.done();
            }
            Command::Abort => {
                self.abort(false, conv, faults);
                Ok(Value::Null)
            }
            Command::Compact(req) => {
                if self.run.is_some() {
                    self.abort(false, conv, faults);
                }
                if self.compaction.is_some() {
                    Err("a compaction is already running".into())
                } else {
                    self.compact(CompactReason::Manual, false, req.handoff, Then::Idle, Some(id));
                    return self.done();
                }
            }
            Command::AppendEntry { custom_type, data } => {
                conv.append_entry(custom_type, data);
                Ok(Value::Null)
            }
            Command::ToolReply(r) => {
                if matches!(&self.run, Some((Phase::ToolReply(call), _)) if *call == r.call_id) {
                    self.tool_end(r.call_id, "schedule_wakeup", r.is_error, conv);
                    self.out.push(Out::Bridge(answer(id, name, Ok(Value::Null))));
                    self.turn_over(conv, faults);
                    return self.done();
                }
                Ok(Value::Null)
            }
            Command::AskModel { .. } => Ok(json!({ "answer": "STEP", "inputTokens": 40, "outputTokens": 1 })),
            _ => Ok(Value::Null),
        };
        self.out.push(Out::Bridge(answer(id, name, result)));
        self.done()
    }

    /// SIGKILL, SIGTERM or SIGHUP: pi ends at once (SIGTERM and SIGHUP wait while it is stopped).
    pub fn signal(&mut self, signal: i32, now: u64) -> Vec<Out> {
        self.now = now;
        if !self.alive || (self.frozen && signal != 9) {
            return Vec::new();
        }
        self.alive = false;
        // What pi never read dies with it: the prompts on its command line and in its terminal.
        let unread = String::from_utf8_lossy(&std::mem::take(&mut self.pty)).into_owned();
        for (id, _) in std::mem::take(&mut self.args_prompts) {
            self.out.push(Out::Lost(id));
        }
        for piece in unread.split('\r') {
            if let Some((id, _)) = parse_prompt(piece.trim_start_matches('\x1b')) {
                self.out.push(Out::Lost(id));
            }
        }
        if let Some(conn) = self.conn.take() {
            self.out.push(Out::Bridge(BridgeEvent::Disconnected {
                conn,
                reason: "pi exited".into(),
            }));
        }
        self.out.push(Out::Exit {
            code: 128 + signal,
            signal: Some(signal),
        });
        self.done()
    }

    pub fn freeze(&mut self) {
        if self.alive {
            self.frozen = true;
        }
    }

    /// SIGCONT: what came meanwhile is handled now, in order.
    pub fn thaw(&mut self, now: u64, conn: &mut u64, conv: &mut Conv, faults: &mut Faults) -> Vec<Out> {
        if !self.alive || !self.frozen {
            return Vec::new();
        }
        self.frozen = false;
        let mut out = Vec::new();
        for timer in std::mem::take(&mut self.held) {
            out.extend(self.timer(timer, now, conn, conv, faults));
        }
        for (id, command) in std::mem::take(&mut self.held_commands) {
            out.extend(self.command(id, command, now, conv, faults));
        }
        let typed = std::mem::take(&mut self.pty);
        out.extend(self.keys(&typed, now, conv, faults));
        out
    }

    /// pokeshell dropped the bridge's socket: the bridge connects again a moment later and sends
    /// what it kept meanwhile.
    pub fn drop_bridge(&mut self, now: u64) -> Vec<Out> {
        self.now = now;
        if let Some(conn) = self.conn.take() {
            self.out.push(Out::Bridge(BridgeEvent::Disconnected {
                conn,
                reason: "dropped on request (SIGUSR1)".into(),
            }));
            let later = self.rng.range(200, 2_000);
            self.after(later, Timer::Reconnect);
        }
        self.done()
    }

    /// Whether pi is compacting (the world checks what pokeshell sends meanwhile).
    pub fn compacting(&self) -> bool {
        self.compaction.is_some()
    }
}
