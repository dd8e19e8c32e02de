//! The demo as a kind of session for the server (`server::kind`): a session whose command line is
//! `demo …` runs pi in the demo's environment, made in the session's directory (the demo's private
//! one), with its ledger there and the tour's director watching the loop.

use std::path::Path;

use super::session::{DemoSession, prepare};
use crate::cli::{Cli, DemoArgs, Mode};
use crate::server::event_loop::build::SessionConfig;
use crate::server::kind::{Prepare, Prepared, SessionKind};
use pokeshell_core::server::state::SessionSpec;

pub struct DemoKind;

impl SessionKind for DemoKind {
    fn claim(&self, argv: &[String]) -> Option<Prepare> {
        match Cli::try_parse_from_argv(argv) {
            Ok(Cli {
                mode: Some(Mode::Demo(args)),
                ..
            }) => Some(Box::new(move |spec: &SessionSpec| prepared(spec, &args))),
            _ => None,
        }
    }
}

fn prepared(start: &SessionSpec, args: &DemoArgs) -> Result<Prepared, String> {
    let DemoSession {
        mut spec,
        settings,
        layer,
        env,
    } = prepare(args, Path::new(&start.dir))?;
    spec.base_env = Some(start.env.clone());
    let config = SessionConfig {
        label: spec.label.clone(),
        spec,
        settings,
        bridge: true,
        ledger_dir: env.state_dir.clone(),
        session: SessionSpec {
            resume: false,
            ..start.clone()
        },
    };
    Ok(Prepared {
        config,
        layer: Box::new(layer),
        keep: Box::new(env),
        // pi's resume hint would name a session directory removed on the way out.
        farewell: false,
    })
}
