//! `pokeshell demo`: real pi inside pokeshell against a scripted model, no key and no network.
//! The scripted model server lives here because the tests use the very same code.

pub mod director;
pub mod model;
pub mod tour;
