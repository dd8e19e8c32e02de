fn main() {
    println!("pokeshell");
}
