//! Runs the scripted model on a fixed port for manual experiments:
//! `cargo run --example scripted_model -- 18080 [SCENARIO.json]`. Prompts can carry directives
//! (docs/scenario-format.md); a scenario file queues its steps first.
fn main() {
    let mut args = std::env::args().skip(1);
    let port: u16 = args.next().and_then(|p| p.parse().ok()).unwrap_or(18080);
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let server = pokeshell::demo::model::ModelServer::start_on(addr).expect("start the scripted model");
    if let Some(file) = args.next() {
        let scenario = pokeshell::demo::model::Scenario::from_file(std::path::Path::new(&file))
            .unwrap_or_else(|e| panic!("{e:#}"));
        server.load(scenario);
    }
    println!("scripted model at {}", server.base_url());
    loop {
        std::thread::park();
    }
}
