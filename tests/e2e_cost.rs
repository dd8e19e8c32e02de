//! Tokens and cost per session on real pi 1.6.0, with the scripted models priced at $3 per million
//! tokens in and $15 out: pi prices each reply, the bridge passes its usage on, and pokeshell sums
//! the run and the session in the side pane and the status overlay, and warns once when the session
//! passes `pokeshell.costWarnUsd`.

mod support;

use serde_json::json;
use support::matrix::{Matrix, side_flat};
use support::{Step, WAIT};

const PREFIX: u8 = 0x1d;

#[test]
fn cost_and_tokens_are_summed_per_run_and_session_and_warned_about_once() {
    let server = support::model_server();
    // Each reply: 10 000 tokens in ($0.03) and 2 000 out ($0.03), so $0.06 a reply.
    for answer in ["First answer.", "Second answer.", "Third answer."] {
        server.push(
            Step::text(answer)
                .with_prompt_tokens(10_000)
                .with_completion_tokens(2_000),
        );
    }
    let mut m = Matrix::builder()
        .prices(3.0, 15.0, 0.3)
        .settings(json!({"pokeshell": {"costWarnUsd": 0.1}}))
        .start(server);

    m.submit("first question");
    m.wait_text("First answer.");
    m.wait_side("run 10.0k/2.0k · $0.0600");
    m.wait_side("session 10.0k/2.0k · $0.0600");
    m.pty.with_screen(|s| {
        assert!(
            !s.contents().contains("past your warning"),
            "warned below the threshold"
        );
    });

    m.submit("second question");
    m.wait_text("Second answer.");
    m.wait_side("session 20.0k/4.0k · $0.1200");
    m.wait_side("run 10.0k/2.0k · $0.0600");
    m.pty.wait_for_text("past your warning at $0.1000", WAIT);
    // Desktop notifications (OSC 9) that carry the warning.
    let warnings = |raw: &[u8]| {
        String::from_utf8_lossy(raw)
            .split("\x1b]9;")
            .skip(1)
            .filter(|n| {
                n.split('\x07')
                    .next()
                    .unwrap_or_default()
                    .contains("past your warning")
            })
            .count()
    };
    m.submit("third question");
    m.wait_text("Third answer.");
    m.wait_side("session 30.0k/6.0k · $0.1800");
    assert_eq!(
        warnings(&m.pty.raw_output()),
        1,
        "one desktop notification of the warning"
    );
    m.pty
        .with_screen(|s| assert!(side_flat(s).contains("$0.1800"), "{}", s.contents()));

    m.pty.send([PREFIX, b'i']);
    m.pty.wait_for_text("Spent this session", WAIT);
    m.pty.wait_for_text("30.0k in · 6.0k out · $0.1800", WAIT);
    m.pty.wait_for_text("10.0k in · 2.0k out · $0.0600", WAIT);
    assert_eq!(
        warnings(&m.pty.raw_output()),
        1,
        "the warning came again after the third reply"
    );
}
