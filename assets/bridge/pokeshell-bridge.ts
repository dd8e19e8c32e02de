/**
 * pokeshell bridge: a pi extension that forwards pi's lifecycle events to pokeshell over a Unix socket
 * and carries out the commands pokeshell sends back. It decides nothing; pokeshell does.
 *
 * Loaded with `pi -e <path>` by pokeshell, which sets POKESHELL_SOCKET and POKESHELL_TOKEN; the bridge
 * takes both out of pi's environment at once (secrets.ts). Without both variables it only registers its
 * pi commands, which then say that pokeshell is not connected. Protocol: docs/protocol.md (JSON lines,
 * version 1).
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
import { HEARTBEAT_MS, TURN_HOLD_MS, USER_COMMAND_TIMEOUT_MS } from "./limits.ts";
import { Link } from "./link.ts";
import { ProgressThrottle } from "./progress.ts";
import { takeSecrets } from "./secrets.ts";
import { PendingAsks, registerSlashCommands } from "./slash-commands.ts";
import type { Bridge } from "./state.ts";
import { ForwardedTools, registerWakeupTools } from "./tools.ts";
import { TurnHolds } from "./turns.ts";
import { safe } from "./util.ts";
import { type Bounds, takeWakeupBounds } from "./wakeup-bounds.ts";

export default function pokeshellBridge(pi: any) {
	const secrets = takeSecrets(process.env, globalThis);
	const bounds = takeWakeupBounds(process.env, globalThis);
	const asks = new PendingAsks(USER_COMMAND_TIMEOUT_MS);
	let b: Bridge | null = null;
	try {
		if (secrets) b = startBridge(pi, secrets.socketPath, secrets.token, asks, bounds);
	} catch {
		// Nothing is connected yet to report to, and pi must not see a throw.
	}
	try {
		registerSlashCommands(pi, () => b?.link ?? null, asks, () => b?.ctx);
	} catch {
		// pi must not see a throw.
	}
}

function startBridge(pi: any, socketPath: string, token: string, asks: PendingAsks, bounds: Bounds): Bridge {
	const b: Bridge = {
		pi,
		ctx: undefined,
		link: undefined as unknown as Link,
		tools: new ForwardedTools(),
		turns: new TurnHolds(TURN_HOLD_MS),
		running: new RunningTools(),
		asks,
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
			b.asks.failAll("The connection to pokeshell was lost before it answered; the command may not have run.");
			b.turns.releaseAll();
		},
	});
	forwardEvents(b);
	registerWakeupTools(b, bounds);
	b.link.startHeartbeat(HEARTBEAT_MS, () => heartbeatFields(b.ctx, b.running));
	return b;
}
