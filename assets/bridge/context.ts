/** Reads pi's extension context without ever throwing: a stale or partial `ctx` yields nulls. */

import { contextUsage } from "./summaries.ts";
import { modelName, safe } from "./util.ts";

export function sessionInfo(ctx: any) {
	const sm = safe(() => ctx?.sessionManager);
	return {
		sessionId: safe(() => sm?.getSessionId()) ?? null,
		sessionFile: safe(() => sm?.getSessionFile()) ?? null,
		sessionName: safe(() => sm?.getSessionName()) ?? null,
		model: modelName(safe(() => ctx?.model)),
	};
}

export function idleOf(ctx: any): boolean | null {
	return safe(() => ctx?.isIdle()) ?? null;
}

export function pendingMessagesOf(ctx: any): boolean | null {
	return safe(() => ctx?.hasPendingMessages()) ?? null;
}

export function usageOf(ctx: any) {
	return contextUsage(safe(() => ctx?.getContextUsage()));
}

export function branchOf(ctx: any): any[] {
	return safe(() => ctx?.sessionManager?.getBranch()) ?? [];
}

export function snapshot(ctx: any) {
	const info = sessionInfo(ctx);
	return {
		idle: idleOf(ctx),
		pendingMessages: pendingMessagesOf(ctx),
		contextUsage: usageOf(ctx),
		sessionId: info.sessionId,
		model: info.model,
	};
}
