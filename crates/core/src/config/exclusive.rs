//! Settings that exclude each other (POKE-C6): auto-abort and the orphaned-tool poke. Turning one on
//! turns the other off. Settings files may still set both; then the orphaned-tool poke stays idle.

use super::schema::KeyId;
use super::settings::Change;
use super::value::SettingValue;

/// The change asked for, followed by the changes it implies given the current values.
pub fn with_implied(key: KeyId, value: SettingValue, current: impl Fn(KeyId) -> SettingValue) -> Vec<Change> {
    let turned_on = value == SettingValue::Bool(true);
    let mut changes = vec![Change { key, value }];
    let other = match key {
        KeyId::PokeAutoAbort if turned_on => Some(KeyId::PokeAutoPoke),
        KeyId::PokeAutoPoke if turned_on => Some(KeyId::PokeAutoAbort),
        _ => None,
    };
    if let Some(other) = other {
        let off = SettingValue::Bool(false);
        if current(other) != off {
            changes.push(Change {
                key: other,
                value: off,
            });
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poke_c6_auto_abort_on_turns_auto_poke_off() {
        let changes = with_implied(KeyId::PokeAutoAbort, SettingValue::Bool(true), |_| {
            SettingValue::Bool(true)
        });
        assert_eq!(changes.len(), 2);
        assert_eq!(
            changes[1],
            Change {
                key: KeyId::PokeAutoPoke,
                value: SettingValue::Bool(false)
            }
        );
    }

    #[test]
    fn poke_c6_turning_off_or_already_off_implies_nothing() {
        let off = |_| SettingValue::Bool(false);
        assert_eq!(
            with_implied(KeyId::PokeAutoPoke, SettingValue::Bool(true), off).len(),
            1
        );
        let on = |_| SettingValue::Bool(true);
        assert_eq!(
            with_implied(KeyId::PokeAutoPoke, SettingValue::Bool(false), on).len(),
            1
        );
        assert_eq!(with_implied(KeyId::Bell, SettingValue::Bool(true), on).len(), 1);
    }
}
