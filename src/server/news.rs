//! What the server did without anyone asking that the user must hear of: a saved list set aside or
//! left alone, a session not brought back as it was. Each is written to the server's log at once
//! and told once to the next client that lists, kills or opens a session.

use super::serve::Server;
use pokeshell_core::wire::Down;

#[derive(Debug, Default)]
pub struct News {
    pending: Vec<String>,
}

impl News {
    /// Logs `message` (the server's stderr is its log) and keeps it for the next client.
    pub fn say(&mut self, message: String) {
        eprintln!("pokeshell server: {message}");
        self.pending.push(message);
    }

    /// What is still to be told; told, it is forgotten.
    pub fn take(&mut self) -> Vec<String> {
        std::mem::take(&mut self.pending)
    }
}

impl Server {
    /// Tells client `id` what it has not heard yet; returns it, for a session the client opens.
    pub(super) fn tell_news(&mut self, id: u64) -> Vec<String> {
        let news = self.news.take();
        for message in &news {
            self.tell(
                id,
                Down::Notice {
                    message: message.clone(),
                },
            );
        }
        news
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn news_is_told_once() {
        let mut news = News::default();
        news.say("a".into());
        news.say("b".into());
        assert_eq!(news.take(), vec!["a".to_string(), "b".to_string()]);
        assert!(news.take().is_empty());
    }
}
