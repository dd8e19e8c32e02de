//! The Changes view's two asks: a session's diff, read here by git from the directory and base the
//! session list gives (the same model `pokeshell diff` and the terminal's overlay draw), and a
//! review, sent to the server on a connection of its own so that the page's own session (its
//! screen, its size) is left as it is.

use tokio::sync::{Semaphore, mpsc};

use super::listing::Feed;
use super::page_msg::ToPage;
use super::upstream::Upstream;
use crate::git::changes::{Bounds, of_session};
use pokeshell_core::diff::review::Comment;
use pokeshell_core::wire::{Down, Up};

/// Diffs read at once for every page together: twenty pages on a large repository must not run
/// forty gits.
static READING: Semaphore = Semaphore::const_new(2);

/// One page's asks in flight: at most one reading of a diff (a page asking again meanwhile is
/// answered once more when it ends, with the newest) and one review.
pub struct Asks {
    tx: mpsc::Sender<(Kind, ToPage)>,
    rx: mpsc::Receiver<(Kind, ToPage)>,
    reading: bool,
    /// The session to read again once the reading in flight ends.
    again: Option<String>,
    reviewing: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Diff,
    Review,
}

impl Default for Asks {
    fn default() -> Self {
        let (tx, rx) = mpsc::channel(4);
        Asks {
            tx,
            rx,
            reading: false,
            again: None,
            reviewing: false,
        }
    }
}

impl Asks {
    /// Reads the diff of `session` for the page, now or once the reading in flight ends.
    pub fn changes(&mut self, feed: &Feed, session: String) {
        if self.reading {
            self.again = Some(session);
            return;
        }
        self.reading = true;
        let (feed, tx) = (feed.clone(), self.tx.clone());
        tokio::spawn(async move {
            let _ = tx.send((Kind::Diff, read(&feed, session).await)).await;
        });
    }

    /// Sends a review; one at a time.
    pub fn review(&mut self, feed: &Feed, session: String, comments: Vec<Comment>) -> Result<(), String> {
        if self.reviewing {
            return Err("a review is on its way already: wait for its answer".to_string());
        }
        self.reviewing = true;
        let (feed, tx) = (feed.clone(), self.tx.clone());
        tokio::spawn(async move {
            let _ = tx
                .send((Kind::Review, review(&feed, session, comments).await))
                .await;
        });
        Ok(())
    }

    /// The next answer for the page (pending for ever while nothing is in flight).
    pub async fn next(&mut self) -> ToPage {
        match self.rx.recv().await {
            Some((kind, answer)) => {
                match kind {
                    Kind::Diff => self.reading = false,
                    Kind::Review => self.reviewing = false,
                }
                answer
            }
            // `self` holds a sender: the channel never closes.
            None => std::future::pending().await,
        }
    }

    /// After an answer went to the page: a reading asked for meanwhile starts.
    pub fn done(&mut self, feed: &Feed) {
        if let Some(session) = self.again.take() {
            self.changes(feed, session);
        }
    }
}

/// The diff of `session` (a name or a number, as the page names it).
pub async fn read(feed: &Feed, session: String) -> ToPage {
    let found = feed
        .sessions
        .borrow()
        .iter()
        .find(|l| l.answers_to(&session))
        .map(|l| (l.name.clone(), l.dir.clone(), l.base.clone()));
    let Some((name, dir, base)) = found else {
        return ToPage::ChangesError {
            message: format!("no session named {session:?}"),
            session,
        };
    };
    let Ok(_permit) = READING.acquire().await else {
        return ToPage::ChangesError {
            session: name,
            message: "the web view is shutting down".to_string(),
        };
    };
    let read = tokio::task::spawn_blocking(move || of_session(&dir, base.as_deref(), Bounds::VIEW)).await;
    match read {
        Ok(Ok(changes)) => ToPage::Changes {
            session: name,
            changes,
        },
        Ok(Err(message)) => ToPage::ChangesError {
            session: name,
            message,
        },
        Err(e) => ToPage::ChangesError {
            session: name,
            message: format!("reading the changes failed: {e}"),
        },
    }
}

/// Sends a review of `session` (a name, a number or `number:name`) and gives the server's answer,
/// naming the session as the list does.
pub async fn review(feed: &Feed, session: String, comments: Vec<Comment>) -> ToPage {
    let label = feed
        .sessions
        .borrow()
        .iter()
        .find(|l| l.answers_to(&session))
        .map(|l| l.name.clone());
    let Some(label) = label else {
        return ToPage::Reviewed {
            message: format!("no session named {session:?}: the review was not sent"),
            session,
            ok: false,
        };
    };
    let session = label;
    // The server's table knows a session by its name or its number.
    let number = session
        .split_once(':')
        .map_or(session.as_str(), |(n, _)| n)
        .to_string();
    let answer = async {
        let mut up = Upstream::connect().await?;
        up.send(&Up::Review {
            session: number,
            comments,
        })
        .await?;
        loop {
            match up.next().await? {
                Some(Down::Done { message }) => return Ok(message),
                Some(Down::Error { message }) => return Err(message),
                // Something said once to the next client: not the answer.
                Some(_) => {}
                None => return Err("the server closed the connection".to_string()),
            }
        }
    };
    match answer.await {
        Ok(message) => ToPage::Reviewed {
            session,
            ok: true,
            message,
        },
        Err(message) => ToPage::Reviewed {
            session,
            ok: false,
            message,
        },
    }
}
