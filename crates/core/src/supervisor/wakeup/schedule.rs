//! pi-wakeup's pure rules (WAK-P1..P4): the delay clamp and the delivery mode.

use serde_json::Value;

use crate::supervisor::action::DeliverAs;

/// WAK-P2 with configurable bounds: anything but a finite number gives `min`; otherwise the value is
/// floored and clamped to `[min, max]`.
pub fn clamp_delay(value: &Value, min: u64, max: u64) -> u64 {
    let Some(seconds) = value.as_f64().filter(|seconds| seconds.is_finite()) else {
        return min;
    };
    let floored = seconds.floor();
    if floored < min as f64 {
        min
    } else if floored > max as f64 {
        max
    } else {
        floored as u64
    }
}

/// WAK-P3: idle ⇒ steer (it starts a turn), busy ⇒ follow-up.
pub fn delivery_mode(idle: bool) -> DeliverAs {
    if idle {
        DeliverAs::Steer
    } else {
        DeliverAs::FollowUp
    }
}
