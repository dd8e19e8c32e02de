//! End to end: the `schedule_wakeup` tool's description names the wakeup bounds of pokeshell's
//! settings, as real pi 1.6.0 inside pokeshell hands the tool to the scripted model.

mod support;

use support::matrix::Matrix;
use support::{Step, model_server};

#[test]
fn wak_p1_the_schedule_wakeup_tool_names_the_configured_bounds() {
    let server = model_server();
    server.push(Step::text("Noted."));
    let mut m = Matrix::builder()
        .settings(serde_json::json!({"pokeshell": {"wakeupMinSeconds": 30, "wakeupMaxSeconds": 900}}))
        .start(server);
    m.submit("what can you schedule?");
    let request = m.wait_chats(1).remove(0);
    let tools = request.body["tools"].as_array().cloned().unwrap_or_default();
    let tool = tools
        .iter()
        .find(|t| t["function"]["name"] == "schedule_wakeup")
        .unwrap_or_else(|| panic!("schedule_wakeup among the tools: {tools:?}"));
    let description = tool["function"]["description"].as_str().unwrap_or_default();
    assert!(
        description.contains("between 30 and 900 seconds"),
        "{description}"
    );
    let delay = tool["function"]["parameters"]["properties"]["delay_seconds"]["description"].to_string();
    assert!(delay.contains("between 30 and 900 seconds"), "{delay}");
    assert!(!description.contains("3600") && !delay.contains("3600"));
}
