/** The state one extension instance shares between its modules. pi makes a new instance on /new,
 * /resume, /fork and /reload, so nothing here may outlive it. */

import type { RunningTools } from "./heartbeat.ts";
import type { Link } from "./link.ts";
import type { PendingAsks } from "./slash-commands.ts";
import type { ProgressThrottle } from "./progress.ts";
import type { ForwardedTools } from "./tools.ts";
import type { TurnHolds } from "./turns.ts";

/** A handoff compaction pokeshell asked for, waiting for its `session_before_compact`. */
export type HandoffArm = { focus?: string; save: boolean; consumed: boolean; report?: any };

export type Bridge = {
	pi: any;
	/** The latest context pi handed us; earlier ones go stale on runtime replacement. */
	ctx: any;
	link: Link;
	tools: ForwardedTools;
	turns: TurnHolds;
	running: RunningTools;
	/** The pi commands waiting for pokeshell's answer. */
	asks: PendingAsks;
	progress: ProgressThrottle;
	handoffArm: HandoffArm | null;
};
