// pokeshell demo: a command guard of the kind pi's extension docs describe. It refuses any bash
// command containing `rm -rf` and ends the tool batch, so the run stops on the refused call instead of
// going back to the model. The demo's chapter on a repeated failing call relies on it.
export default function (pi: any) {
	pi.on("tool_call", (event: any) => {
		const command = String(event?.input?.command ?? "");
		if (event?.toolName === "bash" && command.includes("rm -rf")) {
			return { block: true, reason: "the demo's guard refuses rm -rf in this folder", terminate: true };
		}
		return undefined;
	});
}
