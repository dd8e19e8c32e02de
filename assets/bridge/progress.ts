/** Signs that a model reply is streaming, for pokeshell's stall watch. pi fires `message_update` for
 * every token; pokeshell only needs to know the stream is alive, so at most one `progress` line per
 * second and per kind goes out. */

export const PROGRESS_INTERVAL_MS = 1000;

export type ProgressKind = "text" | "thinking" | "toolcall";

/** The kind of a `message_update`'s streaming event, or null for one that says nothing new. */
export function progressKindOf(event: any): ProgressKind | null {
	const type = event?.assistantMessageEvent?.type;
	if (typeof type !== "string") return null;
	if (type.startsWith("text_")) return "text";
	if (type.startsWith("thinking_")) return "thinking";
	if (type.startsWith("toolcall_")) return "toolcall";
	return null;
}

/** Lets one event per kind through per interval. */
export class ProgressThrottle {
	private readonly last = new Map<ProgressKind, number>();
	private readonly now: () => number;
	private readonly intervalMs: number;

	constructor(now: () => number = Date.now, intervalMs: number = PROGRESS_INTERVAL_MS) {
		this.now = now;
		this.intervalMs = intervalMs;
	}

	/** Whether a progress line of this kind may go out now. */
	take(kind: ProgressKind): boolean {
		const at = this.now();
		const previous = this.last.get(kind);
		if (previous !== undefined && at - previous < this.intervalMs) return false;
		this.last.set(kind, at);
		return true;
	}
}
