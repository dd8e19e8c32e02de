//! The per-user pokeshell server and its clients: [`wire`] is the framed protocol they speak, [`socket`]
//! where the server listens and who may connect.

mod backend;
mod conn;
pub mod input_meter;
mod news;
mod observer;
mod persist;
mod remote_screen;
mod requests;
mod restore_plan;
pub mod restoring;
pub mod serve;
mod session_thread;
mod sessions;
pub mod socket;
mod table;
pub mod wire;
