//! docs/supervision.md defines every rule ID the repository cites: in comments, strings, test names,
//! the demo's scenario and the docs. A rule defined only in someone's memory cannot be followed.
//!
//! An ID is "defined" when it stands in backticks in the first cell of a table row of
//! docs/supervision.md. What counts as a citation is described at [`ids_in_text`] and
//! [`ids_in_test_name`].

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Families whose IDs read `FAMILY-<letter><number>` (or `FAMILY-#<number>` for a scenario).
const FAMILIES: [&str; 9] = [
    "POKE", "SAR", "WAK", "HO", "ARB", "RST", "STALL", "LIMIT", "GUARD",
];
/// One-letter IDs without a family: the original's bugs, the newer upstream rules, the conflicts.
const BARE: [char; 3] = ['B', 'N', 'X'];
/// Test-name prefixes and the family their lower-case IDs belong to (`fix_b5` is B5).
const TEST_FAMILIES: [(&str, &str); 10] = [
    ("rst", "RST"),
    ("guard", "GUARD"),
    ("poke", "POKE"),
    ("stall", "STALL"),
    ("limit", "LIMIT"),
    ("sar", "SAR"),
    ("wak", "WAK"),
    ("ho", "HO"),
    ("arb", "ARB"),
    ("fix", "FIX"),
];
/// Citations that are deliberately not rules: (ID, file).
const NOT_RULES: [(&str, &str); 2] = [
    // The tour parser's test checks that an unknown rule is refused.
    ("POKE-X9", "src/demo/tour/tests.rs"),
    ("POKE-X9", "tests/docs_rules.rs"),
];
const SCANNED: [&str; 5] = ["src", "tests", "assets", "docs", "README.md"];
const TEXT_EXTENSIONS: [&str; 6] = ["rs", "md", "ts", "json", "snap", "toml"];

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn digits(chars: &[char], from: usize) -> (usize, Option<u32>) {
    let end = (from..chars.len())
        .find(|&i| !chars[i].is_ascii_digit())
        .unwrap_or(chars.len());
    let number = chars[from..end].iter().collect::<String>().parse().ok();
    (end, number)
}

/// After an ID ending at `at` with `letter` + `first`: `..` or `–`, optionally the family again,
/// optionally the same letter, a number. Returns the range's last number and where it ends.
fn range_end(chars: &[char], at: usize, family: &str, letter: Option<char>) -> Option<(u32, usize)> {
    let mut i = at;
    if chars.get(i) == Some(&'.') && chars.get(i + 1) == Some(&'.') {
        i += 2;
    } else if chars.get(i) == Some(&'–') {
        i += 1;
    } else {
        return None;
    }
    let again: Vec<char> = format!("{family}-").chars().collect();
    if !family.is_empty() && chars[i..].starts_with(&again) {
        i += again.len();
    }
    if letter.is_some_and(|l| chars.get(i) == Some(&l)) {
        i += 1;
    }
    let (end, last) = digits(chars, i);
    Some((last?, end))
}

fn push_range(out: &mut Vec<String>, prefix: &str, first: u32, last: Option<u32>) {
    for n in first..=last.unwrap_or(first).max(first) {
        out.push(format!("{prefix}{n}"));
    }
}

/// IDs cited in free text: `POKE-W4`, `SAR-#30`, `ARB-ABORT`, `ARB-2`, bare `B5`, `N3`, `X6`, and
/// ranges such as `SAR-S5..S7`, `HO-G4..G7`, `ARB-1..ARB-7`, `B1–B8`. A token must stand alone: no
/// letter, digit or `_` on either side, and no `-` before a bare one (`POKE-N3` is not `N3`), so
/// `DA1`, `SS3`, `VT220` or `0xB1` are no IDs.
fn ids_in_text(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0 || !(is_word(chars[i - 1]) || chars[i - 1] == '-');
        match starts_word.then(|| id_at(&chars, i)).flatten() {
            Some((ids, end)) => {
                out.extend(ids);
                i = end;
            }
            None => i += 1,
        }
    }
    out
}

/// The IDs starting at `i` and where they end, when a whole token starts there.
fn id_at(chars: &[char], i: usize) -> Option<(Vec<String>, usize)> {
    let mut ids = Vec::new();
    let end = if let Some(family) = FAMILIES.iter().find(|f| {
        let f: Vec<char> = f.chars().collect();
        chars[i..].starts_with(&f) && chars.get(i + f.len()) == Some(&'-')
    }) {
        let j = i + family.len() + 1;
        let c = *chars.get(j)?;
        if c == '#' {
            let (end, n) = digits(chars, j + 1);
            ids.push(format!("{family}-#{}", n?));
            end
        } else if c.is_ascii_digit() {
            let (end, n) = digits(chars, j);
            let range = range_end(chars, end, family, None);
            push_range(&mut ids, &format!("{family}-"), n?, range.map(|r| r.0));
            range.map_or(end, |r| r.1)
        } else if c.is_ascii_uppercase() && chars.get(j + 1).is_some_and(char::is_ascii_digit) {
            let (end, n) = digits(chars, j + 1);
            let range = range_end(chars, end, family, Some(c));
            push_range(&mut ids, &format!("{family}-{c}"), n?, range.map(|r| r.0));
            range.map_or(end, |r| r.1)
        } else if *family == "ARB" && c.is_ascii_uppercase() {
            let end = (j..chars.len())
                .find(|&k| !chars[k].is_ascii_uppercase())
                .unwrap_or(chars.len());
            ids.push(chars[i..end].iter().collect());
            end
        } else {
            return None;
        }
    } else if BARE.contains(&chars[i]) && chars.get(i + 1).is_some_and(char::is_ascii_digit) {
        let (end, n) = digits(chars, i + 1);
        let range = range_end(chars, end, "", Some(chars[i]));
        push_range(&mut ids, &chars[i].to_string(), n?, range.map(|r| r.0));
        range.map_or(end, |r| r.1)
    } else {
        return None;
    };
    let ends_word = chars.get(end).is_none_or(|&c| !is_word(c));
    ends_word.then_some((ids, end))
}

/// IDs cited by a test name: after the family prefix, a run of numbers is a scenario (its last
/// number, so `ho_4_5_01` is HO-#1), `s<n>` in a `poke_` name is POKE-#n, and a letter with a number
/// is a rule of the family (`b`, `n`, `x` are the bare IDs). Later plain numbers are assertion
/// numbers of a scenario and cite nothing new.
fn ids_in_test_name(name: &str) -> Vec<String> {
    let mut parts = name.split('_');
    let Some(prefix) = parts.next() else {
        return Vec::new();
    };
    let Some(&(_, family)) = TEST_FAMILIES.iter().find(|(p, _)| *p == prefix) else {
        return Vec::new();
    };
    let parts: Vec<&str> = parts.collect();
    let mut out = Vec::new();
    let leading = parts.iter().take_while(|p| is_number(p)).count();
    if let Some(last) = leading.checked_sub(1).and_then(|k| parts[k].parse::<u32>().ok()) {
        out.push(format!("{family}-#{last}"));
    }
    for part in &parts[leading..] {
        let mut chars = part.chars();
        let (Some(letter), rest) = (chars.next(), chars.as_str()) else {
            continue;
        };
        if !letter.is_ascii_lowercase() || !is_number(rest) {
            continue;
        }
        let n: u32 = rest.parse().unwrap_or(0);
        let upper = letter.to_ascii_uppercase();
        if BARE.contains(&upper) {
            out.push(format!("{upper}{n}"));
        } else if family == "POKE" && letter == 's' {
            out.push(format!("POKE-#{n}"));
        } else {
            out.push(format!("{family}-{upper}{n}"));
        }
    }
    out
}

fn is_number(part: &str) -> bool {
    !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit())
}

fn test_names(text: &str) -> Vec<&str> {
    text.split("fn ")
        .skip(1)
        .filter_map(|rest| rest.split(|c: char| !is_word(c)).next())
        .filter(|name| !name.is_empty())
        .collect()
}

/// The backticked IDs in the first cell of every table row.
fn defined(doc: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in doc.lines().filter(|l| l.starts_with('|')) {
        let first = line.split('|').nth(1).unwrap_or("");
        out.extend(first.split('`').skip(1).step_by(2).map(str::to_string));
    }
    out
}

fn files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = fs::read_dir(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .map(|entry| entry.expect("a directory entry").path())
            .collect();
        entries.sort();
        for entry in entries {
            if entry
                .file_name()
                .is_some_and(|n| n != "node_modules" && n != "target")
            {
                files(&entry, out);
            }
        }
    } else if path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| TEXT_EXTENSIONS.contains(&e))
    {
        out.push(path.to_path_buf());
    }
}

/// Every citation as (ID, "file:line").
fn citations() -> Vec<(String, String)> {
    let mut paths = Vec::new();
    for top in SCANNED {
        files(&Path::new(ROOT).join(top), &mut paths);
    }
    let mut out = Vec::new();
    for path in paths {
        let rel = path.strip_prefix(ROOT).unwrap_or(&path).display().to_string();
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
        for (n, line) in text.lines().enumerate() {
            let mut ids = ids_in_text(line);
            if rel.ends_with(".rs") {
                ids.extend(test_names(line).into_iter().flat_map(ids_in_test_name));
            }
            for id in ids {
                if !NOT_RULES.contains(&(id.as_str(), rel.as_str())) {
                    out.push((id, format!("{rel}:{}", n + 1)));
                }
            }
        }
    }
    out
}

#[test]
fn every_cited_rule_id_is_defined_in_docs_supervision() {
    let doc = fs::read_to_string(Path::new(ROOT).join("docs/supervision.md")).expect("the doc");
    let defined = defined(&doc);
    let cited = citations();
    assert!(cited.len() > 100, "the scan found only {} citations", cited.len());
    let missing: Vec<String> = cited
        .iter()
        .filter(|(id, _)| !defined.contains(id))
        .map(|(id, at)| format!("{id} at {at}"))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/supervision.md defines no such rule:\n{}",
        missing.join("\n")
    );
}

#[test]
fn text_scanner_finds_ids_and_ranges_and_nothing_else() {
    let ids = ids_in_text(
        "POKE-W4, SAR-S5..S7 (B1–B3) N2 X6. ARB-ABORT ARB-1..ARB-3 HO-#10 POKE-N3 `SAR-L4` WAK-T1..T2",
    );
    let expected = [
        "POKE-W4",
        "SAR-S5",
        "SAR-S6",
        "SAR-S7",
        "B1",
        "B2",
        "B3",
        "N2",
        "X6",
        "ARB-ABORT",
        "ARB-1",
        "ARB-2",
        "ARB-3",
        "HO-#10",
        "POKE-N3",
        "SAR-L4",
        "WAK-T1",
        "WAK-T2",
    ];
    assert_eq!(ids, expected);
    let none = ids_in_text("DA1 DA2 SS3 C0 VT220 UTF-8 SIGUSR1 0xB1 B2B POKE-C POKE-X SAR-s1 N");
    assert!(none.is_empty(), "{none:?}");
}

#[test]
fn test_name_scanner_reads_families_scenarios_and_rules() {
    let read = |name| ids_in_test_name(name);
    assert_eq!(read("poke_s13_n2_w4_retry"), ["POKE-#13", "N2", "POKE-W4"]);
    assert_eq!(read("poke_s12_42_orphan_loop"), ["POKE-#12"]);
    assert_eq!(read("sar_30_s8_thinking_only"), ["SAR-#30", "SAR-S8"]);
    assert_eq!(read("ho_4_5_01_t1_below"), ["HO-#1", "HO-T1"]);
    assert_eq!(read("fix_b7_poke_waits"), ["B7"]);
    assert_eq!(read("arb_x3_no_handoff"), ["X3"]);
    assert!(read("poke_cooldown_ms").is_empty());
    assert!(read("take_u64").is_empty());
    assert_eq!(
        test_names("fn a_b() {} pub fn poke_m3_x<T>()"),
        ["a_b", "poke_m3_x"]
    );
}

#[test]
fn defined_ids_are_the_backticked_first_cells() {
    let doc = "| `POKE-W4` | text `SAR-S1` |\n| `N3`, `POKE-N3` | x |\nplain `B8`\n| ID | x |";
    let ids: Vec<String> = defined(doc).into_iter().collect();
    assert_eq!(ids, ["N3", "POKE-N3", "POKE-W4"]);
}

/// The repository explains itself: no doc or comment points at material outside it.
#[test]
fn nothing_points_outside_the_repository() {
    // Built from pieces so that this file does not match itself.
    let outside = [
        format!("../{}/", "shared"),
        format!("spec {}", '§'),
        format!("{}-integration.md", "pi"),
        format!("seeds-{}.md", "behaviour"),
        format!("{}/design.md", "shared"),
    ];
    let mut paths = Vec::new();
    for top in SCANNED {
        files(&Path::new(ROOT).join(top), &mut paths);
    }
    assert!(paths.len() > 50, "the scan found the repository's files");
    let mut found = Vec::new();
    for path in paths {
        let rel = path.strip_prefix(ROOT).unwrap_or(&path).display().to_string();
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
        for (n, line) in text.lines().enumerate() {
            if outside.iter().any(|o| line.contains(o.as_str())) {
                found.push(format!("{rel}:{}: {line}", n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "references outside the repository:\n{}",
        found.join("\n")
    );
}
