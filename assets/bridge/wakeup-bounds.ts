/**
 * The wakeup delay bounds pokeshell's settings had when it started pi, handed over in the environment
 * as "MIN,MAX" seconds so the `schedule_wakeup` tool can name them. Taken out of the environment like
 * the socket secrets (no tool process inherits it) and kept process-wide for later instances.
 */

export const ENV_WAKEUP_BOUNDS = "POKESHELL_WAKEUP_BOUNDS";

const SLOT = Symbol.for("pokeshell.bridge.wakeupBounds");

export type Bounds = { min: number; max: number };

/** pokeshell's defaults, for a pi started without the variable. */
export const DEFAULT_BOUNDS: Bounds = { min: 60, max: 3600 };

/** "MIN,MAX" in whole seconds with MIN <= MAX; null for anything else. */
export function parseBounds(text: unknown): Bounds | null {
	if (typeof text !== "string") return null;
	const match = /^\s*(\d+)\s*,\s*(\d+)\s*$/.exec(text);
	if (!match) return null;
	const min = Number(match[1]);
	const max = Number(match[2]);
	return Number.isSafeInteger(min) && Number.isSafeInteger(max) && min <= max ? { min, max } : null;
}

/** Removes the variable from `env`; returns its bounds, else what an earlier instance kept, else the defaults. */
export function takeWakeupBounds(env: Record<string, string | undefined>, holder: any): Bounds {
	const bounds = parseBounds(env[ENV_WAKEUP_BOUNDS]);
	delete env[ENV_WAKEUP_BOUNDS];
	if (bounds) {
		Object.defineProperty(holder, SLOT, { value: bounds, configurable: true, enumerable: false, writable: true });
		return bounds;
	}
	return holder[SLOT] ?? DEFAULT_BOUNDS;
}

/** The texts of `schedule_wakeup` that name the bounds. */
export function scheduleWakeupTexts(bounds: Bounds) {
	const range = `between ${bounds.min} and ${bounds.max} seconds`;
	return {
		description:
			"Set a timer that brings this session back to you later, so you can return to something slow " +
			"(a build, a deploy, a long test run) without waiting for the user. When the timer runs out your " +
			"prompt comes back to you as a message: at once if you are idle, after the current turn if you are " +
			`busy. The delay is kept ${range}.`,
		delay: `How long to wait, in seconds (kept ${range}).`,
	};
}
