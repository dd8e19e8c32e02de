//! Scenario tests of the pure supervisor, named after the rule IDs and scenario numbers defined in
//! docs/supervision.md. One test crate, one module per area.

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
