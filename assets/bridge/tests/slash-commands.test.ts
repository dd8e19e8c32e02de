import assert from "node:assert/strict";
import { test } from "node:test";

import { PendingAsks, registerSlashCommands } from "../slash-commands.ts";

/** A pi that records the commands registered, and a command context that records notices. */
function fakePi() {
	const commands: Record<string, any> = {};
	return { commands, registerCommand: (name: string, options: any) => (commands[name] = options) };
}

function fakeCtx() {
	const shown: { text: string; level: string }[] = [];
	return { shown, ui: { notify: (text: string, level: string) => shown.push({ text, level }) } };
}

function fakeLink(open: boolean) {
	const sent: any[] = [];
	return { sent, open, emit: (type: string, fields: any) => sent.push({ type, ...fields }) };
}

test("the three commands are registered, and say plainly when pi runs without pokeshell", async () => {
	const pi = fakePi();
	registerSlashCommands(pi, () => null, new PendingAsks(1000), () => undefined);
	assert.deepEqual(Object.keys(pi.commands).sort(), ["handoff", "poke", "wakeups"]);
	const ctx = fakeCtx();
	await pi.commands.poke.handler("", ctx);
	assert.deepEqual(ctx.shown, [{ text: "pokeshell is not connected, so /poke did nothing.", level: "warning" }]);
});

test("a link that is not open sends nothing either", async () => {
	const pi = fakePi();
	const link = fakeLink(false);
	registerSlashCommands(pi, () => link as any, new PendingAsks(1000), () => undefined);
	const ctx = fakeCtx();
	await pi.commands.handoff.handler("the parser", ctx);
	assert.equal(link.sent.length, 0);
	assert.match(ctx.shown[0].text, /not connected, so \/handoff did nothing/);
});

test("a command goes out as user_command and shows pokeshell's answer", async () => {
	const pi = fakePi();
	const link = fakeLink(true);
	const asks = new PendingAsks(5000);
	registerSlashCommands(pi, () => link as any, asks, () => undefined);
	const ctx = fakeCtx();
	const done = pi.commands.wakeups.handler("cancel wake-2", ctx);
	assert.deepEqual(link.sent, [{ type: "user_command", requestId: 1, name: "wakeup_cancel", id: "wake-2" }]);
	assert.equal(asks.answer(1, "Wakeup wake-2 cancelled.", "info"), true);
	await done;
	assert.deepEqual(ctx.shown, [{ text: "Wakeup wake-2 cancelled.", level: "info" }]);
	assert.equal(asks.answer(1, "again", "info"), false, "an answer is taken once");
	assert.equal(asks.size, 0);
});

test("bad arguments show the usage and send nothing", async () => {
	const pi = fakePi();
	const link = fakeLink(true);
	registerSlashCommands(pi, () => link as any, new PendingAsks(1000), () => undefined);
	const ctx = fakeCtx();
	await pi.commands.poke.handler("sideways", ctx);
	assert.equal(link.sent.length, 0);
	assert.equal(ctx.shown[0].level, "warning");
	assert.match(ctx.shown[0].text, /^Usage: \/poke/);
});

test("no answer in time is said plainly", async () => {
	const pi = fakePi();
	registerSlashCommands(pi, () => fakeLink(true) as any, new PendingAsks(30), () => undefined);
	const ctx = fakeCtx();
	await pi.commands.poke.handler("status", ctx);
	assert.deepEqual(ctx.shown, [{ text: "pokeshell did not answer /poke within 0.03 s.", level: "warning" }]);
});

test("a lost connection ends every waiting command", async () => {
	const asks = new PendingAsks(5000);
	const waiting = asks.ask(() => {}, { name: "poke" }, "/poke");
	asks.failAll("lost");
	assert.deepEqual(await waiting, { text: "lost", level: "warning" });
	assert.equal(asks.size, 0);
});

test("/wakeups completes the ids pending in the session's entries", () => {
	const pi = fakePi();
	const branch = [{ type: "custom", customType: "pokeshell-wakeup-scheduled", data: { id: "wake-5" } }];
	const ctx = { sessionManager: { getBranch: () => branch } };
	registerSlashCommands(pi, () => null, new PendingAsks(1000), () => ctx);
	const items = pi.commands.wakeups.getArgumentCompletions("cancel ");
	assert.deepEqual(
		items.map((i: any) => i.value),
		["cancel wake-5"],
	);
	assert.deepEqual(
		pi.commands.poke.getArgumentCompletions("of").map((i: any) => i.value),
		["off"],
	);
});
