/** JSON lines in both directions: encoding with the line bound, and splitting what the socket delivers. */

import { errorText } from "./util.ts";

/**
 * One line, newline included. Something that cannot be encoded, or would pass `maxBytes`, becomes the
 * line `fallback(message)` builds instead, so the peer learns what was lost.
 */
export function encodeLine(obj: any, maxBytes: number, fallback: (message: string) => unknown): string {
	let line: string;
	try {
		line = JSON.stringify(obj);
	} catch (e) {
		line = JSON.stringify(fallback(`could not encode a ${obj?.type ?? "line"}: ${errorText(e)}`));
	}
	if (Buffer.byteLength(line) > maxBytes) {
		line = JSON.stringify(fallback(`dropped a ${obj?.event?.type ?? obj?.type ?? "line"} over ${maxBytes} bytes`));
	}
	return `${line}\n`;
}

/**
 * Cuts a byte stream into lines. A line longer than `maxBytes` is skipped whole, and `push` says so in
 * `oversized`, so one runaway line never grows the buffer without bound.
 */
export class LineSplitter {
	private buffered: Buffer = Buffer.alloc(0);
	private skipping = false;
	private readonly maxBytes: number;

	constructor(maxBytes: number) {
		this.maxBytes = maxBytes;
	}

	push(chunk: Buffer): { lines: string[]; oversized: boolean } {
		let inbox = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
		const lines: string[] = [];
		for (;;) {
			const nl = inbox.indexOf(10);
			if (nl < 0) break;
			const line = inbox.subarray(0, nl);
			inbox = inbox.subarray(nl + 1);
			if (this.skipping) {
				this.skipping = false;
				continue;
			}
			lines.push(line.toString("utf8"));
		}
		let oversized = false;
		if (inbox.length > this.maxBytes) {
			this.skipping = true;
			oversized = true;
			inbox = Buffer.alloc(0);
		}
		this.buffered = inbox;
		return { lines, oversized };
	}
}
