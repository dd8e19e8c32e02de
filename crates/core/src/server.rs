//! The server's state without any I/O, like the session's: the clients, the sessions, which client
//! follows which, the names and the saved list, decided from events and the time (`state`, with the
//! session table `table`); a note for the person nobody attached sees (`notes`); what to do with each
//! saved session found at start (`restore_plan`, on what the binary found on disk) and the saved
//! list's entry (`saved_session`); the guard rails that span sessions, the day's budget and the
//! circuit breaker (`guards`). The binary's `server` performs the effects.

pub mod away;
pub mod guards;
pub mod notes;
pub mod restore_plan;
pub mod saved_session;
pub mod state;
pub mod table;
