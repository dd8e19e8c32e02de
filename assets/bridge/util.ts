/** Small pure helpers shared by every module of the bridge. */

import { createHash } from "node:crypto";

export function numberFromEnv(name: string, fallback: number, env: Record<string, string | undefined> = process.env): number {
	const value = Number(env[name]);
	return Number.isFinite(value) && value > 0 ? value : fallback;
}

export function safe<T>(fn: () => T): T | undefined {
	try {
		return fn();
	} catch {
		return undefined;
	}
}

export function errorText(e: unknown): string {
	if (e instanceof Error) return e.message || e.name;
	return typeof e === "string" ? e : (safe(() => JSON.stringify(e)) ?? String(e));
}

export function numberOrNull(value: unknown): number | null {
	return typeof value === "number" && Number.isFinite(value) ? value : null;
}

export function textOrUndefined(value: unknown): string | undefined {
	return typeof value === "string" && value.trim() ? value : undefined;
}

export function modelName(model: any): string | null {
	if (!model || typeof model !== "object") return null;
	const id = typeof model.id === "string" ? model.id : null;
	if (!id) return null;
	return typeof model.provider === "string" ? `${model.provider}/${id}` : id;
}

/** Cuts a text to `max` characters, marking the cut; null for anything but a string. */
export function boundText(text: unknown, max: number): string | null {
	if (typeof text !== "string") return null;
	return text.length > max ? `${text.slice(0, max)}…` : text;
}

/**
 * Copies a JSON value with bounds: long strings are cut and marked with their full length and a hash (so
 * two different long values never look equal), deep nesting and big objects/arrays are cut with markers.
 */
export function bound(value: unknown, stringMax: number, depth = 0): unknown {
	if (typeof value === "string") {
		if (value.length <= stringMax) return value;
		const hash = createHash("sha256").update(value).digest("hex").slice(0, 12);
		return `${value.slice(0, stringMax)}…[${value.length} chars, sha256 ${hash}]`;
	}
	if (value === null || typeof value === "number" || typeof value === "boolean") return value;
	if (typeof value !== "object") return String(value);
	if (depth >= 8) return "…[nested too deep]";
	if (Array.isArray(value)) {
		const items = value.slice(0, 50).map((v) => bound(v, stringMax, depth + 1));
		if (value.length > 50) items.push(`…[${value.length - 50} more items]`);
		return items;
	}
	const out: Record<string, unknown> = {};
	const keys = Object.keys(value as object);
	for (const key of keys.slice(0, 50)) out[key] = bound((value as any)[key], stringMax, depth + 1);
	if (keys.length > 50) out["…"] = `${keys.length - 50} more keys`;
	return out;
}
