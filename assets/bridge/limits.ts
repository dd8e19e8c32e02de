/** Every bound and delay of the bridge in one place; docs/protocol.md states the ones pokeshell relies on. */

import { numberFromEnv } from "./util.ts";

export const PROTOCOL = 1;
export const MAX_LINE_BYTES = 1024 * 1024;
export const OUTBOX_MAX_LINES = 1000;
export const OUTBOX_MAX_BYTES = 8 * 1024 * 1024;
export const SOCKET_BACKLOG_MAX_BYTES = 16 * 1024 * 1024;
export const TAIL_MAX_ENTRIES = 200;
export const TAIL_STRING_MAX = 1000;
export const PREVIEW_STRING_MAX = 200;
export const FORWARDED_STRING_MAX = 200_000;
export const ERROR_TEXT_MAX = 500;
/** The end of the final assistant message sent with `agent_settled` (characters): enough to judge its ending. */
export const FINAL_TEXT_MAX = 2000;
/**
 * The text `message_end` carries, in characters: a reply's and a tool result's. pokeshell keeps it for
 * `pokeshell read` and shows it, bounded again, in the web view's conversation.
 */
export const MESSAGE_TEXT_MAX = 32_000;
export const TOOL_RESULT_TEXT_MAX = 2000;
export const CUSTOM_ENTRIES_MAX = 500;
export const CUSTOM_ENTRY_DATA_MAX_BYTES = 64 * 1024;
export const GET_ENTRIES_DEFAULT = 500;
export const GET_ENTRIES_MAX = 5000;
export const GET_ENTRIES_MAX_BYTES = 768 * 1024;
export const OWN_ENTRY_PREFIX = "pokeshell";
export const RECONNECT_MIN_MS = 200;
export const RECONNECT_MAX_MS = 5000;
export const TOOL_REPLY_TIMEOUT_MS = numberFromEnv("POKESHELL_TOOL_TIMEOUT_MS", 30_000);
export const HANDOFF_MAX_TOKENS = 8192;
/** The second opinion (`ask_model`): the longest question and system prompt, answer, reply tokens, wait. */
export const ASK_QUESTION_MAX = 4000;
export const ASK_ANSWER_MAX = 200;
export const ASK_MAX_TOKENS = 16;
export const ASK_TIMEOUT_MAX_MS = 60_000;
export const TURN_HOLD_MS = 300;
/** How often a connected bridge sends a `heartbeat`. */
export const HEARTBEAT_MS = numberFromEnv("POKESHELL_HEARTBEAT_MS", 5000);
/** How long a pi command (`/poke`, `/handoff`, `/wakeups`) waits for pokeshell's answer. */
export const USER_COMMAND_TIMEOUT_MS = numberFromEnv("POKESHELL_COMMAND_TIMEOUT_MS", 3000);
