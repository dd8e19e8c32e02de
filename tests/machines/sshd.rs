//! A real `sshd` on 127.0.0.1 at a free port, with a host key and client keys made here, an
//! authorized_keys file and an ssh client config of the test's own: nothing of the system's or the
//! user's ssh setup is read or touched (except `/run/sshd`, the empty directory sshd insists on
//! when it runs as root). Each client key reaches a "machine": a `command=` in authorized_keys
//! runs the machine's script with `$SSH_ORIGINAL_COMMAND`.
#![allow(dead_code)]

use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Sshd {
    dir: tempfile::TempDir,
    pub port: u16,
    child: Option<Child>,
    /// Extra `Host` blocks for the client config (machines that are not this sshd).
    hosts: Vec<String>,
    keys: Vec<String>,
}

fn find(program: &str) -> PathBuf {
    for dir in [
        "/usr/sbin",
        "/usr/bin",
        "/sbin",
        "/bin",
        "/usr/local/sbin",
        "/usr/local/bin",
    ] {
        let p = Path::new(dir).join(program);
        if p.is_file() {
            return p;
        }
    }
    panic!("{program} is missing: install openssh-server and openssh-client (.ci/run does)");
}

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("run a setup command");
    assert!(out.status.success(), "{cmd:?} failed: {out:?}");
}

fn keygen(path: &Path) {
    run(Command::new(find("ssh-keygen"))
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "pokeshell-test", "-f"])
        .arg(path));
}

/// A port nothing listens on (bound, then let go).
pub fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a port");
    l.local_addr().expect("its address").port()
}

fn user() -> String {
    let out = Command::new("id").arg("-un").output().expect("id -un");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

impl Sshd {
    /// Starts sshd; machines are added with [`Sshd::machine`] before the first connection (the
    /// authorized_keys file is read at each login).
    pub fn start() -> Sshd {
        let dir = tempfile::Builder::new()
            .prefix("pokeshell-sshd-")
            .tempdir()
            .expect("temp dir");
        let d = dir.path();
        keygen(&d.join("host_key"));
        std::fs::write(d.join("authorized_keys"), "").expect("authorized_keys");
        let port = closed_port();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {hk}\nPidFile {pid}\n\
             AuthorizedKeysFile {ak}\nStrictModes no\nPermitRootLogin prohibit-password\n\
             PubkeyAuthentication yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
             UsePAM no\nAllowTcpForwarding no\nX11Forwarding no\nPermitTTY yes\nPrintMotd no\n\
             LogLevel ERROR\n",
            hk = d.join("host_key").display(),
            pid = d.join("sshd.pid").display(),
            ak = d.join("authorized_keys").display(),
        );
        std::fs::write(d.join("sshd_config"), config).expect("sshd_config");
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            let _ = std::fs::create_dir_all("/run/sshd");
        }
        let log = std::fs::File::create(d.join("sshd.log")).expect("sshd log");
        let child = Command::new(find("sshd"))
            .args(["-D", "-e", "-f"])
            .arg(d.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start sshd");
        let host_pub = std::fs::read_to_string(d.join("host_key.pub")).expect("host key");
        let mut words = host_pub.split_whitespace();
        let known = format!(
            "pokeshell-test-host {} {}\n",
            words.next().unwrap_or(""),
            words.next().unwrap_or("")
        );
        std::fs::write(d.join("known_hosts"), known).expect("known_hosts");
        let mut sshd = Sshd {
            dir,
            port,
            child: Some(child),
            hosts: Vec::new(),
            keys: Vec::new(),
        };
        sshd.wait_listening();
        sshd
    }

    fn wait_listening(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                panic!("sshd exited ({status}): {}", self.log());
            }
            assert!(Instant::now() < deadline, "sshd never listened: {}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A machine named `alias`: a client key whose logins run `script` (sh) with the command ssh
    /// was asked to run in `$SSH_ORIGINAL_COMMAND`.
    pub fn machine(&mut self, alias: &str, script: &str) {
        let d = self.dir.path();
        let key = d.join(format!("key_{alias}"));
        keygen(&key);
        let script_path = d.join(format!("machine_{alias}.sh"));
        std::fs::write(&script_path, format!("#!/bin/sh\n{script}\n")).expect("machine script");
        std::fs::set_permissions(&script_path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let public = std::fs::read_to_string(key.with_extension("pub")).expect("public key");
        let line = format!(
            "command=\"{}\",no-port-forwarding,no-agent-forwarding,no-X11-forwarding {}",
            script_path.display(),
            public.trim()
        );
        self.keys.push(line);
        std::fs::write(d.join("authorized_keys"), self.keys.join("\n") + "\n").expect("authorized_keys");
        self.hosts.push(format!(
            "Host {alias}\n  HostName 127.0.0.1\n  Port {}\n  IdentityFile {}\n",
            self.port,
            key.display()
        ));
    }

    /// A machine whose key sshd does not know: authentication fails.
    pub fn stranger(&mut self, alias: &str) {
        let key = self.dir.path().join(format!("key_{alias}"));
        keygen(&key);
        self.hosts.push(format!(
            "Host {alias}\n  HostName 127.0.0.1\n  Port {}\n  IdentityFile {}\n",
            self.port,
            key.display()
        ));
    }

    /// A machine at another port of 127.0.0.1 (nothing there, or a listener of the test's).
    pub fn elsewhere(&mut self, alias: &str, port: u16) {
        self.hosts
            .push(format!("Host {alias}\n  HostName 127.0.0.1\n  Port {port}\n"));
    }

    /// Writes the client config; returns `$POKESHELL_SSH` for it.
    pub fn ssh_command(&self) -> String {
        let d = self.dir.path();
        let mut config = self.hosts.join("\n");
        config.push_str(&format!(
            "\nHost *\n  User {}\n  HostKeyAlias pokeshell-test-host\n  UserKnownHostsFile {}\n  \
             GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  IdentitiesOnly yes\n  \
             IdentityAgent none\n  ControlMaster no\n  LogLevel ERROR\n",
            user(),
            d.join("known_hosts").display()
        ));
        std::fs::write(d.join("ssh_config"), config).expect("ssh_config");
        format!("{} -F {}", find("ssh").display(), d.join("ssh_config").display())
    }

    /// Ends sshd (a later connection is refused).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A listener that accepts and never says a word: an ssh client waits for a banner that never
/// comes. Held open while the value lives.
pub struct Silent {
    pub port: u16,
    _listener: TcpListener,
    _held: std::sync::Arc<std::sync::Mutex<Vec<TcpStream>>>,
}

impl Silent {
    pub fn start() -> Silent {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let held = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (l, h) = (listener.try_clone().expect("clone"), held.clone());
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                if let Ok(mut v) = h.lock() {
                    v.push(s);
                }
            }
        });
        Silent {
            port,
            _listener: listener,
            _held: held,
        }
    }
}
