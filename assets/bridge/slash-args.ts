/**
 * The arguments of the pi commands the bridge registers (`/poke`, `/handoff`, `/wakeups`): what was
 * typed becomes the request sent to pokeshell, or a usage line; and the argument completions pi's
 * editor offers. Pure.
 */

export type SlashName = "poke" | "handoff" | "wakeups";

/** What goes to pokeshell in a `user_command` event (besides its requestId). */
export type SlashRequest =
	| { name: "poke" | "poke_status" | "poke_on" | "poke_off" | "wakeups" }
	| { name: "handoff"; focus?: string }
	| { name: "wakeup_cancel"; id: string };

export const POKE_USAGE = "Usage: /poke (poke now), /poke status, /poke on, /poke off";
export const WAKEUPS_USAGE = "Usage: /wakeups (list them), /wakeups cancel ID";

const POKE_WORDS: Record<string, SlashRequest> = {
	status: { name: "poke_status" },
	on: { name: "poke_on" },
	off: { name: "poke_off" },
};

/** The request for `/name text`, or the usage line when the words make no sense. */
export function parseSlash(name: SlashName, text: string): { request: SlashRequest } | { usage: string } {
	const words = String(text ?? "").trim().split(/\s+/).filter(Boolean);
	switch (name) {
		case "poke": {
			if (words.length === 0) return { request: { name: "poke" } };
			const request = words.length === 1 ? POKE_WORDS[words[0].toLowerCase()] : undefined;
			return request ? { request } : { usage: POKE_USAGE };
		}
		case "handoff": {
			const focus = words.join(" ");
			return { request: focus ? { name: "handoff", focus } : { name: "handoff" } };
		}
		case "wakeups": {
			if (words.length === 0) return { request: { name: "wakeups" } };
			if (words.length === 2 && words[0].toLowerCase() === "cancel") {
				return { request: { name: "wakeup_cancel", id: words[1] } };
			}
			return { usage: WAKEUPS_USAGE };
		}
	}
}

export type Completion = { value: string; label: string; description?: string };

const POKE_COMPLETIONS: Completion[] = [
	{ value: "status", label: "status", description: "what pokeshell knows about this session now" },
	{ value: "on", label: "on", description: "switch pokeshell's supervision on" },
	{ value: "off", label: "off", description: "switch pokeshell's supervision off" },
];

/**
 * pi's editor asks with everything typed after the command name and replaces it with the chosen
 * value. `/wakeups` offers `cancel`, then `cancel <id>` for each pending id.
 */
export function slashCompletions(name: SlashName, prefix: string, pendingIds: string[]): Completion[] | null {
	const typed = String(prefix ?? "").toLowerCase();
	let items: Completion[] = [];
	if (name === "poke") {
		items = POKE_COMPLETIONS.filter((c) => c.value.startsWith(typed.trim()));
	} else if (name === "wakeups") {
		const cancels = pendingIds.map((id) => ({ value: `cancel ${id}`, label: `cancel ${id}`, description: "cancel this wakeup" }));
		items = typed.startsWith("cancel ")
			? cancels.filter((c) => c.value.toLowerCase().startsWith(typed))
			: [{ value: "cancel ", label: "cancel", description: "cancel a pending wakeup by its id" }].filter((c) =>
					c.value.startsWith(typed),
				);
	}
	return items.length ? items : null;
}

/**
 * The wakeups pokeshell keeps pending, read from the entries it writes into the session (the same
 * replay pokeshell does when it re-arms them): scheduled adds; fired, failed and cancelled remove;
 * cancelled with `all` clears.
 */
export function pendingWakeupIds(branch: any[]): string[] {
	const pending: string[] = [];
	for (const entry of Array.isArray(branch) ? branch : []) {
		if (entry?.type !== "custom" || typeof entry.customType !== "string") continue;
		const id = typeof entry.data?.id === "string" ? entry.data.id : null;
		const drop = (gone: string | null) => {
			const at = gone === null ? -1 : pending.indexOf(gone);
			if (at >= 0) pending.splice(at, 1);
		};
		switch (entry.customType) {
			case "pokeshell-wakeup-scheduled":
				drop(id);
				if (id) pending.push(id);
				break;
			case "pokeshell-wakeup-cancelled":
				if (entry.data?.all === true) pending.length = 0;
				else drop(id);
				break;
			case "pokeshell-wakeup-fired":
			case "pokeshell-wakeup-failed":
				drop(id);
				break;
		}
	}
	return pending;
}
