/** pi's lifecycle events, forwarded to pokeshell as `event` lines (docs/protocol.md lists their fields). */

import { branchOf, idleOf, pendingMessagesOf, sessionInfo, usageOf } from "./context.ts";
import { writeHandoff } from "./handoff.ts";
import { ERROR_TEXT_MAX, PREVIEW_STRING_MAX } from "./limits.ts";
import { progressKindOf } from "./progress.ts";
import type { Bridge } from "./state.ts";
import { branchTail, finalText, ownEntries, resultDigest, summarizeMessage, talkText, tokenUsage } from "./summaries.ts";
import { bound, boundText, modelName, numberOrNull } from "./util.ts";

/** Wraps a pi event handler: remembers the context, reports instead of throwing. */
function on(b: Bridge, name: string, fn: (event: any, ctx: any) => any) {
	b.pi.on(name, (event: any, handlerCtx: any) => {
		try {
			if (handlerCtx) b.ctx = handlerCtx;
			const result = fn(event ?? {}, handlerCtx);
			if (result && typeof result.then === "function") {
				return result.catch((e: unknown) => {
					b.link.report(name, e);
					return undefined;
				});
			}
			return result;
		} catch (e) {
			b.link.report(name, e);
			return undefined;
		}
	});
}

export function forwardEvents(b: Bridge) {
	const emit = (type: string, fields?: Record<string, unknown>) => b.link.emit(type, fields);

	on(b, "session_start", (event) => {
		b.link.connect();
		emit("session_start", {
			reason: event.reason,
			previousSessionFile: event.previousSessionFile ?? null,
			...sessionInfo(b.ctx),
			customEntries: ownEntries(branchOf(b.ctx)),
		});
	});

	on(b, "session_shutdown", (event) => {
		emit("session_shutdown", { reason: event.reason, targetSessionFile: event.targetSessionFile ?? null });
		b.tools.failAll("pi is replacing or closing this session");
		b.link.closeForGood();
	});

	on(b, "session_tree", (event) => {
		emit("session_tree", {
			newLeafId: event.newLeafId ?? null,
			oldLeafId: event.oldLeafId ?? null,
			customEntries: ownEntries(branchOf(b.ctx)),
		});
	});

	on(b, "session_info_changed", (event) => emit("session_info_changed", { name: event.name ?? null }));

	on(b, "model_select", (event) => emit("model_select", { model: modelName(event.model), source: event.source ?? null }));

	on(b, "input", (event) => {
		emit("input", {
			source: event.source,
			streamingBehavior: event.streamingBehavior ?? null,
			textChars: typeof event.text === "string" ? event.text.length : 0,
			hasImages: Array.isArray(event.images) && event.images.length > 0,
		});
		return undefined;
	});

	on(b, "before_agent_start", (event) => {
		emit("before_agent_start", {
			messageType: event.messageType ?? null,
			customType: event.message?.customType ?? null,
		});
		return undefined;
	});

	on(b, "agent_start", () => emit("agent_start"));

	on(b, "agent_end", (event) => {
		const messages: any[] = Array.isArray(event.messages) ? event.messages : [];
		const last = [...messages].reverse().find((m) => m?.role === "assistant");
		emit("agent_end", {
			stopReason: last?.stopReason ?? null,
			errorMessage: boundText(last?.errorMessage, ERROR_TEXT_MAX),
			messageCount: messages.length,
		});
	});

	on(b, "agent_settled", (event) => {
		const branch = branchOf(b.ctx);
		const { tail, truncated } = branchTail(branch);
		emit("agent_settled", {
			aborted: event.aborted === true,
			idle: idleOf(b.ctx),
			pendingMessages: pendingMessagesOf(b.ctx),
			contextUsage: usageOf(b.ctx),
			tail,
			tailTruncated: truncated,
			finalText: finalText(branch),
		});
	});

	on(b, "turn_start", (event) => emit("turn_start", { turnIndex: event.turnIndex ?? 0 }));

	// The loop guard also judges a run between its turns (a model repeating a failing call may never
	// settle). Only a turn whose tool batch had a failure can extend a loop, so only those send a tail,
	// and pi is held until pokeshell releases the turn (see TurnHolds). Not connected: nothing to wait for.
	on(b, "turn_end", (event) => {
		const results: any[] = Array.isArray(event.toolResults) ? event.toolResults : [];
		if (!results.some((result) => result?.isError === true)) return;
		const { tail, truncated } = branchTail(branchOf(b.ctx));
		const hold = b.link.open ? b.turns.hold() : null;
		emit("turn_end", { turnIndex: event.turnIndex ?? 0, tail, tailTruncated: truncated, holdId: hold?.id ?? null });
		return hold?.released;
	});

	// The stall watch only needs to know that the reply still streams: throttled per kind.
	on(b, "message_update", (event) => {
		const kind = progressKindOf(event);
		if (kind && b.progress.take(kind)) emit("progress", { kind });
		return undefined;
	});

	on(b, "message_end", (event) => {
		if (event.message) {
			emit("message_end", {
				message: summarizeMessage(event.message, null),
				usage: tokenUsage(event.message),
				text: talkText(event.message),
			});
		}
		return undefined;
	});

	on(b, "tool_execution_start", (event) => {
		b.running.start(String(event.toolCallId ?? ""));
		emit("tool_execution_start", {
			toolCallId: String(event.toolCallId ?? ""),
			toolName: String(event.toolName ?? ""),
			args: bound(event.args ?? {}, PREVIEW_STRING_MAX),
		});
	});

	on(b, "tool_execution_end", (event) => {
		b.running.end(String(event.toolCallId ?? ""));
		emit("tool_execution_end", {
			toolCallId: String(event.toolCallId ?? ""),
			toolName: String(event.toolName ?? ""),
			isError: event.isError === true,
			durationMs: numberOrNull(event.durationMs),
			resultDigest: resultDigest(event.result),
		});
	});

	on(b, "session_compact", (event) => {
		emit("session_compact", {
			reason: event.reason,
			willRetry: event.willRetry === true,
			fromExtension: event.fromExtension === true,
			tokensBefore: numberOrNull(event.compactionEntry?.tokensBefore),
		});
	});

	on(b, "session_compact_failed", (event) => {
		emit("session_compact_failed", {
			reason: event.reason,
			willRetry: event.willRetry === true,
			aborted: event.aborted === true,
			fromExtension: event.fromExtension === true,
			errorMessage: boundText(event.errorMessage, ERROR_TEXT_MAX),
		});
	});

	on(b, "session_before_compact", async (event, handlerCtx) => {
		const arm = b.handoffArm;
		const mine = !!arm && !arm.consumed && event.reason === "manual";
		emit("session_before_compact", {
			reason: event.reason,
			willRetry: event.willRetry === true,
			tokensBefore: numberOrNull(event.preparation?.tokensBefore),
			handoff: mine,
		});
		if (!mine || !arm) return undefined;
		arm.consumed = true;
		const { result, report } = await writeHandoff(event, handlerCtx ?? b.ctx, arm);
		arm.report = report;
		emit("handoff", report);
		return result;
	});
}
