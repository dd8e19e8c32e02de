import assert from "node:assert/strict";
import { test } from "node:test";

import { DEFAULT_BOUNDS, ENV_WAKEUP_BOUNDS, parseBounds, scheduleWakeupTexts, takeWakeupBounds } from "../wakeup-bounds.ts";

test("bounds read as MIN,MAX whole seconds, MIN not above MAX", () => {
	assert.deepEqual(parseBounds("30,900"), { min: 30, max: 900 });
	assert.deepEqual(parseBounds(" 5 , 5 "), { min: 5, max: 5 });
	for (const bad of ["900,30", "30", "a,b", "-1,5", "1.5,9", "", undefined]) assert.equal(parseBounds(bad), null, String(bad));
});

test("the variable leaves the environment; later instances find the bounds in the slot", () => {
	const holder = {};
	const env: Record<string, string | undefined> = { [ENV_WAKEUP_BOUNDS]: "30,900", PATH: "/bin" };
	assert.deepEqual(takeWakeupBounds(env, holder), { min: 30, max: 900 });
	assert.deepEqual(Object.keys(env), ["PATH"]);
	assert.deepEqual(takeWakeupBounds({}, holder), { min: 30, max: 900 });
	assert.deepEqual(takeWakeupBounds({ [ENV_WAKEUP_BOUNDS]: "junk" }, {}), DEFAULT_BOUNDS);
});

test("the tool's description and its delay parameter name the bounds", () => {
	const texts = scheduleWakeupTexts({ min: 30, max: 900 });
	assert.match(texts.description, /kept between 30 and 900 seconds\.$/);
	assert.match(texts.delay, /between 30 and 900 seconds/);
	assert.doesNotMatch(texts.description, /3600/);
});
