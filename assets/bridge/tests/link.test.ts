import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { Link } from "../link.ts";

/** A fake pokeshell: records what each connection sends, lets the test answer. */
function fakePokeshell(t: any) {
	const dir = mkdtempSync(join(tmpdir(), "bridge-link-"));
	const path = join(dir, "s.sock");
	const conns: { lines: any[]; sock: any }[] = [];
	const waiters: (() => void)[] = [];
	const server = createServer((sock) => {
		const conn = { lines: [] as any[], sock };
		conns.push(conn);
		let buf = "";
		sock.on("data", (d) => {
			buf += d.toString();
			for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
				conn.lines.push(JSON.parse(buf.slice(0, nl)));
				buf = buf.slice(nl + 1);
			}
			for (const w of waiters.splice(0)) w();
		});
		sock.on("error", () => {});
	});
	server.listen(path);
	t.after(() => {
		for (const c of conns) c.sock.destroy();
		server.close();
		rmSync(dir, { recursive: true, force: true });
	});
	/** Waits (at most 5 s) until `ready()` holds, re-checking on every line received. */
	const until = async (what: string, ready: () => boolean) => {
		const deadline = Date.now() + 5000;
		while (!ready()) {
			if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
			await new Promise<void>((resolve) => {
				waiters.push(resolve);
				setTimeout(resolve, 50);
			});
		}
	};
	return { path, conns, until };
}

function newLink(path: string, seen: { commands: any[]; welcomes: number; lost: number }) {
	return new Link(path, "tok", "inst-1", {
		helloFields: () => ({ pid: 42 }),
		onWelcome: () => seen.welcomes++,
		onCommand: (id, command) => seen.commands.push({ id, command }),
		onLost: () => seen.lost++,
	});
}

test("hello first, buffered lines after the welcome, then commands reach the hook", async (t) => {
	const fake = fakePokeshell(t);
	const seen = { commands: [] as any[], welcomes: 0, lost: 0 };
	const link = newLink(fake.path, seen);
	link.emit("session_start", { reason: "startup" });
	link.connect();
	await fake.until("the hello", () => fake.conns[0]?.lines.length === 1);
	const hello = fake.conns[0].lines[0];
	assert.equal(hello.type, "hello");
	assert.equal(hello.token, "tok");
	assert.equal(hello.pid, 42);
	assert.equal(hello.reconnect, false);
	assert.equal(link.open, false, "nothing is sent straight away before the welcome");

	fake.conns[0].sock.write('{"type":"welcome","protocol":1}\n{"type":"command","id":3,"command":{"type":"is_idle"}}\n');
	await fake.until("the buffered event", () => fake.conns[0].lines.length === 2);
	assert.equal(fake.conns[0].lines[1].event.type, "session_start");
	assert.equal(seen.welcomes, 1);
	assert.deepEqual(seen.commands, [{ id: 3, command: { type: "is_idle" } }]);
	assert.equal(link.open, true);
	link.reply(3, true, { idle: true });
	await fake.until("the reply", () => fake.conns[0].lines.length === 3);
	assert.deepEqual(fake.conns[0].lines[2], { type: "reply", seq: 2, id: 3, ok: true, result: { idle: true } });
	link.closeForGood();
});

test("a dropped connection is reported and reconnects with reconnect: true", async (t) => {
	const fake = fakePokeshell(t);
	const seen = { commands: [] as any[], welcomes: 0, lost: 0 };
	const link = newLink(fake.path, seen);
	link.connect();
	await fake.until("the first hello", () => fake.conns[0]?.lines.length === 1);
	fake.conns[0].sock.write('{"type":"welcome","protocol":1}\n');
	await fake.until("the welcome handled", () => seen.welcomes === 1);
	fake.conns[0].sock.destroy();
	await fake.until("the second hello", () => fake.conns[1]?.lines.length === 1);
	assert.equal(seen.lost, 1);
	assert.equal(fake.conns[1].lines[0].reconnect, true);
	assert.equal(fake.conns[1].lines[0].instance, "inst-1");
	link.closeForGood();
});

test("a rejected bridge never connects again", async (t) => {
	const fake = fakePokeshell(t);
	const seen = { commands: [] as any[], welcomes: 0, lost: 0 };
	const link = newLink(fake.path, seen);
	link.connect();
	await fake.until("the hello", () => fake.conns[0]?.lines.length === 1);
	fake.conns[0].sock.write('{"type":"rejected","reason":"no"}\n');
	await new Promise((resolve) => setTimeout(resolve, 700));
	assert.equal(fake.conns.length, 1, "no second connection after the rejection");
	assert.equal(link.open, false);
	link.closeForGood();
});

test("every line after the hello is numbered by one counter: events, replies and heartbeats", async (t) => {
	const fake = fakePokeshell(t);
	const seen = { commands: [] as any[], welcomes: 0, lost: 0 };
	const link = newLink(fake.path, seen);
	let beats = 0;
	link.startHeartbeat(20, () => ({ idle: true, pendingMessages: false, runningTools: [`call-${++beats}`] }));
	link.emit("session_start");
	link.connect();
	await fake.until("the hello", () => fake.conns[0]?.lines.length === 1);
	await new Promise((resolve) => setTimeout(resolve, 100));
	assert.equal(fake.conns[0].lines.length, 1, "no heartbeat before the welcome, none buffered");
	fake.conns[0].sock.write('{"type":"welcome","protocol":1}\n');
	await fake.until("a heartbeat", () => fake.conns[0].lines.some((l) => l.type === "heartbeat"));
	link.reply(1, false, undefined, "no");
	link.emit("agent_start");
	await fake.until("two more heartbeats", () => fake.conns[0].lines.filter((l) => l.type === "heartbeat").length >= 3);
	link.closeForGood();
	const lines = fake.conns[0].lines.slice(1);
	assert.deepEqual(
		lines.map((l) => l.seq),
		lines.map((_, i) => i + 1),
		"consecutive from 1",
	);
	assert.deepEqual(
		new Set(lines.map((l) => l.type)),
		new Set(["event", "reply", "heartbeat"]),
	);
	const beat = lines.find((l) => l.type === "heartbeat");
	assert.equal(beat.idle, true);
	assert.equal(beat.pendingMessages, false);
	assert.match(beat.runningTools[0], /^call-\d+$/);
	assert.equal(typeof beat.at, "number");
});

test("lines dropped from the outbox leave a gap in the numbers and are counted in the hello", async (t) => {
	const fake = fakePokeshell(t);
	const seen = { commands: [] as any[], welcomes: 0, lost: 0 };
	const link = newLink(fake.path, seen);
	for (let i = 0; i < 1002; i++) link.emit("turn_start", { turnIndex: i });
	link.connect();
	await fake.until("the hello", () => fake.conns[0]?.lines.length === 1);
	assert.equal(fake.conns[0].lines[0].dropped, 2);
	fake.conns[0].sock.write('{"type":"welcome","protocol":1}\n');
	await fake.until("the flushed outbox", () => fake.conns[0].lines.length === 1001);
	assert.equal(fake.conns[0].lines[1].seq, 3, "the first two lines are missing");
	assert.equal(fake.conns[0].lines[1000].seq, 1002);
	link.closeForGood();
});
