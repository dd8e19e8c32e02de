//! Host input: splitting stdin into sequences, decoding keys, and routing the prefix key.

pub mod keys;
pub mod prefix;
pub mod router;
