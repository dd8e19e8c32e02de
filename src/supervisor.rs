//! The pure supervisor: events and time in, actions out. No I/O, no clock reads.
