//! The per-user pokeshell server and its clients: [`wire`] is the framed protocol they speak, [`socket`]
//! where the server listens and who may connect.

mod away_note;
mod backend;
mod conn;
mod drive_bound;
pub mod event_loop;
pub mod file_limit;
pub mod kind;
mod observer;
mod painter;
mod perform;
pub mod push;
pub mod remote_list;
mod remote_screen;
mod restore_look;
pub mod restoring;
mod saver;
pub mod serve;
mod session_thread;
pub mod store;
pub mod web_push;
