//! Reading a settings file safely: only a regular file (after following symlinks) and only up to
//! [`MAX_SETTINGS_BYTES`]. A named pipe, a device or a socket given as a settings file would block
//! the read forever or never end (`/dev/zero`); such a file is refused with a reason instead.

use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The largest settings file pokeshell reads; pi's own files are a few kilobytes.
pub const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;

/// The file's text, `None` when it does not exist, or an error saying why it was not read.
pub fn read_settings_text(path: &Path) -> io::Result<Option<String>> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    check_kind(&meta)?;
    // Non-blocking, so a file swapped for a pipe between the check and the open cannot hang us.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    // The check again on what was actually opened.
    check_kind(&file.metadata()?)?;
    read_bounded(file).map(Some)
}

fn check_kind(meta: &std::fs::Metadata) -> io::Result<()> {
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok(());
    }
    let what = if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a named pipe"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "something other than a file"
    };
    Err(io::Error::other(format!("it is {what}, not a regular file")))
}

fn read_bounded(file: File) -> io::Result<String> {
    let mut bytes = Vec::new();
    file.take(MAX_SETTINGS_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SETTINGS_BYTES {
        return Err(io::Error::other(format!(
            "it is larger than {} KiB, more than any settings file needs",
            MAX_SETTINGS_BYTES / 1024
        )));
    }
    String::from_utf8(bytes).map_err(|_| io::Error::new(ErrorKind::InvalidData, "it is not UTF-8 text"))
}
