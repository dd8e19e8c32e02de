import assert from "node:assert/strict";
import { test } from "node:test";

import { handoffArmOf, notifyArgs, sendMessageArgs, sendUserMessageArgs, toolReplyArgs } from "../command-args.ts";

test("send_message becomes pi's message and options, hidden and without a turn by default", () => {
	assert.deepEqual(sendMessageArgs({ customType: "pokeshell-poke", content: "go" }), {
		message: { customType: "pokeshell-poke", content: "go", display: false },
		options: { triggerTurn: false },
	});
	const full = sendMessageArgs({ customType: "t", content: "c", display: true, triggerTurn: true, deliverAs: "steer", details: { a: 1 } });
	assert.deepEqual(full.options, { triggerTurn: true, deliverAs: "steer" });
	assert.deepEqual(full.message.details, { a: 1 });
});

test("bad command arguments are refused with a reason", () => {
	assert.throws(() => sendMessageArgs({ content: "c" }), /needs a customType/);
	assert.throws(() => sendMessageArgs({ customType: "t", content: 3 }), /needs a text content/);
	assert.throws(() => sendUserMessageArgs({}), /needs a text/);
});

test("send_user_message passes deliverAs only when given", () => {
	assert.deepEqual(sendUserMessageArgs({ text: "hi" }), { text: "hi", options: undefined });
	assert.deepEqual(sendUserMessageArgs({ text: "hi", deliverAs: "followUp" }).options, { deliverAs: "followUp" });
});

test("notify falls back to info; tool replies are normalized", () => {
	assert.deepEqual(notifyArgs({ message: "m", level: "shout" }), { message: "m", level: "info" });
	assert.equal(notifyArgs({ level: "error" }).level, "error");
	assert.deepEqual(toolReplyArgs({ callId: 7, text: "ok" }), {
		callId: "7",
		answer: { text: "ok", isError: false, details: undefined },
	});
});

test("only a compact with handoff arms the handoff pass", () => {
	assert.equal(handoffArmOf({}), null);
	assert.deepEqual(handoffArmOf({ handoff: true, customInstructions: " ", save: true }), {
		focus: undefined,
		save: true,
		consumed: false,
	});
	assert.equal(handoffArmOf({ handoff: true, customInstructions: "the parser" })?.focus, "the parser");
});
