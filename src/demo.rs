//! `pokeshell demo`: real pi inside pokeshell against a scripted model, no key and no network.
//! The scripted model server lives here because the tests use the very same code.
//!
//! - [`tour`]: the scenario file with chapters (the built-in tour is one);
//! - [`director`]: plays the chapters (pure: cues in, acts out);
//! - [`env`]: the throw-away agent dir, work dir and session dir pi runs in;
//! - [`pi_files`]: pi's `settings.json` and `models.json` for the scripted model (demo and tests);
//! - [`layer`]: the director as a layer above the session, watching its inputs and effects;
//! - [`kind`]: the demo as a kind of session the server runs, through the way every kind takes;
//! - [`session`]: the demo's session as its server starts it (the model, the environment, the
//!   director);
//! - [`own_server`]: the demo's server of its own, in the demo's private directory;
//! - [`launch`]: the command itself: pi found or installed, the server started, this terminal
//!   attached to the demo's session.

pub mod director;
pub mod env;
pub mod kind;
pub mod launch;
pub mod layer;
pub mod model;
pub mod own_server;
pub mod pi_files;
pub mod session;
pub mod tour;
