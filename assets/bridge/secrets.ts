/**
 * The socket path and token pokeshell hands pi through its environment. They are taken out of the
 * environment as soon as the bridge loads, so no process pi starts (every tool call) inherits them;
 * later instances of the bridge in the same pi process (after /new, /resume, /fork, /reload) find them
 * in a process-wide slot instead.
 */

export const ENV_SOCKET = "POKESHELL_SOCKET";
export const ENV_TOKEN = "POKESHELL_TOKEN";

const SLOT = Symbol.for("pokeshell.bridge.secrets");

export type Secrets = { socketPath: string; token: string };

/** Removes both variables from `env`; returns them, or what an earlier instance kept in `holder`. */
export function takeSecrets(env: Record<string, string | undefined>, holder: any): Secrets | null {
	const socketPath = env[ENV_SOCKET];
	const token = env[ENV_TOKEN];
	delete env[ENV_SOCKET];
	delete env[ENV_TOKEN];
	if (socketPath && token) {
		const secrets = { socketPath, token };
		Object.defineProperty(holder, SLOT, { value: secrets, configurable: true, enumerable: false, writable: true });
		return secrets;
	}
	return holder[SLOT] ?? null;
}
