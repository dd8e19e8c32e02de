import assert from "node:assert/strict";
import { test } from "node:test";

import { askArgs, askModel, askReply } from "../ask-model.ts";

test("the question and the timeout are bounded; a missing question is refused", () => {
	const args = askArgs({ question: "q".repeat(5000), system: "s", timeoutMs: 10 ** 9 });
	assert.equal(args.question.length, 4000);
	assert.equal(args.timeoutMs, 60_000);
	assert.equal(askArgs({ question: "ok?", timeoutMs: 2000 }).timeoutMs, 2000);
	assert.throws(() => askArgs({ question: "  " }), /needs a question/);
});

test("the reply carries the answer's text and its token cost", () => {
	const reply = askReply({ content: [{ type: "thinking", thinking: "x" }, { type: "text", text: " STEP " }], usage: { input: 120, output: 2 } });
	assert.deepEqual(reply, { answer: "STEP", inputTokens: 120, outputTokens: 2 });
	assert.deepEqual(askReply({}), { answer: "", inputTokens: null, outputTokens: null });
});

test("the session's model is asked with the question, and a slow model times out", async () => {
	const seen: any[] = [];
	const ctx = {
		model: { id: "m" },
		modelRegistry: {
			complete: async (model: any, context: any, options: any) => {
				seen.push({ model, context, options });
				return { content: [{ type: "text", text: "DONE" }], usage: { input: 50, output: 1 } };
			},
		},
	};
	const reply = await askModel(ctx, { question: "did it end?", system: "one word", timeoutMs: 1000 });
	assert.equal(reply.answer, "DONE");
	assert.equal(seen[0].context.systemPrompt, "one word");
	assert.equal(seen[0].context.messages[0].content[0].text, "did it end?");
	assert.equal(seen[0].options.maxTokens, 16);

	const slow = {
		model: { id: "m" },
		modelRegistry: {
			complete: (_m: any, _c: any, options: any) =>
				new Promise((resolve) => options.signal.addEventListener("abort", () => resolve({ stopReason: "aborted" }))),
		},
	};
	await assert.rejects(askModel(slow, { question: "q", timeoutMs: 50 }), /no answer within/);
	await assert.rejects(askModel({}, { question: "q" }), /no active model/);
});
