//! What a client without prefix keys asks of the server: a prefix key's action for the session it
//! follows, and the web view (src/web), which runs in the server's process and reaches the server
//! as a client of its own socket.

use super::serve::Server;
use super::wire::{Down, SessionCommand};
use crate::bridge::protocol::UserRequest;
use crate::event_loop::WorldEvent;

impl Server {
    pub(super) fn on_command(&mut self, id: u64, command: SessionCommand) {
        let Some(n) = self.clients.get(&id).and_then(|c| c.session) else {
            self.tell(
                id,
                Down::Error {
                    message: "a command needs a session: open one first".to_string(),
                },
            );
            return;
        };
        let request = match command {
            SessionCommand::Poke => UserRequest::Poke,
            SessionCommand::Handoff { focus } => UserRequest::Handoff { focus },
            SessionCommand::Supervision { on: true } => UserRequest::PokeOn,
            SessionCommand::Supervision { on: false } => UserRequest::PokeOff,
        };
        self.table.touch(n);
        self.to_session(n, WorldEvent::Request(request));
    }

    pub(super) fn on_web(&mut self, id: u64, listen: Option<&str>) {
        let down = match crate::web::serve_here(listen) {
            Ok(login) => Down::WebLogin {
                url: login.url,
                login: login.token,
                exposed: login.exposed,
            },
            Err(message) => Down::Error { message },
        };
        self.tell(id, down);
    }
}
