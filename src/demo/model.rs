//! A scripted OpenAI-compatible model server on the loopback interface, for `pokeshell demo` and
//! the tests: pi talks to it as to a real provider, and the script decides every answer.
//!
//! Which step answers a `POST /v1/chat/completions`:
//! 1. a compaction-summary request (no tools, pi's summarization system prompt) takes the next
//!    summary step, else the default summary;
//! 2. otherwise, when the last message is a user message holding directives (`[[text:Hi]]`, see
//!    `directive.rs`), those script the answer;
//! 3. otherwise the next queued step, else the default step.
//!
//! Every request is recorded before it is answered. Threads, not async: the server must run the same
//! under a test, a tokio runtime or nothing at all.

mod conn;
mod directive;
mod error_reply;
mod http;
mod record;
mod scenario;
mod sse;
mod step;

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io;
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

pub use directive::parse as parse_directives;
pub use record::{AnsweredBy, RecordedRequest, RequestKind};
pub use scenario::Scenario;
pub use step::{DEFAULT_KEEP_ALIVE_MS, Reply, Step, ToolCall};

/// The model ids `GET /v1/models` lists: those of the tests' provider (`pi_files::MOCK`).
pub const MODEL_IDS: [&str; 3] = ["mock-model", "mock-tiny", "mock-reasoner"];

const DEFAULT_TEXT: &str = "This is the scripted model: nothing was queued for this request. \
    Put a directive such as [[text:hello]] or [[bash:ls]] in your prompt to choose the answer.";
const DEFAULT_SUMMARY: &str = "## Goal\nContinue the scripted session.\n\n## Progress\nEarlier turns were \
    summarized by the scripted model.\n\n## Next Steps\nCarry on with the task.";

/// The running server. Dropping it stops it: open connections are closed, threads are joined.
pub struct ModelServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

/// A wait ran out of time; says what was awaited and what was seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitTimeout {
    pub waited_for: String,
    pub seen: usize,
    pub timeout: Duration,
}

impl fmt::Display for WaitTimeout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "timed out after {:?} waiting for {} (saw {})",
            self.timeout, self.waited_for, self.seen
        )
    }
}

impl std::error::Error for WaitTimeout {}

pub(crate) struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    started: Instant,
}

/// Decides the answer to a request from the request itself (its body, and whether it asks for a
/// compaction summary), before any queued step: `None` leaves it to the usual order.
pub type Policy = dyn Fn(&serde_json::Value, bool) -> Option<Step> + Send + Sync;

pub(crate) struct State {
    policy: Option<Arc<Policy>>,
    steps: VecDeque<Step>,
    summaries: VecDeque<Step>,
    default_step: Step,
    default_summary: Step,
    requests: Vec<RecordedRequest>,
    shutdown: bool,
    /// Bumped by `release_hangs`: a hang or stall started before the bump ends.
    release_generation: u64,
    hanging: usize,
    conns: HashMap<u64, TcpStream>,
}

impl ModelServer {
    /// Starts on 127.0.0.1 with a random free port.
    pub fn start() -> io::Result<ModelServer> {
        ModelServer::start_on(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
    }

    /// Starts on `addr`, which must be a loopback address: the scripted model never listens
    /// beyond this machine.
    pub fn start_on(addr: SocketAddr) -> io::Result<ModelServer> {
        if !addr.ip().is_loopback() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("the scripted model listens on loopback only, not {addr}"),
            ));
        }
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                policy: None,
                steps: VecDeque::new(),
                summaries: VecDeque::new(),
                default_step: Step::text(DEFAULT_TEXT),
                default_summary: Step::text(DEFAULT_SUMMARY),
                requests: Vec::new(),
                shutdown: false,
                release_generation: 0,
                hanging: 0,
                conns: HashMap::new(),
            }),
            wake: Condvar::new(),
            started: Instant::now(),
        });
        let acceptor_shared = Arc::clone(&shared);
        let acceptor = thread::Builder::new()
            .name("model-accept".into())
            .spawn(move || accept_loop(listener, acceptor_shared))?;
        Ok(ModelServer {
            addr,
            shared,
            acceptor: Some(acceptor),
        })
    }

    /// Starts and loads `scenario`.
    pub fn with_scenario(scenario: Scenario) -> io::Result<ModelServer> {
        let server = ModelServer::start()?;
        server.load(scenario);
        Ok(server)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// When the server started: a recorded request's `at` counts from it (for timings against the
    /// test's own clock).
    pub fn started(&self) -> Instant {
        self.shared.started
    }

    /// The `baseUrl` for pi's models.json: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Queues `scenario`'s steps and summaries after those already queued; its default, if any,
    /// replaces the current one.
    pub fn load(&self, scenario: Scenario) {
        let mut state = self.shared.lock();
        state.steps.extend(scenario.steps);
        state.summaries.extend(scenario.summaries);
        if let Some(default) = scenario.default {
            state.default_step = default;
        }
    }

    /// Drops whatever is still queued (steps and summaries), then loads `scenario` as [`Self::load`]
    /// does: a demo chapter starts from its own script, whatever the last one left unused.
    pub fn replace(&self, scenario: Scenario) {
        let mut state = self.shared.lock();
        state.steps.clear();
        state.summaries.clear();
        state.steps.extend(scenario.steps);
        state.summaries.extend(scenario.summaries);
        if let Some(default) = scenario.default {
            state.default_step = default;
        }
    }

    /// Every request asks `policy` first (the soak's model works through its tasks so, from what
    /// the conversation holds).
    pub fn set_policy(&self, policy: Arc<Policy>) {
        self.shared.lock().policy = Some(policy);
    }

    /// Queues a reply for the next ordinary request.
    pub fn push(&self, step: Step) {
        self.shared.lock().steps.push_back(step);
    }

    pub fn push_all(&self, steps: impl IntoIterator<Item = Step>) {
        self.shared.lock().steps.extend(steps);
    }

    /// Queues a reply for the next compaction-summary request.
    pub fn push_summary(&self, step: Step) {
        self.shared.lock().summaries.push_back(step);
    }

    /// The reply when nothing is queued and the prompt holds no directive.
    pub fn set_default(&self, step: Step) {
        self.shared.lock().default_step = step;
    }

    /// The reply to summary requests when the summary queue is empty.
    pub fn set_default_summary(&self, step: Step) {
        self.shared.lock().default_summary = step;
    }

    /// Steps still queued (ordinary, summary).
    pub fn pending(&self) -> (usize, usize) {
        let state = self.shared.lock();
        (state.steps.len(), state.summaries.len())
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// Requests to the model (chat and summary), in arrival order.
    pub fn model_requests(&self) -> Vec<RecordedRequest> {
        self.requests().into_iter().filter(is_model_request).collect()
    }

    /// Ordinary chat requests (no summaries), in arrival order.
    pub fn chat_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.kind == RequestKind::Chat)
            .collect()
    }

    pub fn summary_requests(&self) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.kind == RequestKind::Summary)
            .collect()
    }

    /// The last user message's text in the latest chat request.
    pub fn last_user_text(&self) -> Option<String> {
        self.chat_requests()
            .last()
            .and_then(RecordedRequest::last_user_text)
    }

    /// Waits until at least `n` model requests (chat or summary) have arrived; returns them all.
    pub fn wait_for_requests(
        &self,
        n: usize,
        timeout: Duration,
    ) -> Result<Vec<RecordedRequest>, WaitTimeout> {
        self.wait_until(&format!("{n} model requests"), timeout, |reqs| {
            reqs.iter().filter(|r| is_model_request(r)).count() >= n
        })
        .map(|reqs| reqs.into_iter().filter(is_model_request).collect())
    }

    /// Waits until `done` holds for the recorded requests; returns them.
    pub fn wait_until(
        &self,
        what: &str,
        timeout: Duration,
        mut done: impl FnMut(&[RecordedRequest]) -> bool,
    ) -> Result<Vec<RecordedRequest>, WaitTimeout> {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        loop {
            if done(&state.requests) {
                return Ok(state.requests.clone());
            }
            let now = Instant::now();
            if now >= deadline {
                let seen = state.requests.len();
                return Err(WaitTimeout {
                    waited_for: what.to_string(),
                    seen,
                    timeout,
                });
            }
            state = self.shared.wait(state, deadline - now);
        }
    }

    /// How many connections are holding a `hang` or `stall` reply right now.
    pub fn hanging(&self) -> usize {
        self.shared.lock().hanging
    }

    /// Waits until exactly `n` connections hold a `hang` or `stall` reply (0: every held client
    /// went away or was released).
    pub fn wait_for_hanging(&self, n: usize, timeout: Duration) -> Result<(), WaitTimeout> {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        while state.hanging != n {
            let now = Instant::now();
            if now >= deadline {
                let seen = state.hanging;
                return Err(WaitTimeout {
                    waited_for: format!("{n} hanging replies"),
                    seen,
                    timeout,
                });
            }
            state = self.shared.wait(state, deadline - now);
        }
        Ok(())
    }

    /// Ends every `hang` and `stall` reply in progress (each then does what its step says).
    pub fn release_hangs(&self) {
        self.shared.lock().release_generation += 1;
        self.shared.wake.notify_all();
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        {
            let mut state = self.shared.lock();
            state.shutdown = true;
            for stream in state.conns.values() {
                let _ = stream.shutdown(Shutdown::Both);
            }
        }
        self.shared.wake.notify_all();
        // The acceptor is blocked in accept(); a connection of our own wakes it up. If even that
        // fails the thread is left behind rather than hanging the drop.
        let woke = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)).is_ok();
        if let Some(acceptor) = self.acceptor.take()
            && woke
        {
            let _ = acceptor.join();
        }
    }
}

fn is_model_request(r: &RecordedRequest) -> bool {
    matches!(r.kind, RequestKind::Chat | RequestKind::Summary)
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut workers: Vec<JoinHandle<()>> = Vec::new();
    let mut next_id = 0u64;
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let registered = {
            let mut state = shared.lock();
            if state.shutdown {
                break;
            }
            next_id += 1;
            match stream.try_clone() {
                Ok(clone) => {
                    state.conns.insert(next_id, clone);
                    true
                }
                Err(_) => false,
            }
        };
        if !registered {
            continue;
        }
        let conn_shared = Arc::clone(&shared);
        let id = next_id;
        let spawned = thread::Builder::new()
            .name(format!("model-conn-{id}"))
            .spawn(move || conn::serve(&conn_shared, stream, id));
        match spawned {
            Ok(handle) => workers.push(handle),
            Err(_) => {
                shared.lock().conns.remove(&id);
            }
        }
        workers.retain(|w| !w.is_finished());
    }
    for worker in workers {
        let _ = worker.join();
    }
}

impl Shared {
    /// The state lock; a panic elsewhere never poisons the server for good.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn wait<'a>(&self, guard: MutexGuard<'a, State>, at_most: Duration) -> MutexGuard<'a, State> {
        match self.wake.wait_timeout(guard, at_most) {
            Ok((guard, _)) => guard,
            Err(poisoned) => poisoned.into_inner().0,
        }
    }

    /// Sleeps for `d` unless the server shuts down first; false on shutdown.
    pub(crate) fn pause(&self, d: Duration) -> bool {
        let deadline = Instant::now() + d;
        let mut state = self.lock();
        loop {
            if state.shutdown {
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                return true;
            }
            state = self.wait(state, deadline - now);
        }
    }
}
