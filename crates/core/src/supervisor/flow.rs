//! How the supervisor takes each event and tick through its parts. Every file here is part of
//! `impl Supervisor`; the parts' state is only reached through their methods.

pub(crate) mod guard;
pub(crate) mod guard_circuit;
pub(crate) mod guard_ladder;
pub(crate) mod handoff;
pub(crate) mod lifecycle;
pub(crate) mod limit;
pub(crate) mod promise;
pub(crate) mod recovery;
pub(crate) mod restart;
pub(crate) mod resume;
pub(crate) mod settle;
pub(crate) mod stall;
pub(crate) mod stop;
pub(crate) mod timers;
pub(crate) mod user;
pub(crate) mod wakeups;
