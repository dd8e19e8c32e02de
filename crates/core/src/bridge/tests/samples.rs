//! One sample of every event and every command, for the round-trip tests.

use serde_json::json;

use super::super::*;

pub(super) fn every_event() -> Vec<PiEvent> {
    let usage = ContextUsage {
        tokens: Some(1200),
        context_window: Some(128_000),
        percent: Some(0.9375),
    };
    let assistant = MessageSummary {
        id: Some("e9".into()),
        role: Role::Assistant,
        stop_reason: Some(StopReason::ToolUse),
        error_message: None,
        content: vec![
            Block::Thinking { non_blank: true },
            Block::Text { non_blank: false },
            Block::ToolCall {
                id: "c1".into(),
                name: "bash".into(),
                arguments: json!({"command": "ls"}),
            },
            Block::Image,
            Block::Other {
                kind: "redacted".into(),
            },
        ],
        tool_call_id: None,
        tool_name: None,
        is_error: None,
        custom_type: None,
    };
    let result = MessageSummary {
        id: Some("e10".into()),
        role: Role::ToolResult,
        stop_reason: None,
        error_message: None,
        content: vec![Block::Text { non_blank: true }],
        tool_call_id: Some("c1".into()),
        tool_name: Some("bash".into()),
        is_error: Some(true),
        custom_type: None,
    };
    let entry = CustomEntry {
        id: Some("e2".into()),
        custom_type: "pokeshell-wakeup".into(),
        data: json!({"id": "w1", "fireAtMs": 5}),
        timestamp: Some("2025-01-01T00:00:00Z".into()),
    };
    vec![
        PiEvent::SessionStart(SessionStart {
            reason: SessionReason::Resume,
            previous_session_file: Some("/tmp/old.jsonl".into()),
            session_id: Some("s1".into()),
            session_file: None,
            session_name: Some("name".into()),
            model: Some("mock/mock-model".into()),
            custom_entries: vec![entry.clone()],
        }),
        PiEvent::SessionShutdown(SessionShutdown {
            reason: SessionReason::Quit,
            target_session_file: None,
        }),
        PiEvent::SessionTree(SessionTree {
            new_leaf_id: Some("a".into()),
            old_leaf_id: None,
            custom_entries: vec![entry],
        }),
        PiEvent::SessionInfoChanged(SessionInfoChanged { name: None }),
        PiEvent::ModelSelect(ModelSelect {
            model: Some("p/m".into()),
            source: Some("cycle".into()),
        }),
        PiEvent::Input(InputEvent {
            source: InputSource::Extension,
            streaming_behavior: Some("steer".into()),
            text_chars: 12,
            has_images: false,
        }),
        PiEvent::BeforeAgentStart(BeforeAgentStart {
            message_type: Some("custom".into()),
            custom_type: Some("pokeshell-poke".into()),
        }),
        PiEvent::AgentStart,
        PiEvent::AgentEnd(AgentEnd {
            stop_reason: Some(StopReason::Error),
            error_message: Some("400: nope".into()),
            message_count: 3,
        }),
        PiEvent::AgentSettled(AgentSettled {
            aborted: false,
            idle: Some(true),
            pending_messages: Some(false),
            context_usage: Some(usage.clone()),
            tail: vec![
                TailEntry::Compaction {
                    id: Some("e1".into()),
                    tokens_before: Some(9011),
                },
                TailEntry::Message(assistant.clone()),
                TailEntry::Message(result),
                TailEntry::CustomMessage {
                    id: None,
                    custom_type: "pokeshell-poke".into(),
                    display: false,
                },
            ],
            tail_truncated: true,
            final_text: Some("Now I'll run the tests:".into()),
        }),
        PiEvent::TurnStart(TurnStart { turn_index: 2 }),
        PiEvent::TurnEnd(TurnEnd {
            turn_index: 2,
            hold_id: Some(7),
            tail: vec![TailEntry::Message(assistant.clone())],
            tail_truncated: false,
        }),
        PiEvent::MessageEnd(MessageEnd {
            message: assistant,
            usage: Some(TokenUsage {
                input: 1200,
                output: 80,
                cache_read: 4000,
                cache_write: 10,
                cost_usd: Some(0.0123),
            }),
            text: Some("Done. Shall I go on?".into()),
        }),
        PiEvent::Progress(Progress {
            kind: ProgressKind::Thinking,
        }),
        PiEvent::ToolExecutionStart(ToolExecutionStart {
            tool_call_id: "c1".into(),
            tool_name: "bash".into(),
            args: json!({"command": "sleep 3"}),
        }),
        PiEvent::ToolExecutionEnd(ToolExecutionEnd {
            tool_call_id: "c1".into(),
            tool_name: "bash".into(),
            is_error: false,
            duration_ms: Some(3012),
            result_digest: Some("5d41402abc4b2a76b9719d911017c592".into()),
        }),
        PiEvent::SessionBeforeCompact(SessionBeforeCompact {
            reason: CompactReason::Manual,
            will_retry: false,
            tokens_before: Some(100),
            handoff: true,
        }),
        PiEvent::SessionCompact(SessionCompact {
            reason: CompactReason::Threshold,
            will_retry: false,
            from_extension: true,
            tokens_before: Some(9011),
        }),
        PiEvent::SessionCompactFailed(SessionCompactFailed {
            reason: CompactReason::Overflow,
            will_retry: false,
            aborted: true,
            from_extension: false,
            error_message: Some("boom".into()),
        }),
        PiEvent::Handoff(HandoffReport {
            outcome: HandoffOutcome::Written,
            path: Some("/s/handoff-x.md".into()),
            save_error: None,
            reason: None,
            document_chars: Some(1234),
            read_files: 2,
            modified_files: 1,
        }),
        PiEvent::ToolCallRequest(ToolCallRequest {
            call_id: "call_9".into(),
            tool_name: "schedule_wakeup".into(),
            args: json!({"delay_seconds": 120, "prompt": "check"}),
        }),
        PiEvent::Snapshot(Snapshot {
            idle: Some(true),
            pending_messages: None,
            context_usage: Some(usage),
            session_id: Some("s1".into()),
            model: None,
        }),
        PiEvent::Log(LogEvent {
            level: "error".into(),
            message: "agent_settled: oops".into(),
        }),
        PiEvent::UserCommand(UserCommand {
            request_id: 2,
            request: UserRequest::Handoff {
                focus: Some("the parser".into()),
            },
        }),
    ]
}

pub(super) fn every_command() -> Vec<Command> {
    vec![
        Command::SendMessage(SendMessage {
            custom_type: "pokeshell-poke".into(),
            content: "[Poke] go on".into(),
            display: false,
            trigger_turn: true,
            deliver_as: Some(DeliverAs::FollowUp),
            details: Some(json!({"rule": "POKE-P1"})),
        }),
        Command::SendUserMessage(SendUserMessage {
            text: "hi".into(),
            deliver_as: Some(DeliverAs::Steer),
        }),
        Command::Abort,
        Command::ReleaseTurn { hold_id: 7 },
        Command::Compact(CompactRequest {
            custom_instructions: Some("focus on tests".into()),
            handoff: true,
            save: true,
        }),
        Command::AppendEntry {
            custom_type: "pokeshell-settings".into(),
            data: json!({"enabled": true}),
        },
        Command::GetEntries {
            custom_type_prefix: Some("pokeshell".into()),
            scope: EntryScope::All,
            limit: Some(10),
        },
        Command::ContextUsage,
        Command::IsIdle,
        Command::ToolReply(ToolReply {
            call_id: "call_9".into(),
            text: "Scheduled w1".into(),
            is_error: false,
            details: Some(json!({"id": "w1"})),
        }),
        Command::Notify {
            message: "hello".into(),
            level: NotifyLevel::Warning,
        },
        Command::CommandAnswer {
            request_id: 3,
            text: "Poke sent.".into(),
            level: NotifyLevel::Info,
        },
    ]
}
