import assert from "node:assert/strict";
import { test } from "node:test";

import { Outbox } from "../outbox.ts";

function drain(o: Outbox): string[] {
	const out: string[] = [];
	for (let line = o.shift(); line !== undefined; line = o.shift()) out.push(line);
	return out;
}

test("lines come out in the order they went in", () => {
	const o = new Outbox(10, 1000);
	o.push("a\n");
	o.push("b\n");
	assert.deepEqual(drain(o), ["a\n", "b\n"]);
	assert.equal(o.takeDropped(), 0);
});

test("past the line bound the oldest are dropped and counted", () => {
	const o = new Outbox(2, 1000);
	for (const l of ["1\n", "2\n", "3\n", "4\n"]) o.push(l);
	assert.deepEqual(drain(o), ["3\n", "4\n"]);
	assert.equal(o.takeDropped(), 2);
	assert.equal(o.takeDropped(), 0, "taking the count resets it");
});

test("past the byte bound the oldest are dropped, and draining frees the bytes", () => {
	const o = new Outbox(100, 10);
	o.push("aaaa\n");
	o.push("bbbb\n");
	o.push("cccc\n");
	assert.equal(o.size, 2);
	assert.equal(o.takeDropped(), 1);
	drain(o);
	o.push("dddd\n");
	o.push("eeee\n");
	assert.equal(o.size, 2, "the drained lines no longer count against the bound");
	assert.equal(o.takeDropped(), 0);
});

test("lines lost elsewhere are counted with the drops", () => {
	const o = new Outbox(1, 100);
	o.countDropped();
	o.push("a\n");
	o.push("b\n");
	assert.equal(o.takeDropped(), 2);
});
