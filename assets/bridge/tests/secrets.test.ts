import assert from "node:assert/strict";
import { test } from "node:test";

import { takeSecrets } from "../secrets.ts";

test("the socket and the token leave the environment and stay with the bridge", () => {
	const env: Record<string, string | undefined> = { POKESHELL_SOCKET: "/s", POKESHELL_TOKEN: "t", PATH: "/bin" };
	const holder = {};
	assert.deepEqual(takeSecrets(env, holder), { socketPath: "/s", token: "t" });
	assert.deepEqual(env, { PATH: "/bin" });
	assert.deepEqual(Object.keys(holder), [], "the slot is not enumerable");
	assert.deepEqual(takeSecrets(env, holder), { socketPath: "/s", token: "t" }, "a later instance finds them");
});

test("without both variables there is nothing, and a lone variable is removed too", () => {
	const env: Record<string, string | undefined> = { POKESHELL_TOKEN: "t" };
	assert.equal(takeSecrets(env, {}), null);
	assert.deepEqual(env, {});
});

test("a fresh environment wins over what an earlier instance kept", () => {
	const holder = {};
	takeSecrets({ POKESHELL_SOCKET: "/old", POKESHELL_TOKEN: "a" }, holder);
	assert.deepEqual(takeSecrets({ POKESHELL_SOCKET: "/new", POKESHELL_TOKEN: "b" }, holder), { socketPath: "/new", token: "b" });
});

test("process.env itself loses the variables", () => {
	process.env.POKESHELL_SOCKET = "/s";
	process.env.POKESHELL_TOKEN = "secret-token";
	const holder = {};
	assert.equal(takeSecrets(process.env, holder)?.token, "secret-token");
	assert.equal("POKESHELL_TOKEN" in process.env, false);
	assert.equal("POKESHELL_SOCKET" in process.env, false);
});
