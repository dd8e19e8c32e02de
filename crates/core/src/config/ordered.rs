//! A JSON object kept as its members' original text, in their order, for rewriting a settings file
//! without touching what pokeshell does not own. Parsing into `serde_json::Value` would turn `1e2`
//! into `100.0`, `-0` into `-0.0` and a 30-digit integer into a float when the file is written back;
//! here every member not replaced is written exactly as it was read.

use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// An object's members, duplicates included, each value as its source text or rebuilt.
pub struct RawObject(Vec<(String, Member)>);

/// A member's value: as read, or an object being rebuilt (so it is indented with its parent).
pub enum Member {
    Raw(Box<RawValue>),
    Object(RawObject),
}

impl Serialize for Member {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Member::Raw(raw) => raw.serialize(serializer),
            Member::Object(object) => object.serialize(serializer),
        }
    }
}

impl RawObject {
    pub fn new() -> Self {
        RawObject(Vec::new())
    }

    /// Parses `text`, which must be a JSON object (callers check this with `parse_object` first).
    pub fn parse(text: &str) -> serde_json::Result<Self> {
        serde_json::from_str(text)
    }

    /// The source text of `name`'s value as JSON reads it (the last member with that name wins);
    /// `None` when missing or already rebuilt.
    pub fn get(&self, name: &str) -> Option<&RawValue> {
        match self.0.iter().rev().find(|(k, _)| k == name) {
            Some((_, Member::Raw(raw))) => Some(raw),
            _ => None,
        }
    }

    /// Replaces the value the reader sees (the last member named `name`), or appends a member.
    pub fn set(&mut self, name: &str, value: Member) {
        match self.0.iter_mut().rev().find(|(k, _)| k == name) {
            Some((_, v)) => *v = value,
            None => self.0.push((name.to_string(), value)),
        }
    }
}

impl Serialize for RawObject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for RawObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = RawObject;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawObject, A::Error> {
                let mut members = Vec::new();
                while let Some((name, raw)) = map.next_entry::<String, Box<RawValue>>()? {
                    members.push((name, Member::Raw(raw)));
                }
                Ok(RawObject(members))
            }
        }
        deserializer.deserialize_map(Members)
    }
}
