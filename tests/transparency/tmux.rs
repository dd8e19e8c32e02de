//! tmux as a second reference terminal: a private tmux server (its own socket, no user config) runs
//! the command in a detached session of a fixed size; `capture-pane -e` gives the screen with SGR
//! attributes, which a vt100 parser turns back into cells. tmux answers the colour queries with the
//! colours of `window-style`, as it does when it knows its client's colours.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use portable_pty::CommandBuilder;

use super::grid::Grid;

/// The colours tmux reports: the same as the PTY reference's (`answers.rs`).
const STYLE: &str = "fg=#d0d0d0,bg=#1e1e1e";

pub struct Tmux {
    socket: String,
    /// pokeshell's own server dirs, when the command is pokeshell: ended with the session.
    _home: Option<crate::support::pty::ServerHome>,
    /// Holds the config file.
    _dir: tempfile::TempDir,
    pub rows: u16,
    pub cols: u16,
}

/// Whether tmux can be run here at all.
pub fn available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

impl Tmux {
    /// Starts `cmd` (its argv, environment and cwd; nothing else is inherited) in a `rows`×`cols`
    /// session.
    pub fn start(cmd: &CommandBuilder, rows: u16, cols: u16) -> Tmux {
        let dir = tempfile::tempdir().expect("temp dir for tmux");
        let conf = dir.path().join("tmux.conf");
        std::fs::write(
            &conf,
            format!("set -g window-style '{STYLE}'\nset -g status off\nset -g escape-time 0\n"),
        )
        .expect("write tmux.conf");
        let socket = format!("pokeshell-transparency-{}", std::process::id());
        let socket = format!(
            "{socket}-{}",
            dir.path()
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        );
        let cwd: PathBuf = cmd.get_cwd().map(PathBuf::from).expect("the command has a cwd");
        let mut env_args: Vec<String> = vec!["env".into(), "-i".into()];
        env_args.extend(cmd.iter_extra_env_as_str().map(|(k, v)| format!("{k}={v}")));
        let pokeshell = cmd
            .get_argv()
            .first()
            .and_then(|a| std::path::Path::new(a).file_name())
            .is_some_and(|n| n == "pokeshell");
        let home = pokeshell.then(crate::support::pty::ServerHome::new);
        if let Some(home) = &home {
            env_args.push(format!("XDG_RUNTIME_DIR={}", home.runtime_dir().display()));
            env_args.push(format!("XDG_STATE_HOME={}", home.state_dir().display()));
        }
        env_args.extend(cmd.get_argv().iter().map(|a| a.to_string_lossy().into_owned()));
        let tmux = Tmux {
            socket,
            _home: home,
            _dir: dir,
            rows,
            cols,
        };
        let mut args: Vec<String> = vec!["-f".into(), conf.to_string_lossy().into_owned()];
        args.extend(
            [
                "new-session",
                "-d",
                "-x",
                &cols.to_string(),
                "-y",
                &rows.to_string(),
                "-c",
                &cwd.to_string_lossy(),
                "--",
            ]
            .map(String::from),
        );
        args.extend(env_args);
        tmux.run(&args);
        tmux
    }

    fn run(&self, args: &[String]) -> Output {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("run tmux");
        assert!(
            out.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn run_str(&self, args: &[&str]) -> String {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        String::from_utf8_lossy(&self.run(&args).stdout).into_owned()
    }

    /// Types `text` (literally).
    pub fn send(&self, text: &str) {
        self.run_str(&["send-keys", "-l", "--", text]);
    }

    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.rows = rows;
        self.cols = cols;
        self.run_str(&["resize-window", "-x", &cols.to_string(), "-y", &rows.to_string()]);
    }

    /// The whole screen as cells, and the cursor.
    pub fn screen(&self) -> Grid {
        let text = self.run_str(&["capture-pane", "-p", "-e", "-N"]);
        let mut parser = vt100::Parser::new(
            std::num::NonZeroU16::new(self.rows.max(1)).expect("non-zero"),
            std::num::NonZeroU16::new(self.cols.max(1)).expect("non-zero"),
            0,
        );
        let body = text.strip_suffix('\n').unwrap_or(&text);
        for (i, line) in body.split('\n').enumerate() {
            // capture-pane carries attributes over from one line to the next.
            parser.process(format!("\x1b[{};1H{line}", i + 1).as_bytes());
        }
        let mut grid = Grid::capture(parser.screen(), self.rows, self.cols);
        let cursor = self.run_str(&["display-message", "-p", "#{cursor_flag} #{cursor_y} #{cursor_x}"]);
        let nums: Vec<u16> = cursor.split_whitespace().filter_map(|n| n.parse().ok()).collect();
        grid.cursor = match nums[..] {
            [1, row, col] => Some((row, col)),
            _ => None,
        };
        grid
    }

    /// Polls the screen until `done` holds for it; `None` on timeout.
    pub fn wait(&self, timeout: Duration, done: impl Fn(&Grid) -> bool) -> Option<Grid> {
        let deadline = Instant::now() + timeout;
        loop {
            let grid = self.screen();
            if done(&grid) {
                return Some(grid);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}
