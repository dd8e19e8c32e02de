import assert from "node:assert/strict";
import { test } from "node:test";

import { ProgressThrottle, progressKindOf } from "../progress.ts";

test("streaming events are sorted into text, thinking and tool call progress", () => {
	const of = (type: string) => progressKindOf({ assistantMessageEvent: { type } });
	assert.equal(of("text_delta"), "text");
	assert.equal(of("text_start"), "text");
	assert.equal(of("thinking_delta"), "thinking");
	assert.equal(of("toolcall_delta"), "toolcall");
	assert.equal(of("start"), null);
	assert.equal(of("done"), null);
	assert.equal(progressKindOf({}), null);
	assert.equal(progressKindOf(undefined), null);
});

test("at most one progress line per second per kind", () => {
	let clock = 10_000;
	const throttle = new ProgressThrottle(() => clock);
	assert.equal(throttle.take("text"), true);
	clock += 400;
	assert.equal(throttle.take("text"), false);
	assert.equal(throttle.take("thinking"), true, "another kind has its own budget");
	clock += 599;
	assert.equal(throttle.take("text"), false);
	clock += 1;
	assert.equal(throttle.take("text"), true);
	let passed = 0;
	for (let i = 0; i < 100; i++) {
		clock += 10;
		if (throttle.take("toolcall")) passed++;
	}
	assert.equal(passed, 1, "a burst of 100 updates in one second sends one line");
});
