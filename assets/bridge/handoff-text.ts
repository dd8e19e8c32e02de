/**
 * The handoff document's texts (pokeshell's own words) and the pure steps around them: the request to
 * the model, the cumulative file lists, the summary pi stores, the saved file's content.
 */

export const HANDOFF_INSTRUCTIONS = `You write handoff documents for a coding agent. A fresh instance of the same agent takes over this task with nothing but your document and the most recent messages, so it must be able to continue without asking anything.

Reply with the document only: no preamble, no closing remarks.

Be exact about the technical state: file paths, names of functions and types, commands that were run and what they printed, test results, decisions taken, unfinished edits. Keep apart what is confirmed on disk and what was only intended.

Speak to the successor in the imperative ("Run the tests", "Fix the parser"), never in the first person. Writing this handoff is not part of the task: never list it as progress or as a next step.

Use exactly these sections, in this order:
## Goal
## Constraints & Preferences
## Progress
### Done
(items as "- [x] ...")
### In Progress
### Pending
(items as "- [ ] ...")
## Key Decisions
(items as "- **Decision**: why")
## Critical Context
## Next Steps
(a numbered list)`;

export const HANDOFF_FRAMING = `Your earlier context was condensed. The <handoff> below is a note that a previous instance of you wrote from the full conversation, just before that conversation was cut. It is your own working memory, not a message from the user.
- Where the note says "I" or "we", it means that earlier instance, which is you.
- "Next Steps" is your own plan, picked up again: check it against the latest user message before acting on it.
- The handoff is finished and complete. Do not write another handoff document unless the user asks for one.
- Build on the work already done; do not redo it.`;

export function handoffRequest(conversation: string, previousSummary: unknown, focus: string | undefined): string {
	const parts = [`Write the handoff document for this conversation.\n\n<conversation>\n${conversation}\n</conversation>`];
	if (typeof previousSummary === "string" && previousSummary.trim()) {
		parts.push(
			`The conversation above continues from an earlier summary. Carry over whatever in it still holds.\n\n<earlier-summary>\n${previousSummary}\n</earlier-summary>`,
		);
	}
	if (focus) parts.push(`Additional focus: ${focus}`);
	return parts.join("\n\n");
}

export function mergedFileLists(fileOps: any, branchEntries: unknown) {
	const read = new Set<string>();
	const modified = new Set<string>();
	const entries: any[] = Array.isArray(branchEntries) ? branchEntries : [];
	const previous = [...entries].reverse().find((e) => e?.type === "compaction");
	addAll(read, previous?.details?.readFiles);
	addAll(modified, previous?.details?.modifiedFiles);
	addAll(read, fileOps?.read);
	addAll(modified, fileOps?.written);
	addAll(modified, fileOps?.edited);
	const modifiedFiles = [...modified].sort();
	const readFiles = [...read].filter((f) => !modified.has(f)).sort();
	return { readFiles, modifiedFiles };
}

function addAll(set: Set<string>, items: unknown) {
	if (!items || typeof (items as any)[Symbol.iterator] !== "function" || typeof items === "string") return;
	for (const item of items as Iterable<unknown>) if (typeof item === "string" && item) set.add(item);
}

export function fileListBlocks(readFiles: string[], modifiedFiles: string[]): string {
	const blocks: string[] = [];
	if (readFiles.length) blocks.push(`<read-files>\n${readFiles.join("\n")}\n</read-files>`);
	if (modifiedFiles.length) blocks.push(`<modified-files>\n${modifiedFiles.join("\n")}\n</modified-files>`);
	return blocks.join("\n\n");
}

/** The compaction summary: the framing, the document, then the file lists. */
export function handoffSummary(document: string, fileLists: string): string {
	return `${HANDOFF_FRAMING}\n\n<handoff>\n${document}\n</handoff>${fileLists ? `\n\n${fileLists}` : ""}`;
}

/** What the saved handoff file holds: the document and the file lists. */
export function handoffFileText(document: string, fileLists: string): string {
	return `${document}\n${fileLists ? `\n${fileLists}\n` : ""}`;
}

/** The text blocks of a model response, joined; empty when there are none. */
export function responseText(content: unknown): string {
	const blocks: any[] = Array.isArray(content) ? content : [];
	return blocks
		.filter((b) => b?.type === "text" && typeof b.text === "string")
		.map((b) => b.text)
		.join("\n")
		.trim();
}

/** `handoff-<ISO timestamp with : as ->.md`. */
export function handoffFileName(now: Date): string {
	return `handoff-${now.toISOString().replace(/:/g, "-")}.md`;
}
