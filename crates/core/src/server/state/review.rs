//! A review from the web view's Changes view (`Up::Review`): checked, made into one message for the
//! agent (`diff::review`), and handed to the session, whose supervisor sends it.

use super::{Run, ServerEffect, ServerState, SessionMsg};
use crate::diff::review::{self, Comment};
use crate::wire::Down;

impl ServerState {
    pub(super) fn review(
        &mut self,
        id: u64,
        session: &str,
        comments: &[Comment],
        fx: &mut Vec<ServerEffect>,
    ) {
        let down = match self.hand_review(session, comments, fx) {
            Ok(message) => Down::Done { message },
            Err(message) => Down::Error { message },
        };
        fx.push(ServerEffect::Tell { id, down });
    }

    fn hand_review(
        &mut self,
        session: &str,
        comments: &[Comment],
        fx: &mut Vec<ServerEffect>,
    ) -> Result<String, String> {
        let number = self.table.find(Some(session))?;
        let label = self.label(number);
        if self.runs.get(&number) != Some(&Run::Running) {
            return Err(format!("session {label} is not running: the review was not sent"));
        }
        review::check(comments)?;
        self.table.touch(number);
        let ev = SessionMsg::Review(review::message(comments));
        fx.push(ServerEffect::ToSession { number, ev });
        let count = match comments.len() {
            1 => "1 comment".to_string(),
            n => format!("{n} comments"),
        };
        Ok(format!("review sent to {label} ({count})"))
    }
}
