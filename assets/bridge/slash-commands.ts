/**
 * The pi commands `/poke`, `/handoff` and `/wakeups`. The bridge decides nothing here either: it sends
 * what was asked as a `user_command` event and shows pokeshell's `command_answer` with pi's notify.
 * pokeshell not connected, or silent for too long, is said plainly.
 */

import { branchOf } from "./context.ts";
import type { Link } from "./link.ts";
import { parseSlash, pendingWakeupIds, type SlashName, type SlashRequest, slashCompletions } from "./slash-args.ts";
import { safe } from "./util.ts";

export type Answer = { text: string; level: string };

const LEVELS = ["info", "warning", "error"];

/** Questions sent to pokeshell that wait for their answer, by request id. */
export class PendingAsks {
	private readonly waiting = new Map<number, (answer: Answer) => void>();
	private last = 0;
	private readonly timeoutMs: number;

	constructor(timeoutMs: number) {
		this.timeoutMs = timeoutMs;
	}

	/** Sends `request` through `emit` and resolves with pokeshell's answer, or a plain timeout text. */
	ask(emit: (fields: Record<string, unknown>) => void, request: SlashRequest, what: string): Promise<Answer> {
		const requestId = ++this.last;
		return new Promise((resolve) => {
			const timer: any = setTimeout(() => {
				this.waiting.delete(requestId);
				resolve({ text: `pokeshell did not answer ${what} within ${this.timeoutMs / 1000} s.`, level: "warning" });
			}, this.timeoutMs);
			// Ref'ed on purpose, as a forwarded tool's timer: pi awaits the command, and with an unref'ed
			// timer node could exit in the middle of it (print mode). It lasts a few seconds at most.
			this.waiting.set(requestId, (answer) => {
				clearTimeout(timer);
				this.waiting.delete(requestId);
				resolve(answer);
			});
			emit({ requestId, ...request });
		});
	}

	/** pokeshell's answer; false when nothing waits for it (it came too late). */
	answer(requestId: number, text: string, level: string): boolean {
		const finish = this.waiting.get(requestId);
		if (!finish) return false;
		finish({ text, level: LEVELS.includes(level) ? level : "info" });
		return true;
	}

	failAll(why: string) {
		for (const finish of [...this.waiting.values()]) finish({ text: why, level: "warning" });
	}

	get size(): number {
		return this.waiting.size;
	}
}

const DESCRIPTIONS: Record<SlashName, string> = {
	poke: "pokeshell: poke the agent now; /poke status, /poke on, /poke off",
	handoff: "pokeshell: write a handoff document and compact now, with an optional focus",
	wakeups: "pokeshell: list pending wakeups; /wakeups cancel ID",
};

/**
 * Registers the three commands. `link()` is the connection to pokeshell, null when pi was started
 * without one; `ctx()` the latest context, for the wakeup ids the completions offer.
 */
export function registerSlashCommands(pi: any, link: () => Link | null, asks: PendingAsks, ctx: () => any) {
	for (const name of Object.keys(DESCRIPTIONS) as SlashName[]) {
		safe(() =>
			pi.registerCommand(name, {
				description: DESCRIPTIONS[name],
				getArgumentCompletions: (prefix: string) =>
					safe(() => slashCompletions(name, prefix, name === "wakeups" ? pendingWakeupIds(branchOf(ctx())) : [])) ??
					null,
				handler: async (args: string, commandCtx: any) => {
					const show = (answer: Answer) => safe(() => commandCtx?.ui?.notify(answer.text, answer.level));
					const parsed = parseSlash(name, args);
					if ("usage" in parsed) return void show({ text: parsed.usage, level: "warning" });
					const l = link();
					if (!l?.open) {
						return void show({ text: `pokeshell is not connected, so /${name} did nothing.`, level: "warning" });
					}
					show(await asks.ask((fields) => l.emit("user_command", fields), parsed.request, `/${name}`));
				},
			}),
		);
	}
}
