//! The command-line flags that override settings for one run, and `--show-config`.

use clap::Args;

use pokeshell_core::config::schema::{KeyId, spec};
use pokeshell_core::config::value::{Layer, SettingValue};

/// Flags to `#[command(flatten)]` into pokeshell's command line.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigArgs {
    /// Turn automatic poking on for this run, whatever the settings files say.
    #[arg(long, global = true)]
    pub enable: bool,
    /// Seconds before a tool call counts as overdue, for this run.
    #[arg(long, value_name = "SECONDS", value_parser = parse_threshold, global = true)]
    pub threshold: Option<i64>,
    /// Turn the post-compaction poke off for this run.
    #[arg(long, global = true)]
    pub no_postcompact: bool,
    /// Print the effective settings with their sources and any warnings, then exit.
    #[arg(long)]
    pub show_config: bool,
}

impl ConfigArgs {
    /// The one-run layer for `Settings::set_cli_overrides`.
    pub fn overrides(&self) -> Layer {
        let mut layer = Layer::new();
        if self.enable {
            layer.insert(KeyId::PokeEnabled, SettingValue::Bool(true));
        }
        if let Some(seconds) = self.threshold {
            layer.insert(KeyId::PokeThresholdSeconds, SettingValue::Int(seconds));
        }
        if self.no_postcompact {
            layer.insert(KeyId::PokePostCompactPoke, SettingValue::Bool(false));
        }
        layer
    }

    /// These flags as a command line again (for a session the server starts); `--show-config` is
    /// not among them: it starts nothing.
    pub fn to_argv(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.enable {
            out.push("--enable".to_string());
        }
        if let Some(seconds) = self.threshold {
            out.extend(["--threshold".to_string(), seconds.to_string()]);
        }
        if self.no_postcompact {
            out.push("--no-postcompact".to_string());
        }
        out
    }
}

fn parse_threshold(text: &str) -> Result<i64, String> {
    match spec(KeyId::PokeThresholdSeconds).parse_text(text) {
        Ok(SettingValue::Int(n)) => Ok(n),
        Ok(_) => Err("expected a whole number of seconds".to_string()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        config: ConfigArgs,
    }

    #[test]
    fn flags_become_overrides() {
        let cli = Cli::try_parse_from(["x", "--enable", "--threshold", "12", "--no-postcompact"]).unwrap();
        let layer = cli.config.overrides();
        assert_eq!(layer.get(&KeyId::PokeEnabled), Some(&SettingValue::Bool(true)));
        assert_eq!(
            layer.get(&KeyId::PokeThresholdSeconds),
            Some(&SettingValue::Int(12))
        );
        assert_eq!(
            layer.get(&KeyId::PokePostCompactPoke),
            Some(&SettingValue::Bool(false))
        );
        assert!(Cli::try_parse_from(["x"]).unwrap().config.overrides().is_empty());
    }

    #[test]
    fn bad_threshold_is_a_usage_error() {
        let err = Cli::try_parse_from(["x", "--threshold", "0"])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("from 1 to 86400"), "{err}");
        assert!(Cli::try_parse_from(["x", "--threshold", "30s"]).is_err());
    }
}
