//! pi's two files in a throw-away agent dir, written the same way for `pokeshell demo` and for the
//! tests: `models.json` names one OpenAI-compatible provider served by the scripted model, and
//! `settings.json` suits scripted runs (fast retries, a quiet start, a short exit, and compaction of
//! the small-window models at 8000 tokens so that scripted token counts reach it).

use std::io;
use std::path::Path;

use serde_json::{Map, Value, json};

/// A provider pi is told about, with the models it offers.
pub struct Provider {
    pub id: &'static str,
    pub name: &'static str,
    /// The scripted model accepts any key; pi insists on having one.
    pub api_key: &'static str,
    /// The first one is pi's default model.
    pub models: &'static [ModelSpec],
}

pub struct ModelSpec {
    pub id: &'static str,
    pub name: &'static str,
    pub context_window: u64,
    pub max_tokens: u64,
    pub reasoning: bool,
}

/// Models with a window this small get the compaction override below.
pub const SMALL_WINDOW: u64 = 16_000;

/// The demo's provider: one small-window model, so that compaction is reachable.
pub const DEMO: Provider = Provider {
    id: "pokeshell-demo",
    name: "pokeshell's scripted demo model",
    api_key: "no-key-needed",
    models: &[ModelSpec {
        id: "scripted",
        name: "Scripted demo model",
        context_window: SMALL_WINDOW,
        max_tokens: 2000,
        reasoning: false,
    }],
};

/// The tests' provider `mock`: a roomy default model, a small-window one for compaction and one
/// that reasons (the ids `GET /v1/models` lists).
pub const MOCK: Provider = Provider {
    id: "mock",
    name: "Mock (OpenAI-compatible)",
    api_key: "dummy-not-a-key",
    models: &[
        ModelSpec {
            id: "mock-model",
            name: "Mock Model",
            context_window: 128_000,
            max_tokens: 4096,
            reasoning: false,
        },
        ModelSpec {
            id: "mock-tiny",
            name: "Mock Tiny Context",
            context_window: SMALL_WINDOW,
            max_tokens: 2000,
            reasoning: false,
        },
        ModelSpec {
            id: "mock-reasoner",
            name: "Mock Reasoner",
            context_window: 128_000,
            max_tokens: 4096,
            reasoning: true,
        },
    ],
};

/// The contents of `settings.json` and `models.json`, to adjust before [`AgentFiles::write`].
#[derive(Debug, Clone, PartialEq)]
pub struct AgentFiles {
    pub settings: Value,
    pub models: Value,
}

impl AgentFiles {
    /// Both files for `provider` served at `base_url` (e.g. `ModelServer::base_url()`).
    pub fn new(provider: &Provider, base_url: &str) -> AgentFiles {
        AgentFiles {
            settings: settings_json(provider),
            models: models_json(provider, base_url),
        }
    }

    /// Merges `patch` into the settings (pi's keys and pokeshell's blocks alike).
    pub fn merge_settings(&mut self, patch: &Value) {
        merge_json(&mut self.settings, patch);
    }

    /// Writes both files into `agent_dir`, which must exist.
    pub fn write(&self, agent_dir: &Path) -> io::Result<()> {
        write_json(&agent_dir.join("settings.json"), &self.settings)?;
        write_json(&agent_dir.join("models.json"), &self.models)
    }
}

fn settings_json(provider: &Provider) -> Value {
    let overrides: Map<String, Value> = provider
        .models
        .iter()
        .filter(|m| m.context_window <= SMALL_WINDOW)
        .map(|m| {
            let key = format!("{}/{}", provider.id, m.id);
            (key, json!({ "reserveTokens": 8000, "keepRecentTokens": 300 }))
        })
        .collect();
    json!({
        "defaultProvider": provider.id,
        "defaultModel": provider.models.first().map_or("", |m| m.id),
        "defaultThinkingLevel": "off",
        "retry": { "enabled": true, "maxRetries": 1, "baseDelayMs": 200 },
        "enableInstallTelemetry": false,
        "cacheWarming": "off",
        "quietStartup": true,
        "collapseChangelog": true,
        "lastChangelogVersion": "1.6.0",
        "fullscreenExitOutput": "resume-hint",
        "compaction": { "enabled": true, "modelOverrides": overrides }
    })
}

fn models_json(provider: &Provider, base_url: &str) -> Value {
    let models: Vec<Value> = provider
        .models
        .iter()
        .map(|m| {
            let mut model = json!({
                "id": m.id,
                "name": m.name,
                "contextWindow": m.context_window,
                "maxTokens": m.max_tokens,
                "cost": { "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0 }
            });
            if m.reasoning {
                model["reasoning"] = json!(true);
            }
            model
        })
        .collect();
    let mut providers = Map::new();
    providers.insert(
        provider.id.to_string(),
        json!({
            "name": provider.name,
            "baseUrl": base_url,
            "api": "openai-completions",
            "apiKey": provider.api_key,
            "compat": { "supportsDeveloperRole": false, "supportsReasoningEffort": false },
            "models": models
        }),
    );
    json!({ "providers": providers })
}

/// Merges `patch` into `base`: objects key by key, anything else replaced.
pub fn merge_json(base: &mut Value, patch: &Value) {
    match (base, patch) {
        (Value::Object(base), Value::Object(patch)) => {
            for (key, value) in patch {
                merge_json(base.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
        (base, patch) => *base = patch.clone(),
    }
}

fn write_json(path: &Path, value: &Value) -> io::Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
    std::fs::write(path, text).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_small_window_models_get_the_compaction_override() {
        let files = AgentFiles::new(&MOCK, "http://127.0.0.1:9/v1");
        let overrides = &files.settings["compaction"]["modelOverrides"];
        assert_eq!(
            overrides,
            &json!({"mock/mock-tiny": {"reserveTokens": 8000, "keepRecentTokens": 300}})
        );
        assert_eq!(files.settings["defaultModel"], "mock-model");
        let provider = &files.models["providers"]["mock"];
        assert_eq!(provider["baseUrl"], "http://127.0.0.1:9/v1");
        let reasoning: Vec<bool> = provider["models"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["reasoning"] == true)
            .collect();
        assert_eq!(reasoning, [false, false, true]);
        let ids: Vec<&str> = MOCK.models.iter().map(|m| m.id).collect();
        assert_eq!(ids, crate::demo::model::MODEL_IDS, "what the server lists");
    }

    #[test]
    fn merged_settings_keep_sibling_keys_and_are_written_as_json() {
        let mut files = AgentFiles::new(&DEMO, "http://127.0.0.1:9/v1");
        files.merge_settings(&json!({"retry": {"maxRetries": 0}, "poke": {"thresholdSeconds": 3}}));
        assert_eq!(
            files.settings["retry"],
            json!({"enabled": true, "maxRetries": 0, "baseDelayMs": 200})
        );
        let dir = tempfile::tempdir().unwrap();
        files.write(dir.path()).unwrap();
        let read = |name: &str| -> Value {
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(name)).unwrap()).unwrap()
        };
        assert_eq!(read("settings.json"), files.settings);
        assert_eq!(read("models.json"), files.models);
        assert_eq!(
            read("settings.json")["compaction"]["modelOverrides"]["pokeshell-demo/scripted"]["reserveTokens"],
            8000
        );
        let missing = dir.path().join("nowhere");
        let err = files.write(&missing).unwrap_err().to_string();
        assert!(err.contains("nowhere"), "{err}");
    }
}
