//! Runs the scripted model on a fixed port for manual experiments:
//! `cargo run --example scripted_model -- 18080`. Prompts can carry directives (docs/scenario-format.md).
fn main() {
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(18080);
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let server = pokeshell::demo::model::ModelServer::start_on(addr).expect("start the scripted model");
    println!("scripted model at {}", server.base_url());
    loop {
        std::thread::park();
    }
}
