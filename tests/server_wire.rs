//! The server's socket directory against the real file system and real sockets: what `bind` creates
//! and removes, one server at a time, stale sockets; the handshake in `handshake`.

#[path = "support/foreign_peer.rs"]
mod foreign_peer;
#[path = "server_wire/handshake.rs"]
mod handshake;

use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::UnixListener as StdUnixListener;
use std::path::PathBuf;

use pokeshell::ipc::socket::{Listening, connect_in, read_token_in, server_pid_in};

fn mode(path: &std::path::Path) -> u32 {
    fs::symlink_metadata(path).unwrap().mode() & 0o777
}

fn our_pid() -> i32 {
    i32::try_from(std::process::id()).unwrap()
}

/// A server directory that does not exist yet, in a fresh temp dir.
fn fresh_dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("server");
    (tmp, dir)
}

#[tokio::test]
async fn bind_creates_a_private_dir_with_socket_token_and_pid_and_drop_removes_them() {
    let (_tmp, dir) = fresh_dir();
    let listening = Listening::bind_in(&dir).unwrap();
    assert_eq!(mode(&dir), 0o700);
    let token_file = dir.join("token");
    assert_eq!(mode(&token_file), 0o600);
    assert_eq!(fs::read_to_string(&token_file).unwrap(), listening.token);
    assert_eq!(listening.token.len(), 64);
    assert!(listening.token.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(read_token_in(&dir).unwrap(), listening.token);
    assert_eq!(server_pid_in(&dir), Some(our_pid()));
    assert!(
        fs::symlink_metadata(dir.join("socket"))
            .unwrap()
            .file_type()
            .is_socket()
    );
    assert_eq!(listening.socket_path(), dir.join("socket"));
    let names: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 3, "nothing but socket, token and pid: {names:?}");

    drop(listening);
    for name in ["socket", "token", "pid"] {
        assert!(!dir.join(name).exists(), "{name} left behind");
    }
    let err = connect_in(&dir).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    assert_eq!(err.to_string(), "no pokeshell server runs");
}

#[tokio::test]
async fn a_second_bind_while_the_first_listens_fails_and_leaves_the_first_alone() {
    let (_tmp, dir) = fresh_dir();
    let first = Listening::bind_in(&dir).unwrap();
    let err = Listening::bind_in(&dir).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
    assert_eq!(
        err.to_string(),
        format!("a pokeshell server already runs (pid {})", our_pid())
    );
    assert_eq!(
        read_token_in(&dir).unwrap(),
        first.token,
        "the token was not replaced"
    );
    let _client = connect_in(&dir).unwrap();
    let (_accepted, _) = first.listener.accept().await.unwrap();
}

#[tokio::test]
async fn a_stale_socket_is_replaced() {
    let (_tmp, dir) = fresh_dir();
    fs::create_dir(&dir).unwrap();
    // A server that died without cleaning up: its socket file stays, nobody listens.
    drop(StdUnixListener::bind(dir.join("socket")).unwrap());
    fs::write(dir.join("pid"), "999999999").unwrap();
    fs::write(dir.join("token"), "old").unwrap();
    let err = connect_in(&dir).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound, "{err}");

    let listening = Listening::bind_in(&dir).unwrap();
    assert_ne!(listening.token, "old");
    assert_eq!(server_pid_in(&dir), Some(our_pid()));
    let _client = connect_in(&dir).unwrap();
    listening.listener.accept().await.unwrap();
}

#[tokio::test]
async fn drop_leaves_the_files_of_a_server_that_took_the_directory_over() {
    let (_tmp, dir) = fresh_dir();
    let listening = Listening::bind_in(&dir).unwrap();
    fs::write(dir.join("pid"), "1").unwrap();
    drop(listening);
    for name in ["socket", "token", "pid"] {
        assert!(dir.join(name).exists(), "{name} was removed");
    }
}

#[tokio::test]
async fn a_socket_path_too_long_for_sun_path_is_refused_with_advice() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("d".repeat(120));
    let err = Listening::bind_in(&dir).unwrap_err();
    assert!(err.to_string().contains("too long"), "{err}");
    assert!(err.to_string().contains("XDG_RUNTIME_DIR"), "{err}");
    assert!(connect_in(&dir).unwrap_err().to_string().contains("too long"));
}

#[test]
fn bind_outside_a_tokio_runtime_is_an_error_not_a_panic() {
    let (_tmp, dir) = fresh_dir();
    let err = Listening::bind_in(&dir).unwrap_err();
    assert!(err.to_string().contains("tokio runtime"), "{err}");
    assert!(!dir.exists(), "nothing was created");
}

#[test]
fn connect_refuses_a_server_dir_that_is_a_symlink() {
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("real");
    fs::create_dir(&real).unwrap();
    let link = tmp.path().join("server");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let err = connect_in(&link).unwrap_err();
    assert!(err.to_string().contains("not a plain directory"), "{err}");
}
