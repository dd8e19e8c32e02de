//! Scenario tests of the pure supervisor, named after the rule IDs of docs/supervision.md (and the
//! original extensions' scenario numbers). One test crate, one module per area.

mod supervisor {
    pub mod sim;

    mod arbiter;
    mod empty_reply;
    mod handoff;
    mod one_message;
    mod poke;
    mod poke_fixes;
    mod properties;
    mod reconnect;
    mod recovery;
    mod stop_and_lose;
    mod wakeup;
}
