//! `[ui]`: how the full screen behaves towards the terminal (calling the
//! person when a question waits; whether it takes the mouse). The user's
//! own settings only: a project has no say over the screen. Validation
//! only; nothing here touches a terminal.

use super::error::{ConfigError, KeyPath};
use super::raw::RawUi;
use super::source::SourceFile;

const NOTIFY_ACCEPTED: &str = "\"bell\", \"osc9\" or \"off\"";

/// How a waiting question calls the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Notify {
    /// The bell and the terminal title (and an OSC 9 notification where
    /// the terminal is known to show one).
    #[default]
    Bell,
    /// An OSC 9 notification and the title, no bell.
    Osc9,
    /// Nothing: no bell, no notification, the title left alone.
    Off,
}

/// `[ui]`, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UiSettings {
    pub notify: Notify,
    /// The full screen takes the mouse (the wheel scrolls the chat); false
    /// leaves it to the terminal, so its own selection works. F2 toggles.
    pub mouse: bool,
}

impl Default for UiSettings {
    fn default() -> Self {
        Self {
            notify: Notify::Bell,
            mouse: true,
        }
    }
}

/// `[ui]` of the user's file.
pub fn ui_settings(src: &SourceFile, raw: &RawUi) -> Result<UiSettings, ConfigError> {
    let mut ui = UiSettings::default();
    if let Some(value) = &raw.notify {
        ui.notify = match value.as_str() {
            "bell" => Notify::Bell,
            "osc9" => Notify::Osc9,
            "off" => Notify::Off,
            other => {
                return Err(src.invalid(
                    KeyPath::of(&["ui", "notify"]),
                    format!("{other:?} is not a way to notify"),
                    NOTIFY_ACCEPTED,
                ));
            }
        };
    }
    ui.mouse = raw.mouse.unwrap_or(ui.mouse);
    Ok(ui)
}
