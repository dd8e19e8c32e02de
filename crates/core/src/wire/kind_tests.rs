//! The table of kinds: each byte and name given once, each direction in its own half.

use super::*;

pub(super) fn up_kind(name: &str) -> u8 {
    kind::byte(kind::UP, name).expect("a client message")
}

pub(super) fn down_kind(name: &str) -> u8 {
    kind::byte(kind::DOWN, name).expect("a server message")
}

#[test]
fn each_kind_byte_and_name_is_given_once_and_each_side_keeps_to_its_half() {
    let all: Vec<&(u8, &str)> = kind::UP.iter().chain(kind::DOWN).collect();
    for (i, (k, n)) in all.iter().enumerate() {
        for (k2, n2) in &all[i + 1..] {
            assert_ne!(k, k2, "{n} and {n2} share a kind byte");
            assert_ne!(n, n2, "two kinds are named {n}");
        }
    }
    assert!(kind::UP.iter().all(|(k, _)| *k < 0x80));
    assert!(kind::DOWN.iter().all(|(k, _)| *k >= 0x80));
}

#[test]
fn a_message_of_the_other_direction_is_an_unknown_kind() {
    let err = decode_up(down_kind("done"), br#"{"message":"x"}"#).unwrap_err();
    assert!(matches!(err, WireError::UnknownKind { .. }), "{err}");
    let err = decode_down(up_kind("list"), b"{}").unwrap_err();
    assert!(matches!(err, WireError::UnknownKind { .. }), "{err}");
}
