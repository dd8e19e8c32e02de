/** pokeshell's commands, carried out inside pi. Every command gets exactly one reply; errors are replies. */

import { askModel } from "./ask-model.ts";
import {
	appendEntryArgs,
	commandAnswerArgs,
	handoffArmOf,
	notifyArgs,
	sendMessageArgs,
	sendUserMessageArgs,
	toolReplyArgs,
} from "./command-args.ts";
import { idleOf, pendingMessagesOf, usageOf } from "./context.ts";
import type { Bridge } from "./state.ts";
import { pickEntries } from "./summaries.ts";
import { errorText, numberOrNull, textOrUndefined } from "./util.ts";

export function runCommand(b: Bridge, id: unknown, command: any) {
	if (typeof id !== "number") {
		b.link.report("command", new Error("a command without a numeric id was ignored"));
		return;
	}
	let pending: Promise<unknown>;
	try {
		pending = Promise.resolve(execute(b, command ?? {}));
	} catch (e) {
		b.link.reply(id, false, undefined, errorText(e));
		return;
	}
	pending.then(
		(result) => b.link.reply(id, true, result),
		(e) => b.link.reply(id, false, undefined, errorText(e)),
	);
}

function requireCtx(b: Bridge) {
	if (!b.ctx) throw new Error("pi has not started a session yet");
	return b.ctx;
}

function execute(b: Bridge, command: any): unknown {
	switch (command.type) {
		case "send_message": {
			const { message, options } = sendMessageArgs(command);
			const idleBefore = idleOf(b.ctx);
			b.pi.sendMessage(message, options);
			return { idleBefore };
		}
		case "send_user_message": {
			const { text, options } = sendUserMessageArgs(command);
			const idleBefore = idleOf(b.ctx);
			b.pi.sendUserMessage(text, options);
			return { idleBefore };
		}
		case "abort":
			requireCtx(b).abort();
			return {};
		case "compact":
			return compact(b, command);
		case "ask_model":
			return askModel(requireCtx(b), command);
		case "append_entry": {
			const { customType, data } = appendEntryArgs(command);
			b.pi.appendEntry(customType, data);
			return {};
		}
		case "get_entries": {
			const sm = requireCtx(b).sessionManager;
			const all: any[] = (command.scope === "all" ? sm.getEntries() : sm.getBranch()) ?? [];
			return pickEntries(all, command.customTypePrefix, command.limit);
		}
		case "context_usage":
			return { usage: usageOf(b.ctx), idle: idleOf(b.ctx) };
		case "is_idle": {
			const c = requireCtx(b);
			return { idle: c.isIdle() === true, pendingMessages: pendingMessagesOf(c) };
		}
		case "tool_reply": {
			const { callId, answer } = toolReplyArgs(command);
			if (!b.tools.answer(callId, answer)) throw new Error(`no tool call ${command.callId} is waiting for a reply`);
			return {};
		}
		case "release_turn":
			b.turns.release(Number(command.holdId));
			return {};
		case "notify": {
			const c = requireCtx(b);
			if (!c.hasUI) return { shown: false };
			const { message, level } = notifyArgs(command);
			c.ui.notify(message, level);
			return { shown: true };
		}
		case "command_answer": {
			const { requestId, text, level } = commandAnswerArgs(command);
			if (b.asks.answer(requestId, text, level)) return { shown: true };
			// Too late: the command already said pokeshell did not answer; the answer is still news.
			if (!b.ctx?.hasUI) return { shown: false };
			b.ctx.ui.notify(text, level);
			return { shown: true };
		}
		default:
			throw new Error(`unknown command ${JSON.stringify(command.type)}`);
	}
}

/** `ctx.compact()`, answered when it finished; with `handoff`, arms the handoff pass for it. */
function compact(b: Bridge, command: any): Promise<unknown> {
	const c = requireCtx(b);
	if (command.handoff && b.handoffArm && !b.handoffArm.consumed)
		throw new Error("a handoff compaction is already waiting to run");
	const arm = handoffArmOf(command);
	if (arm) b.handoffArm = arm;
	return new Promise((resolve, reject) => {
		const done = () => {
			if (arm && b.handoffArm === arm) b.handoffArm = null;
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
