//! Scenario tests of the pure supervisor, named after the rule IDs of docs/supervision.md (and the
//! original extensions' scenario numbers). One test crate, one module per area.

mod supervisor {
    pub mod sim;

    mod arbiter;
    mod handoff;
    mod poke;
    mod poke_fixes;
    mod properties;
    mod recovery;
    mod wakeup;
}
