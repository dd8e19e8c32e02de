import assert from "node:assert/strict";
import { test } from "node:test";

import { heartbeatFields, RunningTools } from "../heartbeat.ts";

test("running tools are those started and not yet ended, oldest first", () => {
	const running = new RunningTools();
	running.start("a");
	running.start("b");
	running.start("");
	running.start("c");
	running.end("b");
	running.end("never-started");
	assert.deepEqual(running.list(), ["a", "c"]);
});

test("the heartbeat reads pi's idle state, and nulls from a context that fails", () => {
	const running = new RunningTools();
	running.start("call_1");
	const ctx = { isIdle: () => false, hasPendingMessages: () => true };
	assert.deepEqual(heartbeatFields(ctx, running), { idle: false, pendingMessages: true, runningTools: ["call_1"] });
	const broken = {
		isIdle: () => {
			throw new Error("stale");
		},
	};
	assert.deepEqual(heartbeatFields(broken, new RunningTools()), { idle: null, pendingMessages: null, runningTools: [] });
	assert.deepEqual(heartbeatFields(undefined, new RunningTools()).idle, null);
});
