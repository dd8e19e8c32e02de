/**
 * The handoff pass: in a compaction pokeshell asked for, the bridge has the active model write a handoff
 * document and returns it as the compaction's summary. Any failure returns nothing, so pi writes its own.
 */

import * as piAgent from "@earendil-works/pi-coding-agent";
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

import {
	fileListBlocks,
	HANDOFF_INSTRUCTIONS,
	handoffFileName,
	handoffFileText,
	handoffRequest,
	handoffSummary,
	mergedFileLists,
	responseText,
} from "./handoff-text.ts";
import { ERROR_TEXT_MAX, HANDOFF_MAX_TOKENS } from "./limits.ts";
import type { HandoffArm } from "./state.ts";
import { boundText, errorText, safe } from "./util.ts";

function fallback(reason: string) {
	return {
		result: undefined,
		report: { outcome: "fallback", reason, path: null, saveError: null, documentChars: null, readFiles: 0, modifiedFiles: 0 },
	};
}

/** Writes the document for `session_before_compact`; returns pi's handler result and the report for pokeshell. */
export async function writeHandoff(event: any, c: any, arm: HandoffArm) {
	try {
		const prep = event.preparation;
		if (!prep) return fallback("pi gave no compaction preparation");
		const model = c?.model;
		if (!model) return fallback("no active model to write the handoff with");
		const registry = c?.modelRegistry;
		if (typeof registry?.complete !== "function") return fallback("this pi offers no model call to extensions");
		if (typeof piAgent.serializeConversation !== "function" || typeof piAgent.convertToLlm !== "function")
			return fallback("this pi lacks serializeConversation/convertToLlm");
		const messages = [...(prep.messagesToSummarize ?? []), ...(prep.turnPrefixMessages ?? [])];
		if (messages.length === 0) return fallback("nothing to summarize");
		const conversation = piAgent.serializeConversation(piAgent.convertToLlm(messages));
		const request = handoffRequest(conversation, prep.previousSummary, arm.focus);
		const maxTokens = Math.min(Number(model.maxTokens) || HANDOFF_MAX_TOKENS, HANDOFF_MAX_TOKENS);
		const response = await registry.complete(
			model,
			{
				systemPrompt: HANDOFF_INSTRUCTIONS,
				messages: [{ role: "user", content: [{ type: "text", text: request }], timestamp: Date.now() }],
			},
			{ signal: event.signal, cacheRetention: "none", sessionId: randomUUID(), maxTokens },
		);
		if (event.signal?.aborted) return fallback("the compaction was aborted");
		if (response?.stopReason === "error" || response?.stopReason === "aborted")
			return fallback(`the model call failed: ${boundText(response.errorMessage, ERROR_TEXT_MAX) ?? response.stopReason}`);
		const document = responseText(response?.content);
		if (!document) return fallback("the model returned an empty document");

		const { readFiles, modifiedFiles } = mergedFileLists(prep.fileOps, event.branchEntries);
		const fileLists = fileListBlocks(readFiles, modifiedFiles);
		const { path, saveError } = arm.save ? save(c, document, fileLists) : { path: null, saveError: null };
		return {
			result: {
				compaction: {
					summary: handoffSummary(document, fileLists),
					firstKeptEntryId: prep.firstKeptEntryId,
					tokensBefore: prep.tokensBefore,
					usage: response.usage,
					details: { readFiles, modifiedFiles, handoff: true, handoffPath: path },
				},
			},
			report: {
				outcome: "written",
				reason: null,
				path,
				saveError,
				documentChars: document.length,
				readFiles: readFiles.length,
				modifiedFiles: modifiedFiles.length,
			},
		};
	} catch (e) {
		return fallback(errorText(e));
	}
}

/** Saves the document next to the session file; a failure is reported, never thrown. */
function save(c: any, document: string, fileLists: string): { path: string | null; saveError: string | null } {
	const sessionFile = safe(() => c.sessionManager.getSessionFile());
	if (!sessionFile) return { path: null, saveError: "the session has no file (started with --no-session)" };
	const target = join(dirname(sessionFile), handoffFileName(new Date()));
	try {
		writeFileSync(target, handoffFileText(document, fileLists), { flag: "wx", mode: 0o600 });
		return { path: target, saveError: null };
	} catch (e) {
		return { path: null, saveError: errorText(e) };
	}
}
