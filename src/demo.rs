//! `pokeshell demo`: real pi inside pokeshell against a scripted model, no key and no network.
//! The scripted model server lives here because the tests use the very same code.
//!
//! - [`tour`]: the scenario file with chapters (the built-in tour is one);
//! - [`director`]: plays the chapters (pure: cues in, acts out);
//! - [`env`]: the throw-away agent dir, work dir and session dir pi runs in;
//! - [`pi_files`]: pi's `settings.json` and `models.json` for the scripted model (demo and tests);
//! - [`layer`]: the director as a layer above the session, watching its inputs and effects;
//! - [`launch`]: the command itself: pi found or installed, the model started, pokeshell run.

pub mod director;
pub mod env;
pub mod launch;
pub mod layer;
pub mod model;
pub mod pi_files;
pub mod tour;
