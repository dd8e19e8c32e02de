import assert from "node:assert/strict";
import { test } from "node:test";

import { bound, boundText, errorText, modelName, numberFromEnv } from "../util.ts";

test("long strings are cut with their length and a hash that tells them apart", () => {
	const a = bound("a".repeat(30) + "1", 10) as string;
	const b = bound("a".repeat(30) + "2", 10) as string;
	assert.match(a, /^a{10}…\[31 chars, sha256 [0-9a-f]{12}\]$/);
	assert.notEqual(a, b);
	assert.equal(bound("short", 10), "short");
});

test("deep nesting and wide objects and arrays are cut with markers", () => {
	let deep: any = "leaf";
	for (let i = 0; i < 12; i++) deep = { d: deep };
	assert.match(JSON.stringify(bound(deep, 10)), /nested too deep/);
	const wide = bound(Array.from({ length: 60 }, (_, i) => i), 10) as unknown[];
	assert.equal(wide.length, 51);
	assert.equal(wide[50], "…[10 more items]");
	const keys = bound(Object.fromEntries(Array.from({ length: 55 }, (_, i) => [`k${i}`, i])), 10) as any;
	assert.equal(keys["…"], "5 more keys");
});

test("texts are cut at the bound, non-texts become null", () => {
	assert.equal(boundText("abcdef", 3), "abc…");
	assert.equal(boundText("abc", 3), "abc");
	assert.equal(boundText(42, 3), null);
});

test("model names, error texts and numbers from the environment", () => {
	assert.equal(modelName({ provider: "mock", id: "m" }), "mock/m");
	assert.equal(modelName({ id: "m" }), "m");
	assert.equal(modelName({ provider: "mock" }), null);
	assert.equal(errorText(new Error("boom")), "boom");
	assert.equal(errorText({ a: 1 }), '{"a":1}');
	assert.equal(numberFromEnv("N", 7, { N: "250" }), 250);
	assert.equal(numberFromEnv("N", 7, { N: "-1" }), 7);
	assert.equal(numberFromEnv("N", 7, {}), 7);
});
