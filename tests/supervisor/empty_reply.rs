//! SAR-S1: at a settle, the last visible message of the branch decides (pokeshell's own custom
//! messages are invisible); what came before it does not.

use pokeshell_core::supervisor::{Message, texts};

use super::sim::{Sim, text_reply, thinking_only};

fn retries_after(tail: Vec<Message>) -> usize {
    let mut sim = Sim::configured(|config| config.global_cooldown_seconds = 0);
    sim.settle_with(tail);
    sim.sent_of(texts::CT_RETRY).len()
}

#[test]
fn sar_s1_an_empty_reply_last_is_retried_even_after_a_text_reply() {
    let tail = vec![Message::user("go"), text_reply("half done"), thinking_only()];
    assert_eq!(retries_after(tail), 1);
}

#[test]
fn sar_s1_a_text_reply_last_is_not_retried_even_after_an_empty_one() {
    let tail = vec![Message::user("go"), thinking_only(), text_reply("done")];
    assert_eq!(retries_after(tail), 0);
}

#[test]
fn sar_s1_a_custom_message_last_is_looked_through() {
    let poke = Message::custom("poke", "[Poke] carry on");
    let empty_then_poke = vec![Message::user("go"), thinking_only(), poke.clone()];
    assert_eq!(retries_after(empty_then_poke), 1, "the empty reply decides");
    let text_then_poke = vec![Message::user("go"), text_reply("done"), poke];
    assert_eq!(retries_after(text_then_poke), 0, "the text reply decides");
}
