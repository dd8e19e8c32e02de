//! The one table of settings: every key pokeshell reads, with its block, type, range, default, group and
//! wording. Validation, the settings dialog, `--show-config` and docs/configuration.md all follow it.

use super::value::SettingValue;

/// The JSON object a key lives in, inside pi's `settings.json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Block {
    /// pi-poke's block, `"poke"`.
    Poke,
    /// The stalled-agent recovery keys, `"stalledAgentRecovery"`.
    Recovery,
    /// The handoff keys, `"handoff"`.
    Handoff,
    /// pokeshell's own keys, `"pokeshell"`.
    Pokeshell,
}

impl Block {
    pub const ALL: [Block; 4] = [Block::Poke, Block::Recovery, Block::Handoff, Block::Pokeshell];

    /// The name of the block's object in `settings.json`.
    pub fn json_name(self) -> &'static str {
        match self {
            Block::Poke => "poke",
            Block::Recovery => "stalledAgentRecovery",
            Block::Handoff => "handoff",
            Block::Pokeshell => "pokeshell",
        }
    }
}

/// The areas the settings dialog groups its rows by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Group {
    Poke,
    Recovery,
    Wakeups,
    Handoff,
    Guards,
    Display,
}

impl Group {
    pub fn title(self) -> &'static str {
        match self {
            Group::Poke => "Poke",
            Group::Recovery => "Recovery",
            Group::Wakeups => "Wakeups",
            Group::Handoff => "Handoff",
            Group::Guards => "Guard rails",
            Group::Display => "Display",
        }
    }
}

/// Every setting pokeshell resolves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeyId {
    PokeEnabled,
    PokeThresholdSeconds,
    PokeAutoAbort,
    PokeAutoPoke,
    PokePostCompactPoke,
    PokePostCompactCooldownSeconds,
    PokePostCompactMaxPokes,
    PokeUnresponsiveSeconds,
    PokeMaxRestartsPerHour,
    PokeStreamStallSeconds,
    PokeProviderRetryMaxMinutes,
    RecoveryMaxRetries,
    RecoveryLoopThreshold,
    RecoveryMaxLoopNudges,
    RecoveryPromisePoke,
    RecoveryMaxPromisePokes,
    RecoveryPromiseSecondOpinion,
    InjectionCooldownSeconds,
    WakeupMinSeconds,
    WakeupMaxSeconds,
    HandoffPercent,
    HandoffEnabled,
    HandoffSave,
    BudgetUsd,
    DailyBudgetUsd,
    MaxCallsPerRun,
    SameCallRepeats,
    AlternatingRepeats,
    SameReplyRepeats,
    IdlePokes,
    PollWaitSeconds,
    PrefixKey,
    SidePaneWidth,
    SidePaneVisibility,
    Notifications,
    Bell,
    NotifyCommand,
    CostWarnUsd,
    WindowTitle,
    Machines,
    MachineTimeoutSeconds,
    WebListen,
    PushWhen,
    AwayMinutes,
    QuietHours,
    PushFinished,
    NtfyUrl,
    WebPublicUrl,
    WebHosts,
    WebTlsCert,
    WebTlsKey,
}

/// The type and the accepted range of a key.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ValueKind {
    /// JSON `true` / `false`.
    Bool,
    /// A whole JSON number from `min` to `max`, both included.
    Int { min: i64, max: i64 },
    /// 0 (off), or a whole JSON number from `min` to `max`: a threshold where 1 would mean "every
    /// time" (the guard rails' repeats).
    IntOrOff { min: i64, max: i64 },
    /// A finite JSON number above `above` (excluded) and at most `max`.
    Number { above: f64, max: f64 },
    /// A finite JSON number from `min` to `max`, both included.
    NumberFrom { min: f64, max: f64 },
    /// One of a fixed list of strings.
    Choice(&'static [&'static str]),
    /// A key chord such as `ctrl+]` (see `input::prefix`).
    KeyChord,
    /// One line of text, at most `max_chars` characters; empty is allowed (and means "none").
    Text { max_chars: usize },
    /// A span of the day in local time, `HH:MM-HH:MM`; empty is allowed (none). See `config::hours`.
    Hours,
}

impl ValueKind {
    /// Whether the number `n` lies in a number kind's range (`false` for the other kinds).
    pub fn number_in_range(&self, n: f64) -> bool {
        match *self {
            ValueKind::Number { above, max } => n > above && n <= max,
            ValueKind::NumberFrom { min, max } => n >= min && n <= max,
            _ => false,
        }
    }
}

/// How a value is shown next to its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    None,
    Seconds,
    Percent,
    Columns,
}

/// A default value, kept `Copy` so the table can be a `static`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DefaultValue {
    Bool(bool),
    Int(i64),
    Number(f64),
    Choice(&'static str),
    Text(&'static str),
}

impl DefaultValue {
    pub fn to_value(self) -> SettingValue {
        match self {
            DefaultValue::Bool(b) => SettingValue::Bool(b),
            DefaultValue::Int(i) => SettingValue::Int(i),
            DefaultValue::Number(n) => SettingValue::Number(n),
            DefaultValue::Choice(c) => SettingValue::Choice(c),
            DefaultValue::Text(t) => SettingValue::Text(t.to_string()),
        }
    }
}

/// One row of the schema.
#[derive(Clone, Copy, Debug)]
pub struct KeySpec {
    pub id: KeyId,
    pub block: Block,
    /// The key's name inside its block (and inside the extension's own JSON file, where it has one).
    pub name: &'static str,
    pub group: Group,
    pub kind: ValueKind,
    pub unit: Unit,
    pub default: DefaultValue,
    /// The dialog's label.
    pub label: &'static str,
    /// One or two sentences for the dialog and the docs.
    pub description: &'static str,
}

impl KeySpec {
    /// `block.name`, the name used in warnings, `--show-config` and the docs.
    pub fn full_name(&self) -> String {
        format!("{}.{}", self.block.json_name(), self.name)
    }

    pub fn default_value(&self) -> SettingValue {
        self.default.to_value()
    }

    /// The accepted range in words, e.g. "a whole number from 1 to 86400".
    pub fn range_text(&self) -> String {
        match self.kind {
            ValueKind::Bool => "true or false".to_string(),
            ValueKind::Int { min, max } => format!("a whole number from {min} to {max}"),
            ValueKind::IntOrOff { min, max } => format!("0 (off) or a whole number from {min} to {max}"),
            ValueKind::Number { above, max } => format!("a number above {above} and at most {max}"),
            ValueKind::NumberFrom { min, max } => format!("a number from {min} to {max}"),
            ValueKind::Choice(choices) => format!("one of {}", choices.join(", ")),
            ValueKind::KeyChord => "ctrl+ a letter, space, or one of \\ ] ^ _".to_string(),
            ValueKind::Text { max_chars } => {
                format!("one line of at most {max_chars} characters; empty for none")
            }
            ValueKind::Hours => "a span of the day such as 22:00-07:00; empty for none".to_string(),
        }
    }

    /// The type's name for the docs and `--show-config`.
    pub fn type_name(&self) -> &'static str {
        match self.kind {
            ValueKind::Bool => "boolean",
            ValueKind::Int { .. } | ValueKind::IntOrOff { .. } => "integer",
            ValueKind::Number { .. } | ValueKind::NumberFrom { .. } => "number",
            ValueKind::Choice(_) => "string (choice)",
            ValueKind::KeyChord => "string (key)",
            ValueKind::Text { .. } => "string",
            ValueKind::Hours => "string (HH:MM-HH:MM)",
        }
    }

    /// Taken only from the global files (and the session and command line), never from a project's:
    /// a value that runs a command must not come with a repository someone else wrote (nor one that
    /// opens the web view to a network).
    pub fn global_only(&self) -> bool {
        matches!(
            self.id,
            KeyId::NotifyCommand
                | KeyId::Machines
                | KeyId::WebListen
                | KeyId::WebPublicUrl
                | KeyId::WebHosts
                | KeyId::WebTlsCert
                | KeyId::WebTlsKey
                | KeyId::NtfyUrl
                | KeyId::DailyBudgetUsd
        )
    }
}

const SIDE_PANE_CHOICES: &[&str] = &["auto", "shown", "hidden"];
const WINDOW_TITLE_CHOICES: &[&str] = &["auto", "on", "off"];
const PUSH_WHEN_CHOICES: &[&str] = &["away", "always", "never"];
/// Where `pokeshell web` listens unless told otherwise: loopback only (docs/web.md).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7878";
const DAY_SECONDS: i64 = 86_400;

/// The schema, in the dialog's order (grouped by area).
pub static KEYS: [KeySpec; 51] = [
    KeySpec {
        id: KeyId::PokeEnabled,
        block: Block::Poke,
        name: "enabled",
        group: Group::Poke,
        kind: ValueKind::Bool,
        unit: Unit::None,
        default: DefaultValue::Bool(true),
        label: "Watch and poke automatically",
        description: "Master switch for everything pokeshell does on its own: the long-tool watch, \
                      auto-abort and the automatic pokes. Manual pokes work either way.",
    },
    KeySpec {
        id: KeyId::PokeThresholdSeconds,
        block: Block::Poke,
        name: "thresholdSeconds",
        group: Group::Poke,
        kind: ValueKind::Int {
            min: 1,
            max: DAY_SECONDS,
        },
        unit: Unit::Seconds,
        default: DefaultValue::Int(30),
        label: "Long tool call threshold",
        description: "Seconds a tool call may run before it counts as overdue (footer warning, \
                      auto-abort, orphaned-tool poke).",
    },
    KeySpec {
        id: KeyId::PokeAutoAbort,
        block: Block::Poke,
        name: "autoAbort",
        group: Group::Poke,
        kind: ValueKind::Bool,
        unit: Unit::None,
        default: DefaultValue::Bool(false),
        label: "Abort overdue tool calls",
        description: "Abort the agent when a tool call passes the threshold. Turning it on turns \
                      the orphaned-tool poke off.",
    },
    KeySpec {
        id: KeyId::PokeAutoPoke,
        block: Block::Poke,
        name: "autoPoke",
        group: Group::Poke,
        kind: ValueKind::Bool,
        unit: Unit::None,
        default: DefaultValue::Bool(true),
        label: "Poke when a run dies mid-tool",
        description: "Ask the agent to resume when its run was interrupted while a tool call kept \
                      running past the threshold. Turning it on turns auto-abort off.",
    },
    KeySpec {
        id: KeyId::PokePostCompactPoke,
        block: Block::Poke,
        name: "postCompactPoke",
        group: Group::Poke,
        kind: ValueKind::Bool,
        unit: Unit::None,
        default: DefaultValue::Bool(true),
        label: "Poke after a compaction stall",
        description: "Ask the agent to resume when an automatic compaction interrupted its work \
                      and it did not pick it up again.",
    },
    KeySpec {
        id: KeyId::PokePostCompactCooldownSeconds,
        block: Block::Poke,
        name: "postCompactCooldownSeconds",
        group: Group::Poke,
        kind: ValueKind::Int {
            min: 0,
            max: DAY_SECONDS,
        },
        unit: Unit::Seconds,
        default: DefaultValue::Int(30),
        label: "Pause between pokes",
        description: "Least time between two automatic pokes of one stall episode.",
    },
    KeySpec {
        id: KeyId::PokePostCompactMaxPokes,
        block: Block::Poke,
        name: "postCompactMaxPokes",
        group: Group::Poke,
        kind: ValueKind::Int { min: 1, max: 100 },
        unit: Unit::None,
        default: DefaultValue::Int(2),
        label: "Pokes per stall episode",
        description: "Automatic pokes allowed before pokeshell gives up on one stall episode.",
    },
    KeySpec {
        id: KeyId::PokeUnresponsiveSeconds,
        block: Block::Poke,
        name: "unresponsiveSeconds",
        group: Group::Poke,
        kind: ValueKind::Int {
            min: 0,
            max: DAY_SECONDS,
        },
        unit: Unit::Seconds,
        default: DefaultValue::Int(90),
        label: "Restart a frozen pi after",
        description: "Seconds without a heartbeat from the bridge and without screen output \
                      after which pi counts as frozen and is restarted on its session; 0 turns \
                      the watch off.",
    },
    KeySpec {
        id: KeyId::PokeMaxRestartsPerHour,
        block: Block::Poke,
        name: "maxRestartsPerHour",
        group: Group::Poke,
        kind: ValueKind::Int { min: 0, max: 100 },
        unit: Unit::None,
        default: DefaultValue::Int(3),
        label: "Restarts of pi per hour",
        description: "Times pokeshell restarts a frozen or crashed pi within an hour before it \
                      stops and tells you; 0 never restarts.",
    },
    KeySpec {
        id: KeyId::PokeStreamStallSeconds,
        block: Block::Poke,
        name: "streamStallSeconds",
        group: Group::Poke,
        kind: ValueKind::Int {
            min: 0,
            max: DAY_SECONDS,
        },
        unit: Unit::Seconds,
        default: DefaultValue::Int(120),
        label: "Stalled stream limit",
        description: "Seconds a run may go without any sign of life (no streamed token, no event, no \
                      tool running) before pokeshell aborts it and asks the agent to go on; 0 turns \
                      this off.",
    },
    KeySpec {
        id: KeyId::PokeProviderRetryMaxMinutes,
        block: Block::Poke,
        name: "providerRetryMaxMinutes",
        group: Group::Poke,
        kind: ValueKind::Int { min: 0, max: 10_080 },
        unit: Unit::None,
        default: DefaultValue::Int(300),
        label: "Provider error waits (minutes)",
        description: "After pi's own retries give up on a rate limit, overload or network error, \
                      pokeshell waits for the provider's reset time (or a backoff) and resumes, for \
                      at most this many minutes in all; 0 turns this off.",
    },
    KeySpec {
        id: KeyId::RecoveryMaxRetries,
        block: Block::Recovery,
        name: "maxRetries",
        group: Group::Recovery,
        kind: ValueKind::Int { min: 0, max: 100 },
        unit: Unit::None,
        default: DefaultValue::Int(5),
        label: "Retries of an empty reply",
        description: "Times an empty or thinking-only reply is retried in a row; 0 turns the retry off.",
    },
    KeySpec {
        id: KeyId::RecoveryLoopThreshold,
        block: Block::Recovery,
        name: "loopThreshold",
        group: Group::Recovery,
        kind: ValueKind::Int { min: 1, max: 100 },
        unit: Unit::None,
        default: DefaultValue::Int(5),
        label: "Identical failures per nudge",
        description: "A nudge is sent each time the same failing tool call reaches another \
                      multiple of this count.",
    },
    KeySpec {
        id: KeyId::RecoveryMaxLoopNudges,
        block: Block::Recovery,
        name: "maxLoopNudges",
        group: Group::Recovery,
        kind: ValueKind::Int { min: 1, max: 100 },
        unit: Unit::None,
        default: DefaultValue::Int(3),
        label: "Loop nudges before giving up",
        description: "Nudges about one repeated failing call before pokeshell stops intervening.",
    },
    KeySpec {
        id: KeyId::RecoveryPromisePoke,
        block: Block::Recovery,
        name: "promisePoke",
        group: Group::Recovery,
        kind: ValueKind::Bool,
        unit: Unit::None,
        default: DefaultValue::Bool(true),
        label: "Poke promise endings",
        description: "When a run ends on a step the agent announced but did not take (\"Now I'll run \
                      the tests:\"), pokeshell quotes the step back and asks the agent to take it or \
                      to say what it needs from you.",
    },
    KeySpec {
        id: KeyId::RecoveryMaxPromisePokes,
        block: Block::Recovery,
        name: "maxPromisePokes",
        group: Group::Recovery,
        kind: ValueKind::Int { min: 0, max: 100 },
        unit: Unit::None,
        default: DefaultValue::Int(2),
        label: "Promise pokes per episode",
        description: "Promise pokes in a row, until you type or a run ends without a promise; 0 \
                      turns them off.",
    },
    KeySpec {
        id: KeyId::RecoveryPromiseSecondOpinion,
        block: Block::Recovery,
        name: "promiseSecondOpinion",
        group: Group::Recovery,
        kind: ValueKind::Bool,
        unit: Unit::None,
        default: DefaultValue::Bool(false),
        label: "Ask model when unsure",
        description: "For an ending pokeshell is unsure of, it first asks the session's own model a \
                      one-line question (a small paid request, its cost in the ledger); when off, \
                      unsure endings after a run with tool calls are poked without asking.",
    },
    KeySpec {
        id: KeyId::InjectionCooldownSeconds,
        block: Block::Pokeshell,
        name: "injectionCooldownSeconds",
        group: Group::Recovery,
        kind: ValueKind::Int { min: 0, max: 3600 },
        unit: Unit::Seconds,
        default: DefaultValue::Int(5),
        label: "Pause between any injections",
        description: "Least time between any two messages pokeshell sends on its own, whatever \
                      sent them; 0 turns this limit off.",
    },
    KeySpec {
        id: KeyId::WakeupMinSeconds,
        block: Block::Pokeshell,
        name: "wakeupMinSeconds",
        group: Group::Wakeups,
        kind: ValueKind::Int { min: 1, max: 3600 },
        unit: Unit::Seconds,
        default: DefaultValue::Int(60),
        label: "Shortest wakeup delay",
        description: "Requested wakeup delays below this are raised to it. Values under 60 are \
                      meant for tests and demos.",
    },
    KeySpec {
        id: KeyId::WakeupMaxSeconds,
        block: Block::Pokeshell,
        name: "wakeupMaxSeconds",
        group: Group::Wakeups,
        kind: ValueKind::Int {
            min: 1,
            max: DAY_SECONDS,
        },
        unit: Unit::Seconds,
        default: DefaultValue::Int(3600),
        label: "Longest wakeup delay",
        description: "Requested wakeup delays above this are lowered to it.",
    },
    KeySpec {
        id: KeyId::HandoffPercent,
        block: Block::Handoff,
        name: "percent",
        group: Group::Handoff,
        kind: ValueKind::Number {
            above: 0.0,
            max: 100.0,
        },
        unit: Unit::Percent,
        default: DefaultValue::Number(80.0),
        label: "Hand off at context use",
        description: "Context use, in percent of the window, at which a settled agent is \
                      compacted with a handoff document.",
    },
    KeySpec {
        id: KeyId::HandoffEnabled,
        block: Block::Handoff,
        name: "enabled",
        group: Group::Handoff,
        kind: ValueKind::Bool,
        unit: Unit::None,
        default: DefaultValue::Bool(true),
        label: "Automatic handoff",
        description: "Hand off automatically at the percentage above. A handoff asked for by \
                      hand works either way.",
    },
    KeySpec {
        id: KeyId::HandoffSave,
        block: Block::Handoff,
        name: "save",
        group: Group::Handoff,
        kind: ValueKind::Bool,
        unit: Unit::None,
        default: DefaultValue::Bool(true),
        label: "Keep handoff documents",
        description: "Write each handoff document as a file next to the session file.",
    },
    // The guard rails for unattended runs (docs/supervision.md, "Guard rails").
    KeySpec {
        id: KeyId::BudgetUsd,
        block: Block::Pokeshell,
        name: "budgetUsd",
        group: Group::Guards,
        kind: ValueKind::NumberFrom {
            min: 0.0,
            max: 10_000.0,
        },
        unit: Unit::None,
        default: DefaultValue::Number(25.0),
        label: "Session budget (USD)",
        description: "What one session may cost, as pi prices its model's tokens, before pokeshell stops \
                      its run and asks you to allow more; 0 sets no budget.",
    },
    KeySpec {
        id: KeyId::DailyBudgetUsd,
        block: Block::Pokeshell,
        name: "dailyBudgetUsd",
        group: Group::Guards,
        kind: ValueKind::NumberFrom {
            min: 0.0,
            max: 100_000.0,
        },
        unit: Unit::None,
        default: DefaultValue::Number(100.0),
        label: "Daily budget (USD)",
        description: "What all your sessions together may cost in a day (your local day) before every \
                      one is stopped and you are asked; 0 sets none. Read only from the global settings.",
    },
    KeySpec {
        id: KeyId::MaxCallsPerRun,
        block: Block::Pokeshell,
        name: "maxCallsPerRun",
        group: Group::Guards,
        kind: ValueKind::Int { min: 0, max: 100_000 },
        unit: Unit::None,
        default: DefaultValue::Int(400),
        label: "Model calls without you",
        description: "Model calls the agent may make since you last typed before pokeshell stops it and \
                      asks you; it guards models pi has no prices for too. 0 sets no cap.",
    },
    KeySpec {
        id: KeyId::SameCallRepeats,
        block: Block::Pokeshell,
        name: "sameCallRepeats",
        group: Group::Guards,
        kind: ValueKind::IntOrOff { min: 2, max: 100 },
        unit: Unit::None,
        default: DefaultValue::Int(5),
        label: "Same call, same result",
        description: "Times in a row the same tool call may bring the same result before the \
                      escalation ladder takes a step; 0 turns this rail off.",
    },
    KeySpec {
        id: KeyId::AlternatingRepeats,
        block: Block::Pokeshell,
        name: "alternatingRepeats",
        group: Group::Guards,
        kind: ValueKind::IntOrOff { min: 2, max: 100 },
        unit: Unit::None,
        default: DefaultValue::Int(4),
        label: "Two calls taking turns",
        description: "Rounds of two tool calls taking turns (A, B, A, B) with unchanged results before \
                      the ladder takes a step; 0 turns this rail off.",
    },
    KeySpec {
        id: KeyId::SameReplyRepeats,
        block: Block::Pokeshell,
        name: "sameReplyRepeats",
        group: Group::Guards,
        kind: ValueKind::IntOrOff { min: 2, max: 100 },
        unit: Unit::None,
        default: DefaultValue::Int(4),
        label: "Same reply again",
        description: "Runs in a row, since you last typed, that may end on the very same reply before \
                      the ladder takes a step; 0 turns this rail off.",
    },
    KeySpec {
        id: KeyId::IdlePokes,
        block: Block::Pokeshell,
        name: "idlePokes",
        group: Group::Guards,
        kind: ValueKind::IntOrOff { min: 2, max: 100 },
        unit: Unit::None,
        default: DefaultValue::Int(3),
        label: "Pokes that bring nothing",
        description: "pokeshell's own pokes in a row that may bring no new tool call before the ladder \
                      takes a step; 0 turns this rail off.",
    },
    KeySpec {
        id: KeyId::PollWaitSeconds,
        block: Block::Pokeshell,
        name: "pollWaitSeconds",
        group: Group::Guards,
        kind: ValueKind::Int { min: 0, max: 3600 },
        unit: Unit::Seconds,
        default: DefaultValue::Int(5),
        label: "A wait that makes a poll",
        description: "A tool call that runs this long (a sleep, a watch) is a wait: repeats with such a \
                      wait between them are a poll, not a loop. 0: only wakeups count as waits.",
    },
    KeySpec {
        id: KeyId::PrefixKey,
        block: Block::Pokeshell,
        name: "prefixKey",
        group: Group::Display,
        kind: ValueKind::KeyChord,
        unit: Unit::None,
        default: DefaultValue::Text("ctrl+]"),
        label: "Prefix key",
        description: "The key that starts a pokeshell command; every other key goes to pi.",
    },
    KeySpec {
        id: KeyId::SidePaneWidth,
        block: Block::Pokeshell,
        name: "sidePaneWidth",
        group: Group::Display,
        kind: ValueKind::Int { min: 20, max: 80 },
        unit: Unit::Columns,
        default: DefaultValue::Int(32),
        label: "Side pane width",
        description: "Width of the side pane in terminal columns.",
    },
    KeySpec {
        id: KeyId::SidePaneVisibility,
        block: Block::Pokeshell,
        name: "sidePane",
        group: Group::Display,
        kind: ValueKind::Choice(SIDE_PANE_CHOICES),
        unit: Unit::None,
        default: DefaultValue::Choice("auto"),
        label: "Side pane",
        description: "auto hides the side pane when the terminal is narrow; shown and hidden \
                      fix it at start.",
    },
    KeySpec {
        id: KeyId::Notifications,
        block: Block::Pokeshell,
        name: "notifications",
        group: Group::Display,
        kind: ValueKind::Bool,
        unit: Unit::None,
        default: DefaultValue::Bool(true),
        label: "Desktop notifications",
        description: "Send a terminal desktop notification when pokeshell acts on its own or \
                      gives up.",
    },
    KeySpec {
        id: KeyId::Bell,
        block: Block::Pokeshell,
        name: "bell",
        group: Group::Display,
        kind: ValueKind::Bool,
        unit: Unit::None,
        default: DefaultValue::Bool(true),
        label: "Terminal bell",
        description: "Ring the terminal bell when pokeshell acts on its own or gives up.",
    },
    KeySpec {
        id: KeyId::NotifyCommand,
        block: Block::Pokeshell,
        name: "notifyCommand",
        group: Group::Display,
        kind: ValueKind::Text { max_chars: 1000 },
        unit: Unit::None,
        default: DefaultValue::Text(""),
        label: "Command when detached",
        description: "A shell command run when pokeshell would ring the bell or notify you but no \
                      terminal is attached to the session, e.g. notify-send; it gets the message as \
                      its last argument. Read only from the global settings; empty runs nothing.",
    },
    KeySpec {
        id: KeyId::CostWarnUsd,
        block: Block::Pokeshell,
        name: "costWarnUsd",
        group: Group::Display,
        kind: ValueKind::NumberFrom {
            min: 0.0,
            max: 1_000_000.0,
        },
        unit: Unit::None,
        default: DefaultValue::Number(0.0),
        label: "Cost warning (USD)",
        description: "Notify once when a session's cost, as pi prices its model's tokens, passes this \
                      many US dollars. 0 never warns.",
    },
    KeySpec {
        id: KeyId::WindowTitle,
        block: Block::Pokeshell,
        name: "windowTitle",
        group: Group::Display,
        kind: ValueKind::Choice(WINDOW_TITLE_CHOICES),
        unit: Unit::None,
        default: DefaultValue::Choice("auto"),
        label: "Window title",
        description: "Set the terminal's window title to the session's name and state: on, off, or \
                      auto (only for a hosted program that sets no title itself; pi names its window).",
    },
    KeySpec {
        id: KeyId::Machines,
        block: Block::Pokeshell,
        name: "machines",
        group: Group::Display,
        kind: ValueKind::Text { max_chars: 4000 },
        unit: Unit::None,
        default: DefaultValue::Text(""),
        label: "Other machines",
        description: "SSH destinations, separated by commas or spaces, whose sessions `pokeshell ls \
                      --all` lists beside this machine's (docs/machines.md). Read only from the \
                      global settings.",
    },
    KeySpec {
        id: KeyId::MachineTimeoutSeconds,
        block: Block::Pokeshell,
        name: "machineTimeoutSeconds",
        group: Group::Display,
        kind: ValueKind::Int { min: 1, max: 120 },
        unit: Unit::Seconds,
        default: DefaultValue::Int(5),
        label: "Machine timeout",
        description: "How long `pokeshell ls --all` waits for each other machine before it lists \
                      it as unreachable.",
    },
    KeySpec {
        id: KeyId::WebListen,
        block: Block::Pokeshell,
        name: "webListen",
        group: Group::Display,
        kind: ValueKind::Text { max_chars: 100 },
        unit: Unit::None,
        default: DefaultValue::Text(DEFAULT_LISTEN),
        label: "Web view address",
        description: "Where `pokeshell web` listens, as address:port. An address beyond loopback lets \
                      whoever reaches it and logs in drive your agents. Read only from the global \
                      settings; --listen overrides it.",
    },
    KeySpec {
        id: KeyId::PushWhen,
        block: Block::Pokeshell,
        name: "pushWhen",
        group: Group::Display,
        kind: ValueKind::Choice(PUSH_WHEN_CHOICES),
        unit: Unit::None,
        default: DefaultValue::Choice("away"),
        label: "Push to the phone",
        description: "When an agent needs you (a question, a give-up, a provider limit, …) pokeshell \
                      pushes it to pokeshell.ntfyUrl: away (only while nobody typed into the session \
                      for awayMinutes and no page shows it), always, or never (docs/away.md).",
    },
    KeySpec {
        id: KeyId::AwayMinutes,
        block: Block::Pokeshell,
        name: "awayMinutes",
        group: Group::Display,
        kind: ValueKind::Int { min: 1, max: 1440 },
        unit: Unit::None,
        default: DefaultValue::Int(3),
        label: "Away after (minutes)",
        description: "You count as away from a session when no terminal on it typed for this many \
                      minutes and no page showing it is visible.",
    },
    KeySpec {
        id: KeyId::QuietHours,
        block: Block::Pokeshell,
        name: "quietHours",
        group: Group::Display,
        kind: ValueKind::Hours,
        unit: Unit::None,
        default: DefaultValue::Text(""),
        label: "Quiet hours",
        description: "A span of the day in local time, e.g. 22:00-07:00, when nothing is pushed; what \
                      still waits for you at its end is pushed then. Empty: none.",
    },
    KeySpec {
        id: KeyId::PushFinished,
        block: Block::Pokeshell,
        name: "pushFinished",
        group: Group::Display,
        kind: ValueKind::Bool,
        unit: Unit::None,
        default: DefaultValue::Bool(false),
        label: "Push finished runs",
        description: "Also push when a run simply finished (no question) while you were away.",
    },
    KeySpec {
        id: KeyId::NtfyUrl,
        block: Block::Pokeshell,
        name: "ntfyUrl",
        group: Group::Display,
        kind: ValueKind::Text { max_chars: 500 },
        unit: Unit::None,
        default: DefaultValue::Text(""),
        label: "ntfy topic URL",
        description: "The ntfy topic pushes go to, e.g. https://ntfy.sh/some-long-secret-name (a \
                      self-hosted server works too); its access token is kept apart (docs/away.md). \
                      Read only from the global settings; empty pushes nothing.",
    },
    // The web view reached from a phone (docs/web.md): the address links carry, the names it
    // answers to, and its own TLS. Read when the web view starts.
    KeySpec {
        id: KeyId::WebPublicUrl,
        block: Block::Pokeshell,
        name: "webPublicUrl",
        group: Group::Display,
        kind: ValueKind::Text { max_chars: 200 },
        unit: Unit::None,
        default: DefaultValue::Text(""),
        label: "Web view public address",
        description: "The address a phone reaches the web view at, such as \
                      https://box.tailnet.ts.net/ (a reverse proxy's or tailscale serve's): every \
                      link pokeshell sends out or prints starts with it, and its host name is \
                      allowed. Empty: the address it listens on. Read only from the global settings.",
    },
    KeySpec {
        id: KeyId::WebHosts,
        block: Block::Pokeshell,
        name: "webHosts",
        group: Group::Display,
        kind: ValueKind::Text { max_chars: 1000 },
        unit: Unit::None,
        default: DefaultValue::Text(""),
        label: "Web view host names",
        description: "Host names the web view answers to besides addresses and localhost, separated \
                      by commas or spaces (a Tailscale MagicDNS name, a reverse proxy's name); any \
                      other name is refused. Read only from the global settings.",
    },
    KeySpec {
        id: KeyId::WebTlsCert,
        block: Block::Pokeshell,
        name: "webTlsCert",
        group: Group::Display,
        kind: ValueKind::Text { max_chars: 1000 },
        unit: Unit::None,
        default: DefaultValue::Text(""),
        label: "Web view TLS certificate",
        description: "A PEM certificate file (its chain after it); with webTlsKey the web view \
                      serves HTTPS itself. ~ is your home. Read only from the global settings.",
    },
    KeySpec {
        id: KeyId::WebTlsKey,
        block: Block::Pokeshell,
        name: "webTlsKey",
        group: Group::Display,
        kind: ValueKind::Text { max_chars: 1000 },
        unit: Unit::None,
        default: DefaultValue::Text(""),
        label: "Web view TLS key",
        description: "The PEM private key file of webTlsCert, readable by you alone. Read only from \
                      the global settings.",
    },
];

/// The schema row of a key.
pub fn spec(id: KeyId) -> &'static KeySpec {
    // The table lists every variant in declaration order; the test below keeps it that way.
    &KEYS[id as usize]
}

/// The key named `name` inside `block`, if pokeshell owns one.
pub fn find(block: Block, name: &str) -> Option<&'static KeySpec> {
    KEYS.iter().find(|s| s.block == block && s.name == name)
}

/// The key with the full name `block.name`.
pub fn find_full(full_name: &str) -> Option<&'static KeySpec> {
    let (block, name) = full_name.split_once('.')?;
    let block = Block::ALL.into_iter().find(|b| b.json_name() == block)?;
    find(block, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_order_matches_key_ids() {
        for (i, s) in KEYS.iter().enumerate() {
            assert_eq!(s.id as usize, i, "{} is out of place", s.full_name());
        }
    }

    #[test]
    fn defaults_pass_their_own_validation() {
        for s in &KEYS {
            let json = s.default_value().to_json();
            assert_eq!(s.parse_json(&json), Ok(s.default_value()), "{}", s.full_name());
        }
    }

    #[test]
    fn full_names_are_unique_and_found() {
        for s in &KEYS {
            assert_eq!(find_full(&s.full_name()).map(|f| f.id), Some(s.id));
        }
        assert!(find_full("poke.nope").is_none());
        assert!(find_full("nope.enabled").is_none());
    }

    #[test]
    fn groups_are_contiguous_in_dialog_order() {
        let mut seen = Vec::new();
        for s in &KEYS {
            if seen.last() != Some(&s.group) {
                assert!(!seen.contains(&s.group), "{:?} split", s.group);
                seen.push(s.group);
            }
        }
        assert_eq!(
            seen,
            vec![
                Group::Poke,
                Group::Recovery,
                Group::Wakeups,
                Group::Handoff,
                Group::Guards,
                Group::Display
            ]
        );
    }
}
