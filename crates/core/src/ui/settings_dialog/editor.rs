//! The inline editor for numbers, the prefix key and texts: pre-filled with the current value, checked on
//! Enter; a refused value keeps the editor open with the reason shown under the row.

use crate::config::SettingValue;
use crate::config::schema::{self, KeyId};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Editor {
    pub key: KeyId,
    pub text: String,
    pub error: Option<String>,
}

impl Editor {
    pub fn open(key: KeyId, current: &SettingValue) -> Self {
        Editor {
            key,
            text: current.edit_text(),
            error: None,
        }
    }

    pub fn push(&mut self, c: char) {
        self.text.push(c);
        self.error = None;
    }

    pub fn backspace(&mut self) {
        self.text.pop();
        self.error = None;
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.error = None;
    }

    /// The checked value, or the reason it is refused (also kept for display).
    pub fn submit(&mut self) -> Option<SettingValue> {
        match schema::spec(self.key).parse_text(&self.text) {
            Ok(value) => Some(value),
            Err(reason) => {
                self.error = Some(reason);
                None
            }
        }
    }
}
