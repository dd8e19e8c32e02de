//! Re-arming wakeups after a restart or a resume (pokeshell's addition to pi-wakeup, WAK-T5): replay the branch's
//! wakeup entries in order.

use serde_json::Value;

use crate::supervisor::event::CustomEntry;
use crate::supervisor::texts;

#[derive(Clone, Debug, PartialEq)]
pub struct RestoredWakeup {
    pub id: String,
    pub prompt: String,
    pub reason: String,
    pub fire_at_wall: u64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Restored {
    /// Still pending, in scheduling order.
    pub pending: Vec<RestoredWakeup>,
    /// The highest `wake-N` number seen, so new ids never collide with old ones.
    pub highest_number: u64,
    /// Entries that could not be used, with the reason.
    pub skipped: Vec<String>,
}

/// `pokeshell-wakeup-scheduled` adds; `pokeshell-wakeup-fired`, `pokeshell-wakeup-failed` and `pokeshell-wakeup-cancelled {id}` remove;
/// `pokeshell-wakeup-cancelled {all}` removes everything scheduled before it.
pub fn restore(entries: &[CustomEntry]) -> Restored {
    let mut restored = Restored::default();
    for entry in entries {
        let id = entry.data.get("id").and_then(Value::as_str);
        match entry.custom_type.as_str() {
            texts::ENTRY_WAKEUP_SCHEDULED => match scheduled(&entry.data) {
                Ok(wakeup) => {
                    restored.highest_number = restored.highest_number.max(id_number(&wakeup.id));
                    restored.pending.retain(|pending| pending.id != wakeup.id);
                    restored.pending.push(wakeup);
                }
                Err(problem) => {
                    if let Some(id) = id {
                        restored.highest_number = restored.highest_number.max(id_number(id));
                    }
                    restored.skipped.push(problem);
                }
            },
            texts::ENTRY_WAKEUP_CANCELLED if entry.data.get("all").and_then(Value::as_bool) == Some(true) => {
                restored.pending.clear();
            }
            texts::ENTRY_WAKEUP_FIRED | texts::ENTRY_WAKEUP_FAILED | texts::ENTRY_WAKEUP_CANCELLED => {
                if let Some(id) = id {
                    restored.pending.retain(|pending| pending.id != id);
                }
            }
            _ => {}
        }
    }
    restored
}

fn scheduled(data: &Value) -> Result<RestoredWakeup, String> {
    let id = data.get("id").and_then(Value::as_str).filter(|id| !id.is_empty());
    let Some(id) = id else {
        return Err(format!("a wakeup entry without an id: {data}"));
    };
    let prompt = data
        .get("prompt")
        .and_then(Value::as_str)
        .filter(|prompt| !prompt.trim().is_empty());
    let Some(prompt) = prompt else {
        return Err(format!(
            "wakeup {id} has no stored prompt (written by pi-wakeup?), so it cannot be re-armed"
        ));
    };
    let Some(fire_at_wall) = data
        .get("fireAtMs")
        .and_then(Value::as_f64)
        .filter(|at| at.is_finite() && *at >= 0.0)
    else {
        return Err(format!("wakeup {id} has no valid fireAtMs"));
    };
    Ok(RestoredWakeup {
        id: id.to_string(),
        prompt: prompt.to_string(),
        reason: data
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        fire_at_wall: fire_at_wall as u64,
    })
}

/// `wake-12` ⇒ 12; anything else ⇒ 0.
pub fn id_number(id: &str) -> u64 {
    id.strip_prefix("wake-")
        .and_then(|number| number.parse().ok())
        .unwrap_or(0)
}
