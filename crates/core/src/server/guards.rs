//! The guard rails that span sessions, as the server's core keeps them (docs/supervision.md, "Guard
//! rails"): the day's budget across every session (`daily`, GUARD-B2) and the circuit breaker that
//! makes sessions meeting the same provider failure wait out one countdown and probe one at a time
//! (`breaker`, GUARD-K1..K3). Sessions tell the core what they meet ([`GuardNote`]); the core answers
//! with what each must do ([`GuardOrder`]). Pure: events and the time in, orders out.

pub mod breaker;
pub mod daily;

pub use crate::supervisor::guard::DailyState;
pub use crate::supervisor::guard::circuit::{BreakerOrder, DailyAnswer, DailyNews, GuardNote, GuardOrder};
