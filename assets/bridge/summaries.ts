/**
 * What pokeshell learns about pi's session, built from the raw objects pi hands out: message summaries
 * (no text, only what the supervisor's rules need), the settle tail, the end of the final assistant message,
 * pokeshell's own custom entries.
 * Pure: the callers fetch the branch and the usage from pi.
 */

import {
	CUSTOM_ENTRIES_MAX,
	CUSTOM_ENTRY_DATA_MAX_BYTES,
	ERROR_TEXT_MAX,
	FINAL_TEXT_MAX,
	GET_ENTRIES_DEFAULT,
	GET_ENTRIES_MAX,
	GET_ENTRIES_MAX_BYTES,
	OWN_ENTRY_PREFIX,
	TAIL_MAX_ENTRIES,
	TAIL_STRING_MAX,
	TALK_RESULT_MAX,
	TALK_TEXT_MAX,
} from "./limits.ts";
import { createHash } from "node:crypto";

import { bound, boundText, numberOrNull, safe } from "./util.ts";

export function summarizeMessage(m: any, id: string | null) {
	const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
	return {
		id,
		role: typeof m.role === "string" ? m.role : "other",
		stopReason: m.stopReason ?? null,
		errorMessage: boundText(m.errorMessage, ERROR_TEXT_MAX),
		content: Array.isArray(content) ? content.map(summarizeBlock) : [],
		toolCallId: m.toolCallId ?? null,
		toolName: m.toolName ?? null,
		isError: typeof m.isError === "boolean" ? m.isError : null,
		customType: m.customType ?? null,
	};
}

export function summarizeBlock(b: any) {
	switch (b?.type) {
		case "text":
			return { type: "text", nonBlank: typeof b.text === "string" && b.text.trim() !== "" };
		case "thinking":
			return { type: "thinking", nonBlank: typeof b.thinking === "string" && b.thinking.trim() !== "" };
		case "toolCall":
			return {
				type: "toolCall",
				id: String(b.id ?? ""),
				name: String(b.name ?? ""),
				arguments: bound(b.arguments ?? {}, TAIL_STRING_MAX),
			};
		case "image":
			return { type: "image" };
		default:
			return { type: "other", kind: String(b?.type ?? "unknown") };
	}
}

/** The loop guard's view of the branch: its last messages, custom messages and compactions, oldest first. */
export function branchTail(branch: any[]) {
	const picked: any[] = [];
	let truncated = false;
	for (let i = branch.length - 1; i >= 0; i--) {
		const entry = branch[i];
		const kind = entry?.type;
		if (kind !== "message" && kind !== "custom_message" && kind !== "compaction") continue;
		if (picked.length >= TAIL_MAX_ENTRIES) {
			truncated = true;
			break;
		}
		picked.push(entry);
	}
	picked.reverse();
	const tail = picked.map((entry) => {
		if (entry.type === "custom_message") {
			return {
				kind: "custom_message",
				id: entry.id ?? null,
				customType: String(entry.customType ?? ""),
				display: entry.display === true,
			};
		}
		if (entry.type === "compaction") {
			return { kind: "compaction", id: entry.id ?? null, tokensBefore: numberOrNull(entry.tokensBefore) };
		}
		return { kind: "message", ...summarizeMessage(entry.message ?? {}, entry.id ?? null) };
	});
	return { tail, truncated };
}

/**
 * The text of the branch's last assistant message, its last FINAL_TEXT_MAX characters only (the ending is
 * what the promise rule reads); null when the branch has none or it holds no text.
 */
export function finalText(branch: any[]): string | null {
	for (let i = branch.length - 1; i >= 0; i--) {
		const entry = branch[i];
		if (entry?.type !== "message" || entry.message?.role !== "assistant") continue;
		const content = entry.message.content;
		const blocks = typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content : [];
		const text = blocks
			.filter((b: any) => b?.type === "text" && typeof b.text === "string")
			.map((b: any) => b.text)
			.join("\n")
			.trim();
		if (text === "") return null;
		const chars = Array.from(text);
		return chars.length > FINAL_TEXT_MAX ? chars.slice(-FINAL_TEXT_MAX).join("") : text;
	}
	return null;
}

/**
 * A message's words for the conversation pokeshell shows a person (the web view's conversation): its text
 * blocks joined, bounded (TALK_RESULT_MAX for a tool's result, else TALK_TEXT_MAX) with the start and the
 * end kept (a reply's question is at its end, its subject at its start); null when it holds no text.
 */
export function talkText(m: any): string | null {
	const content = m?.content;
	const blocks = typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content : [];
	const text = blocks
		.filter((b: any) => b?.type === "text" && typeof b.text === "string")
		.map((b: any) => b.text)
		.join("\n")
		.trim();
	if (text === "") return null;
	const max = m?.role === "toolResult" ? TALK_RESULT_MAX : TALK_TEXT_MAX;
	const chars = Array.from(text);
	if (chars.length <= max) return text;
	const head = Math.floor(max / 4);
	const tail = max - head;
	const cut = chars.length - head - tail;
	return `${chars.slice(0, head).join("")}\n…[${cut} characters left out]…\n${chars.slice(-tail).join("")}`;
}

/**
 * What one assistant reply used, for pokeshell's per-session totals: tokens in (not from the cache),
 * out, read from and written to the cache, and the cost pi priced them at (`null` for a message
 * without usage; a cost of 0 when pi has no prices for the model).
 */
export function tokenUsage(m: any) {
	const u = m?.role === "assistant" ? m.usage : null;
	if (!u || typeof u !== "object") return null;
	const count = (v: unknown) => Math.max(0, Math.round(numberOrNull(v) ?? 0));
	const cost = numberOrNull(u.cost?.total);
	return {
		input: count(u.input),
		output: count(u.output),
		cacheRead: count(u.cacheRead),
		cacheWrite: count(u.cacheWrite),
		costUsd: cost !== null && cost >= 0 ? cost : null,
	};
}

/**
 * A digest of a tool call's result: its text blocks (images by their data), so that two results compare
 * equal exactly when the model saw the same output. pokeshell's no-progress rails compare them; the text
 * itself never leaves pi. Null when there is nothing to read.
 */
export function resultDigest(result: any): string | null {
	const content = typeof result === "string" ? [{ type: "text", text: result }] : result?.content;
	let parts: string[];
	if (Array.isArray(content)) {
		parts = content.map((b: any) => {
			if (b?.type === "text") return `t:${typeof b.text === "string" ? b.text : ""}`;
			if (b?.type === "image") return `i:${typeof b.data === "string" ? b.data : ""}`;
			return `o:${safe(() => JSON.stringify(b)) ?? ""}`;
		});
	} else if (result === undefined || result === null) {
		return null;
	} else {
		parts = [`j:${safe(() => JSON.stringify(result)) ?? String(result)}`];
	}
	return createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, 32);
}

export function contextUsage(usage: any) {
	if (!usage) return null;
	return {
		tokens: numberOrNull(usage.tokens),
		contextWindow: numberOrNull(usage.contextWindow),
		percent: numberOrNull(usage.percent),
	};
}

export function customEntry(e: any) {
	let data = e.data ?? null;
	const size = safe(() => JSON.stringify(data)?.length ?? 0) ?? 0;
	if (size > CUSTOM_ENTRY_DATA_MAX_BYTES) data = { pokeshellTruncated: true, bytes: size };
	return { id: e.id ?? null, customType: e.customType, data, timestamp: e.timestamp ?? null };
}

function isCustomOf(e: any, prefix: string): boolean {
	return e?.type === "custom" && typeof e.customType === "string" && e.customType.startsWith(prefix);
}

/** pokeshell's own custom entries on `branch`, the newest CUSTOM_ENTRIES_MAX, oldest first. */
export function ownEntries(branch: any[]) {
	return branch
		.filter((e) => isCustomOf(e, OWN_ENTRY_PREFIX))
		.slice(-CUSTOM_ENTRIES_MAX)
		.map(customEntry);
}

/** The `get_entries` answer: the newest matching entries within the count and byte limits, oldest first. */
export function pickEntries(all: any[], prefixArg: unknown, limitArg: unknown) {
	const prefix = typeof prefixArg === "string" ? prefixArg : "";
	const limit = Math.min(
		Number.isInteger(limitArg) && (limitArg as number) > 0 ? (limitArg as number) : GET_ENTRIES_DEFAULT,
		GET_ENTRIES_MAX,
	);
	const matching = all.filter((e) => isCustomOf(e, prefix));
	let truncated = matching.length > limit;
	const picked: any[] = [];
	let bytes = 0;
	for (const e of matching.slice(-limit).reverse()) {
		const entry = customEntry(e);
		bytes += JSON.stringify(entry).length;
		if (bytes > GET_ENTRIES_MAX_BYTES) {
			truncated = true;
			break;
		}
		picked.push(entry);
	}
	return { entries: picked.reverse(), truncated };
}
