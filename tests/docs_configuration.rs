//! docs/configuration.md stays true to the schema: every key's row, as generated here, is in it.

use pokeshell_core::config::{Block, KEYS, KeySpec};

fn files(block: Block) -> &'static str {
    match block {
        Block::Poke => "settings.json (global, project); legacy `~/.pi/settings.json`",
        Block::Recovery => "settings.json (global, project); `stalled-agent-recovery.json` (agent dir)",
        Block::Handoff => "settings.json (global, project); `auto-handoff.json` (agent dir, project)",
        Block::Pokeshell => "settings.json (global, project)",
    }
}

fn row(spec: &KeySpec) -> String {
    let files = if spec.global_only() {
        "settings.json (global only)"
    } else {
        files(spec.block)
    };
    format!(
        "| `{}` | {} | `{}` | {} | {} | {} |",
        spec.full_name(),
        spec.type_name(),
        spec.default_value().to_json(),
        spec.range_text(),
        files,
        spec.description.split_whitespace().collect::<Vec<_>>().join(" "),
    )
}

#[test]
fn docs_list_every_key_with_type_default_range_and_files() {
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/configuration.md")).unwrap();
    for spec in &KEYS {
        let row = row(spec);
        assert!(
            docs.contains(&row),
            "docs/configuration.md lacks or misstates:\n{row}"
        );
    }
}
