//! The `<cache>/bin/pi` launcher: a two-line shell script that runs pi's cli.js with a chosen node.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use super::error::InstallError;

/// The script text. Both paths are single-quoted so spaces, `$` or quotes in them stay literal.
pub fn render(node: &Path, cli: &Path) -> Vec<u8> {
    let mut s = b"#!/bin/sh\nexec ".to_vec();
    quote_into(&mut s, node.as_os_str().as_bytes());
    s.push(b' ');
    quote_into(&mut s, cli.as_os_str().as_bytes());
    s.extend_from_slice(b" \"$@\"\n");
    s
}

fn quote_into(out: &mut Vec<u8>, word: &[u8]) {
    out.push(b'\'');
    for &b in word {
        if b == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(b);
        }
    }
    out.push(b'\'');
}

/// The node and cli.js paths of a launcher written by [`render`]; `None` for anything else.
pub fn parse(script: &[u8]) -> Option<(PathBuf, PathBuf)> {
    let rest = script.strip_prefix(b"#!/bin/sh\nexec ")?;
    let (node, rest) = unquote(rest)?;
    let rest = rest.strip_prefix(b" ")?;
    let (cli, rest) = unquote(rest)?;
    if rest != b" \"$@\"\n" {
        return None;
    }
    Some((path_of(node), path_of(cli)))
}

/// Reads one word made of `'...'` pieces joined by `\'`, as [`quote_into`] writes them.
fn unquote(mut s: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    let mut word = Vec::new();
    let mut any = false;
    loop {
        if let Some(r) = s.strip_prefix(b"'") {
            let end = r.iter().position(|&b| b == b'\'')?;
            word.extend_from_slice(&r[..end]);
            s = &r[end + 1..];
            any = true;
        } else if let Some(r) = s.strip_prefix(b"\\'") {
            word.push(b'\'');
            s = r;
        } else {
            break;
        }
    }
    any.then_some((word, s))
}

fn path_of(bytes: Vec<u8>) -> PathBuf {
    PathBuf::from(OsString::from_vec(bytes))
}

/// Writes the launcher at `path` (through a temporary file, so a reader never sees half of it)
/// unless it already holds exactly this text.
pub fn write(path: &Path, text: &[u8]) -> Result<(), InstallError> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.permissions().mode() & 0o111 == 0o111)
    };
    if std::fs::read(path).is_ok_and(|old| old == text) && executable(path) {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(InstallError::io("create the directory", dir))?;
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).map_err(InstallError::io("write", &tmp))?;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755))
        .map_err(InstallError::io("make executable", &tmp))?;
    std::fs::rename(&tmp, path).map_err(InstallError::io("move the launcher into place at", path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_awkward_paths() {
        let cases = [
            ("/usr/bin/node", "/c/pi-1.6.0/node_modules/x/dist/cli.js"),
            ("/home/a b/node", "/tmp/it's here/cli.js"),
            ("/x/$HOME/`id`/\"q\"/node", "/y/'''/cli.js"),
        ];
        for (node, cli) in cases {
            let text = render(Path::new(node), Path::new(cli));
            assert_eq!(
                parse(&text),
                Some((PathBuf::from(node), PathBuf::from(cli))),
                "{}",
                String::from_utf8_lossy(&text)
            );
        }
    }

    #[test]
    fn rejects_scripts_it_did_not_write() {
        for text in [
            &b""[..],
            b"#!/bin/sh\nexec node cli.js \"$@\"\n",
            b"#!/bin/sh\nexec '/n' '/c'\n",
            b"#!/bin/sh\nexec '/n' '/c \"$@\"\n",
            b"#!/bin/bash\nexec '/n' '/c' \"$@\"\n",
        ] {
            assert_eq!(parse(text), None, "{}", String::from_utf8_lossy(text));
        }
    }

    #[test]
    fn the_shell_passes_every_argument_through_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let weird = dir.path().join("it's a $dir");
        std::fs::create_dir(&weird).unwrap();
        // A stand-in "node" that prints its arguments one per line.
        let node = weird.join("node");
        std::fs::write(
            &node,
            "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o755)).unwrap();
        let cli = weird.join("cli.js");
        let launcher = dir.path().join("bin/pi");
        write(&launcher, &render(&node, &cli)).unwrap();
        let out = std::process::Command::new(&launcher)
            .args(["--version", "two words", "$x"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let want = format!("{}\n--version\ntwo words\n$x\n", cli.display());
        assert_eq!(String::from_utf8_lossy(&out.stdout), want);
    }
}
