//! A scenario file: the queues and the default reply of one scripted-model run
//! (`docs/scenario-format.md`).

use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::step::Step;

/// A scenario file: the queues and the default reply of one scripted-model run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Replies to ordinary requests, one per request, in order.
    #[serde(default)]
    pub steps: Vec<Step>,
    /// Replies to compaction-summary requests, one per request, in order.
    #[serde(default)]
    pub summaries: Vec<Step>,
    /// The reply when `steps` is used up and the prompt carries no directive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Step>,
}

impl Scenario {
    /// Parses a scenario from JSON text; the error names what is wrong and where.
    pub fn from_json(text: &str) -> Result<Scenario, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Reads a scenario file (`pokeshell demo --script FILE`); the error names the file.
    pub fn from_file(path: &Path) -> anyhow::Result<Scenario> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the scenario file {}", path.display()))?;
        Scenario::from_json(&text).with_context(|| format!("{} is not a valid scenario", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::model::step::Reply;

    #[test]
    fn scenario_parses_all_kinds() {
        let text = r#"{
          "steps": [
            {"type":"text","text":"hi","thinking":"hmm"},
            {"type":"tool_calls","calls":[{"name":"bash","arguments":{"command":"ls"}},{"name":"read","arguments":{"path":"a"}}]},
            {"type":"empty","prompt_tokens":9000},
            {"type":"thinking","text":"..."},
            {"type":"cut","text":"par","abrupt":true},
            {"type":"error","status":503,"message":"busy"},
            {"type":"overflow"},
            {"type":"hang","text":"late"}
          ],
          "summaries": [{"type":"text","text":"summary"}],
          "default": {"type":"text","text":"ok"}
        }"#;
        let scenario = Scenario::from_json(text).unwrap();
        assert_eq!(scenario.steps.len(), 8);
        assert_eq!(scenario.steps[2].prompt_tokens, Some(9000));
        assert!(matches!(&scenario.steps[1].reply, Reply::ToolCalls { calls, .. } if calls.len() == 2));
        assert!(matches!(
            &scenario.steps[5].reply,
            Reply::Error { status: 503, .. }
        ));
        assert_eq!(scenario.summaries.len(), 1);
        assert!(scenario.default.is_some());
        assert!(Scenario::from_json(r#"{"stepz":[]}"#).is_err());
    }

    #[test]
    fn scenario_file_errors_name_the_file_and_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.json");
        let err = format!("{:#}", Scenario::from_file(&missing).unwrap_err());
        assert!(err.contains("missing.json"), "{err}");

        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, r#"{"steps":[{"type":"text","txt":"x"}]}"#).unwrap();
        let err = format!("{:#}", Scenario::from_file(&bad).unwrap_err());
        assert!(
            err.contains("bad.json") && err.contains("txt") && err.contains("line 1"),
            "{err}"
        );

        let good = dir.path().join("good.json");
        std::fs::write(&good, r#"{"steps":[{"type":"empty"}]}"#).unwrap();
        assert_eq!(Scenario::from_file(&good).unwrap().steps, vec![Step::empty()]);
    }
}
