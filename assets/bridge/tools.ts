/**
 * Forwarded tools: pi tools whose work happens in pokeshell. The call is sent as `tool_call_request` and
 * waits for pokeshell's `tool_reply`, a timeout, a cancel, or the end of the connection.
 */

import { Type } from "typebox";

import { FORWARDED_STRING_MAX, TOOL_REPLY_TIMEOUT_MS } from "./limits.ts";
import type { Bridge } from "./state.ts";
import { bound, errorText, safe } from "./util.ts";
import { type Bounds, scheduleWakeupTexts } from "./wakeup-bounds.ts";

export type ToolAnswer = { text: string; isError: boolean; details?: unknown };

export function toolResult(text: string, isError: boolean, details?: unknown) {
	return { content: [{ type: "text", text }], details: details ?? {}, isError };
}

/** The calls waiting for pokeshell, by pi's tool call id. */
export class ForwardedTools {
	private readonly pending = new Map<string, (answer: ToolAnswer) => void>();

	/** Answers the waiting call `callId`; false when none waits. */
	answer(callId: string, answer: ToolAnswer): boolean {
		const finish = this.pending.get(callId);
		if (!finish) return false;
		finish(answer);
		return true;
	}

	failAll(why: string) {
		for (const finish of [...this.pending.values()]) finish({ text: `${why}; the tool did nothing.`, isError: true });
		this.pending.clear();
	}

	call(b: Bridge, toolName: string, toolCallId: string, params: unknown, signal: AbortSignal | undefined) {
		if (!b.link.open) {
			return Promise.resolve(toolResult(`pokeshell is not connected, so ${toolName} did nothing.`, true));
		}
		return new Promise<any>((resolve) => {
			let settled = false;
			const finish = (answer: ToolAnswer) => {
				if (settled) return;
				settled = true;
				clearTimeout(timer);
				this.pending.delete(toolCallId);
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
			this.pending.set(toolCallId, finish);
			if (signal?.aborted) return onAbort();
			safe(() => signal?.addEventListener("abort", onAbort, { once: true }));
			b.link.emit("tool_call_request", { callId: toolCallId, toolName, args: bound(params ?? {}, FORWARDED_STRING_MAX) });
		});
	}
}

function registerForwardedTool(b: Bridge, definition: any) {
	try {
		b.pi.registerTool({
			...definition,
			async execute(toolCallId: string, params: unknown, signal: AbortSignal | undefined, _onUpdate: unknown, toolCtx: any) {
				try {
					if (toolCtx) b.ctx = toolCtx;
					return await b.tools.call(b, definition.name, toolCallId, params, signal);
				} catch (e) {
					b.link.report(definition.name, e);
					return toolResult(`${definition.name} failed inside the pokeshell bridge: ${errorText(e)}`, true);
				}
			},
		});
	} catch (e) {
		b.link.report(`registering ${definition.name}`, e);
	}
}

/** The wakeup tools; pokeshell keeps the timers and the policy. `bounds` are the delays it allows. */
export function registerWakeupTools(b: Bridge, bounds: Bounds) {
	const texts = scheduleWakeupTexts(bounds);
	registerForwardedTool(b, {
		name: "schedule_wakeup",
		label: "Schedule Wakeup",
		description: texts.description,
		promptSnippet: "schedule_wakeup(delay_seconds, prompt, reason?): come back to this session after a delay",
		parameters: Type.Object({
			delay_seconds: Type.Number({ description: texts.delay }),
			prompt: Type.String({ description: "The text you want to receive when the timer fires." }),
			reason: Type.Optional(
				Type.String({ description: "A short note on why you want to wake up; shown with the delivered prompt." }),
			),
		}),
	});

	registerForwardedTool(b, {
		name: "cancel_wakeup",
		label: "Cancel Wakeup",
		description: "Cancel a pending wakeup by its id, or every pending wakeup when no id is given.",
		promptSnippet: "cancel_wakeup(id?): cancel one pending wakeup, or all of them",
		parameters: Type.Object({
			id: Type.Optional(Type.String({ description: "Id of the wakeup to cancel; leave it out to cancel them all." })),
		}),
	});
}
