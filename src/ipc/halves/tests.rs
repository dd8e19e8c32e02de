use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;

use super::*;

/// The events every epoll instance of this process watches descriptor `fd` for (from
/// `/proc/self/fdinfo`): the kernel's own record of what the runtime registered.
fn watched_for(fd: i32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd")
        .expect("/proc/self/fd")
        .flatten()
    {
        let is_epoll =
            std::fs::read_link(entry.path()).is_ok_and(|l| l.to_string_lossy().contains("eventpoll"));
        let info = std::fs::read_to_string(format!(
            "/proc/self/fdinfo/{}",
            entry.file_name().to_string_lossy()
        ));
        let (true, Ok(info)) = (is_epoll, info) else {
            continue;
        };
        for line in info.lines() {
            let mut words = line.split_whitespace();
            if words.next() == Some("tfd:") && words.next() == Some(&fd.to_string()) {
                let events = words.skip_while(|w| *w != "events:").nth(1).unwrap_or("0");
                found.push(u32::from_str_radix(events, 16).expect("a hex event mask"));
            }
        }
    }
    found
}

fn ours() -> (Arc<File>, UnixStream) {
    let (ours, theirs) = UnixStream::pair().expect("socket pair");
    ours.set_nonblocking(true).expect("non-blocking");
    (Arc::new(std::os::fd::OwnedFd::from(ours).into()), theirs)
}

/// Writes all of `bytes`, waiting for room as the connection does.
async fn write_all(wr: &mut WriteHalf, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        match wr.try_write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => wr.room().await.expect("room"),
            Err(e) => panic!("write: {e}"),
        }
    }
}

#[tokio::test(flavor = "current_thread")]
async fn the_reader_is_registered_for_bytes_to_read_and_never_for_room() {
    let (fd, mut theirs) = ours();
    let (mut rd, mut wr) = split(&fd).expect("split");
    // (The runtime's poller may be reached through more than one descriptor: each lists it.)
    let events = watched_for(fd.as_raw_fd());
    assert!(!events.is_empty(), "the socket is registered");
    for mask in events {
        assert!(mask & libc::EPOLLIN as u32 != 0, "it waits for bytes: {mask:x}");
        assert!(
            mask & libc::EPOLLOUT as u32 == 0,
            "it never waits for room, which the other side makes each time it reads: {mask:x}"
        );
    }
    // Both ways still work.
    write_all(&mut wr, b"ping").await;
    let mut got = [0u8; 4];
    theirs.read_exact(&mut got).expect("read");
    assert_eq!(&got, b"ping");
    theirs.write_all(b"pong").expect("written");
    let mut got = [0u8; 4];
    assert_eq!(rd.read(&mut got).await.expect("read"), 4);
    assert_eq!(&got, b"pong");
    drop(theirs);
    assert_eq!(rd.read(&mut got).await.expect("the end"), 0);
}

#[tokio::test(flavor = "current_thread")]
async fn a_write_bigger_than_the_socket_waits_for_room_and_arrives_whole() {
    let (fd, theirs) = ours();
    let (_rd, mut wr) = split(&fd).expect("split");
    let want: Vec<u8> = (0..8u32 << 20).map(|j| (j % 251) as u8).collect();
    let reader = std::thread::spawn(move || {
        let mut theirs = theirs;
        let mut got = Vec::new();
        theirs.read_to_end(&mut got).map(|_| got)
    });
    write_all(&mut wr, &want).await;
    // Once the write went through, the wait for room is let go.
    assert!(wr.room.is_none(), "no registration for room is kept");
    drop((fd, _rd, wr));
    let got = reader.join().expect("reader").expect("read");
    assert!(got == want, "the stream arrived whole and in order");
}
