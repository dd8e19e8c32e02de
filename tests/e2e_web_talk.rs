//! The conversation view in a real browser (headless Chromium over WebDriver) at a phone's 390 px,
//! on real pi 1.6.0 against the scripted model: the agent's reply and its tool call read as text,
//! an answer typed under them reaches the model, and a page that comes back after being away is
//! told what happened meanwhile, in the list and in the session.

#[path = "e2e_server/common.rs"]
mod common;
mod support;

use common::{cli, start};
use serde_json::json;
use support::browser::{Browser, click, list_names, web_login};
use support::pty::ServerHome;
use support::{Step, model_server};

const QUESTION: &str = "The listing is done. Should I also migrate the old rows?";
const ANSWER: &str = "Yes, migrate them, and keep a backup first.";
const AFTER: &str = "Migrating with a backup, as asked.";
const TOOL_ARG: &str = "echo conversation-tool-ran";

fn talk_text(b: &Browser) -> impl Future<Output = serde_json::Value> + '_ {
    b.eval("return document.getElementById('talk').innerText")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conversation_view_shows_reply_and_tool_call_at_390_px_and_the_answer_reaches_the_model() {
    let home = ServerHome::new();
    let server = model_server();
    server.push(Step::bash(TOOL_ARG));
    server.push(Step::text(QUESTION));
    server.push(Step::text(AFTER));
    let mut m = start(&home, server, json!({}));
    m.submit("list the files");
    m.wait_text("Should I also migrate");
    let (_addr, link) = web_login(|args| cli(&m, args));

    let b = Browser::start(390, 844).await;
    // Headless Chromium starts no narrower than 500 px; a window can be made narrower after.
    b.client.set_window_size(390, 844).await.expect("a phone's width");
    b.client.goto(&link).await.expect("open the login link");
    assert_eq!(list_names(&b).await, json!(["1:work"]));
    click(&b, "li.session[data-name='1:work'] button.open").await;
    // A phone opens the conversation, not the terminal.
    let text = b
        .wait_for(
            "the agent's question in the conversation",
            "return document.getElementById('talk').innerText",
            |v| v.as_str().is_some_and(|t| t.contains(QUESTION)),
        )
        .await;
    let text = text.as_str().unwrap_or_default().to_string();
    assert!(text.contains("list the files"), "the prompt: {text}");
    let call = b
        .wait_for(
            "the tool call with its result",
            "const c = document.querySelector('#talk .call'); return c ? [c.querySelector('.tool').textContent, c.querySelector('.args').textContent, (c.querySelector('.res') || {}).textContent || ''] : null",
            |v| v[2].as_str().is_some_and(|r| !r.is_empty()),
        )
        .await;
    assert_eq!(
        call,
        json!(["bash", TOOL_ARG, "✓"]),
        "the call as one line, and that it went well"
    );
    let glimpse = b
        .eval("return document.querySelector('#talk details.glimpse pre').textContent")
        .await;
    assert!(
        glimpse
            .as_str()
            .is_some_and(|g| g.contains("conversation-tool-ran")),
        "what the tool answered, one tap away: {glimpse}"
    );
    let layout = b
        .eval(
            "return [document.documentElement.scrollWidth, window.innerWidth, \
             getComputedStyle(document.getElementById('term-view')).display, \
             getComputedStyle(document.querySelector('#talk li.reply .text')).fontSize, \
             document.getElementById('answer').getBoundingClientRect().right]",
        )
        .await;
    assert!(
        layout[0].as_f64() <= layout[1].as_f64() && layout[1].as_f64().is_some_and(|w| w <= 390.0),
        "nothing wider than the phone: {layout}"
    );
    assert_eq!(layout[2], json!("none"), "the terminal waits behind its tab");
    assert!(
        layout[3]
            .as_str()
            .and_then(|s| s.trim_end_matches("px").parse::<f64>().ok())
            >= Some(14.0),
        "text a phone can read: {layout}"
    );
    assert!(
        layout[4].as_f64().is_some_and(|r| r <= 390.0),
        "the answer box fits: {layout}"
    );
    b.screenshot("talk-phone.png").await;

    // The answer typed under the conversation reaches the model, and its reply shows.
    b.eval(&format!(
        "document.getElementById('answer').value = {ANSWER:?}; document.getElementById('answer-send').click(); return true"
    ))
    .await;
    m.wait_trailing(ANSWER);
    b.wait_for(
        "the reply to the answer",
        "return document.getElementById('talk').innerText",
        |v| {
            v.as_str()
                .is_some_and(|t| t.contains(AFTER) && t.contains(ANSWER))
        },
    )
    .await;

    // The terminal is one tap away, showing the same session.
    click(&b, "#tab-term").await;
    b.wait_screen(AFTER).await;
    click(&b, "#tab-talk").await;
    assert!(talk_text(&b).await.as_str().is_some_and(|t| t.contains(AFTER)));
    b.close().await;
}
