//! The session layer as a pi session entry (POKE-C4). Each entry holds every value changed in the
//! dialog on this branch so far, so restoring needs only the last entry on the branch; a branch
//! without one has no session values (going back in `/tree` before a change undoes it).
//!
//! Payload: `{"version": 1, "settings": {"poke": {"enabled": true}, "pokeshell": {"bell": false}}}`,
//! the same blocks and key names as `settings.json`.

use serde_json::{Map, Value};

use super::schema::{self, Block};
use super::value::Layer;
use super::warning::{ConfigWarning, Origin, WarningKind, short_json};

/// The `customType` of pokeshell's configuration entries in the pi session.
pub const SESSION_ENTRY_TYPE: &str = "pokeshell-config";
const VERSION: u64 = 1;

/// The entry's `data` for a session layer.
pub fn encode(layer: &Layer) -> Value {
    let mut blocks = Map::new();
    for (key, value) in layer {
        let spec = schema::spec(*key);
        let block = blocks
            .entry(spec.block.json_name())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(map) = block {
            map.insert(spec.name.to_string(), value.to_json());
        }
    }
    let mut root = Map::new();
    root.insert("version".to_string(), Value::from(VERSION));
    root.insert("settings".to_string(), Value::Object(blocks));
    Value::Object(root)
}

/// The session layer from an entry's `data`. Values that fail validation are dropped with a warning.
pub fn decode(data: &Value) -> (Layer, Vec<ConfigWarning>) {
    let mut layer = Layer::new();
    let mut warnings = Vec::new();
    let warn = |kind| ConfigWarning::new(Origin::SessionEntry, kind);
    let version = data.get("version");
    if version.and_then(Value::as_u64) != Some(VERSION) {
        let version = version.map_or_else(|| "(none)".to_string(), short_json);
        warnings.push(warn(WarningKind::UnsupportedSessionVersion { version }));
        return (layer, warnings);
    }
    let Some(blocks) = data.get("settings").and_then(Value::as_object) else {
        warnings.push(warn(WarningKind::NotAnObject {
            what: "\"settings\"".to_string(),
        }));
        return (layer, warnings);
    };
    for (block_name, keys) in blocks {
        let Some(block) = Block::ALL.into_iter().find(|b| b.json_name() == block_name) else {
            warnings.push(warn(WarningKind::UnknownKey {
                key: block_name.clone(),
            }));
            continue;
        };
        let Some(keys) = keys.as_object() else {
            warnings.push(warn(WarningKind::NotAnObject {
                what: format!("\"{block_name}\""),
            }));
            continue;
        };
        for (name, raw) in keys {
            let key = format!("{block_name}.{name}");
            match schema::find(block, name).map(|s| (s, s.parse_json(raw))) {
                Some((spec, Ok(value))) => {
                    layer.insert(spec.id, value);
                }
                Some((_, Err(expected))) => warnings.push(warn(WarningKind::InvalidValue {
                    key,
                    value: short_json(raw),
                    expected,
                })),
                None => warnings.push(warn(WarningKind::UnknownKey { key })),
            }
        }
    }
    (layer, warnings)
}

/// The `data` of the last pokeshell configuration entry among a branch's entries (root to leaf), as
/// pi returns them: `{"type": "custom", "customType": "pokeshell-config", "data": {…}}`.
pub fn last_entry_data<'a>(entries: impl IntoIterator<Item = &'a Value>) -> Option<&'a Value> {
    entries
        .into_iter()
        .filter(|e| e.get("customType").and_then(Value::as_str) == Some(SESSION_ENTRY_TYPE))
        .filter(|e| e.get("type").is_none_or(|t| t.as_str() == Some("custom")))
        .last()
        .map(|e| e.get("data").unwrap_or(&Value::Null))
}
