/**
 * The promise rule's second opinion (PROM-A1): one short question to the session's own model, the way
 * the handoff asks it for a document, with a timeout. The question is pokeshell's; the bridge only asks
 * and reports the answer and its token cost.
 */

import { randomUUID } from "node:crypto";

import { responseText } from "./handoff-text.ts";
import { ASK_ANSWER_MAX, ASK_MAX_TOKENS, ASK_QUESTION_MAX, ASK_TIMEOUT_MAX_MS, ERROR_TEXT_MAX } from "./limits.ts";
import { boundText, numberOrNull } from "./util.ts";

/** Bounds a command's question and timeout; throws on a question that is not text. */
export function askArgs(command: any) {
	if (typeof command.question !== "string" || command.question.trim() === "") throw new Error("ask_model needs a question");
	const question = Array.from(command.question).slice(0, ASK_QUESTION_MAX).join("");
	const system = typeof command.system === "string" ? Array.from(command.system).slice(0, ASK_QUESTION_MAX).join("") : "";
	const requested = Number(command.timeoutMs);
	const timeoutMs = Number.isFinite(requested) && requested > 0 ? Math.min(requested, ASK_TIMEOUT_MAX_MS) : ASK_TIMEOUT_MAX_MS;
	return { question, system, timeoutMs };
}

/** The reply: the answer's text (bounded) and the tokens it cost, as the provider reported them. */
export function askReply(response: any) {
	return {
		answer: boundText(responseText(response?.content), ASK_ANSWER_MAX) ?? "",
		inputTokens: numberOrNull(response?.usage?.input),
		outputTokens: numberOrNull(response?.usage?.output),
	};
}

export async function askModel(ctx: any, command: any) {
	const { question, system, timeoutMs } = askArgs(command);
	const model = ctx?.model;
	if (!model) throw new Error("no active model to ask");
	const registry = ctx?.modelRegistry;
	if (typeof registry?.complete !== "function") throw new Error("this pi offers no model call to extensions");
	const controller = new AbortController();
	const timer = setTimeout(() => controller.abort(), timeoutMs);
	try {
		const response = await registry.complete(
			model,
			{ systemPrompt: system, messages: [{ role: "user", content: [{ type: "text", text: question }], timestamp: Date.now() }] },
			{ signal: controller.signal, cacheRetention: "none", sessionId: randomUUID(), maxTokens: ASK_MAX_TOKENS },
		);
		if (controller.signal.aborted) throw new Error(`no answer within ${Math.round(timeoutMs / 1000)}s`);
		if (response?.stopReason === "error" || response?.stopReason === "aborted")
			throw new Error(`the model call failed: ${boundText(response.errorMessage, ERROR_TEXT_MAX) ?? response.stopReason}`);
		return askReply(response);
	} finally {
		clearTimeout(timer);
	}
}
