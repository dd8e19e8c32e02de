//! Who the web view lets in when connections are many. The web view lives in the server's process,
//! so every connection it holds is a file the server cannot use for its own socket or a session's
//! PTY: it holds at most `cap` of them, well below the process's limit on open files. A connection
//! is *trusted* once a request on it proved a login; until then it is anyone's, and when the web view
//! is full the oldest such one is closed to make room (a flood of connections that never log in then
//! only pushes out each other, and a browser's request, sent whole at once, gets through). When
//! every place is trusted or already closing, a newcomer is refused.

/// How many web connections a process allowed `open_files` files holds at most: an eighth of them
/// (a page's connection costs two: its TCP socket and its connection to the server's own socket),
/// between 16 and 256.
pub fn web_connection_cap(open_files: u64) -> usize {
    usize::try_from(open_files / 8)
        .unwrap_or(usize::MAX)
        .clamp(16, 256)
}

/// What happens to a new connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// In, as connection `id`.
    In { id: u64 },
    /// In, as `id`, once the connection `close` (the oldest one not trusted) is closed.
    Replacing { id: u64, close: u64 },
    /// Full of trusted connections (or ones already closing): the newcomer is closed at once.
    Refused,
}

/// How many connections may be closing at once to make room, over the cap: a bound on the files a
/// burst of newcomers holds before the ones they replace are closed.
pub const CLOSING_AT_ONCE: usize = 16;

#[derive(Debug, Clone, Copy)]
struct Conn {
    id: u64,
    trusted: bool,
    closing: bool,
}

/// The connections the web view holds, oldest first. A connection counts until it has left (its
/// file is closed), including while it is being closed: at most `cap` + [`CLOSING_AT_ONCE`] files.
#[derive(Debug)]
pub struct Admission {
    cap: usize,
    conns: Vec<Conn>,
    next: u64,
}

impl Admission {
    pub fn new(cap: usize) -> Admission {
        Admission {
            cap: cap.max(1),
            conns: Vec::new(),
            next: 1,
        }
    }

    pub fn cap(&self) -> usize {
        self.cap
    }

    /// How many connections are held (closing ones included).
    pub fn held(&self) -> usize {
        self.conns.len()
    }

    /// A connection arrived.
    pub fn admit(&mut self) -> Admit {
        let id = self.next;
        if self.conns.len() < self.cap {
            self.next += 1;
            self.conns.push(Conn {
                id,
                trusted: false,
                closing: false,
            });
            return Admit::In { id };
        }
        if self.conns.iter().filter(|c| c.closing).count() >= CLOSING_AT_ONCE {
            return Admit::Refused;
        }
        let Some(victim) = self.conns.iter_mut().find(|c| !c.trusted && !c.closing) else {
            return Admit::Refused;
        };
        victim.closing = true;
        let close = victim.id;
        self.next += 1;
        // Over the cap until the victim has left (it is being closed now): by CLOSING_AT_ONCE at most.
        self.conns.push(Conn {
            id,
            trusted: false,
            closing: false,
        });
        Admit::Replacing { id, close }
    }

    /// A request on connection `id` proved a login: it is never closed to make room.
    pub fn trust(&mut self, id: u64) {
        if let Some(c) = self.conns.iter_mut().find(|c| c.id == id) {
            c.trusted = true;
        }
    }

    /// Connection `id` is closed.
    pub fn left(&mut self, id: u64) {
        self.conns.retain(|c| c.id != id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_is_an_eighth_of_the_files_within_bounds() {
        assert_eq!(web_connection_cap(1024), 128);
        assert_eq!(web_connection_cap(512), 64);
        assert_eq!(web_connection_cap(64), 16);
        assert_eq!(web_connection_cap(1 << 20), 256);
    }

    #[test]
    fn when_full_the_oldest_untrusted_makes_room() {
        let mut a = Admission::new(3);
        let ids: Vec<u64> = (0..3)
            .map(|_| match a.admit() {
                Admit::In { id } => id,
                other => panic!("{other:?}"),
            })
            .collect();
        a.trust(ids[0]);
        assert_eq!(
            a.admit(),
            Admit::Replacing { id: 4, close: ids[1] },
            "the oldest that is not trusted"
        );
        assert_eq!(a.admit(), Admit::Replacing { id: 5, close: ids[2] });
        // 1 trusted, 2 and 3 closing, 4 and 5 new: 4 goes next, not a closing one again.
        assert_eq!(a.admit(), Admit::Replacing { id: 6, close: 4 });
        assert_eq!(a.held(), 6, "closing ones count until they left");
        for id in [ids[1], ids[2], 4] {
            a.left(id);
        }
        assert_eq!(a.held(), 3);
    }

    #[test]
    fn full_of_trusted_connections_refuses_the_newcomer() {
        let mut a = Admission::new(2);
        for _ in 0..2 {
            let Admit::In { id } = a.admit() else {
                panic!("room")
            };
            a.trust(id);
        }
        assert_eq!(a.admit(), Admit::Refused);
        assert_eq!(a.held(), 2);
        a.left(1);
        assert_eq!(a.admit(), Admit::In { id: 3 }, "room again once one left");
    }

    #[test]
    fn no_more_than_a_bound_close_at_once() {
        let mut a = Admission::new(CLOSING_AT_ONCE + 1);
        for _ in 0..=CLOSING_AT_ONCE {
            assert!(matches!(a.admit(), Admit::In { .. }));
        }
        for _ in 0..CLOSING_AT_ONCE {
            assert!(matches!(a.admit(), Admit::Replacing { .. }));
        }
        assert_eq!(a.admit(), Admit::Refused, "a burst waits for the closing ones");
        assert_eq!(a.held(), 2 * CLOSING_AT_ONCE + 1);
        a.left(1);
        assert!(matches!(a.admit(), Admit::Replacing { .. }));
    }

    #[test]
    fn closing_ones_are_not_chosen_twice_and_all_closing_refuses() {
        let mut a = Admission::new(1);
        assert_eq!(a.admit(), Admit::In { id: 1 });
        assert_eq!(a.admit(), Admit::Replacing { id: 2, close: 1 });
        assert_eq!(a.admit(), Admit::Replacing { id: 3, close: 2 });
        a.trust(3);
        assert_eq!(a.admit(), Admit::Refused, "1 and 2 closing, 3 trusted");
    }
}
