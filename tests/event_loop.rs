//! The real event loop (`pokeshell::server::event_loop::Loop`) driven end to end without a terminal or a
//! process: frames land in ratatui's `TestBackend`, the child and the bridge are fakes that record
//! what the loop does to them, and tokio's clock is paused so grace periods and cooldowns pass in an
//! instant and always in the same order. The PTY end-to-end tests cover the real pi on top of this.
//! Keys come from clients with ids, as the server hands them over. One test crate, one module per
//! area, as `tests/supervisor.rs` does.

mod event_loop {
    pub mod world;

    mod bridge;
    mod clients;
    mod idle;
    mod keys;
    mod output;
    mod restart;
    mod shutdown;
    mod stall;
    mod suspend;
}
