import assert from "node:assert/strict";
import { test } from "node:test";

import { encodeLine, LineSplitter } from "../framing.ts";

const fallback = (message: string) => ({ type: "event", event: { type: "log", message } });

test("a line is the JSON of the object and one newline", () => {
	assert.equal(encodeLine({ type: "reply", id: 1 }, 100, fallback), '{"type":"reply","id":1}\n');
});

test("a line over the bound becomes a log line naming what was dropped", () => {
	const line = encodeLine({ type: "event", event: { type: "agent_settled", tail: "x".repeat(200) } }, 100, fallback);
	const parsed = JSON.parse(line);
	assert.equal(parsed.event.type, "log");
	assert.match(parsed.event.message, /dropped a agent_settled over 100 bytes/);
	assert.ok(line.endsWith("}\n"));
});

test("the bound counts bytes, not characters", () => {
	const obj = { type: "t", s: "é".repeat(40) };
	assert.equal(JSON.stringify(obj).length < 100, true);
	assert.match(encodeLine(obj, 60, fallback), /"log"/);
});

test("an object that cannot be encoded becomes a log line", () => {
	const cyclic: any = { type: "reply" };
	cyclic.self = cyclic;
	assert.match(JSON.parse(encodeLine(cyclic, 1000, fallback)).event.message, /could not encode a reply/);
});

test("lines split across chunks are joined, several in one chunk are split", () => {
	const s = new LineSplitter(100);
	assert.deepEqual(s.push(Buffer.from('{"a":')), { lines: [], oversized: false });
	assert.deepEqual(s.push(Buffer.from('1}\n{"b":2}\n{"c"')), { lines: ['{"a":1}', '{"b":2}'], oversized: false });
	assert.deepEqual(s.push(Buffer.from(":3}\n")), { lines: ['{"c":3}'], oversized: false });
});

test("a multi-byte character cut between chunks survives", () => {
	const s = new LineSplitter(100);
	const bytes = Buffer.from("é\n");
	assert.deepEqual(s.push(bytes.subarray(0, 1)).lines, []);
	assert.deepEqual(s.push(bytes.subarray(1)).lines, ["é"]);
});

test("an oversized line is skipped whole and the next line arrives", () => {
	const s = new LineSplitter(10);
	assert.deepEqual(s.push(Buffer.from("x".repeat(11))), { lines: [], oversized: true });
	assert.deepEqual(s.push(Buffer.from("more of the long line\nnext\n")), { lines: ["next"], oversized: false });
});
