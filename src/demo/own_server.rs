//! The demo's server of its own: the ordinary `pokeshell __server`, started with its server
//! directory (`POKESHELL_SERVER_DIR`) and `XDG_STATE_HOME` inside one private directory of the
//! demo's (`<temp>/pokeshell-demo-…/server` and `…/state`). Its socket, token, log and saved list
//! stay there, so the demo never touches the user's server or the sessions it keeps. (Its bridges'
//! sockets stay in the usual runtime dir, as every session's: a socket path must stay short.) The
//! demo's session makes its throw-away environment in that directory too; the directory is removed
//! when this is dropped.

use std::io;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::env::fresh_private_dir;
use crate::client::connect;
use crate::client::deadline::ServerState;
use crate::ipc::socket;
use crate::pi::bridge::runtime_dir;

/// How long a server that asked its pi to quit may take to end: pi's grace before it is killed,
/// and the server's wait for its clients to read their last message, with room to spare.
const END_LIMIT: Duration = Duration::from_secs(10);
/// After pi exited by itself the server ends at once; it gets this long before it is told to.
const SETTLE: Duration = Duration::from_secs(3);

/// How much of the server's log is shown when the demo failed.
const LOG_TAIL: usize = 2048;

pub struct OwnServer {
    root: PathBuf,
}

impl OwnServer {
    /// Makes the private directory (0700) with the server's runtime and state dirs in it.
    pub fn create() -> io::Result<OwnServer> {
        let me = OwnServer {
            root: fresh_private_dir(&std::env::temp_dir())?,
        };
        for dir in [me.server_dir(), me.state_home()] {
            runtime_dir::ensure_private_dir(&dir)?;
        }
        Ok(me)
    }

    /// The demo's private directory: the session's directory too.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn state_home(&self) -> PathBuf {
        self.root.join("state")
    }

    /// Where the server listens (socket, token, pid, log).
    pub fn server_dir(&self) -> PathBuf {
        self.root.join("server")
    }

    /// How the terminal reaches the server: started when none runs, then greeted.
    pub fn connector(&self) -> impl FnOnce() -> Result<UnixStream, String> + Send + 'static {
        let (dir, state) = (self.server_dir(), self.state_home());
        move || {
            let vars = [
                (socket::SERVER_DIR_ENV, dir.as_path()),
                ("XDG_STATE_HOME", state.as_path()),
            ];
            let mut stream = connect::connect_or_start_in(&dir, &vars)?;
            connect::hello_in(&mut stream, &dir)?;
            Ok(stream)
        }
    }

    /// The end of the server's log (its last 2 KiB), if it wrote one.
    pub fn log_tail(&self) -> Option<String> {
        let bytes = std::fs::read(self.server_dir().join("log")).ok()?;
        let tail = &bytes[bytes.len().saturating_sub(LOG_TAIL)..];
        let text = String::from_utf8_lossy(tail).trim().to_string();
        (!text.is_empty()).then_some(text)
    }

    /// The server's process, while it runs.
    fn running(&self) -> Option<i32> {
        match ServerState::of(socket::server_pid_in(&self.server_dir())) {
            ServerState::Gone => None,
            ServerState::Running(pid) | ServerState::Stopped(pid) => Some(pid),
        }
    }

    /// Waits until the server is gone, at most `limit`; true when it is.
    fn gone_within(&self, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        while self.running().is_some() {
            if Instant::now() >= until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }

    /// Sees the server gone. `pi_exited`: the session ended by itself and the server is ending
    /// with it; otherwise (a detach, a lost terminal, a signal) it is told to end as any server is
    /// (SIGTERM: pi is asked to quit, and killed after a grace). False: it would not end.
    pub fn end(&self, pi_exited: bool) -> bool {
        if pi_exited && self.gone_within(SETTLE) {
            return true;
        }
        let Some(pid) = self.running() else {
            return true;
        };
        // SAFETY: kill with a pid read from the demo's own server's pid file, checked running.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        if self.gone_within(END_LIMIT) {
            return true;
        }
        if let Some(pid) = self.running() {
            // SAFETY: as above; its pi was killed by its own loop after the grace.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        self.gone_within(Duration::from_secs(1))
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
