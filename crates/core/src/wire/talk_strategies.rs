//! The conversation's messages for the round-trip properties of `tests.rs`.

use proptest::prelude::*;

use super::{AwayDigest, Down, Seen, Up};
use crate::talk::{By, Digest, Entry, Said, ToolUse};

pub(super) fn talk_up() -> impl Strategy<Value = Up> {
    (any::<String>(), any::<u64>(), any::<u64>()).prop_map(|(session, epoch, since)| Up::Talk {
        session,
        epoch,
        since,
    })
}

pub(super) fn away_up() -> impl Strategy<Value = Up> {
    let seen = (any::<String>(), any::<u64>(), any::<u64>()).prop_map(|(session, epoch, seq)| Seen {
        session,
        epoch,
        seq,
    });
    prop::collection::vec(seen, 0..3).prop_map(|seen| Up::Away { seen })
}

fn entry() -> impl Strategy<Value = Entry> {
    (any::<u64>(), any::<u64>(), any::<String>(), any::<bool>()).prop_map(|(seq, at_ms, text, reply)| Entry {
        seq,
        at_ms,
        said: if reply {
            Said::Reply {
                text: text.clone(),
                tools: vec![ToolUse {
                    id: "c".into(),
                    name: "bash".into(),
                    call: text,
                }],
            }
        } else {
            Said::Prompt { by: By::You, text }
        },
    })
}

pub(super) fn said_down() -> impl Strategy<Value = Down> {
    (
        any::<String>(),
        any::<u64>(),
        any::<bool>(),
        prop::collection::vec(entry(), 0..3),
    )
        .prop_map(|(session, epoch, fresh, entries)| Down::Said {
            session,
            epoch,
            fresh,
            entries,
        })
}

pub(super) fn meanwhile_down() -> impl Strategy<Value = Down> {
    (any::<String>(), any::<u32>(), prop::option::of(0.0f64..1e6)).prop_map(|(session, runs, cost_usd)| {
        Down::Meanwhile {
            digests: vec![AwayDigest {
                session,
                digest: Digest {
                    runs,
                    cost_usd,
                    quoted: vec!["did it".into()],
                    ..Default::default()
                },
            }],
        }
    })
}
