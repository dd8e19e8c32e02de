//! The session's settings: the resolved values, changes from the dialog or from outside, saving
//! them to a file and restoring them from pi's session. Files are read and written by the event
//! loop ([`Effect::LoadSettings`], [`Effect::SaveSettings`]); their contents come back as inputs.

use serde_json::Value;

use super::keyboards::ClientId;
use super::{Effect, Overlay, Session};
use crate::bridge::Command;
use crate::config::{
    Change, KeyId, LoadedFile, SESSION_ENTRY_TYPE, SaveError, Scope, SettingValue, Settings,
};
use crate::supervisor::Now;
use crate::ui::theme::Tone;

/// A save on its way to a file.
#[derive(Debug)]
struct PendingSave {
    /// The client whose dialog asked for it: its dialog shows the result.
    client: ClientId,
    path: std::path::PathBuf,
    values: Vec<(KeyId, SettingValue)>,
}

#[derive(Debug)]
pub struct SettingsView {
    settings: Settings,
    saving: Option<PendingSave>,
}

impl SettingsView {
    pub fn new(settings: Settings) -> Self {
        Self {
            settings,
            saving: None,
        }
    }

    pub fn get(&self) -> &Settings {
        &self.settings
    }
}

impl Session {
    /// Settings changed in the dialog or from outside: the session layer takes them, then the
    /// display, the supervisor and pi's session follow.
    pub(super) fn apply_changes(&mut self, changes: &[Change], now: Now, fx: &mut Vec<Effect>) {
        if let Err(e) = self.settings.settings.apply_session_changes(changes) {
            self.flash.show(format!("settings: {e}"), Tone::Error, now);
        }
        self.after_settings_change(now, fx);
    }

    pub(super) fn save_settings(&mut self, client: ClientId, scope: Scope, now: Now, fx: &mut Vec<Effect>) {
        if self.settings.saving.is_some() {
            self.flash
                .show("settings: a save is still under way", Tone::Warn, now);
            return;
        }
        match self.settings.settings.save_plan(scope) {
            Ok((path, values)) => {
                fx.push(Effect::SaveSettings {
                    paths: self.settings.settings.paths().clone(),
                    path: path.clone(),
                    values: values.clone(),
                });
                self.settings.saving = Some(PendingSave { client, path, values });
            }
            Err(e) => self.report_save(client, Err(e), now, fx),
        }
    }

    pub(super) fn on_settings_saved(
        &mut self,
        result: Result<(), SaveError>,
        files: Vec<LoadedFile>,
        now: Now,
        fx: &mut Vec<Effect>,
    ) {
        let Some(save) = self.settings.saving.take() else {
            return;
        };
        let report = match result {
            Ok(()) => Ok(self.settings.settings.finish_save(save.path, save.values, files)),
            Err(e) => {
                self.settings.settings.set_files(files);
                Err(e)
            }
        };
        self.report_save(save.client, report, now, fx);
    }

    fn report_save(
        &mut self,
        client: ClientId,
        report: Result<crate::config::SaveReport, SaveError>,
        now: Now,
        fx: &mut Vec<Effect>,
    ) {
        if let Some(Overlay::Settings(d)) = self.keys.overlay_mut(client) {
            d.report_save(&report);
        }
        self.after_settings_change(now, fx);
    }

    /// Every open settings dialog shows the settings as they are now.
    fn sync_dialogs(&mut self) {
        let settings = self.settings.get();
        for d in self.keys.dialogs_mut() {
            d.sync(settings);
        }
    }

    fn after_settings_change(&mut self, now: Now, fx: &mut Vec<Effect>) {
        self.sync_dialogs();
        self.settings_applied(now, fx);
        self.persist_settings(fx);
    }

    /// The effective settings may have changed: the display and the supervisor follow at once.
    fn settings_applied(&mut self, now: Now, fx: &mut Vec<Effect>) {
        let effective = self.settings.get().effective();
        self.keys
            .set_prefix(effective.display.prefix_key.parse().unwrap_or_default());
        self.layout.apply(&effective.display);
        self.relayout(fx);
        let actions = self.supervisor.set_config(effective.supervisor(), now);
        self.perform(actions, now, fx);
        fx.push(Effect::Redraw);
    }

    /// pokeshell's settings from the session's own entries (POKE-C4); the files are read again too,
    /// and applied when they arrive.
    pub(super) fn restore_settings(&mut self, entries: &[Value], now: Now, fx: &mut Vec<Effect>) {
        self.settings.settings.restore_session(entries.iter());
        self.settings_applied(now, fx);
        fx.push(Effect::LoadSettings(self.settings.settings.paths().clone()));
    }

    pub(super) fn on_settings_loaded(&mut self, files: Vec<LoadedFile>, now: Now, fx: &mut Vec<Effect>) {
        self.settings.settings.set_files(files);
        self.sync_dialogs();
        self.settings_applied(now, fx);
    }

    /// The dialog changed the session's settings: persist them in pi's session.
    fn persist_settings(&mut self, fx: &mut Vec<Effect>) {
        if self.pi.status == super::view::BridgeStatus::Connected {
            let command = Command::AppendEntry {
                custom_type: SESSION_ENTRY_TYPE.to_string(),
                data: self.settings.get().session_entry_data(),
            };
            self.send(
                command,
                super::link::Purpose::Other("saving the settings to the session"),
                fx,
            );
        }
    }
}
