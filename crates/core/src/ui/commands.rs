//! The commands after the prefix key, each declared once: its key, its name, what it does and what
//! it needs. The app's dispatch, the help overlay, the footer hint and docs/keys.md all follow this
//! list, so a command cannot be added, renamed or rebound in one of them and forgotten in another.

use crate::input::key::{KeyCode, KeyEvent};

use super::theme::Tone;
use crate::input::prefix::PrefixKey;

/// What the app does for a command; it matches on this, never on key codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandId {
    ToggleSide,
    Poke,
    Handoff,
    Settings,
    Status,
    Help,
    SendPrefix,
    Cancel,
    Switcher,
    NewSession,
    SwitchTo,
    Detach,
    Allow,
    Leave,
    Changes,
}

/// The key that runs a command once the prefix was pressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandKey {
    /// A printable key, spelled as typed (one character), whatever the modifiers.
    Char(&'static str),
    Esc,
    /// The prefix key again.
    Prefix,
    /// Any digit from 1 to 9 (the command reads which from the key).
    Digit,
}

/// What must hold for a command to run; when it does not, nothing runs and the footer says why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    Nothing,
    /// pi's bridge is connected: the command asks pi to do something.
    Bridge,
}

/// What the app knows that decides whether a command may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Context {
    pub bridge_connected: bool,
}

impl Needs {
    /// Why the command cannot run now, if it cannot.
    fn unmet(self, context: Context) -> Option<&'static str> {
        match self {
            Needs::Nothing => None,
            Needs::Bridge => (!context.bridge_connected).then_some("pi's bridge is not connected"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Command {
    pub id: CommandId,
    pub key: CommandKey,
    /// One word, as the footer lists it while the prefix waits for its key.
    pub name: &'static str,
    /// One line, as the help overlay shows it.
    pub summary: &'static str,
    /// The whole story, as docs/keys.md tells it.
    pub description: &'static str,
    pub needs: Needs,
}

impl Command {
    /// The key as the help spells it, with `prefix` standing for the prefix key.
    pub const fn help_key(&self) -> &'static str {
        match self.key {
            CommandKey::Char(text) => text,
            CommandKey::Esc => "Esc",
            CommandKey::Prefix => "prefix",
            CommandKey::Digit => "1…9",
        }
    }

    /// The key as shown to the user, the prefix key spelled out.
    pub fn key_label(&self, prefix: &str) -> String {
        match self.key {
            CommandKey::Prefix => prefix.to_string(),
            _ => self.help_key().to_string(),
        }
    }

    fn matches(&self, key: &KeyEvent, prefix: PrefixKey) -> bool {
        match self.key {
            CommandKey::Char(text) => matches!(key.code, KeyCode::Char(c) if text.chars().eq([c])),
            CommandKey::Esc => key.code == KeyCode::Esc,
            CommandKey::Prefix => prefix.matches(key),
            CommandKey::Digit => matches!(key.code, KeyCode::Char('1'..='9')),
        }
    }
}

/// Every command, in the order the help and the footer list them.
pub const COMMANDS: [Command; 15] = [
    command(CommandId::ToggleSide),
    command(CommandId::Poke),
    command(CommandId::Handoff),
    command(CommandId::Settings),
    command(CommandId::Status),
    command(CommandId::Switcher),
    command(CommandId::SwitchTo),
    command(CommandId::NewSession),
    command(CommandId::Detach),
    command(CommandId::Changes),
    command(CommandId::Allow),
    command(CommandId::Leave),
    command(CommandId::Help),
    command(CommandId::SendPrefix),
    command(CommandId::Cancel),
];

/// The declaration of `id`: the one place a command's key, words and needs are written.
pub const fn command(id: CommandId) -> Command {
    match id {
        CommandId::ToggleSide => Command {
            id: CommandId::ToggleSide,
            key: CommandKey::Char("s"),
            name: "side",
            summary: "show or hide the side pane",
            description: "Show or hide the side pane. Below 100 terminal columns it starts hidden; this \
                          overrides that. pi is resized to the new pane width.",
            needs: Needs::Nothing,
        },
        CommandId::Poke => Command {
            id: CommandId::Poke,
            key: CommandKey::Char("p"),
            name: "poke",
            summary: "poke: ask the agent to pick up its work",
            description: "Manual poke: asks the agent to pick up its work (see docs/supervision.md).",
            needs: Needs::Bridge,
        },
        CommandId::Handoff => Command {
            id: CommandId::Handoff,
            key: CommandKey::Char("h"),
            name: "handoff",
            summary: "handoff: compact now with a handoff document",
            description: "Handoff: compact now with a handoff document, after an optional focus line.",
            needs: Needs::Bridge,
        },
        CommandId::Settings => Command {
            id: CommandId::Settings,
            key: CommandKey::Char("c"),
            name: "settings",
            summary: "settings",
            description: "Settings dialog (see docs/configuration.md).",
            needs: Needs::Nothing,
        },
        CommandId::Status => Command {
            id: CommandId::Status,
            key: CommandKey::Char("i"),
            name: "status",
            summary: "status: effective settings and live state",
            description: "Status: the effective settings and the supervisor's live state.",
            needs: Needs::Nothing,
        },
        CommandId::Switcher => Command {
            id: CommandId::Switcher,
            key: CommandKey::Char("w"),
            name: "sessions",
            summary: "choose a session to show",
            description: "Session switcher: every session with its state and directory; typing filters, \
                          Enter shows the chosen one.",
            needs: Needs::Nothing,
        },
        CommandId::SwitchTo => Command {
            id: CommandId::SwitchTo,
            key: CommandKey::Digit,
            name: "go to",
            summary: "show session 1 to 9",
            description: "Shows the session with that number (the side pane's session list has them).",
            needs: Needs::Nothing,
        },
        CommandId::NewSession => Command {
            id: CommandId::NewSession,
            key: CommandKey::Char("n"),
            name: "new",
            summary: "new session: start pi in a directory",
            description: "New session: asks for its directory (this session's to start with), then starts \
                          pi there and shows it.",
            needs: Needs::Nothing,
        },
        CommandId::Changes => Command {
            id: CommandId::Changes,
            key: CommandKey::Char("r"),
            name: "changes",
            summary: "review: what the agent changed since the session started",
            description: "Changes: what the agent changed since the session started (committed, uncommitted \
                          and new files, as `pokeshell diff` shows them), in this terminal only: the files, \
                          Enter opens one's diff, arrows and page keys scroll, r reads them again, Esc closes.",
            needs: Needs::Nothing,
        },
        CommandId::Detach => Command {
            id: CommandId::Detach,
            key: CommandKey::Char("d"),
            name: "detach",
            summary: "detach: leave every session running",
            description: "Detach: this terminal lets go; every session keeps running in the server.",
            needs: Needs::Nothing,
        },
        CommandId::Allow => Command {
            id: CommandId::Allow,
            key: CommandKey::Char("a"),
            name: "allow",
            summary: "allow more: let a session a guard rail paused go on",
            description: "Allow more: a session a guard rail paused (its budget, the day's budget, the call \
                          cap, no progress) gets the amount the pause offered and goes on; the run it \
                          stopped is resumed (see docs/supervision.md, Guard rails).",
            needs: Needs::Nothing,
        },
        CommandId::Leave => Command {
            id: CommandId::Leave,
            key: CommandKey::Char("x"),
            name: "stop",
            summary: "leave a session a guard rail paused stopped",
            description: "Leave it stopped: answers a guard rail's pause without allowing more; nothing \
                          is sent on its own while the limit holds.",
            needs: Needs::Nothing,
        },
        CommandId::Help => Command {
            id: CommandId::Help,
            key: CommandKey::Char("?"),
            name: "help",
            summary: "this help",
            description: "Help overlay listing these keys. Any key closes it.",
            needs: Needs::Nothing,
        },
        CommandId::SendPrefix => Command {
            id: CommandId::SendPrefix,
            key: CommandKey::Prefix,
            name: "prefix",
            summary: "send the prefix key itself to pi",
            description: "Sends the prefix key itself to pi.",
            needs: Needs::Nothing,
        },
        CommandId::Cancel => Command {
            id: CommandId::Cancel,
            key: CommandKey::Esc,
            name: "cancel",
            summary: "cancel",
            description: "Cancels; nothing is sent.",
            needs: Needs::Nothing,
        },
    }
}

/// What the key pressed after the prefix leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dispatch {
    Run(CommandId),
    /// Nothing runs; the footer shows this message.
    Refuse {
        text: String,
        tone: Tone,
    },
}

/// Finds the command on `key` and checks that it can run in `context`.
pub fn dispatch(key: &KeyEvent, prefix: PrefixKey, context: Context) -> Dispatch {
    // The prefix is looked for first: a prefix such as Ctrl+S must not run the command on `s`.
    let found = COMMANDS
        .iter()
        .find(|c| c.key == CommandKey::Prefix && c.matches(key, prefix))
        .or_else(|| COMMANDS.iter().find(|c| c.matches(key, prefix)));
    match found {
        None => Dispatch::Refuse {
            text: format!(
                "no command on that key; {prefix} {} lists them",
                command(CommandId::Help).help_key()
            ),
            tone: Tone::Warn,
        },
        Some(c) => match c.needs.unmet(context) {
            None => Dispatch::Run(c.id),
            Some(reason) => Dispatch::Refuse {
                text: format!("{} unavailable: {reason}", c.name),
                tone: Tone::Error,
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::key::KeyModifiers;

    const CONNECTED: Context = Context {
        bridge_connected: true,
    };

    fn char_key(c: char) -> KeyEvent {
        KeyEvent::from(KeyCode::Char(c))
    }

    #[test]
    fn every_command_runs_from_its_own_key() {
        let prefix = PrefixKey::default();
        for c in &COMMANDS {
            let key = match c.key {
                CommandKey::Char(text) => char_key(text.chars().next().expect("a key character")),
                CommandKey::Esc => KeyEvent::from(KeyCode::Esc),
                CommandKey::Prefix => KeyEvent::new(KeyCode::Char(']'), KeyModifiers::CONTROL),
                CommandKey::Digit => char_key('7'),
            };
            assert_eq!(dispatch(&key, prefix, CONNECTED), Dispatch::Run(c.id), "{c:?}");
        }
    }

    #[test]
    fn ids_keys_and_names_are_each_declared_once() {
        for (i, a) in COMMANDS.iter().enumerate() {
            for b in &COMMANDS[i + 1..] {
                assert!(
                    a.id != b.id && a.key != b.key && a.name != b.name,
                    "{a:?} / {b:?}"
                );
            }
            assert_eq!(&command(a.id), a);
        }
    }

    #[test]
    fn a_command_that_needs_the_bridge_says_so_without_it() {
        let prefix = PrefixKey::default();
        let offline = Context::default();
        assert_eq!(
            dispatch(&char_key('p'), prefix, offline),
            Dispatch::Refuse {
                text: "poke unavailable: pi's bridge is not connected".into(),
                tone: Tone::Error
            }
        );
        assert!(matches!(
            dispatch(&char_key('h'), prefix, offline),
            Dispatch::Refuse { .. }
        ));
        assert_eq!(
            dispatch(&char_key('s'), prefix, offline),
            Dispatch::Run(CommandId::ToggleSide)
        );
    }

    #[test]
    fn the_session_commands_run_without_the_bridge_and_every_digit_but_zero_switches() {
        let prefix = PrefixKey::default();
        assert_eq!(
            dispatch(&char_key('w'), prefix, Context::default()),
            Dispatch::Run(CommandId::Switcher)
        );
        for c in '1'..='9' {
            assert_eq!(
                dispatch(&char_key(c), prefix, CONNECTED),
                Dispatch::Run(CommandId::SwitchTo)
            );
        }
        assert!(matches!(
            dispatch(&char_key('0'), prefix, CONNECTED),
            Dispatch::Refuse { .. }
        ));
    }

    #[test]
    fn an_unbound_key_points_at_the_help_and_the_prefix_wins_over_its_letter() {
        let prefix: PrefixKey = "ctrl+s".parse().expect("a valid prefix");
        assert_eq!(
            dispatch(&char_key('z'), prefix, CONNECTED),
            Dispatch::Refuse {
                text: "no command on that key; Ctrl+S ? lists them".into(),
                tone: Tone::Warn
            }
        );
        let ctrl_s = KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL);
        assert_eq!(
            dispatch(&ctrl_s, prefix, CONNECTED),
            Dispatch::Run(CommandId::SendPrefix)
        );
    }
}
