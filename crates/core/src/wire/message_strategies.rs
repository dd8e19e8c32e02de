//! Generators of every client and server message, for the round-trip properties in `tests.rs`.

use proptest::prelude::*;

use super::*;

pub(super) fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..300)
}

pub(super) fn opt_string() -> impl Strategy<Value = Option<String>> {
    prop::option::of(any::<String>())
}

pub(super) fn target() -> impl Strategy<Value = Target> {
    prop_oneof![
        opt_string().prop_map(|name| Target::Attach { name }),
        (
            opt_string(),
            any::<String>(),
            prop::collection::vec(any::<String>(), 0..4),
            opt_string(),
        )
            .prop_map(|(name, dir, args, base)| Target::New {
                name,
                dir,
                args,
                base
            }),
    ]
}

pub(super) fn up() -> impl Strategy<Value = Up> {
    prop_oneof![
        (any::<String>(), any::<u32>()).prop_map(|(token, protocol)| Up::Hello { token, protocol }),
        (
            target(),
            any::<u16>(),
            any::<u16>(),
            bytes(),
            any::<bool>(),
            prop::collection::vec((any::<String>(), any::<String>()), 0..4),
            any::<bool>(),
            proptest::option::of(any::<String>()),
        )
            .prop_map(
                |(target, cols, rows, caps, caps_follow, env, watch, terminal)| Up::Open {
                    target,
                    cols,
                    rows,
                    caps,
                    caps_follow,
                    env,
                    watch,
                    terminal,
                }
            ),
        bytes().prop_map(Up::Input),
        bytes().prop_map(Up::Caps),
        (any::<u16>(), any::<u16>()).prop_map(|(cols, rows)| Up::Resize { cols, rows }),
        Just(Up::Detach),
        (any::<u16>(), any::<u16>()).prop_map(|(cols, rows)| Up::Resumed { cols, rows }),
        Just(Up::List),
        any::<String>().prop_map(|name| Up::Kill { name, from: None }),
        Just(Up::Command(SessionCommand::Poke)),
        opt_string().prop_map(|focus| Up::Command(SessionCommand::Handoff { focus })),
        any::<bool>().prop_map(|on| Up::Command(SessionCommand::Supervision { on })),
        opt_string().prop_map(|listen| Up::Web { listen }),
        Just(Up::Subscribe),
        any::<bool>().prop_map(|visible| Up::Visible { visible }),
        (any::<u32>(), any::<u64>(), 0..7usize).prop_map(|(session, event, i)| Up::Act {
            session,
            event,
            act: [
                crate::away::Act::Continue,
                crate::away::Act::ResumeNow,
                crate::away::Act::Stop,
                crate::away::Act::Yes,
                crate::away::Act::No,
                crate::away::Act::Allow,
                crate::away::Act::Leave
            ][i]
        }),
        Just(Up::WebLogoutAll),
        super::talk_strategies::talk_up(),
        super::talk_strategies::away_up(),
        (any::<String>(), prop::collection::vec(comment(), 0..3))
            .prop_map(|(session, comments)| Up::Review { session, comments }),
    ]
}

pub(super) fn comment() -> impl Strategy<Value = crate::diff::review::Comment> {
    (
        any::<String>(),
        any::<u32>(),
        any::<bool>(),
        any::<String>(),
        any::<String>(),
    )
        .prop_map(|(file, line, old, text, comment)| crate::diff::review::Comment {
            file,
            line,
            side: if old {
                crate::diff::review::Side::Old
            } else {
                crate::diff::review::Side::New
            },
            text,
            comment,
        })
}

pub(super) fn listing() -> impl Strategy<Value = Listing> {
    (
        (any::<String>(), any::<String>(), any::<String>()),
        (opt_string(), opt_string(), any::<u64>(), any::<usize>()),
        (
            any::<[u64; 3]>(),
            proptest::option::of(0.0f64..1e6),
            prop::option::of(0.0f64..100.0),
        ),
        (opt_string(), opt_string()),
    )
        .prop_map(
            |(
                (name, dir, state),
                (tool, last_intervention, age_secs, attached),
                (t, cost_usd, context_percent),
                (base, changes),
            )| Listing {
                name,
                dir,
                state,
                tool_secs: tool.as_ref().map(|_| age_secs),
                tool,
                last_intervention,
                age_secs,
                attached,
                tokens_in: t[0],
                tokens_out: t[1],
                cache_read: t[2],
                cost_usd,
                attention: "idle".into(),
                branch: None,
                dirty: None,
                context_percent,
                offer: None,
                base,
                changes,
            },
        )
}

pub(super) fn down() -> impl Strategy<Value = Down> {
    prop_oneof![
        (any::<u32>(), any::<u32>()).prop_map(|(server_pid, restoring)| Down::Welcome {
            server_pid,
            restoring
        }),
        bytes().prop_map(Down::Output),
        any::<String>().prop_map(|name| Down::Attached { name }),
        any::<String>().prop_map(|reason| Down::Detached { reason }),
        (any::<i32>(), bytes()).prop_map(|(code, farewell)| Down::Exited { code, farewell }),
        (any::<u16>(), any::<u16>()).prop_map(|(cols, rows)| Down::Size { cols, rows }),
        (any::<String>(), any::<String>(), any::<bool>()).prop_map(|(url, login, exposed)| Down::WebLogin {
            url,
            login,
            exposed
        }),
        Just(Down::Suspend),
        prop::collection::vec(listing(), 0..3).prop_map(|sessions| Down::Listing { sessions }),
        any::<String>().prop_map(|message| Down::Done { message }),
        any::<String>().prop_map(|message| Down::Error { message }),
        (any::<String>(), any::<String>()).prop_map(|(dest, name)| Down::Hop { dest, name }),
        any::<String>().prop_map(|message| Down::Notice { message }),
        (any::<String>(), any::<String>()).prop_map(|(session, text)| Down::Note { session, text }),
        any::<bool>().prop_map(|taken| Down::Terminal { taken }),
        any::<String>().prop_map(|message| Down::Acted { message }),
        super::talk_strategies::said_down(),
        super::talk_strategies::meanwhile_down(),
    ]
}
