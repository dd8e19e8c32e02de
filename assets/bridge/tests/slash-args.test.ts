import assert from "node:assert/strict";
import { test } from "node:test";

import { POKE_USAGE, parseSlash, pendingWakeupIds, slashCompletions, WAKEUPS_USAGE } from "../slash-args.ts";

test("/poke alone pokes; status, on and off are its words, in any case", () => {
	assert.deepEqual(parseSlash("poke", ""), { request: { name: "poke" } });
	assert.deepEqual(parseSlash("poke", "  "), { request: { name: "poke" } });
	assert.deepEqual(parseSlash("poke", "status"), { request: { name: "poke_status" } });
	assert.deepEqual(parseSlash("poke", " ON "), { request: { name: "poke_on" } });
	assert.deepEqual(parseSlash("poke", "off"), { request: { name: "poke_off" } });
});

test("/poke with anything else is refused with its usage, and sends nothing", () => {
	assert.deepEqual(parseSlash("poke", "now please"), { usage: POKE_USAGE });
	assert.deepEqual(parseSlash("poke", "threshold 30"), { usage: POKE_USAGE });
	assert.deepEqual(parseSlash("poke", "enable"), { usage: POKE_USAGE });
});

test("/handoff carries its focus, whitespace squeezed, or none", () => {
	assert.deepEqual(parseSlash("handoff", ""), { request: { name: "handoff" } });
	assert.deepEqual(parseSlash("handoff", "  the   parser rewrite "), {
		request: { name: "handoff", focus: "the parser rewrite" },
	});
});

test("/wakeups lists; /wakeups cancel ID cancels one; anything else is its usage", () => {
	assert.deepEqual(parseSlash("wakeups", ""), { request: { name: "wakeups" } });
	assert.deepEqual(parseSlash("wakeups", "Cancel wake-3"), { request: { name: "wakeup_cancel", id: "wake-3" } });
	assert.deepEqual(parseSlash("wakeups", "cancel"), { usage: WAKEUPS_USAGE });
	assert.deepEqual(parseSlash("wakeups", "cancel a b"), { usage: WAKEUPS_USAGE });
	assert.deepEqual(parseSlash("wakeups", "list"), { usage: WAKEUPS_USAGE });
});

const values = (items: any[] | null) => (items ?? []).map((i) => i.value);

test("/poke completes status, on and off by what was typed", () => {
	assert.deepEqual(values(slashCompletions("poke", "", [])), ["status", "on", "off"]);
	assert.deepEqual(values(slashCompletions("poke", "o", [])), ["on", "off"]);
	assert.deepEqual(values(slashCompletions("poke", "ST", [])), ["status"]);
	assert.equal(slashCompletions("poke", "x", []), null);
	assert.equal(slashCompletions("handoff", "", ["wake-1"]), null);
});

test("/wakeups completes cancel, then cancel with each pending id", () => {
	assert.deepEqual(values(slashCompletions("wakeups", "", ["wake-1"])), ["cancel "]);
	assert.deepEqual(values(slashCompletions("wakeups", "ca", [])), ["cancel "]);
	assert.deepEqual(values(slashCompletions("wakeups", "cancel ", ["wake-1", "wake-12", "wake-2"])), [
		"cancel wake-1",
		"cancel wake-12",
		"cancel wake-2",
	]);
	assert.deepEqual(values(slashCompletions("wakeups", "cancel wake-1", ["wake-1", "wake-12", "wake-2"])), [
		"cancel wake-1",
		"cancel wake-12",
	]);
	assert.equal(slashCompletions("wakeups", "cancel ", []), null);
	assert.equal(slashCompletions("wakeups", "z", ["wake-1"]), null);
});

const entry = (customType: string, data: any) => ({ type: "custom", customType, data });

test("pending wakeup ids replay pokeshell's entries as it does when it re-arms them", () => {
	const branch = [
		entry("pokeshell-wakeup-scheduled", { id: "wake-1" }),
		{ type: "message", message: {} },
		entry("pokeshell-wakeup-scheduled", { id: "wake-2" }),
		entry("pokeshell-wakeup-scheduled", { id: "wake-3" }),
		entry("pokeshell-wakeup-fired", { id: "wake-1" }),
		entry("pokeshell-wakeup-cancelled", { id: "wake-3" }),
		entry("pokeshell-config", { id: "wake-9" }),
	];
	assert.deepEqual(pendingWakeupIds(branch), ["wake-2"]);
	const cleared = [...branch, entry("pokeshell-wakeup-cancelled", { all: true }), entry("pokeshell-wakeup-scheduled", { id: "wake-4" })];
	assert.deepEqual(pendingWakeupIds(cleared), ["wake-4"]);
	assert.deepEqual(pendingWakeupIds([entry("pokeshell-wakeup-failed", { id: "wake-4" })]), []);
	assert.deepEqual(pendingWakeupIds(undefined as any), []);
});
