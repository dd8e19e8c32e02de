/**
 * pokeshell bridge: a pi extension that forwards pi's lifecycle events to pokeshell over a Unix socket
 * and carries out the commands pokeshell sends back. It decides nothing; pokeshell does.
 *
 * Loaded with `pi -e <path>` by pokeshell, which sets POKESHELL_SOCKET and POKESHELL_TOKEN. Without both
 * variables the extension does nothing at all. Protocol: docs/protocol.md (JSON lines, version 1).
 *
 * Rules this file keeps:
 * - never throw into pi (a throwing handler prints a stack trace into pi's transcript): every handler and
 *   callback is wrapped, failures are reported to pokeshell as `log` events;
 * - the socket and every timer are unref'ed, so `pi -p` exits when its work is done;
 * - while disconnected, lines wait in a bounded outbox (oldest dropped first, drops counted);
 * - all state lives inside the factory: pi creates a new instance on /new, /resume, /fork and /reload,
 *   and the old one must not leak into it.
 */

import * as piAgent from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { createHash, randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { dirname, join } from "node:path";

const PROTOCOL = 1;
const MAX_LINE_BYTES = 1024 * 1024;
const OUTBOX_MAX_LINES = 1000;
const OUTBOX_MAX_BYTES = 8 * 1024 * 1024;
const SOCKET_BACKLOG_MAX_BYTES = 16 * 1024 * 1024;
const TAIL_MAX_ENTRIES = 200;
const TAIL_STRING_MAX = 1000;
const PREVIEW_STRING_MAX = 200;
const FORWARDED_STRING_MAX = 200_000;
const ERROR_TEXT_MAX = 500;
const CUSTOM_ENTRIES_MAX = 500;
const CUSTOM_ENTRY_DATA_MAX_BYTES = 64 * 1024;
const GET_ENTRIES_DEFAULT = 500;
const GET_ENTRIES_MAX = 5000;
const GET_ENTRIES_MAX_BYTES = 768 * 1024;
const OWN_ENTRY_PREFIX = "pokeshell";
const RECONNECT_MIN_MS = 200;
const RECONNECT_MAX_MS = 5000;
const TOOL_REPLY_TIMEOUT_MS = numberFromEnv("POKESHELL_TOOL_TIMEOUT_MS", 30_000);
const HANDOFF_MAX_TOKENS = 8192;
const TURN_HOLD_MS = 300;

function numberFromEnv(name: string, fallback: number): number {
	const value = Number(process.env[name]);
	return Number.isFinite(value) && value > 0 ? value : fallback;
}

export default function pokeshellBridge(pi: any) {
	const socketPath = process.env.POKESHELL_SOCKET;
	const token = process.env.POKESHELL_TOKEN;
	if (!socketPath || !token) return;
	try {
		startBridge(pi, socketPath, token);
	} catch {
		// Nothing is connected yet to report to, and pi must not see a throw.
	}
}

function startBridge(pi: any, socketPath: string, token: string) {
	const instance = randomUUID();
	let ctx: any; // the latest context pi handed us; earlier ones go stale on runtime replacement
	let sock: any = null;
	let welcomed = false;
	let shutDown = false;
	let rejected = false;
	let connects = 0;
	let reconnectTimer: any = null;
	let backoffMs = RECONNECT_MIN_MS;
	let inbox: Buffer = Buffer.alloc(0);
	let skippingLine = false;
	let seq = 0;
	let dropped = 0;
	const outbox: string[] = [];
	let outboxBytes = 0;
	const pendingTools = new Map<string, (reply: ToolAnswer) => void>();
	const heldTurns = new Map<number, () => void>();
	let turnHolds = 0;
	let handoffArm: HandoffArm | null = null;

	type ToolAnswer = { text: string; isError: boolean; details?: unknown };
	type HandoffArm = { focus?: string; save: boolean; consumed: boolean; report?: any };

	// ---------------------------------------------------------------- outgoing lines

	function sendLine(obj: any) {
		let line: string;
		try {
			line = JSON.stringify(obj);
		} catch (e) {
			line = JSON.stringify(logObject("error", `could not encode a ${obj?.type ?? "line"}: ${errorText(e)}`));
		}
		if (Buffer.byteLength(line) > MAX_LINE_BYTES) {
			line = JSON.stringify(
				logObject("error", `dropped a ${obj?.event?.type ?? obj?.type ?? "line"} over ${MAX_LINE_BYTES} bytes`),
			);
		}
		line += "\n";
		if (sock && welcomed) {
			if (sock.writableLength > SOCKET_BACKLOG_MAX_BYTES) {
				dropped++;
				return;
			}
			try {
				sock.write(line);
				return;
			} catch {
				// fall through to the outbox; the close handler reconnects
			}
		}
		outbox.push(line);
		outboxBytes += line.length;
		while (outbox.length > OUTBOX_MAX_LINES || outboxBytes > OUTBOX_MAX_BYTES) {
			const old = outbox.shift();
			outboxBytes -= old ? old.length : 0;
			dropped++;
		}
	}

	function logObject(level: string, message: string) {
		return { type: "event", seq: ++seq, at: Date.now(), event: { type: "log", level, message } };
	}

	function emit(type: string, fields: Record<string, unknown> = {}) {
		sendLine({ type: "event", seq: ++seq, at: Date.now(), event: { type, ...fields } });
	}

	function report(where: string, e: unknown) {
		try {
			emit("log", { level: "error", message: `${where}: ${errorText(e)}` });
		} catch {
			// reporting must not fail either
		}
	}

	function reply(id: number, ok: boolean, result?: unknown, error?: string) {
		sendLine(ok ? { type: "reply", id, ok: true, result: result ?? {} } : { type: "reply", id, ok: false, error });
	}

	// ---------------------------------------------------------------- connection

	function connect() {
		if (sock || shutDown || rejected) return;
		reconnectTimer = null;
		let s: any;
		try {
			s = createConnection(socketPath);
		} catch (e) {
			scheduleReconnect();
			return;
		}
		sock = s;
		welcomed = false;
		inbox = Buffer.alloc(0);
		skippingLine = false;
		s.unref();
		s.on("connect", () => guard("connect", () => writeHello(s)));
		s.on("data", (chunk: Buffer) => guard("data", () => onData(s, chunk)));
		s.on("error", () => {
			// "close" follows and handles it
		});
		s.on("close", () => guard("close", () => onClose(s)));
	}

	function writeHello(s: any) {
		connects++;
		const hello = {
			type: "hello",
			protocol: PROTOCOL,
			token,
			piVersion: typeof piAgent.VERSION === "string" ? piAgent.VERSION : null,
			pid: process.pid,
			instance,
			reconnect: connects > 1,
			dropped,
			...sessionInfo(),
			mode: safe(() => ctx?.mode) ?? null,
			cwd: safe(() => ctx?.cwd) ?? process.cwd(),
		};
		dropped = 0;
		s.write(JSON.stringify(hello) + "\n");
	}

	function onClose(s: any) {
		if (sock !== s) return;
		sock = null;
		welcomed = false;
		failPendingTools("the connection to pokeshell was lost");
		for (const release of [...heldTurns.values()]) release();
		scheduleReconnect();
	}

	function scheduleReconnect() {
		if (shutDown || rejected || reconnectTimer) return;
		reconnectTimer = setTimeout(() => guard("reconnect", connect), backoffMs);
		reconnectTimer.unref?.();
		backoffMs = Math.min(backoffMs * 2, RECONNECT_MAX_MS);
	}

	function onData(s: any, chunk: Buffer) {
		inbox = inbox.length ? Buffer.concat([inbox, chunk]) : chunk;
		for (;;) {
			const nl = inbox.indexOf(10);
			if (nl < 0) break;
			const line = inbox.subarray(0, nl);
			inbox = inbox.subarray(nl + 1);
			if (skippingLine) {
				skippingLine = false;
				continue;
			}
			handleLine(s, line.toString("utf8"));
		}
		if (inbox.length > MAX_LINE_BYTES) {
			skippingLine = true;
			inbox = Buffer.alloc(0);
			report("incoming line", new Error(`a line from pokeshell exceeded ${MAX_LINE_BYTES} bytes and was skipped`));
		}
	}

	function handleLine(s: any, text: string) {
		if (!text.trim()) return;
		let msg: any;
		try {
			msg = JSON.parse(text);
		} catch (e) {
			report("incoming line", new Error(`not JSON: ${errorText(e)}`));
			return;
		}
		switch (msg?.type) {
			case "welcome":
				welcomed = true;
				backoffMs = RECONNECT_MIN_MS;
				flushOutbox(s);
				emit("snapshot", snapshot());
				return;
			case "rejected":
				rejected = true;
				safe(() => s.destroy());
				return;
			case "command":
				runCommand(msg.id, msg.command);
				return;
			default:
				report("incoming line", new Error(`unknown message type ${JSON.stringify(msg?.type)}`));
		}
	}

	function flushOutbox(s: any) {
		while (outbox.length && sock === s && welcomed) {
			const line = outbox.shift() as string;
			outboxBytes -= line.length;
			s.write(line);
		}
	}

	function closeForGood() {
		shutDown = true;
		if (reconnectTimer) clearTimeout(reconnectTimer);
		reconnectTimer = null;
		failPendingTools("pi is replacing or closing this session");
		const s = sock;
		if (!s) return;
		// end() flushes what is written; an unwelcomed socket has nothing worth flushing
		if (welcomed) safe(() => s.end());
		else safe(() => s.destroy());
	}

	// ---------------------------------------------------------------- helpers

	function guard(where: string, fn: () => void) {
		try {
			fn();
		} catch (e) {
			report(where, e);
		}
	}

	/** Wraps a pi event handler: remembers the context, reports instead of throwing. */
	function on(name: string, fn: (event: any, ctx: any) => any) {
		pi.on(name, (event: any, handlerCtx: any) => {
			try {
				if (handlerCtx) ctx = handlerCtx;
				const result = fn(event ?? {}, handlerCtx);
				if (result && typeof result.then === "function") {
					return result.catch((e: unknown) => {
						report(name, e);
						return undefined;
					});
				}
				return result;
			} catch (e) {
				report(name, e);
				return undefined;
			}
		});
	}

	function sessionInfo() {
		const sm = safe(() => ctx?.sessionManager);
		return {
			sessionId: safe(() => sm?.getSessionId()) ?? null,
			sessionFile: safe(() => sm?.getSessionFile()) ?? null,
			sessionName: safe(() => sm?.getSessionName()) ?? null,
			model: modelName(safe(() => ctx?.model)),
		};
	}

	function snapshot() {
		return {
			idle: safe(() => ctx?.isIdle()) ?? null,
			pendingMessages: safe(() => ctx?.hasPendingMessages()) ?? null,
			contextUsage: contextUsage(),
			sessionId: sessionInfo().sessionId,
			model: sessionInfo().model,
		};
	}

	function contextUsage() {
		const usage = safe(() => ctx?.getContextUsage());
		if (!usage) return null;
		return {
			tokens: numberOrNull(usage.tokens),
			contextWindow: numberOrNull(usage.contextWindow),
			percent: numberOrNull(usage.percent),
		};
	}

	function ownEntries() {
		const branch: any[] = safe(() => ctx?.sessionManager?.getBranch()) ?? [];
		const own = branch.filter(
			(e) => e?.type === "custom" && typeof e.customType === "string" && e.customType.startsWith(OWN_ENTRY_PREFIX),
		);
		return own.slice(-CUSTOM_ENTRIES_MAX).map(customEntry);
	}

	function customEntry(e: any) {
		let data = e.data ?? null;
		const size = safe(() => JSON.stringify(data)?.length ?? 0) ?? 0;
		if (size > CUSTOM_ENTRY_DATA_MAX_BYTES) data = { pokeshellTruncated: true, bytes: size };
		return { id: e.id ?? null, customType: e.customType, data, timestamp: e.timestamp ?? null };
	}

	// ---------------------------------------------------------------- events

	on("session_start", (event) => {
		connect();
		emit("session_start", {
			reason: event.reason,
			previousSessionFile: event.previousSessionFile ?? null,
			...sessionInfo(),
			customEntries: ownEntries(),
		});
	});

	on("session_shutdown", (event) => {
		emit("session_shutdown", { reason: event.reason, targetSessionFile: event.targetSessionFile ?? null });
		closeForGood();
	});

	on("session_tree", (event) => {
		emit("session_tree", {
			newLeafId: event.newLeafId ?? null,
			oldLeafId: event.oldLeafId ?? null,
			customEntries: ownEntries(),
		});
	});

	on("session_info_changed", (event) => emit("session_info_changed", { name: event.name ?? null }));

	on("model_select", (event) => emit("model_select", { model: modelName(event.model), source: event.source ?? null }));

	on("input", (event) => {
		emit("input", {
			source: event.source,
			streamingBehavior: event.streamingBehavior ?? null,
			textChars: typeof event.text === "string" ? event.text.length : 0,
			hasImages: Array.isArray(event.images) && event.images.length > 0,
		});
		return undefined;
	});

	on("before_agent_start", (event) => {
		emit("before_agent_start", {
			messageType: event.messageType ?? null,
			customType: event.message?.customType ?? null,
		});
		return undefined;
	});

	on("agent_start", () => emit("agent_start"));

	on("agent_end", (event) => {
		const messages: any[] = Array.isArray(event.messages) ? event.messages : [];
		const last = [...messages].reverse().find((m) => m?.role === "assistant");
		emit("agent_end", {
			stopReason: last?.stopReason ?? null,
			errorMessage: boundText(last?.errorMessage),
			messageCount: messages.length,
		});
	});

	on("agent_settled", (event) => {
		const { tail, truncated } = branchTail();
		emit("agent_settled", {
			aborted: event.aborted === true,
			idle: safe(() => ctx?.isIdle()) ?? null,
			pendingMessages: safe(() => ctx?.hasPendingMessages()) ?? null,
			contextUsage: contextUsage(),
			tail,
			tailTruncated: truncated,
		});
	});

	on("turn_start", (event) => emit("turn_start", { turnIndex: event.turnIndex ?? 0 }));

	// The loop guard also judges a run between its turns (a model repeating a failing call may never
	// settle). Only a turn whose tool batch had a failure can extend a loop, so only those send a tail.
	// pi awaits turn_end handlers before its next request, so the turn is held until pokeshell answers
	// with `release_turn` (after any message it steers in) or TURN_HOLD_MS pass: a nudge then reaches
	// the model with the very next request. Not connected: nothing to wait for.
	on("turn_end", (event) => {
		const results: any[] = Array.isArray(event.toolResults) ? event.toolResults : [];
		if (!results.some((result) => result?.isError === true)) return;
		const { tail, truncated } = branchTail();
		const hold = sock && welcomed ? ++turnHolds : null;
		emit("turn_end", { turnIndex: event.turnIndex ?? 0, tail, tailTruncated: truncated, holdId: hold });
		if (hold === null) return;
		return new Promise<void>((resolve) => {
			const timer = setTimeout(() => {
				heldTurns.delete(hold);
				resolve();
			}, TURN_HOLD_MS);
			timer.unref?.();
			heldTurns.set(hold, () => {
				clearTimeout(timer);
				heldTurns.delete(hold);
				resolve();
			});
		});
	});

	on("message_end", (event) => {
		if (event.message) emit("message_end", { message: summarizeMessage(event.message, null) });
		return undefined;
	});

	on("tool_execution_start", (event) => {
		emit("tool_execution_start", {
			toolCallId: String(event.toolCallId ?? ""),
			toolName: String(event.toolName ?? ""),
			args: bound(event.args ?? {}, PREVIEW_STRING_MAX),
		});
	});

	on("tool_execution_end", (event) => {
		emit("tool_execution_end", {
			toolCallId: String(event.toolCallId ?? ""),
			toolName: String(event.toolName ?? ""),
			isError: event.isError === true,
			durationMs: numberOrNull(event.durationMs),
		});
	});

	on("session_compact", (event) => {
		emit("session_compact", {
			reason: event.reason,
			willRetry: event.willRetry === true,
			fromExtension: event.fromExtension === true,
			tokensBefore: numberOrNull(event.compactionEntry?.tokensBefore),
		});
	});

	on("session_compact_failed", (event) => {
		emit("session_compact_failed", {
			reason: event.reason,
			willRetry: event.willRetry === true,
			aborted: event.aborted === true,
			fromExtension: event.fromExtension === true,
			errorMessage: boundText(event.errorMessage),
		});
	});

	on("session_before_compact", async (event, handlerCtx) => {
		const arm = handoffArm;
		const mine = !!arm && !arm.consumed && event.reason === "manual";
		emit("session_before_compact", {
			reason: event.reason,
			willRetry: event.willRetry === true,
			tokensBefore: numberOrNull(event.preparation?.tokensBefore),
			handoff: mine,
		});
		if (!mine || !arm) return undefined;
		arm.consumed = true;
		const { result, report: outcome } = await writeHandoff(event, handlerCtx ?? ctx, arm);
		arm.report = outcome;
		emit("handoff", outcome);
		return result;
	});

	// ---------------------------------------------------------------- the loop guard's view of the branch

	function branchTail() {
		const branch: any[] = safe(() => ctx?.sessionManager?.getBranch()) ?? [];
		const picked: any[] = [];
		let truncated = false;
		for (let i = branch.length - 1; i >= 0; i--) {
			const entry = branch[i];
			const kind = entry?.type;
			if (kind !== "message" && kind !== "custom_message" && kind !== "compaction") continue;
			if (picked.length >= TAIL_MAX_ENTRIES) {
				truncated = true;
				break;
			}
			picked.push(entry);
		}
		picked.reverse();
		const tail = picked.map((entry) => {
			if (entry.type === "custom_message") {
				return {
					kind: "custom_message",
					id: entry.id ?? null,
					customType: String(entry.customType ?? ""),
					display: entry.display === true,
				};
			}
			if (entry.type === "compaction") {
				return { kind: "compaction", id: entry.id ?? null, tokensBefore: numberOrNull(entry.tokensBefore) };
			}
			return { kind: "message", ...summarizeMessage(entry.message ?? {}, entry.id ?? null) };
		});
		return { tail, truncated };
	}

	function summarizeMessage(m: any, id: string | null) {
		const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
		return {
			id,
			role: typeof m.role === "string" ? m.role : "other",
			stopReason: m.stopReason ?? null,
			errorMessage: boundText(m.errorMessage),
			content: Array.isArray(content) ? content.map(summarizeBlock) : [],
			toolCallId: m.toolCallId ?? null,
			toolName: m.toolName ?? null,
			isError: typeof m.isError === "boolean" ? m.isError : null,
			customType: m.customType ?? null,
		};
	}

	function summarizeBlock(b: any) {
		switch (b?.type) {
			case "text":
				return { type: "text", nonBlank: typeof b.text === "string" && b.text.trim() !== "" };
			case "thinking":
				return { type: "thinking", nonBlank: typeof b.thinking === "string" && b.thinking.trim() !== "" };
			case "toolCall":
				return {
					type: "toolCall",
					id: String(b.id ?? ""),
					name: String(b.name ?? ""),
					arguments: bound(b.arguments ?? {}, TAIL_STRING_MAX),
				};
			case "image":
				return { type: "image" };
			default:
				return { type: "other", kind: String(b?.type ?? "unknown") };
		}
	}

	// ---------------------------------------------------------------- commands

	function runCommand(id: unknown, command: any) {
		if (typeof id !== "number") {
			report("command", new Error("a command without a numeric id was ignored"));
			return;
		}
		let pending: Promise<unknown>;
		try {
			pending = Promise.resolve(execute(command ?? {}));
		} catch (e) {
			reply(id, false, undefined, errorText(e));
			return;
		}
		pending.then(
			(result) => reply(id, true, result),
			(e) => reply(id, false, undefined, errorText(e)),
		);
	}

	function requireCtx() {
		if (!ctx) throw new Error("pi has not started a session yet");
		return ctx;
	}

	function execute(command: any): unknown {
		switch (command.type) {
			case "send_message": {
				if (typeof command.customType !== "string" || !command.customType)
					throw new Error("send_message needs a customType");
				if (typeof command.content !== "string") throw new Error("send_message needs a text content");
				const idleBefore = safe(() => ctx?.isIdle()) ?? null;
				const options: any = { triggerTurn: command.triggerTurn === true };
				if (command.deliverAs) options.deliverAs = command.deliverAs;
				const message: any = {
					customType: command.customType,
					content: command.content,
					display: command.display === true,
				};
				if (command.details !== undefined && command.details !== null) message.details = command.details;
				pi.sendMessage(message, options);
				return { idleBefore };
			}
			case "send_user_message": {
				if (typeof command.text !== "string") throw new Error("send_user_message needs a text");
				const idleBefore = safe(() => ctx?.isIdle()) ?? null;
				pi.sendUserMessage(command.text, command.deliverAs ? { deliverAs: command.deliverAs } : undefined);
				return { idleBefore };
			}
			case "abort":
				requireCtx().abort();
				return {};
			case "compact":
				return compact(command);
			case "append_entry":
				if (typeof command.customType !== "string" || !command.customType)
					throw new Error("append_entry needs a customType");
				pi.appendEntry(command.customType, command.data ?? null);
				return {};
			case "get_entries":
				return getEntries(command);
			case "context_usage":
				return { usage: contextUsage(), idle: safe(() => ctx?.isIdle()) ?? null };
			case "is_idle": {
				const c = requireCtx();
				return { idle: c.isIdle() === true, pendingMessages: safe(() => c.hasPendingMessages()) ?? null };
			}
			case "tool_reply": {
				const resolve = pendingTools.get(String(command.callId));
				if (!resolve) throw new Error(`no tool call ${command.callId} is waiting for a reply`);
				resolve({ text: String(command.text ?? ""), isError: command.isError === true, details: command.details });
				return {};
			}
			case "release_turn": {
				heldTurns.get(Number(command.holdId))?.();
				return {};
			}
			case "notify": {
				const c = requireCtx();
				if (!c.hasUI) return { shown: false };
				const level = ["info", "warning", "error"].includes(command.level) ? command.level : "info";
				c.ui.notify(String(command.message ?? ""), level);
				return { shown: true };
			}
			default:
				throw new Error(`unknown command ${JSON.stringify(command.type)}`);
		}
	}

	function compact(command: any): Promise<unknown> {
		const c = requireCtx();
		if (command.handoff && handoffArm && !handoffArm.consumed)
			throw new Error("a handoff compaction is already waiting to run");
		const arm: HandoffArm | null = command.handoff
			? { focus: textOrUndefined(command.customInstructions), save: command.save === true, consumed: false }
			: null;
		if (arm) handoffArm = arm;
		return new Promise((resolve, reject) => {
			const done = () => {
				if (arm && handoffArm === arm) handoffArm = null;
			};
			try {
				c.compact({
					customInstructions: textOrUndefined(command.customInstructions),
					onComplete: (result: any) => {
						done();
						resolve({
							tokensBefore: numberOrNull(result?.tokensBefore),
							firstKeptEntryId: result?.firstKeptEntryId ?? null,
							summaryChars: typeof result?.summary === "string" ? result.summary.length : null,
							estimatedTokensAfter: numberOrNull(result?.estimatedTokensAfter),
							handoff: arm?.report ?? null,
						});
					},
					onError: (error: unknown) => {
						done();
						reject(error instanceof Error ? error : new Error(errorText(error)));
					},
				});
			} catch (e) {
				done();
				reject(e);
			}
		});
	}

	function getEntries(command: any) {
		const sm = requireCtx().sessionManager;
		const all: any[] = (command.scope === "all" ? sm.getEntries() : sm.getBranch()) ?? [];
		const prefix = typeof command.customTypePrefix === "string" ? command.customTypePrefix : "";
		const limit = Math.min(
			Number.isInteger(command.limit) && command.limit > 0 ? command.limit : GET_ENTRIES_DEFAULT,
			GET_ENTRIES_MAX,
		);
		const matching = all.filter(
			(e) => e?.type === "custom" && typeof e.customType === "string" && e.customType.startsWith(prefix),
		);
		let truncated = matching.length > limit;
		const picked: any[] = [];
		let bytes = 0;
		for (const e of matching.slice(-limit).reverse()) {
			const entry = customEntry(e);
			bytes += JSON.stringify(entry).length;
			if (bytes > GET_ENTRIES_MAX_BYTES) {
				truncated = true;
				break;
			}
			picked.push(entry);
		}
		return { entries: picked.reverse(), truncated };
	}

	// ---------------------------------------------------------------- forwarded tools

	function forwardTool(toolName: string, toolCallId: string, params: unknown, signal: AbortSignal | undefined) {
		if (!sock || !welcomed) {
			return Promise.resolve(toolResult(`pokeshell is not connected, so ${toolName} did nothing.`, true));
		}
		return new Promise<any>((resolve) => {
			let settled = false;
			const finish = (answer: ToolAnswer) => {
				if (settled) return;
				settled = true;
				clearTimeout(timer);
				pendingTools.delete(toolCallId);
				safe(() => signal?.removeEventListener("abort", onAbort));
				resolve(toolResult(answer.text, answer.isError, answer.details));
			};
			const onAbort = () => finish({ text: `${toolName} was cancelled.`, isError: true });
			const timer: any = setTimeout(
				() => finish({ text: `pokeshell did not answer ${toolName} in time; nothing was done.`, isError: true }),
				TOOL_REPLY_TIMEOUT_MS,
			);
			// This timer stays ref'ed on purpose: the socket is unref'ed, and in print mode nothing else would keep
			// node alive while pi waits for this tool, so pi would exit in the middle of the call.
			pendingTools.set(toolCallId, finish);
			if (signal?.aborted) return onAbort();
			safe(() => signal?.addEventListener("abort", onAbort, { once: true }));
			emit("tool_call_request", { callId: toolCallId, toolName, args: bound(params ?? {}, FORWARDED_STRING_MAX) });
		});
	}

	function failPendingTools(why: string) {
		for (const finish of [...pendingTools.values()]) finish({ text: `${why}; the tool did nothing.`, isError: true });
		pendingTools.clear();
	}

	function toolResult(text: string, isError: boolean, details?: unknown) {
		return { content: [{ type: "text", text }], details: details ?? {}, isError };
	}

	function registerForwardedTool(definition: any) {
		try {
			pi.registerTool({
				...definition,
				async execute(toolCallId: string, params: unknown, signal: AbortSignal | undefined, _onUpdate: unknown, toolCtx: any) {
					try {
						if (toolCtx) ctx = toolCtx;
						return await forwardTool(definition.name, toolCallId, params, signal);
					} catch (e) {
						report(definition.name, e);
						return toolResult(`${definition.name} failed inside the pokeshell bridge: ${errorText(e)}`, true);
					}
				},
			});
		} catch (e) {
			report(`registering ${definition.name}`, e);
		}
	}

	registerForwardedTool({
		name: "schedule_wakeup",
		label: "Schedule Wakeup",
		description:
			"Set a timer that brings this session back to you later, so you can return to something slow " +
			"(a build, a deploy, a long test run) without waiting for the user. When the timer runs out your " +
			"prompt comes back to you as a message: at once if you are idle, after the current turn if you are " +
			"busy. The delay is kept between 60 and 3600 seconds.",
		promptSnippet: "schedule_wakeup(delay_seconds, prompt, reason?): come back to this session after a delay",
		parameters: Type.Object({
			delay_seconds: Type.Number({ description: "How long to wait, in seconds (kept between 60 and 3600)." }),
			prompt: Type.String({ description: "The text you want to receive when the timer fires." }),
			reason: Type.Optional(
				Type.String({ description: "A short note on why you want to wake up; shown with the delivered prompt." }),
			),
		}),
	});

	registerForwardedTool({
		name: "cancel_wakeup",
		label: "Cancel Wakeup",
		description: "Cancel a pending wakeup by its id, or every pending wakeup when no id is given.",
		promptSnippet: "cancel_wakeup(id?): cancel one pending wakeup, or all of them",
		parameters: Type.Object({
			id: Type.Optional(Type.String({ description: "Id of the wakeup to cancel; leave it out to cancel them all." })),
		}),
	});

	// ---------------------------------------------------------------- handoff document

	async function writeHandoff(event: any, c: any, arm: HandoffArm) {
		const fallback = (reason: string) => ({
			result: undefined,
			report: { outcome: "fallback", reason, path: null, saveError: null, documentChars: null, readFiles: 0, modifiedFiles: 0 },
		});
		try {
			const prep = event.preparation;
			if (!prep) return fallback("pi gave no compaction preparation");
			const model = c?.model;
			if (!model) return fallback("no active model to write the handoff with");
			const registry = c?.modelRegistry;
			if (typeof registry?.complete !== "function") return fallback("this pi offers no model call to extensions");
			if (typeof piAgent.serializeConversation !== "function" || typeof piAgent.convertToLlm !== "function")
				return fallback("this pi lacks serializeConversation/convertToLlm");
			const messages = [...(prep.messagesToSummarize ?? []), ...(prep.turnPrefixMessages ?? [])];
			if (messages.length === 0) return fallback("nothing to summarize");
			const conversation = piAgent.serializeConversation(piAgent.convertToLlm(messages));
			const request = handoffRequest(conversation, prep.previousSummary, arm.focus);
			const maxTokens = Math.min(Number(model.maxTokens) || HANDOFF_MAX_TOKENS, HANDOFF_MAX_TOKENS);
			const response = await registry.complete(
				model,
				{
					systemPrompt: HANDOFF_INSTRUCTIONS,
					messages: [{ role: "user", content: [{ type: "text", text: request }], timestamp: Date.now() }],
				},
				{ signal: event.signal, cacheRetention: "none", sessionId: randomUUID(), maxTokens },
			);
			if (event.signal?.aborted) return fallback("the compaction was aborted");
			if (response?.stopReason === "error" || response?.stopReason === "aborted")
				return fallback(`the model call failed: ${boundText(response.errorMessage) ?? response.stopReason}`);
			const blocks: any[] = Array.isArray(response?.content) ? response.content : [];
			const document = blocks
				.filter((b) => b?.type === "text" && typeof b.text === "string")
				.map((b) => b.text)
				.join("\n")
				.trim();
			if (!document) return fallback("the model returned an empty document");

			const { readFiles, modifiedFiles } = mergedFileLists(prep.fileOps, event.branchEntries);
			const fileLists = fileListBlocks(readFiles, modifiedFiles);
			const summary = `${HANDOFF_FRAMING}\n\n<handoff>\n${document}\n</handoff>${fileLists ? `\n\n${fileLists}` : ""}`;

			let path: string | null = null;
			let saveError: string | null = null;
			if (arm.save) {
				const sessionFile = safe(() => c.sessionManager.getSessionFile());
				if (!sessionFile) {
					saveError = "the session has no file (started with --no-session)";
				} else {
					const stamp = new Date().toISOString().replace(/:/g, "-");
					const target = join(dirname(sessionFile), `handoff-${stamp}.md`);
					try {
						writeFileSync(target, `${document}\n${fileLists ? `\n${fileLists}\n` : ""}`, { flag: "wx", mode: 0o600 });
						path = target;
					} catch (e) {
						saveError = errorText(e);
					}
				}
			}
			return {
				result: {
					compaction: {
						summary,
						firstKeptEntryId: prep.firstKeptEntryId,
						tokensBefore: prep.tokensBefore,
						usage: response.usage,
						details: { readFiles, modifiedFiles, handoff: true, handoffPath: path },
					},
				},
				report: {
					outcome: "written",
					reason: null,
					path,
					saveError,
					documentChars: document.length,
					readFiles: readFiles.length,
					modifiedFiles: modifiedFiles.length,
				},
			};
		} catch (e) {
			return fallback(errorText(e));
		}
	}
}

// -------------------------------------------------------------------- handoff texts (pokeshell's own words)

const HANDOFF_INSTRUCTIONS = `You write handoff documents for a coding agent. A fresh instance of the same agent takes over this task with nothing but your document and the most recent messages, so it must be able to continue without asking anything.

Reply with the document only: no preamble, no closing remarks.

Be exact about the technical state: file paths, names of functions and types, commands that were run and what they printed, test results, decisions taken, unfinished edits. Keep apart what is confirmed on disk and what was only intended.

Speak to the successor in the imperative ("Run the tests", "Fix the parser"), never in the first person. Writing this handoff is not part of the task: never list it as progress or as a next step.

Use exactly these sections, in this order:
## Goal
## Constraints & Preferences
## Progress
### Done
(items as "- [x] ...")
### In Progress
### Pending
(items as "- [ ] ...")
## Key Decisions
(items as "- **Decision**: why")
## Critical Context
## Next Steps
(a numbered list)`;

const HANDOFF_FRAMING = `Your earlier context was condensed. The <handoff> below is a note that a previous instance of you wrote from the full conversation, just before that conversation was cut. It is your own working memory, not a message from the user.
- Where the note says "I" or "we", it means that earlier instance, which is you.
- "Next Steps" is your own plan, picked up again: check it against the latest user message before acting on it.
- The handoff is finished and complete. Do not write another handoff document unless the user asks for one.
- Build on the work already done; do not redo it.`;

function handoffRequest(conversation: string, previousSummary: unknown, focus: string | undefined): string {
	const parts = [`Write the handoff document for this conversation.\n\n<conversation>\n${conversation}\n</conversation>`];
	if (typeof previousSummary === "string" && previousSummary.trim()) {
		parts.push(
			`The conversation above continues from an earlier summary. Carry over whatever in it still holds.\n\n<earlier-summary>\n${previousSummary}\n</earlier-summary>`,
		);
	}
	if (focus) parts.push(`Additional focus: ${focus}`);
	return parts.join("\n\n");
}

// -------------------------------------------------------------------- file lists

function mergedFileLists(fileOps: any, branchEntries: unknown) {
	const read = new Set<string>();
	const modified = new Set<string>();
	const entries: any[] = Array.isArray(branchEntries) ? branchEntries : [];
	const previous = [...entries].reverse().find((e) => e?.type === "compaction");
	addAll(read, previous?.details?.readFiles);
	addAll(modified, previous?.details?.modifiedFiles);
	addAll(read, fileOps?.read);
	addAll(modified, fileOps?.written);
	addAll(modified, fileOps?.edited);
	const modifiedFiles = [...modified].sort();
	const readFiles = [...read].filter((f) => !modified.has(f)).sort();
	return { readFiles, modifiedFiles };
}

function addAll(set: Set<string>, items: unknown) {
	if (!items || typeof (items as any)[Symbol.iterator] !== "function" || typeof items === "string") return;
	for (const item of items as Iterable<unknown>) if (typeof item === "string" && item) set.add(item);
}

function fileListBlocks(readFiles: string[], modifiedFiles: string[]): string {
	const blocks: string[] = [];
	if (readFiles.length) blocks.push(`<read-files>\n${readFiles.join("\n")}\n</read-files>`);
	if (modifiedFiles.length) blocks.push(`<modified-files>\n${modifiedFiles.join("\n")}\n</modified-files>`);
	return blocks.join("\n\n");
}

// -------------------------------------------------------------------- small pure helpers

function safe<T>(fn: () => T): T | undefined {
	try {
		return fn();
	} catch {
		return undefined;
	}
}

function errorText(e: unknown): string {
	if (e instanceof Error) return e.message || e.name;
	return typeof e === "string" ? e : safe(() => JSON.stringify(e)) ?? String(e);
}

function numberOrNull(value: unknown): number | null {
	return typeof value === "number" && Number.isFinite(value) ? value : null;
}

function textOrUndefined(value: unknown): string | undefined {
	return typeof value === "string" && value.trim() ? value : undefined;
}

function modelName(model: any): string | null {
	if (!model || typeof model !== "object") return null;
	const id = typeof model.id === "string" ? model.id : null;
	if (!id) return null;
	return typeof model.provider === "string" ? `${model.provider}/${id}` : id;
}

function boundText(text: unknown): string | null {
	if (typeof text !== "string") return null;
	return text.length > ERROR_TEXT_MAX ? `${text.slice(0, ERROR_TEXT_MAX)}…` : text;
}

/**
 * Copies a JSON value with bounds: long strings are cut and marked with their full length and a hash (so
 * two different long values never look equal), deep nesting and big objects/arrays are cut with markers.
 */
function bound(value: unknown, stringMax: number, depth = 0): unknown {
	if (typeof value === "string") {
		if (value.length <= stringMax) return value;
		const hash = createHash("sha256").update(value).digest("hex").slice(0, 12);
		return `${value.slice(0, stringMax)}…[${value.length} chars, sha256 ${hash}]`;
	}
	if (value === null || typeof value === "number" || typeof value === "boolean") return value;
	if (typeof value !== "object") return String(value);
	if (depth >= 8) return "…[nested too deep]";
	if (Array.isArray(value)) {
		const items = value.slice(0, 50).map((v) => bound(v, stringMax, depth + 1));
		if (value.length > 50) items.push(`…[${value.length - 50} more items]`);
		return items;
	}
	const out: Record<string, unknown> = {};
	const keys = Object.keys(value as object);
	for (const key of keys.slice(0, 50)) out[key] = bound((value as any)[key], stringMax, depth + 1);
	if (keys.length > 50) out["…"] = `${keys.length - 50} more keys`;
	return out;
}
