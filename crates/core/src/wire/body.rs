//! Messages to frames and back: raw payload for Input, Caps and Output, the variant's fields as one
//! JSON object for the rest (its name travels as the kind byte, not inside the object).

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::frame::{push_frame, push_json_frame};
use super::{Down, MAX_FRAME, Up, WireError, kind};

/// The serde tag the enums carry their variant's name in (see `kind`).
const TAG: &str = "kind";

pub(super) fn encode_up(message: &Up) -> Vec<u8> {
    let mut out = Vec::new();
    match message {
        Up::Input(bytes) => push_raw(&mut out, kind::INPUT, bytes),
        Up::Caps(bytes) => push_raw(&mut out, kind::CAPS, bytes),
        other => push_json(&mut out, kind::UP, other),
    }
    out
}

pub(super) fn encode_down(message: &Down) -> Vec<u8> {
    let mut out = Vec::new();
    match message {
        Down::Output(bytes) => push_raw(&mut out, kind::OUTPUT, bytes),
        other => push_json(&mut out, kind::DOWN, other),
    }
    out
}

/// A JSON message: its fields as an object, its name as the kind byte. Every message serializes (they
/// are plain fields); were one not to, or to name no kind, nothing goes out, which the tests rule out
/// for every message.
fn push_json(out: &mut Vec<u8>, table: &[(u8, &str)], message: &impl Serialize) {
    let Ok(Value::Object(mut fields)) = serde_json::to_value(message) else {
        return;
    };
    let Some(Value::String(name)) = fields.remove(TAG) else {
        return;
    };
    if let Some(byte) = kind::byte(table, &name) {
        push_json_frame(out, byte, &fields);
    }
}

/// Raw bytes in as many frames as they need (one, also when empty).
pub(super) fn push_raw(out: &mut Vec<u8>, kind: u8, bytes: &[u8]) {
    if bytes.is_empty() {
        push_frame(out, kind, bytes);
    }
    for chunk in bytes.chunks(MAX_FRAME - 1) {
        push_frame(out, kind, chunk);
    }
}

pub(super) fn decode_up(kind: u8, payload: &[u8]) -> Result<Up, WireError> {
    match kind {
        kind::INPUT => Ok(Up::Input(payload.to_vec())),
        kind::CAPS => Ok(Up::Caps(payload.to_vec())),
        _ => decode_json(kind::UP, kind, payload),
    }
}

pub(super) fn decode_down(kind: u8, payload: &[u8]) -> Result<Down, WireError> {
    match kind {
        kind::OUTPUT => Ok(Down::Output(payload.to_vec())),
        _ => decode_json(kind::DOWN, kind, payload),
    }
}

/// A JSON message of this direction: any object (fields a newer peer adds are ignored), with the
/// kind's name put back where serde looks for the variant.
fn decode_json<T: DeserializeOwned>(
    table: &[(u8, &'static str)],
    kind: u8,
    payload: &[u8],
) -> Result<T, WireError> {
    let bad = |reason: String| WireError::BadMessage { kind, reason };
    let name = kind::name_in(table, kind).ok_or(WireError::UnknownKind { kind })?;
    let mut fields: Map<String, Value> = serde_json::from_slice(payload).map_err(|e| bad(e.to_string()))?;
    fields.insert(TAG.to_owned(), Value::String(name.to_owned()));
    serde_json::from_value(Value::Object(fields)).map_err(|e| bad(e.to_string()))
}
