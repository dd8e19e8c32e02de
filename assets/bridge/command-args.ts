/** Checks and shapes the arguments of pokeshell's commands before they reach pi. Pure; throws on bad input. */

import { textOrUndefined } from "./util.ts";

/** `send_message` as the arguments of `pi.sendMessage`. */
export function sendMessageArgs(command: any): { message: any; options: any } {
	if (typeof command.customType !== "string" || !command.customType) throw new Error("send_message needs a customType");
	if (typeof command.content !== "string") throw new Error("send_message needs a text content");
	const options: any = { triggerTurn: command.triggerTurn === true };
	if (command.deliverAs) options.deliverAs = command.deliverAs;
	const message: any = { customType: command.customType, content: command.content, display: command.display === true };
	if (command.details !== undefined && command.details !== null) message.details = command.details;
	return { message, options };
}

/** `send_user_message` as the arguments of `pi.sendUserMessage`. */
export function sendUserMessageArgs(command: any): { text: string; options: any } {
	if (typeof command.text !== "string") throw new Error("send_user_message needs a text");
	return { text: command.text, options: command.deliverAs ? { deliverAs: command.deliverAs } : undefined };
}

export function appendEntryArgs(command: any): { customType: string; data: unknown } {
	if (typeof command.customType !== "string" || !command.customType) throw new Error("append_entry needs a customType");
	return { customType: command.customType, data: command.data ?? null };
}

export function toolReplyArgs(command: any) {
	return {
		callId: String(command.callId),
		answer: { text: String(command.text ?? ""), isError: command.isError === true, details: command.details },
	};
}

export function notifyArgs(command: any): { message: string; level: string } {
	const level = ["info", "warning", "error"].includes(command.level) ? command.level : "info";
	return { message: String(command.message ?? ""), level };
}

/** `command_answer`: the answer to the pi command with `requestId`. */
export function commandAnswerArgs(command: any): { requestId: number; text: string; level: string } {
	if (typeof command.requestId !== "number") throw new Error("command_answer needs a numeric requestId");
	const { message, level } = notifyArgs({ message: command.text, level: command.level });
	return { requestId: command.requestId, text: message, level };
}

/** What a `compact` with `handoff: true` arms the bridge with; null for a plain compaction. */
export function handoffArmOf(command: any) {
	if (!command.handoff) return null;
	return { focus: textOrUndefined(command.customInstructions), save: command.save === true, consumed: false };
}
