//! The server's list of sessions, without any I/O: numbers and names, which one was used last,
//! what `pokeshell ls` prints and what is saved for a restart.

use std::collections::BTreeMap;

use crate::session::SessionBrief;
use crate::spec::SessionSpec;
use crate::wire::Listing;

/// One session as the server keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Who the session is: its number (stable and small: prefix+1…9 switch by it; the lowest free
    /// one is given), name, directory and command line. The environment is not kept: it goes with
    /// the start, and a restored session gets the server's.
    pub spec: SessionSpec,
    pub created_wall_ms: u64,
    /// What the session last reported of itself.
    pub brief: Option<SessionBrief>,
    pub session_file: Option<String>,
    pub mid_run: bool,
    /// Higher: used more recently (attached to, or typed into).
    used: u64,
}

#[derive(Debug, Default)]
pub struct Table {
    entries: BTreeMap<u32, Entry>,
    uses: u64,
}

/// The name a session gets when none is asked for: its directory's last part.
fn default_name(dir: &str) -> String {
    let base = std::path::Path::new(dir)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "pi".to_string());
    crate::safe_text::to_name(&base)
}

impl Table {
    /// Adds a session; a name asked for must be free and must not be a number (numbers name
    /// sessions too). Returns its number.
    pub fn add(
        &mut self,
        name: Option<&str>,
        dir: &str,
        argv: Vec<String>,
        now_wall_ms: u64,
    ) -> Result<u32, String> {
        let name = match name.map(str::trim) {
            Some(n) if let Err(e) = crate::safe_text::check_name(n) => return Err(e),
            Some(n) if n.parse::<u32>().is_ok() => {
                return Err(format!(
                    "{n:?} cannot be a session's name: numbers are taken by the sessions' numbers"
                ));
            }
            Some(n) if self.entries.values().any(|e| e.spec.name == n) => {
                return Err(format!("a session named {n:?} exists already"));
            }
            Some(n) => n.to_string(),
            None => self.free_name(&default_name(dir)),
        };
        let number = self.free_number();
        self.insert(number, name, dir, argv, now_wall_ms);
        Ok(number)
    }

    /// Puts back a saved session under its old number and name when they are free.
    pub fn restore(
        &mut self,
        number: u32,
        name: &str,
        dir: &str,
        argv: Vec<String>,
        now_wall_ms: u64,
    ) -> u32 {
        // A list from disk may hold any text: a name no client could give is made into one.
        let name = crate::safe_text::to_name(name);
        let name = name.as_str();
        let free_name = !self.entries.values().any(|e| e.spec.name == name) && name.parse::<u32>().is_err();
        let name = if free_name {
            name.to_string()
        } else {
            self.free_name(name)
        };
        let number = if number > 0 && !self.entries.contains_key(&number) {
            number
        } else {
            self.free_number()
        };
        self.insert(number, name, dir, argv, now_wall_ms);
        number
    }

    fn free_number(&self) -> u32 {
        (1..).find(|n| !self.entries.contains_key(n)).unwrap_or(u32::MAX)
    }

    fn insert(&mut self, number: u32, name: String, dir: &str, argv: Vec<String>, now_wall_ms: u64) {
        self.uses += 1;
        let entry = Entry {
            spec: SessionSpec {
                number,
                name,
                dir: dir.to_string(),
                argv,
                ..SessionSpec::default()
            },
            created_wall_ms: now_wall_ms,
            brief: None,
            session_file: None,
            mid_run: false,
            used: self.uses,
        };
        self.entries.insert(number, entry);
    }

    fn free_name(&self, base: &str) -> String {
        let taken = |n: &str| self.entries.values().any(|e| e.spec.name == n);
        if !taken(base) {
            return base.to_string();
        }
        (2..)
            .map(|i| format!("{base}-{i}"))
            .find(|n| !taken(n))
            .unwrap_or_else(|| base.to_string())
    }

    /// The session a user means: by name, or by number; `None`: the one used last.
    pub fn find(&self, name: Option<&str>) -> Result<u32, String> {
        match name {
            None => self
                .entries
                .values()
                .max_by_key(|e| e.used)
                .map(|e| e.spec.number)
                .ok_or_else(|| "no sessions".to_string()),
            Some(n) => self
                .entries
                .values()
                .find(|e| e.spec.name == n)
                .or_else(|| n.parse::<u32>().ok().and_then(|k| self.entries.get(&k)))
                .map(|e| e.spec.number)
                .ok_or_else(|| format!("no session named {n:?} (see `pokeshell ls`)")),
        }
    }

    pub fn get(&self, number: u32) -> Option<&Entry> {
        self.entries.get(&number)
    }

    pub fn get_mut(&mut self, number: u32) -> Option<&mut Entry> {
        self.entries.get_mut(&number)
    }

    /// The session was attached to or typed into.
    pub fn touch(&mut self, number: u32) {
        self.uses += 1;
        if let Some(e) = self.entries.get_mut(&number) {
            e.used = self.uses;
        }
    }

    pub fn remove(&mut self, number: u32) -> Option<Entry> {
        self.entries.remove(&number)
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }

    /// Every session's brief, with the server's own knowledge (number, name, how many clients
    /// `attached` says follow it) on top.
    pub fn briefs(&self, attached: impl Fn(u32) -> usize) -> Vec<SessionBrief> {
        self.entries
            .values()
            .filter_map(|e| {
                let mut b = e.brief.clone()?;
                b.number = e.spec.number;
                b.name = e.spec.name.clone();
                b.dir = e.spec.dir.clone();
                b.attached = attached(e.spec.number);
                Some(b)
            })
            .collect()
    }

    /// What `pokeshell ls` shows, in number order.
    pub fn listing(&self, now_wall_ms: u64, attached: impl Fn(u32) -> usize) -> Vec<Listing> {
        self.entries
            .values()
            .map(|e| Listing {
                name: format!("{}:{}", e.spec.number, e.spec.name),
                dir: e.spec.dir.clone(),
                state: e
                    .brief
                    .as_ref()
                    .map_or_else(|| "starting".to_string(), |b| b.state.clone()),
                tool: e
                    .brief
                    .as_ref()
                    .and_then(|b| b.tool.as_ref())
                    .map(|(name, since)| format!("{name} {}s", now_wall_ms.saturating_sub(*since) / 1000)),
                tool_secs: e
                    .brief
                    .as_ref()
                    .and_then(|b| b.tool.as_ref())
                    .map(|(_, since)| now_wall_ms.saturating_sub(*since) / 1000),
                last_intervention: e.brief.as_ref().and_then(|b| b.last_intervention.clone()),
                age_secs: now_wall_ms.saturating_sub(e.created_wall_ms) / 1000,
                attached: attached(e.spec.number),
                tokens_in: e.brief.as_ref().map_or(0, |b| b.spend.input),
                tokens_out: e.brief.as_ref().map_or(0, |b| b.spend.output),
                cache_read: e.brief.as_ref().map_or(0, |b| b.spend.cache_read),
                cost_usd: e.brief.as_ref().and_then(|b| b.spend.cost()),
                attention: e
                    .brief
                    .as_ref()
                    .map_or_else(String::new, |b| b.attention.keyword().to_string()),
                branch: None,
                dirty: None,
                context_percent: e.brief.as_ref().and_then(|b| b.context_percent),
                offer: e.brief.as_ref().and_then(|b| b.offer.clone()),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv() -> Vec<String> {
        vec!["--".into(), "--model".into(), "m".into()]
    }

    #[test]
    fn names_default_to_the_directory_and_stay_unique() {
        let mut t = Table::default();
        let a = t.add(None, "/home/u/web app", argv(), 0).unwrap();
        let b = t.add(None, "/srv/web app", argv(), 0).unwrap();
        assert_eq!((a, b), (1, 2));
        assert_eq!(t.get(a).unwrap().spec.name, "web-app");
        assert_eq!(t.get(b).unwrap().spec.name, "web-app-2");
        assert_eq!(
            t.add(None, "/", argv(), 0)
                .map(|n| t.get(n).unwrap().spec.name.clone()),
            Ok("pi".into())
        );
    }

    #[test]
    fn a_name_asked_for_must_be_free_and_not_a_number() {
        let mut t = Table::default();
        t.add(Some("api"), "/a", argv(), 0).unwrap();
        assert!(
            t.add(Some("api"), "/b", argv(), 0)
                .unwrap_err()
                .contains("exists already")
        );
        assert!(t.add(Some("7"), "/b", argv(), 0).unwrap_err().contains("numbers"));
        assert!(t.add(Some(" "), "/b", argv(), 0).unwrap_err().contains("empty"));
    }

    #[test]
    fn the_lowest_free_number_is_reused() {
        let mut t = Table::default();
        for d in ["/a", "/b", "/c"] {
            t.add(None, d, argv(), 0).unwrap();
        }
        t.remove(2);
        assert_eq!(t.add(None, "/d", argv(), 0), Ok(2));
        assert_eq!(t.add(None, "/e", argv(), 0), Ok(4));
    }

    #[test]
    fn find_by_name_by_number_or_the_one_used_last() {
        let mut t = Table::default();
        assert_eq!(t.find(None), Err("no sessions".into()));
        let a = t.add(Some("api"), "/a", argv(), 0).unwrap();
        let b = t.add(Some("web"), "/b", argv(), 0).unwrap();
        assert_eq!(t.find(None), Ok(b), "the newest was used last");
        t.touch(a);
        assert_eq!(t.find(None), Ok(a));
        assert_eq!(t.find(Some("web")), Ok(b));
        assert_eq!(t.find(Some("2")), Ok(b));
        assert!(t.find(Some("nope")).unwrap_err().contains("no session named"));
    }

    #[test]
    fn a_restored_session_keeps_its_number_and_name_when_free() {
        let mut t = Table::default();
        assert_eq!(t.restore(3, "api", "/a", argv(), 0), 3);
        assert_eq!(t.restore(3, "api", "/b", argv(), 0), 1);
        assert_eq!(t.get(1).unwrap().spec.name, "api-2");
    }

    #[test]
    fn the_listing_carries_what_ls_prints() {
        let mut t = Table::default();
        let n = t.add(Some("api"), "/a", argv(), 1_000).unwrap();
        let e = t.get_mut(n).unwrap();
        e.brief = Some(SessionBrief {
            tool: Some(("bash".into(), 49_000)),
            created_wall_ms: 1_000,
            ..SessionBrief::new(n, "api", "/a", crate::session::Attention::Working, "working")
        });
        let l = t.listing(61_000, |n| if n == 1 { 2 } else { 0 });
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].name, "1:api");
        assert_eq!(l[0].state, "working");
        assert_eq!(l[0].tool.as_deref(), Some("bash 12s"));
        assert_eq!(l[0].age_secs, 60);
        assert_eq!(l[0].attached, 2, "as the server counts its clients");
    }
}
