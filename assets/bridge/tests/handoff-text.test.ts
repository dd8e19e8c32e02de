import assert from "node:assert/strict";
import { test } from "node:test";

import {
	fileListBlocks,
	HANDOFF_FRAMING,
	handoffFileName,
	handoffRequest,
	handoffSummary,
	mergedFileLists,
	responseText,
} from "../handoff-text.ts";

test("file lists accumulate over the previous compaction; modified wins over read", () => {
	const branch = [
		{ type: "compaction", details: { readFiles: ["old-read.rs", "both.rs"], modifiedFiles: ["old-mod.rs"] } },
	];
	const lists = mergedFileLists({ read: new Set(["a.rs", "both.rs"]), written: new Set(["both.rs"]), edited: ["e.rs"] }, branch);
	assert.deepEqual(lists, { readFiles: ["a.rs", "old-read.rs"], modifiedFiles: ["both.rs", "e.rs", "old-mod.rs"] });
	assert.deepEqual(mergedFileLists(undefined, "nonsense"), { readFiles: [], modifiedFiles: [] });
});

test("file list blocks are left out when empty", () => {
	assert.equal(fileListBlocks([], []), "");
	assert.equal(fileListBlocks(["a"], ["b"]), "<read-files>\na\n</read-files>\n\n<modified-files>\nb\n</modified-files>");
});

test("the request carries the earlier summary and the focus only when given", () => {
	const plain = handoffRequest("CONV", undefined, undefined);
	assert.match(plain, /<conversation>\nCONV\n<\/conversation>/);
	assert.doesNotMatch(plain, /earlier-summary|Additional focus/);
	const full = handoffRequest("CONV", "EARLIER", "the parser");
	assert.match(full, /<earlier-summary>\nEARLIER\n<\/earlier-summary>/);
	assert.match(full, /Additional focus: the parser$/);
});

test("the summary frames the document and appends the lists", () => {
	assert.equal(handoffSummary("DOC", ""), `${HANDOFF_FRAMING}\n\n<handoff>\nDOC\n</handoff>`);
	assert.ok(handoffSummary("DOC", "LISTS").endsWith("</handoff>\n\nLISTS"));
});

test("the response text joins text blocks only; file names have no colons", () => {
	assert.equal(responseText([{ type: "text", text: " a" }, { type: "thinking" }, { type: "text", text: "b " }]), "a\nb");
	assert.equal(responseText(undefined), "");
	assert.equal(handoffFileName(new Date("2026-01-02T03:04:05.678Z")), "handoff-2026-01-02T03-04-05.678Z.md");
});
