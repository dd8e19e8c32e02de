//! A review from the web view's Changes view (`Up::Review`): checked, made into one message for the
//! agent (`diff::review`), and handed to the session, whose supervisor sends it. The client is
//! answered when the session says whether the review went to pi (it waits a while for pi's bridge),
//! not when it was handed over: a page forgets the comments only once they were sent.

use std::collections::btree_map::Entry;

use super::{Run, ServerEffect, ServerState, SessionMsg};
use crate::diff::review::{self, Comment};
use crate::drive::ToSession;
use crate::wire::Down;

/// A review on its way to pi, waiting for the session's word.
pub(super) struct Reviewing {
    pub(super) client: u64,
    pub(super) number: u32,
    /// "1 comment", "3 comments".
    pub(super) count: String,
}

impl ServerState {
    pub(super) fn review(
        &mut self,
        id: u64,
        session: &str,
        comments: &[Comment],
        fx: &mut Vec<ServerEffect>,
    ) {
        if let Err(message) = self.hand_review(id, session, comments, fx) {
            fx.push(ServerEffect::Tell {
                id,
                down: Down::Error { message },
            });
        }
    }

    fn hand_review(
        &mut self,
        id: u64,
        session: &str,
        comments: &[Comment],
        fx: &mut Vec<ServerEffect>,
    ) -> Result<(), String> {
        let number = self.table.find(Some(session))?;
        let label = self.label(number);
        if self.runs.get(&number) != Some(&Run::Running) {
            return Err(format!("session {label} is not running: the review was not sent"));
        }
        review::check(comments)?;
        self.table.touch(number);
        let count = match comments.len() {
            1 => "1 comment".to_string(),
            n => format!("{n} comments"),
        };
        self.drive.review_ticket += 1;
        let ticket = self.drive.review_ticket;
        let reviewing = Reviewing {
            client: id,
            number,
            count,
        };
        self.drive.reviewing.insert(ticket, reviewing);
        let text = review::message(comments);
        let ev = SessionMsg::Drive(ToSession::Review { ticket, text });
        fx.push(ServerEffect::ToSession { number, ev });
        Ok(())
    }

    /// Session `number` sent the review under `ticket` to pi, or could not (`error`).
    pub(super) fn reviewed(
        &mut self,
        number: u32,
        ticket: u64,
        error: Option<String>,
        fx: &mut Vec<ServerEffect>,
    ) {
        // Only the session the review was handed to answers for it.
        let r = match self.drive.reviewing.entry(ticket) {
            Entry::Occupied(e) if e.get().number == number => e.remove(),
            _ => return,
        };
        let label = self.label(number);
        let down = match error {
            None => Down::Done {
                message: format!("review sent to {label} ({})", r.count),
            },
            Some(why) => Down::Error {
                message: format!("the review was not sent to {label}: {why}"),
            },
        };
        fx.push(ServerEffect::Tell { id: r.client, down });
    }
}
