//! The demo's session, as the demo's own server starts it: the tour's chapters, the scripted model
//! (in the server's process, where the director queues its answers), the throw-away environment
//! pi runs in and the director as the layer above the session. The server runs it like any other
//! session; only what pi runs with and what watches from above differ.

use crate::pi::settings_files::SettingsFiles;
use std::path::Path;
use std::sync::Arc;

use super::director::{Director, Pace};
use super::env::DemoEnv;
use super::layer::DemoLayer;
use super::model::ModelServer;
use super::tour::{ChapterPlan, Tour};
use crate::cli::DemoArgs;
use crate::term::pty::CommandSpec;
use pokeshell_core::config::{KeyId, Layer, SettingValue, Settings};

/// What runs in the pane, as the side pane and `pokeshell ls` show it.
pub const LABEL: &str = "pi (demo)";

/// Everything the demo's session is made of beyond an ordinary one.
pub struct DemoSession {
    /// pi in the demo's environment.
    pub spec: CommandSpec,
    pub settings: Settings,
    pub layer: DemoLayer,
    /// Its directories (pi's agent dir, home, work dir, sessions, the ledger): removed when dropped,
    /// after pi is gone.
    pub env: DemoEnv,
}

/// The tour `args` name and the chapters to play; the error is ready to print. The terminal checks
/// them before it starts anything, the server reads them again for the session.
pub fn tour_and_plans(args: &DemoArgs) -> Result<(Tour, Vec<ChapterPlan>), String> {
    let tour = match &args.script {
        Some(path) => Tour::from_file(path),
        None => Tour::built_in(),
    }
    .map_err(|e| format!("{e:#}"))?;
    let plans = tour.plans(args.chapters).map_err(|e| format!("{e:#}"))?;
    Ok((tour, plans))
}

/// Starts the scripted model on the loopback interface and prepares the demo's environment under
/// `parent` (the demo's private directory).
pub fn prepare(args: &DemoArgs, parent: &Path) -> Result<DemoSession, String> {
    let (tour, plans) = tour_and_plans(args)?;
    let pi = args
        .pi
        .clone()
        .ok_or_else(|| "the demo's session names no pi to run".to_string())?;
    let model =
        ModelServer::start().map_err(|e| format!("cannot start the scripted model on 127.0.0.1: {e}"))?;
    model.load(tour.opening());
    let env = DemoEnv::create(parent, &model.base_url(), &tour.settings)
        .map_err(|e| format!("cannot prepare the demo's directory: {e}"))?;
    let mut settings = Settings::load(env.config_paths());
    if let Some(p) = args.prefix {
        let mut layer = Layer::new();
        layer.insert(KeyId::PrefixKey, SettingValue::Text(p.canonical()));
        settings.set_cli_overrides(layer);
    }
    let title = match (&tour.title, &args.script) {
        (Some(t), _) => t.clone(),
        (None, Some(path)) => path.display().to_string(),
        (None, None) => "demo".to_string(),
    };
    let director = Director::new(title, plans, tour.chapters.len(), Pace::default());
    let spec = CommandSpec {
        label: LABEL.to_string(),
        program: pi,
        args: env.pi_args(),
        env: env.pi_env(),
        cwd: Some(env.work_dir.clone()),
        cwd_real: None,
        base_env: None,
    };
    Ok(DemoSession {
        spec,
        settings,
        layer: DemoLayer::new(director, Some(Arc::new(model))),
        env,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_runs_pi_in_the_demos_directory_with_the_chapters_asked_for() {
        let parent = tempfile::tempdir().unwrap();
        let cli = crate::cli::Cli::try_parse_from_argv(&[
            "demo".into(),
            "--pi".into(),
            "/x/pi".into(),
            "--chapters".into(),
            "2".into(),
            "--prefix".into(),
            "ctrl+b".into(),
        ])
        .unwrap();
        let Some(crate::cli::Mode::Demo(args)) = cli.mode else {
            panic!("not the demo")
        };
        let demo = prepare(&args, parent.path()).unwrap();
        assert_eq!(demo.spec.program, Path::new("/x/pi"));
        assert_eq!(demo.spec.cwd.as_deref(), Some(demo.env.work_dir.as_path()));
        assert!(
            demo.env.root().starts_with(parent.path()),
            "under the demo's own directory"
        );
        assert_eq!(
            demo.settings.get(KeyId::PrefixKey),
            &SettingValue::Text("ctrl+b".into())
        );
        assert_eq!(
            demo.layer.narration().heading,
            "pokeshell rescues a stalled agent",
            "the tour's title until pi is ready"
        );
        let (_, plans) = tour_and_plans(&args).unwrap();
        assert_eq!(plans.iter().map(|p| p.number).collect::<Vec<_>>(), [2]);
        let root = demo.env.root().to_path_buf();
        drop(demo);
        assert!(!root.exists(), "its directories go with the session");
    }

    #[test]
    fn a_chapter_past_the_tour_is_refused_before_anything_starts() {
        let args = DemoArgs {
            pi: Some("/x/pi".into()),
            install_pi: false,
            script: None,
            chapters: Some("12".parse().unwrap()),
            prefix: None,
        };
        let parent = tempfile::tempdir().unwrap();
        let err = prepare(&args, parent.path()).err().expect("refused");
        assert!(err.contains("no chapter 12"), "{err}");
        assert_eq!(
            std::fs::read_dir(parent.path()).unwrap().count(),
            0,
            "nothing created"
        );
    }
}
