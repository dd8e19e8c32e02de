import assert from "node:assert/strict";
import { test } from "node:test";

import {
	branchTail,
	customEntry,
	finalText,
	ownEntries,
	pickEntries,
	resultDigest,
	summarizeMessage,
	talkText,
	tokenUsage,
} from "../summaries.ts";

test("a result's digest is the same exactly when its text is", () => {
	const text = (t: string) => ({ content: [{ type: "text", text: t }], details: { at: Math.random() } });
	assert.equal(resultDigest(text("3 passed")), resultDigest(text("3 passed")), "details aside");
	assert.notEqual(resultDigest(text("3 passed")), resultDigest(text("4 passed")));
	assert.notEqual(resultDigest(text("ab")), resultDigest({ content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }));
	assert.equal(resultDigest("plain"), resultDigest(text("plain")));
	assert.match(resultDigest(text("x")) ?? "", /^[0-9a-f]{32}$/);
	assert.equal(resultDigest(undefined), null);
});

test("a message summary carries no text, only what the rules need", () => {
	const summary = summarizeMessage(
		{
			role: "assistant",
			stopReason: "toolUse",
			content: [
				{ type: "text", text: "  " },
				{ type: "thinking", thinking: "hmm" },
				{ type: "toolCall", id: "c1", name: "bash", arguments: { command: "x".repeat(1500) } },
				{ type: "image" },
				{ type: "weird" },
			],
		},
		"e1",
	);
	assert.equal(summary.id, "e1");
	assert.deepEqual(summary.content.slice(0, 2), [
		{ type: "text", nonBlank: false },
		{ type: "thinking", nonBlank: true },
	]);
	const call: any = summary.content[2];
	assert.match(call.arguments.command, /^x{1000}…\[1500 chars/);
	assert.deepEqual(summary.content.slice(3), [{ type: "image" }, { type: "other", kind: "weird" }]);
	assert.equal(summarizeMessage({ content: "hi" }, null).content[0].nonBlank, true);
});

test("the tail keeps messages, custom messages and compactions, oldest first", () => {
	const branch = [
		{ type: "message", id: "m1", message: { role: "user", content: "go" } },
		{ type: "custom", id: "x", customType: "pokeshell-settings" },
		{ type: "compaction", id: "c1", tokensBefore: 9000 },
		{ type: "custom_message", id: "p1", customType: "pokeshell-poke", display: false },
	];
	const { tail, truncated } = branchTail(branch);
	assert.equal(truncated, false);
	assert.deepEqual(
		tail.map((e: any) => [e.kind, e.id]),
		[
			["message", "m1"],
			["compaction", "c1"],
			["custom_message", "p1"],
		],
	);
});

test("the tail holds at most 200 entries and says when older ones exist", () => {
	const branch = Array.from({ length: 205 }, (_, i) => ({ type: "message", id: `m${i}`, message: { role: "user" } }));
	const { tail, truncated } = branchTail(branch);
	assert.equal(tail.length, 200);
	assert.equal(truncated, true);
	assert.equal((tail[0] as any).id, "m5");
});

test("own entries are pokeshell's custom entries; big data is replaced by its size", () => {
	const branch = [
		{ type: "custom", id: "a", customType: "pokeshell-settings", data: { on: true }, timestamp: "t" },
		{ type: "custom", id: "b", customType: "other-ext", data: {} },
		{ type: "custom", id: "c", customType: "pokeshell-wakeup", data: "y".repeat(70 * 1024) },
	];
	const own = ownEntries(branch);
	assert.deepEqual(own[0], { id: "a", customType: "pokeshell-settings", data: { on: true }, timestamp: "t" });
	assert.equal(own.length, 2);
	assert.deepEqual(own[1].data, { pokeshellTruncated: true, bytes: 70 * 1024 + 2 });
	assert.equal(customEntry({ customType: "x" }).data, null);
});

test("get_entries picks the newest matching entries within the limit, oldest first", () => {
	const all = Array.from({ length: 10 }, (_, i) => ({ type: "custom", id: `e${i}`, customType: i % 2 ? "pokeshell-a" : "b" }));
	const picked = pickEntries(all, "pokeshell", 3);
	assert.deepEqual(
		picked.entries.map((e) => e.id),
		["e5", "e7", "e9"],
	);
	assert.equal(picked.truncated, true);
	assert.equal(pickEntries(all, undefined, undefined).entries.length, 10);
	assert.equal(pickEntries(all, "b", 0).truncated, false, "a bad limit falls back to the default");
});

test("the final text is the last assistant message's text, its end only", () => {
	const branch = [
		{ type: "message", message: { role: "user", content: "go" } },
		{ type: "message", message: { role: "assistant", content: [{ type: "text", text: "first" }] } },
		{ type: "message", message: { role: "toolResult", content: [{ type: "text", text: "out" }] } },
		{
			type: "message",
			message: {
				role: "assistant",
				content: [
					{ type: "thinking", thinking: "secret plan" },
					{ type: "text", text: "The parser is in." },
					{ type: "toolCall", id: "c", name: "bash", arguments: {} },
					{ type: "text", text: "Now I'll run the tests:" },
				],
			},
		},
		{ type: "custom_message", customType: "poke" },
	];
	assert.equal(finalText(branch), "The parser is in.\nNow I'll run the tests:");
	const long = "x".repeat(5000) + "END";
	const bounded = finalText([{ type: "message", message: { role: "assistant", content: long } }]);
	assert.equal(bounded?.length, 2000);
	assert.ok(bounded?.endsWith("END"));
	assert.equal(finalText([{ type: "message", message: { role: "assistant", content: [{ type: "thinking", thinking: "x" }] } }]), null);
	assert.equal(finalText([{ type: "message", message: { role: "user", content: "hi" } }]), null);
});

test("an assistant reply's usage is counted, with pi's price when it has one", () => {
	const usage = {
		input: 1200,
		output: 300.4,
		cacheRead: 5000,
		cacheWrite: -3,
		totalTokens: 6500,
		cost: { input: 0.1, output: 0.2, cacheRead: 0.05, cacheWrite: 0, total: 0.35 },
	};
	assert.deepEqual(tokenUsage({ role: "assistant", usage }), {
		input: 1200,
		output: 300,
		cacheRead: 5000,
		cacheWrite: 0,
		costUsd: 0.35,
	});
	assert.equal(tokenUsage({ role: "assistant", usage: { ...usage, cost: undefined } })?.costUsd, null);
	assert.equal(tokenUsage({ role: "user", usage }), null, "only replies cost");
	assert.equal(tokenUsage({ role: "assistant" }), null);
});

test("a message's words for the conversation: text blocks joined, bounded at both ends", () => {
	assert.equal(talkText({ role: "assistant", content: [{ type: "thinking", thinking: "x" }] }), null);
	assert.equal(talkText({ role: "user", content: "  hello \n" }), "hello");
	assert.equal(
		talkText({
			role: "assistant",
			content: [
				{ type: "text", text: "Done." },
				{ type: "toolCall", id: "c", name: "bash", arguments: {} },
				{ type: "text", text: "Shall I go on?" },
			],
		}),
		"Done.\nShall I go on?",
	);
	const long = "A" + "b".repeat(9000) + "Z?";
	const cut = talkText({ role: "assistant", content: long }) as string;
	assert.ok(cut.startsWith("Ab") && cut.endsWith("bZ?"), "the start and the end stay");
	assert.match(cut, /…\[5003 characters left out\]…/);
	assert.ok(Array.from(cut).length < 4100);
	const result = talkText({ role: "toolResult", content: [{ type: "text", text: "y".repeat(2000) }] }) as string;
	assert.ok(Array.from(result).length < 700, "a tool's result gets a glimpse");
});
