//! Host input: splitting stdin into sequences (`tokenizer`), decoding keys (`keys`, into `key`'s
//! type), and routing the prefix key.

pub mod key;
pub mod keys;
pub mod prefix;
pub mod router;
pub mod tokenizer;
