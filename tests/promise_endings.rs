//! PROM-D1 measured on the labelled set of final messages in `tests/data/promise_endings.jsonl`
//! (docs/supervision.md says where the items come from). Prints the figures; asserts the floors the
//! docs state, so a change to the cues that loses precision or recall fails here.

use pokeshell_core::supervisor::promise::{RunEnding, Verdict, judge};
use serde::Deserialize;

#[derive(Deserialize)]
struct Item {
    text: String,
    label: String,
    tools: bool,
    source: String,
    how: String,
}

fn items() -> Vec<Item> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/promise_endings.jsonl");
    let data = std::fs::read_to_string(path).unwrap();
    data.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("bad line {line}: {e}")))
        .collect()
}

#[derive(Default, Debug)]
struct Counts {
    tp: usize,
    fp: usize,
    fn_: usize,
    tn: usize,
}

impl Counts {
    fn add(&mut self, promise: bool, flagged: bool) {
        match (promise, flagged) {
            (true, true) => self.tp += 1,
            (false, true) => self.fp += 1,
            (true, false) => self.fn_ += 1,
            (false, false) => self.tn += 1,
        }
    }
    fn precision(&self) -> f64 {
        self.tp as f64 / (self.tp + self.fp).max(1) as f64
    }
    fn recall(&self) -> f64 {
        self.tp as f64 / (self.tp + self.fn_).max(1) as f64
    }
}

#[test]
fn the_labelled_set_is_large_and_balanced_enough_to_mean_something() {
    let items = items();
    let promises = items.iter().filter(|i| i.label == "promise").count();
    let healthy = items.iter().filter(|i| i.label == "healthy").count();
    assert_eq!(
        promises + healthy,
        items.len(),
        "every label is promise or healthy"
    );
    assert!(items.len() >= 150, "{} items", items.len());
    assert!(healthy >= promises, "{healthy} healthy vs {promises} promises");
    assert!(items.iter().all(|i| !i.source.is_empty() && !i.how.is_empty()));
}

#[test]
fn precision_and_recall_on_the_labelled_set() {
    let items = items();
    // What pokes: the rule's decision (certain, or unsure after a run with tool calls).
    let mut poke = Counts::default();
    // The certain verdicts alone.
    let mut certain = Counts::default();
    let mut misses = Vec::new();
    // Per slice: the paraphrased reports, the endings written in the reported shapes, the adversarial ones.
    let mut slices: std::collections::BTreeMap<&str, Counts> = Default::default();
    for item in &items {
        let verdict = judge(RunEnding {
            text: &item.text,
            had_tool_calls: item.tools,
            ended_badly: false,
        });
        let promise = item.label == "promise";
        let flagged = verdict != Verdict::No;
        poke.add(promise, flagged);
        certain.add(promise, matches!(verdict, Verdict::Certain { .. }));
        slices.entry(item.how.as_str()).or_default().add(promise, flagged);
        if promise != flagged {
            misses.push(format!(
                "  {} as {}: {:?}",
                item.label,
                verdict.label(),
                item.text
            ));
        }
    }
    println!(
        "promise endings: {} items; poke decision: precision {:.3}, recall {:.3} ({poke:?}); certain only: precision {:.3}, recall {:.3}",
        items.len(),
        poke.precision(),
        poke.recall(),
        certain.precision(),
        certain.recall(),
    );
    for (slice, counts) in &slices {
        println!(
            "  slice {slice}: precision {:.3}, recall {:.3} ({counts:?})",
            counts.precision(),
            counts.recall()
        );
    }
    println!("misclassified:\n{}", misses.join("\n"));
    // The floors docs/supervision.md states: a poke of a healthy run costs the user more than a missed
    // promise (which they can still poke by hand), so precision's floor is the higher one.
    assert!(poke.precision() >= 0.95, "precision {:.3}", poke.precision());
    assert!(poke.recall() >= 0.85, "recall {:.3}", poke.recall());
    assert!(
        certain.precision() >= 0.95,
        "certain precision {:.3}",
        certain.precision()
    );
}

#[test]
fn the_healthy_twins_in_the_set_are_never_poked_when_they_had_no_tool_calls() {
    for item in items().iter().filter(|i| i.label == "healthy" && !i.tools) {
        let verdict = judge(RunEnding {
            text: &item.text,
            had_tool_calls: false,
            ended_badly: false,
        });
        assert_eq!(verdict, Verdict::No, "{:?}", item.text);
    }
}
