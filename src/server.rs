//! The per-user pokeshell server and its clients: [`wire`] is the framed protocol they speak, [`socket`]
//! where the server listens and who may connect.

mod backend;
mod conn;
pub mod event_loop;
pub mod kind;
mod notes;
mod observer;
mod painter;
mod perform;
pub mod remote_list;
mod remote_screen;
mod restore_plan;
pub mod restoring;
mod route;
mod saver;
pub mod serve;
mod session_thread;
pub mod state;
pub mod store;
mod table;
