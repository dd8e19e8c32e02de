//! The pushes the list of events that need the person asks for (`pokeshell_core::server::away`),
//! delivered without ever holding a session: the performer hands each to this task and goes on;
//! here each gets its capability links (when the web view runs), becomes the notification value,
//! and goes to ntfy (when `pokeshell.ntfyUrl` is set) on a task of its own, with bounded retries.
//! Other ways of telling (Web Push) take the same value from [`Pusher`]'s subscribers.

mod ntfy;
mod token;

use std::sync::Arc;

use tokio::sync::{broadcast, mpsc};

use pokeshell_core::server::away::notification::{self, Links};
use pokeshell_core::server::away::{Act, AwayEvent, Notification, Push};

/// How many built notifications a slow subscriber may fall behind by.
const SUBSCRIBERS_KEPT: usize = 32;

/// The handle the performer pushes through.
#[derive(Clone)]
pub struct Pusher {
    tx: mpsc::UnboundedSender<Push>,
    built: broadcast::Sender<Arc<(AwayEvent, Notification)>>,
}

impl Pusher {
    /// Starts the pushing task on the current runtime.
    pub fn start() -> Pusher {
        let (tx, mut rx) = mpsc::unbounded_channel::<Push>();
        let (built, _) = broadcast::channel(SUBSCRIBERS_KEPT);
        let out = built.clone();
        tokio::spawn(async move {
            let client = ntfy::client();
            while let Some(push) = rx.recv().await {
                // The settings are read as they are now: a changed ntfyUrl applies to the next push.
                let (target, public) = tokio::task::spawn_blocking(|| (ntfy::target(), ntfy::public_url()))
                    .await
                    .unwrap_or_default();
                let note = build(&push, public);
                let _ = out.send(Arc::new((push.event.clone(), note.clone())));
                if let (Some(target), Some(client)) = (target, client.clone()) {
                    let id = push.event.id;
                    tokio::spawn(async move { ntfy::deliver(&client, &target, &note, id).await });
                }
            }
        });
        Pusher { tx, built }
    }

    pub fn push(&self, push: Push) {
        let _ = self.tx.send(push);
    }

    /// Every notification as it is built, with its event (for another way of telling).
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<(AwayEvent, Notification)>> {
        self.built.subscribe()
    }
}

/// The notification of `push`, with a capability link for each of its acts when the web view runs
/// (under `public`, `pokeshell.webPublicUrl`, when that is set).
fn build(push: &Push, public: Option<String>) -> Notification {
    let links = links(&push.event, public);
    let now = crate::machines::now_ms();
    notification::build(&push.event, &links, now, push.utc_offset_secs)
}

fn links(event: &AwayEvent, public: Option<String>) -> Links {
    let Some(running) = crate::web::base_url() else {
        return Links::default();
    };
    let base = public.unwrap_or(running);
    let about = about(event);
    let acts = event
        .acts
        .iter()
        .filter_map(|&act: &Act| {
            let grant = crate::web::links::Grant {
                session: event.session,
                label: event.label.clone(),
                event: event.id,
                act,
                about: about.clone(),
            };
            match crate::web::links::mint(grant) {
                Ok(token) => Some((act, format!("{base}act/{token}"))),
                Err(e) => {
                    eprintln!("pokeshell server: push: {e}");
                    None
                }
            }
        })
        .collect();
    Links {
        open: Some(format!("{base}?session={}", event.session)),
        acts,
    }
}

/// What a link's page says the event was.
fn about(event: &AwayEvent) -> String {
    if event.quote.is_empty() {
        event.label.clone()
    } else {
        event.quote.clone()
    }
}
