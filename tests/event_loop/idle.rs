//! The real loop at rest: it sleeps until something is due instead of polling.

use super::world::World;

#[tokio::test(start_paused = true)]
async fn an_idle_loop_sleeps_until_something_is_due() {
    let mut w = World::new();
    w.settle().await;
    let start = w.lp.layer.ticks;
    w.run_secs(600).await;
    let ticks = w.lp.layer.ticks - start;
    // The side pane's uptime changes once a minute; nothing else is due.
    assert!((10..=20).contains(&ticks), "{ticks} ticks in 10 idle minutes");
}
