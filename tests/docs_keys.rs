//! docs/keys.md stays true to the command list: its table of the keys after the prefix holds exactly
//! the commands, in their order, each row as generated here, then the row for every other key.

use pokeshell_core::ui::commands::{COMMANDS, Command, CommandKey, Needs};

const DOCS: &str = include_str!("../docs/keys.md");

/// The row for keys no command is on; it is no command, so the docs' wording is kept here.
const OTHER_KEYS: &str = "| anything else | Nothing is sent; the footer says which key opens the help. | — |";

fn key(command: &Command) -> String {
    match command.key {
        CommandKey::Char(text) => format!("`{text}`"),
        CommandKey::Esc => "`Esc`".to_string(),
        CommandKey::Prefix => "the prefix again".to_string(),
        CommandKey::Digit => "`1` … `9`".to_string(),
    }
}

fn needs(needs: Needs) -> &'static str {
    match needs {
        Needs::Nothing => "—",
        Needs::Bridge => "pi's bridge connected",
    }
}

fn row(command: &Command) -> String {
    format!(
        "| {} | {} | {} |",
        key(command),
        command
            .description
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
        needs(command.needs),
    )
}

#[test]
fn docs_list_every_command_in_order_with_its_key_description_and_needs() {
    let table: Vec<&str> = DOCS
        .lines()
        .skip_while(|l| !l.starts_with("| After the prefix |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    let mut expected: Vec<String> = COMMANDS.iter().map(row).collect();
    expected.push(OTHER_KEYS.to_string());
    assert_eq!(
        table, expected,
        "docs/keys.md's table of keys after the prefix differs from the command list"
    );
}
