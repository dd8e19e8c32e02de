/** Lines waiting while the bridge is not connected: bounded in lines and bytes, oldest dropped first. */

export class Outbox {
	private readonly lines: string[] = [];
	private bytes = 0;
	/** Lines dropped since the last `takeDropped`. */
	private dropped = 0;
	private readonly maxLines: number;
	private readonly maxBytes: number;

	constructor(maxLines: number, maxBytes: number) {
		this.maxLines = maxLines;
		this.maxBytes = maxBytes;
	}

	push(line: string) {
		this.lines.push(line);
		this.bytes += line.length;
		while (this.lines.length > this.maxLines || this.bytes > this.maxBytes) {
			const old = this.lines.shift();
			this.bytes -= old ? old.length : 0;
			this.dropped++;
		}
	}

	/** Counts a line lost elsewhere (a socket that stopped draining), reported with the outbox's drops. */
	countDropped() {
		this.dropped++;
	}

	/** The drop count for the next hello, reset to zero. */
	takeDropped(): number {
		const n = this.dropped;
		this.dropped = 0;
		return n;
	}

	/** Takes the oldest line, if any. */
	shift(): string | undefined {
		const line = this.lines.shift();
		if (line !== undefined) this.bytes -= line.length;
		return line;
	}

	get size(): number {
		return this.lines.length;
	}
}
