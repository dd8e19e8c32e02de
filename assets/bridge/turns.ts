/**
 * Held turns: pi awaits `turn_end` handlers before its next request, so a turn whose tools failed is held
 * until pokeshell releases it (after anything it steers in) or `holdMs` pass.
 */

export class TurnHolds {
	private readonly held = new Map<number, () => void>();
	private last = 0;
	private readonly holdMs: number;

	constructor(holdMs: number) {
		this.holdMs = holdMs;
	}

	/** A new hold id and the promise pi waits on. */
	hold(): { id: number; released: Promise<void> } {
		const id = ++this.last;
		const released = new Promise<void>((resolve) => {
			const timer = setTimeout(() => {
				this.held.delete(id);
				resolve();
			}, this.holdMs);
			timer.unref?.();
			this.held.set(id, () => {
				clearTimeout(timer);
				this.held.delete(id);
				resolve();
			});
		});
		return { id, released };
	}

	release(id: number) {
		this.held.get(id)?.();
	}

	releaseAll() {
		for (const release of [...this.held.values()]) release();
	}

	get waiting(): number {
		return this.held.size;
	}
}
