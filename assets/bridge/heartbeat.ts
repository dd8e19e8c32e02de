/** What a heartbeat says about pi: whether it is idle, and which tool calls are running right now. */

import { idleOf, pendingMessagesOf } from "./context.ts";

/** Tool calls between their `tool_execution_start` and `tool_execution_end`; pi offers no list of its own. */
export class RunningTools {
	private readonly ids = new Set<string>();

	start(id: string) {
		if (id) this.ids.add(id);
	}

	end(id: string) {
		this.ids.delete(id);
	}

	/** The running ids, oldest first. */
	list(): string[] {
		return [...this.ids];
	}
}

export function heartbeatFields(ctx: any, running: RunningTools) {
	return { idle: idleOf(ctx), pendingMessages: pendingMessagesOf(ctx), runningTools: running.list() };
}
