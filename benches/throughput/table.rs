//! The bench's one table: a row per measure, a column per way of running, ratios against the raw PTY.

pub struct Row {
    pub what: String,
    pub unit: &'static str,
    pub raw: Option<f64>,
    pub poke: Option<f64>,
    pub tmux: Option<f64>,
}

fn cell(v: Option<f64>, raw: Option<f64>) -> String {
    match (v, raw) {
        (Some(v), Some(r)) if r > 0.0 && v.is_finite() => format!("{v:>9.2} ({:>5.2}x)", v / r),
        (Some(v), _) if v.is_finite() => format!("{v:>9.2}         "),
        _ => format!("{:>9}         ", "-"),
    }
}

pub fn print(rows: &[Row]) {
    println!();
    println!(
        "{:<40} {:<5} {:>18} {:>18} {:>18}",
        "measure", "unit", "raw PTY", "pokeshell (vs raw)", "tmux (vs raw)"
    );
    for r in rows {
        let raw = match r.raw {
            Some(v) if v.is_finite() => format!("{v:>9.2}         "),
            _ => format!("{:>9}         ", "-"),
        };
        println!(
            "{:<40} {:<5} {:>18} {:>18} {:>18}",
            r.what,
            r.unit,
            raw,
            cell(r.poke, r.raw),
            cell(r.tmux, r.raw)
        );
    }
}
