//! Property tests feeding arbitrary input to what reads pi's side and the settings files: the
//! bridge's line splitter and protocol parser, the settings loader and writer. None may panic or
//! buffer without bound; messages and saved values survive a round trip.

#[path = "common/fuzz.rs"]
mod fuzz;

use std::path::{Path, PathBuf};

use fuzz::{chunks, config, json_value};
use pokeshell::pi::bridge::lines::{Line, LineSplitter};
use pokeshell::pi::settings_files::write_values;
use pokeshell_core::bridge::{
    AgentSettled, Command, FromBridge, Hello, LogEvent, PiEvent, Reply, ToBridge, TurnStart,
    encode_to_bridge, parse_from_bridge,
};
use pokeshell_core::config::files::{self, ConfigFile, FileFormat};
use pokeshell_core::config::schema::{Block, KEYS, KeyId, ValueKind};
use pokeshell_core::config::{ConfigPaths, Scope, SettingValue, Settings};
use proptest::prelude::*;
use serde_json::{Map, Value};

// ---- the bridge's lines and protocol -------------------------------------------------------------

/// What the splitter must produce for `bytes`: one entry per `\n`, over-long lines reported by size.
fn expected_lines(bytes: &[u8], max: usize) -> Vec<Line> {
    let mut parts: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    parts.pop(); // the unfinished tail
    parts
        .into_iter()
        .map(|p| {
            if p.len() > max {
                Line::Oversized { bytes: p.len() }
            } else {
                Line::Complete(p.strip_suffix(b"\r").unwrap_or(p).to_vec())
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn the_line_splitter_matches_a_plain_split_and_buffers_at_most_the_bound(
        bytes in proptest::collection::vec(prop_oneof![4 => any::<u8>(), 1 => Just(b'\n'), 1 => Just(b'\r')], 0..400),
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
        max in 0usize..40,
    ) {
        let mut splitter = LineSplitter::new(max);
        let mut lines = Vec::new();
        for chunk in chunks(&bytes, &cuts) {
            splitter.push(&chunk, &mut lines);
        }
        let tail = bytes.rsplit(|&b| b == b'\n').next().map_or(0, <[u8]>::len);
        prop_assert_eq!(splitter.pending_bytes(), tail);
        prop_assert_eq!(lines, expected_lines(&bytes, max));
    }

    #[test]
    fn the_protocol_parser_takes_any_line(line in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = parse_from_bridge(&line);
    }

    #[test]
    fn the_protocol_parser_takes_any_json_object(value in json_value(3)) {
        let mut object = Map::new();
        object.insert("type".into(), Value::from("event"));
        object.insert("seq".into(), Value::from(1));
        object.insert("at".into(), Value::from(2));
        object.insert("event".into(), value.clone());
        let _ = parse_from_bridge(Value::Object(object).to_string().as_bytes());
        let _ = parse_from_bridge(value.to_string().as_bytes());
    }

    #[test]
    fn bridge_messages_survive_a_round_trip(message in from_bridge()) {
        let line = serde_json::to_string(&message).unwrap();
        prop_assert!(!line.contains('\n'));
        prop_assert_eq!(parse_from_bridge(line.as_bytes()).unwrap(), message);
    }

    #[test]
    fn commands_survive_a_round_trip(message in to_bridge()) {
        let line = encode_to_bridge(&message).unwrap();
        prop_assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'));
        let back: ToBridge = serde_json::from_str(&line).unwrap();
        prop_assert_eq!(back, message);
    }
}

fn text() -> impl Strategy<Value = String> {
    ".{0,24}"
}

fn hello() -> impl Strategy<Value = FromBridge> {
    (
        (
            any::<u32>(),
            text(),
            proptest::option::of(text()),
            any::<u32>(),
            text(),
        ),
        (
            any::<bool>(),
            any::<u64>(),
            proptest::option::of(text()),
            proptest::option::of(text()),
        ),
        (
            proptest::option::of(text()),
            proptest::option::of(text()),
            proptest::option::of(text()),
        ),
    )
        .prop_map(
            |(
                (protocol, token, pi_version, pid, instance),
                (reconnect, dropped, session_id, session_file),
                (mode, model, cwd),
            )| {
                FromBridge::Hello(Hello {
                    protocol,
                    token,
                    pi_version,
                    pid,
                    instance,
                    reconnect,
                    dropped,
                    session_id,
                    session_file,
                    session_name: None,
                    mode,
                    model,
                    cwd,
                })
            },
        )
}

fn pi_event() -> impl Strategy<Value = PiEvent> {
    prop_oneof![
        Just(PiEvent::AgentStart),
        Just(PiEvent::Unknown),
        any::<u32>().prop_map(|turn_index| PiEvent::TurnStart(TurnStart { turn_index })),
        (text(), text()).prop_map(|(level, message)| PiEvent::Log(LogEvent { level, message })),
        (any::<bool>(), proptest::option::of(any::<bool>()), any::<bool>()).prop_map(
            |(aborted, idle, tail_truncated)| {
                PiEvent::AgentSettled(AgentSettled {
                    aborted,
                    idle,
                    pending_messages: None,
                    context_usage: None,
                    tail: Vec::new(),
                    tail_truncated,
                    final_text: None,
                })
            }
        ),
    ]
}

fn from_bridge() -> impl Strategy<Value = FromBridge> {
    prop_oneof![
        hello(),
        (any::<u64>(), any::<u64>(), pi_event()).prop_map(|(seq, at, event)| FromBridge::Event {
            seq,
            at,
            event
        }),
        (
            any::<u64>(),
            any::<bool>(),
            json_value(2),
            proptest::option::of(text()),
            proptest::option::of(any::<u64>())
        )
            .prop_map(|(id, ok, result, error, seq)| FromBridge::Reply(Reply {
                seq,
                id,
                ok,
                result,
                error
            })),
    ]
}

fn to_bridge() -> impl Strategy<Value = ToBridge> {
    let command = prop_oneof![
        Just(Command::Abort),
        Just(Command::ContextUsage),
        Just(Command::IsIdle),
        (text(), json_value(2)).prop_map(|(custom_type, data)| Command::AppendEntry { custom_type, data }),
    ];
    prop_oneof![
        any::<u32>().prop_map(|protocol| ToBridge::Welcome { protocol }),
        text().prop_map(|reason| ToBridge::Rejected { reason }),
        (any::<u64>(), command).prop_map(|(id, command)| ToBridge::Command { id, command }),
    ]
}

// ---- settings ------------------------------------------------------------------------------------

fn settings_file(path: &str) -> ConfigFile {
    ConfigFile {
        path: PathBuf::from(path),
        scope: Scope::Global,
        format: FileFormat::PiSettings,
    }
}

/// A settings object with pokeshell's blocks holding known and unknown keys with any values.
fn settings_json() -> impl Strategy<Value = Value> {
    let known = proptest::sample::select(
        KEYS.iter()
            .map(|k| (k.block.json_name(), k.name))
            .collect::<Vec<_>>(),
    );
    let member = prop_oneof![
        3 => (known, json_value(1)).prop_map(|((b, n), v)| (b.to_string(), n.to_string(), v)),
        1 => (proptest::sample::select(Block::ALL.to_vec()), ".{0,8}", json_value(1))
            .prop_map(|(b, n, v)| (b.json_name().to_string(), n, v)),
    ];
    (
        proptest::collection::vec(member, 0..12),
        json_value(2),
        proptest::option::of(json_value(0)),
    )
        .prop_map(|(members, other, tool_timeout)| {
            let mut root = Map::new();
            root.insert("other".into(), other);
            if let Some(t) = tool_timeout {
                root.insert("toolTimeoutMs".into(), t);
            }
            for (block, name, value) in members {
                let entry = root.entry(block).or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(map) = entry {
                    map.insert(name, value);
                }
            }
            Value::Object(root)
        })
}

fn paths() -> ConfigPaths {
    ConfigPaths::resolve(Some(Path::new("/home/u")), None, Path::new("/work/app")).unwrap()
}

fn check_loaded(text: &str) -> Result<(), TestCaseError> {
    let loaded = files::parse(settings_file("/home/u/.pi/agent/settings.json"), text);
    for (key, value) in &loaded.values {
        prop_assert!(
            pokeshell_core::config::schema::spec(*key).accepts(value),
            "{key:?} = {value:?}"
        );
    }
    let settings = Settings::from_loaded(paths(), vec![loaded]);
    let _ = settings.effective();
    let _ = settings.show_config();
    for spec in &KEYS {
        prop_assert!(spec.accepts(settings.get(spec.id)));
    }
    Ok(())
}

/// A valid value for `key`, picked by `seed`.
fn valid_value(key: KeyId, seed: u64) -> SettingValue {
    let spec = pokeshell_core::config::schema::spec(key);
    match spec.kind {
        ValueKind::Bool => SettingValue::Bool(seed.is_multiple_of(2)),
        ValueKind::Int { min, max } => {
            let span = (max - min) as u64 + 1;
            SettingValue::Int(min + (seed % span) as i64)
        }
        ValueKind::IntOrOff { min, max } => {
            let span = (max - min) as u64 + 2;
            match seed % span {
                0 => SettingValue::Int(0),
                n => SettingValue::Int(min + n as i64 - 1),
            }
        }
        ValueKind::Number { above, max } => {
            let step = (max - above) / 1000.0;
            SettingValue::Number(above + step * (1 + seed % 1000) as f64)
        }
        ValueKind::NumberFrom { min, max } => {
            let step = (max - min) / 1000.0;
            SettingValue::Number(min + step * (seed % 1001) as f64)
        }
        ValueKind::Choice(choices) => SettingValue::Choice(choices[seed as usize % choices.len()]),
        ValueKind::KeyChord => SettingValue::Text(["ctrl+]", "ctrl+a", "ctrl+\\"][seed as usize % 3].into()),
        ValueKind::Hours => SettingValue::Text(["", "22:00-07:00", "12:30-13:15"][seed as usize % 3].into()),
        ValueKind::Text { .. } => {
            SettingValue::Text(["", "notify-send x", "a \"b\" $(c)"][seed as usize % 3].into())
        }
    }
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn the_settings_loader_takes_any_text(text in ".{0,200}") {
        check_loaded(&text)?;
    }

    #[test]
    fn the_settings_loader_takes_any_values(root in settings_json()) {
        check_loaded(&serde_json::to_string_pretty(&root).unwrap())?;
    }
}

proptest! {
    #![proptest_config(config(24))]

    #[test]
    fn saved_values_load_back_and_the_rest_of_the_file_is_kept(
        root in settings_json(),
        picks in proptest::collection::vec((0..KEYS.len(), any::<u64>()), 1..6),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let original = serde_json::to_string_pretty(&root).unwrap();
        std::fs::write(&path, &original).unwrap();
        let values: Vec<(KeyId, SettingValue)> =
            picks.iter().map(|&(i, seed)| (KEYS[i].id, valid_value(KEYS[i].id, seed))).collect();
        write_values(&path, &values).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let loaded = files::parse(settings_file(path.to_str().unwrap()), &text);
        let mut wanted = std::collections::BTreeMap::new();
        for (key, value) in &values {
            wanted.insert(*key, value.clone());
        }
        for (key, value) in wanted {
            prop_assert_eq!(loaded.values.get(&key), Some(&value));
        }
        let written: Value = serde_json::from_str(&text).unwrap();
        let before: Value = serde_json::from_str(&original).unwrap();
        prop_assert_eq!(&written["other"], &before["other"]);
        prop_assert_eq!(&written["toolTimeoutMs"], &before["toolTimeoutMs"]);
        // The members pokeshell did not touch keep their text exactly.
        let other = serde_json::to_string_pretty(&root["other"]).unwrap().replace('\n', "\n  ");
        prop_assert!(text.contains(&format!("\"other\": {other}")), "{text}");
    }
}
