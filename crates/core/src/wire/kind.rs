//! Every message's kind byte and its name, the one place either is given. A message's fields are
//! declared once, in its variant of [`super::Up`] or [`super::Down`]; its JSON body is that variant serialized, its
//! name the variant's (snake_case). The raw messages, the hot path, have constants of their own.

pub const INPUT: u8 = 0x03;
pub const CAPS: u8 = 0x09;
pub const OUTPUT: u8 = 0x82;

/// Client to server: below 0x80.
pub(super) const UP: &[(u8, &str)] = &[
    (0x01, "hello"),
    (0x02, "open"),
    (INPUT, "input"),
    (0x04, "resize"),
    (0x05, "detach"),
    (0x06, "resumed"),
    (0x07, "list"),
    (0x08, "kill"),
    (CAPS, "caps"),
    (0x0a, "command"),
    (0x0b, "web"),
    (0x0c, "subscribe"),
    (0x0d, "visible"),
    (0x0e, "act"),
    (0x10, "talk"),
    (0x11, "away"),
    (0x12, "web_logout_all"),
    (0x14, "guard"),
    (0x16, "send"),
    (0x17, "wait"),
    (0x18, "read"),
    (0x19, "events"),
    (0x1e, "review"),
];

/// Server to client: 0x80 and above.
pub(super) const DOWN: &[(u8, &str)] = &[
    (0x81, "welcome"),
    (OUTPUT, "output"),
    (0x83, "attached"),
    (0x84, "detached"),
    (0x85, "exited"),
    (0x86, "suspend"),
    (0x87, "listing"),
    (0x88, "done"),
    (0x89, "error"),
    (0x8a, "hop"),
    (0x8b, "size"),
    (0x8c, "web_login"),
    (0x8d, "notice"),
    (0x8e, "note"),
    (0x8f, "terminal"),
    (0x90, "acted"),
    (0x94, "said"),
    (0x95, "meanwhile"),
    (0x9a, "sent"),
    (0x9b, "reached"),
    (0x9c, "transcript"),
    (0x9d, "event"),
];

/// The message's name, for error texts and logs.
pub fn name(kind: u8) -> Option<&'static str> {
    name_in(UP, kind).or_else(|| name_in(DOWN, kind))
}

/// The name of the message of kind `kind` in `table`.
pub(super) fn name_in(table: &[(u8, &'static str)], kind: u8) -> Option<&'static str> {
    table.iter().find(|(k, _)| *k == kind).map(|(_, n)| *n)
}

/// The kind byte of the message named `name` in `table`.
pub(super) fn byte(table: &[(u8, &str)], name: &str) -> Option<u8> {
    table.iter().find(|(_, n)| *n == name).map(|(k, _)| *k)
}
