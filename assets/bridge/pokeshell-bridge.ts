/**
 * pokeshell bridge: a pi extension that forwards pi's lifecycle events to pokeshell over a Unix socket
 * and carries out the commands pokeshell sends back. It decides nothing; pokeshell does.
 *
 * Loaded with `pi -e <path>` by pokeshell, which sets POKESHELL_SOCKET and POKESHELL_TOKEN; the bridge
 * takes both out of pi's environment at once (secrets.ts). Without both variables the extension does
 * nothing at all. Protocol: docs/protocol.md (JSON lines, version 1).
 * This entry file wires the modules next to it; pokeshell writes them all into one directory.
 *
 * Rules every module keeps:
 * - never throw into pi (a throwing handler prints a stack trace into pi's transcript): every handler and
 *   callback is wrapped, failures are reported to pokeshell as `log` events;
 * - the socket and every timer are unref'ed, so `pi -p` exits when its work is done;
 * - all state lives in the instance the factory builds: pi creates a new instance on /new, /resume,
 *   /fork and /reload, and the old one must not leak into it.
 */

import * as piAgent from "@earendil-works/pi-coding-agent";
import { randomUUID } from "node:crypto";

import { runCommand } from "./commands.ts";
import { sessionInfo, snapshot } from "./context.ts";
import { forwardEvents } from "./events.ts";
import { heartbeatFields, RunningTools } from "./heartbeat.ts";
import { HEARTBEAT_MS, TURN_HOLD_MS } from "./limits.ts";
import { Link } from "./link.ts";
import { ProgressThrottle } from "./progress.ts";
import { takeSecrets } from "./secrets.ts";
import type { Bridge } from "./state.ts";
import { ForwardedTools, registerWakeupTools } from "./tools.ts";
import { TurnHolds } from "./turns.ts";
import { safe } from "./util.ts";

export default function pokeshellBridge(pi: any) {
	const secrets = takeSecrets(process.env, globalThis);
	if (!secrets) return;
	try {
		startBridge(pi, secrets.socketPath, secrets.token);
	} catch {
		// Nothing is connected yet to report to, and pi must not see a throw.
	}
}

function startBridge(pi: any, socketPath: string, token: string) {
	const b: Bridge = {
		pi,
		ctx: undefined,
		link: undefined as unknown as Link,
		tools: new ForwardedTools(),
		turns: new TurnHolds(TURN_HOLD_MS),
		running: new RunningTools(),
		progress: new ProgressThrottle(),
		handoffArm: null,
	};
	b.link = new Link(socketPath, token, randomUUID(), {
		helloFields: () => ({
			piVersion: typeof piAgent.VERSION === "string" ? piAgent.VERSION : null,
			pid: process.pid,
			...sessionInfo(b.ctx),
			mode: safe(() => b.ctx?.mode) ?? null,
			cwd: safe(() => b.ctx?.cwd) ?? process.cwd(),
		}),
		onWelcome: () => b.link.emit("snapshot", snapshot(b.ctx)),
		onCommand: (id, command) => runCommand(b, id, command),
		onLost: () => {
			b.tools.failAll("the connection to pokeshell was lost");
			b.turns.releaseAll();
		},
	});
	forwardEvents(b);
	registerWakeupTools(b);
	b.link.startHeartbeat(HEARTBEAT_MS, () => heartbeatFields(b.ctx, b.running));
}
