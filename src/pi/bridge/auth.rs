//! Who may talk to the socket: a peer of our own uid (SO_PEERCRED) that knows the per-run token.

use std::fs::File;
use std::io::{self, Read};

/// `n` random bytes from /dev/urandom, hex encoded.
pub fn random_hex(n: usize) -> io::Result<String> {
    let mut bytes = vec![0u8; n];
    File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| io::Error::new(e.kind(), format!("cannot read /dev/urandom: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A fresh token for one pokeshell run: 32 random bytes, hex.
pub fn new_token() -> io::Result<String> {
    random_hex(32)
}

/// Compares in time independent of where the strings differ.
pub fn token_matches(expected: &str, offered: &str) -> bool {
    let (a, b) = (expected.as_bytes(), offered.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Accepts a peer only when it runs as our uid.
pub fn check_peer_uid(peer_uid: u32, our_uid: u32) -> Result<(), String> {
    if peer_uid == our_uid {
        Ok(())
    } else {
        Err(format!("peer runs as uid {peer_uid}, pokeshell as uid {our_uid}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_64_hex_chars_and_differ() {
        let a = new_token().unwrap();
        let b = new_token().unwrap();
        assert_eq!(a.len(), 64);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn token_comparison() {
        assert!(token_matches("abc", "abc"));
        assert!(!token_matches("abc", "abd"));
        assert!(!token_matches("abc", "ab"));
        assert!(!token_matches("abc", ""));
    }

    #[test]
    fn peer_of_another_uid_is_refused() {
        assert!(check_peer_uid(1000, 1000).is_ok());
        let err = check_peer_uid(1001, 1000).unwrap_err();
        assert!(err.contains("1001") && err.contains("1000"), "{err}");
    }
}
