//! The stall matrix, long tool calls: the silent watch past the threshold, the
//! auto-abort, and a tool that outlives its run. Real pi 1.6.0 inside pokeshell, the scripted model.

mod support;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;
use support::matrix::Matrix;
use support::shell::footer;
use support::{Step, model_server};

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[test]
fn poke_m2_a_tool_past_the_threshold_in_a_healthy_run_only_turns_the_footer() {
    let server = model_server();
    server.push_all([Step::bash("sleep 4"), Step::text("The slow step finished.")]);
    let mut m = Matrix::builder()
        .settings(json!({"poke": {"thresholdSeconds": 2}}))
        .start(server);
    m.submit("run the slow step");
    m.wait_footer("⏳ bash");
    m.wait_footer("⚠️ bash 2s");
    m.wait_footer("⚠️ bash 3s");
    m.wait_side("⚠ bash");
    m.wait_text("The slow step finished.");
    m.wait_record(
        "POKE-M2",
        "declined",
        "watching without acting (auto-abort is off)",
    );
    m.assert_model_quiet(Duration::from_secs(3));
    assert_eq!(
        m.chat().len(),
        2,
        "the prompt and the tool's result, nothing else"
    );
    let acted: Vec<_> = m.ledger().into_iter().filter(|r| r["kind"] == "action").collect();
    assert!(acted.is_empty(), "pokeshell did nothing on its own: {acted:?}");
    assert!(
        m.pty
            .with_screen(|s| footer(s).starts_with("📌 p:on") && !footer(s).contains("⚠️")),
        "the footer is back to its base once the tool ended\n{}",
        m.pty.dump()
    );
}

#[test]
fn poke_m3_auto_abort_stops_the_tool_at_the_threshold_and_nothing_resumes() {
    let server = model_server();
    server.push(Step::bash("sleep 30"));
    let mut m = Matrix::builder()
        .settings(json!({"poke": {"thresholdSeconds": 2, "autoAbort": true, "autoPoke": false}}))
        .start(server);
    m.submit("run the endless step");
    // The tool starts after the request arrived and before the footer shows it.
    let requested = wall_ms();
    m.wait_footer("⏳ bash");
    let shown = wall_ms();
    let abort = m.wait_record("POKE-M3", "action", "past the 2s threshold");
    let at = abort["wall_ms"].as_u64().unwrap_or_default();
    assert!(
        at + 1000 >= shown + 2000 && at <= requested + 3000,
        "aborted {}ms after the request, {}ms after the tool showed; the threshold is 2000ms ±1000",
        at.saturating_sub(requested),
        at.saturating_sub(shown)
    );
    m.wait_footer("🔴 pokeshell aborted 'bash': it ran past the 2s threshold");
    m.wait_record("ARB-ABORT", "declined", "pokeshell's auto-abort stopped the run");
    m.wait_side("stopped by pokeshell's auto-abort: no automatic poke until you type");
    m.assert_model_quiet(Duration::from_secs(3));
    assert_eq!(m.chat().len(), 1, "no request after the abort");
    assert!(m.pokes().is_empty());
}

/// A test extension: a tool that starts a command through `ctx.executeTool()` and returns without
/// waiting for it, so the nested call keeps running after the tool call (and its run) ended.
const BACKGROUND_TOOL: &str = r#"
import { Type } from "typebox";

export default function (pi: any) {
	pi.registerTool({
		name: "start_background",
		label: "Start in background",
		description: "Starts a shell command in the background and returns at once.",
		parameters: Type.Object({ command: Type.String() }),
		async execute(_id: string, params: any, _signal: any, _onUpdate: any, ctx: any) {
			// Not awaited on purpose: this nested call outlives the tool call that made it.
			Promise.resolve(ctx.executeTool("bash", { command: params.command })).catch(() => {});
			return { content: [{ type: "text", text: "started in the background" }], details: {} };
		},
	});
}
"#;

/// POKE-O1 on real pi. pi's agent loop awaits every tool call the model issued (agent-loop.js:
/// `executeToolCalls` awaits the whole batch, and `abort()` waits for idle), so a model-issued call
/// can never outlive its run: Esc kills `bash` and emits `tool_execution_end` before `agent_settled`,
/// a tool that ignores the abort signal keeps the run (and the settle) waiting, and extension errors
/// inside the loop are caught. The one way pi 1.6.0 settles while a tool still runs is a call that a
/// tool starts through `ctx.executeTool()` without waiting for it: its `tool_execution_start` reaches
/// extensions, and it runs on after the run. That is what this test does; the pure supervisor's
/// scenario tests (tests/supervisor/poke.rs) stay the authority on the rule itself.
#[test]
fn poke_o1_a_tool_still_running_after_its_run_died_gets_one_orphan_poke() {
    let server = model_server();
    server.push_all([
        Step::tool("start_background", json!({"command": "sleep 8"})),
        Step::error(400, "the provider gave up"),
        Step::text("Picking the background job up again."),
    ]);
    let mut m = Matrix::builder()
        .settings(json!({"poke": {"thresholdSeconds": 2}}))
        .extension(BACKGROUND_TOOL)
        .start(server);
    m.submit("start the background job");
    m.wait_text("the provider gave up");
    m.wait_text("Picking the background job up again.");
    m.wait_record("POKE-O1", "action", "sent the orphaned-tool poke");
    m.wait_side("sent the orphaned-tool poke");
    let pokes = m.pokes();
    assert_eq!(pokes.len(), 1, "{pokes:?}");
    assert!(
        pokes[0].starts_with("[Poke] The tool call 'bash' is still running after "),
        "{:?}",
        pokes[0]
    );
    assert!(pokes[0].contains("interrupted"), "{:?}", pokes[0]);
    m.assert_model_quiet(Duration::from_secs(3));
    assert_eq!(m.pokes().len(), 1, "one poke per tool");
}
