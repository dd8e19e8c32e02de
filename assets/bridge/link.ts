/**
 * The connection to pokeshell: handshake, reconnection with backoff, the outbox while not connected, the
 * heartbeat, and the numbering of what is sent. It knows nothing of pi; the entry file hands it the
 * hello's pi fields, the heartbeat's, and what to do on a welcome, a command and a lost connection.
 *
 * Every line after the hello carries `seq`, one counter per instance, taken when the line is made: a
 * line dropped later (outbox bound, a socket that stopped draining) leaves a gap pokeshell can see.
 */

import { createConnection } from "node:net";

import { encodeLine, LineSplitter } from "./framing.ts";
import {
	MAX_LINE_BYTES,
	OUTBOX_MAX_BYTES,
	OUTBOX_MAX_LINES,
	PROTOCOL,
	RECONNECT_MAX_MS,
	RECONNECT_MIN_MS,
	SOCKET_BACKLOG_MAX_BYTES,
} from "./limits.ts";
import { Outbox } from "./outbox.ts";
import { errorText, safe } from "./util.ts";

export type LinkHooks = {
	/** pi's part of the hello: version, pid, session, mode, model, cwd. */
	helloFields(): Record<string, unknown>;
	/** pokeshell accepted the hello and the outbox is flushed. */
	onWelcome(): void;
	onCommand(id: unknown, command: any): void;
	/** The connection broke (not a shutdown): whatever waits on pokeshell must stop waiting. */
	onLost(): void;
};

export class Link {
	private readonly socketPath: string;
	private readonly token: string;
	private readonly instance: string;
	private readonly hooks: LinkHooks;
	private sock: any = null;
	private welcomed = false;
	private shutDown = false;
	private rejected = false;
	private connects = 0;
	private reconnectTimer: any = null;
	private heartbeatTimer: any = null;
	private backoffMs = RECONNECT_MIN_MS;
	private splitter = new LineSplitter(MAX_LINE_BYTES);
	private seq = 0;
	private readonly outbox = new Outbox(OUTBOX_MAX_LINES, OUTBOX_MAX_BYTES);

	constructor(socketPath: string, token: string, instance: string, hooks: LinkHooks) {
		this.socketPath = socketPath;
		this.token = token;
		this.instance = instance;
		this.hooks = hooks;
	}

	/** Connected and welcomed: a line sent now goes straight to pokeshell. */
	get open(): boolean {
		return !!this.sock && this.welcomed;
	}

	// ------------------------------------------------------------ outgoing lines

	emit(type: string, fields: Record<string, unknown> = {}) {
		this.send({ type: "event", at: Date.now(), event: { type, ...fields } });
	}

	reply(id: number, ok: boolean, result?: unknown, error?: string) {
		this.send(ok ? { type: "reply", id, ok: true, result: result ?? {} } : { type: "reply", id, ok: false, error });
	}

	/**
	 * Sends a `heartbeat` with `fields()` every `everyMs` while connected; a heartbeat is never buffered,
	 * since a stale one says nothing. The timer is unref'ed and ends with `closeForGood`.
	 */
	startHeartbeat(everyMs: number, fields: () => Record<string, unknown>) {
		if (this.heartbeatTimer || this.shutDown) return;
		this.heartbeatTimer = setInterval(
			() =>
				this.guard("heartbeat", () => {
					if (this.open) this.send({ type: "heartbeat", at: Date.now(), ...fields() });
				}),
			everyMs,
		);
		this.heartbeatTimer.unref?.();
	}

	/** Reports a failure inside the bridge as a `log` event; never throws. */
	report(where: string, e: unknown) {
		try {
			this.emit("log", { level: "error", message: `${where}: ${errorText(e)}` });
		} catch {
			// reporting must not fail either
		}
	}

	/** Runs `fn`, reporting instead of throwing. */
	guard(where: string, fn: () => void) {
		try {
			fn();
		} catch (e) {
			this.report(where, e);
		}
	}

	private send(obj: any) {
		const seq = ++this.seq;
		// A line that cannot go out keeps its number on the log line that replaces it.
		const line = encodeLine({ type: obj.type, seq, ...obj }, MAX_LINE_BYTES, (message) => ({
			type: "event",
			seq,
			at: Date.now(),
			event: { type: "log", level: "error", message },
		}));
		const s = this.sock;
		if (s && this.welcomed) {
			if (s.writableLength > SOCKET_BACKLOG_MAX_BYTES) {
				this.outbox.countDropped();
				return;
			}
			try {
				s.write(line);
				return;
			} catch {
				// fall through to the outbox; the close handler reconnects
			}
		}
		this.outbox.push(line);
	}

	// ------------------------------------------------------------ connection

	connect() {
		if (this.sock || this.shutDown || this.rejected) return;
		this.reconnectTimer = null;
		let s: any;
		try {
			s = createConnection(this.socketPath);
		} catch {
			this.scheduleReconnect();
			return;
		}
		this.sock = s;
		this.welcomed = false;
		this.splitter = new LineSplitter(MAX_LINE_BYTES);
		s.unref();
		s.on("connect", () => this.guard("connect", () => this.writeHello(s)));
		s.on("data", (chunk: Buffer) => this.guard("data", () => this.onData(s, chunk)));
		s.on("error", () => {
			// "close" follows and handles it
		});
		s.on("close", () => this.guard("close", () => this.onClose(s)));
	}

	/** pi is tearing this instance down: flush what was written, never reconnect. */
	closeForGood() {
		this.shutDown = true;
		if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
		this.reconnectTimer = null;
		if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
		this.heartbeatTimer = null;
		const s = this.sock;
		if (!s) return;
		// end() flushes what is written; an unwelcomed socket has nothing worth flushing
		if (this.welcomed) safe(() => s.end());
		else safe(() => s.destroy());
	}

	private writeHello(s: any) {
		this.connects++;
		const hello = {
			type: "hello",
			protocol: PROTOCOL,
			token: this.token,
			...this.hooks.helloFields(),
			instance: this.instance,
			reconnect: this.connects > 1,
			dropped: this.outbox.takeDropped(),
		};
		s.write(`${JSON.stringify(hello)}\n`);
	}

	private onClose(s: any) {
		if (this.sock !== s) return;
		this.sock = null;
		this.welcomed = false;
		this.hooks.onLost();
		this.scheduleReconnect();
	}

	private scheduleReconnect() {
		if (this.shutDown || this.rejected || this.reconnectTimer) return;
		this.reconnectTimer = setTimeout(() => this.guard("reconnect", () => this.connect()), this.backoffMs);
		this.reconnectTimer.unref?.();
		this.backoffMs = Math.min(this.backoffMs * 2, RECONNECT_MAX_MS);
	}

	private onData(s: any, chunk: Buffer) {
		const { lines, oversized } = this.splitter.push(chunk);
		for (const line of lines) this.handleLine(s, line);
		if (oversized) {
			this.report("incoming line", new Error(`a line from pokeshell exceeded ${MAX_LINE_BYTES} bytes and was skipped`));
		}
	}

	private handleLine(s: any, text: string) {
		if (!text.trim()) return;
		let msg: any;
		try {
			msg = JSON.parse(text);
		} catch (e) {
			this.report("incoming line", new Error(`not JSON: ${errorText(e)}`));
			return;
		}
		switch (msg?.type) {
			case "welcome":
				this.welcomed = true;
				this.backoffMs = RECONNECT_MIN_MS;
				this.flushOutbox(s);
				this.hooks.onWelcome();
				return;
			case "rejected":
				this.rejected = true;
				safe(() => s.destroy());
				return;
			case "command":
				this.hooks.onCommand(msg.id, msg.command);
				return;
			default:
				this.report("incoming line", new Error(`unknown message type ${JSON.stringify(msg?.type)}`));
		}
	}

	private flushOutbox(s: any) {
		while (this.outbox.size && this.sock === s && this.welcomed) {
			s.write(this.outbox.shift() as string);
		}
	}
}
