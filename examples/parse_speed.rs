use std::time::Instant;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let data = std::fs::read(&path).unwrap();
    let mut m = pokeshell::term::screen::Mirror::new(39, 88, Default::default());
    let t = Instant::now();
    for chunk in data.chunks(65536) {
        m.process(chunk);
    }
    let e = t.elapsed();
    println!(
        "{} MB in {:.3}s = {:.1} MB/s",
        data.len() / 1048576,
        e.as_secs_f64(),
        data.len() as f64 / 1048576.0 / e.as_secs_f64()
    );
}
