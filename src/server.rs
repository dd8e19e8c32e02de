//! The per-user pokeshell server and its clients: [`wire`] is the framed protocol they speak, [`socket`]
//! where the server listens and who may connect.

pub mod socket;
pub mod wire;
