//! Shared pieces of the property tests over outside input (fuzz_*.rs).
#![allow(dead_code)] // each test binary uses a different part

use proptest::prelude::*;
use serde_json::Value;

pub fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        // A failure prints its minimal input; nothing is written next to the sources.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Splits `bytes` at the given cut points (as reads of any size would).
pub fn chunks(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    at.sort_unstable();
    let mut out = Vec::new();
    let mut start = 0;
    for c in at.into_iter().chain([bytes.len()]) {
        out.push(bytes[start..c.max(start)].to_vec());
        start = c.max(start);
    }
    out
}

/// Any JSON value, numbers of every kind included, nested up to `depth`.
pub fn json_value(depth: u32) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(depth, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((".{0,8}", inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}
