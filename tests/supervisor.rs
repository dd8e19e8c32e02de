//! Scenario tests of the pure supervisor, named after the rule IDs of docs/supervision.md (and the
//! original extensions' scenario numbers). One test crate, one module per area.

mod supervisor {
    pub mod sim;
    mod sim_output;

    mod arbiter;
    mod empty_reply;
    mod guard;
    mod guard_ladder;
    mod handoff;
    mod one_message;
    mod poke;
    mod poke_fixes;
    mod poke_rules;
    mod promise;
    mod promise_ask;
    mod properties;
    mod provider_limit;
    mod random_events;
    mod reconnect;
    mod recovery;
    mod recovery_detectors;
    mod recovery_in_run;
    mod restart;
    mod stall;
    mod stop_and_lose;
    mod wakeup;
    mod wakeup_restore;
}
