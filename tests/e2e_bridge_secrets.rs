//! End to end: the bridge's socket path and token never reach the commands the agent runs (issue 12).
//! Real pi 1.6.0 inside pokeshell, the scripted model asking for a bash call that prints the environment.

mod support;

use support::pi::PiEnv;
use support::shell::{side, spawn, submit, wait_ready};
use support::{Step, WAIT, model_server};

#[test]
fn a_tool_call_printing_the_environment_shows_no_bridge_token_and_the_bridge_stays_connected() {
    let server = model_server();
    server.push(Step::bash("env; echo END-OF-ENV"));
    server.push(Step::text("environment listed"));
    server.push(Step::text("poked after the listing"));
    let env = PiEnv::new(&server.base_url());
    let mut pty = spawn(&env, &[], 40, 120);
    wait_ready(&pty);
    submit(&mut pty, &server, "list the environment");
    let requests = server
        .wait_for_requests(2, WAIT)
        .unwrap_or_else(|e| pty.fail(&e.to_string()));
    let results = requests[1].tool_results();
    assert_eq!(results.len(), 1, "one tool result: {results:?}");
    let output = results[0]["content"].to_string();
    assert!(
        output.contains("END-OF-ENV") && output.contains("PI_SESSION_ID="),
        "the tool ran in pi's environment: {output}"
    );
    assert!(
        !output.contains("POKESHELL_TOKEN") && !output.contains("POKESHELL_SOCKET"),
        "the bridge's variables leaked into a tool call: {output}"
    );
    assert!(
        !output.contains("POKESHELL_WAKEUP_BOUNDS"),
        "the wakeup bounds are taken out like the secrets: {output}"
    );
    pty.wait_for_text("environment listed", WAIT);
    // The bridge took its token before hiding it: it is still connected and still carries a poke.
    wait_ready(&pty);
    assert!(pty.with_screen(|s| side(s).contains("connected")));
    pty.send("\x1dp");
    pty.wait_for_text("poked after the listing", WAIT);
}
