//! The server's limit on open files. Every session holds a few (its PTY, its bridge's socket, pipes)
//! and every client a socket, and the web view its connections: the usual soft limit of 1,024 is a
//! default for interactive shells, not a bound the system means for a server. At its start the
//! server raises its soft limit to the hard one, which needs no privilege, and logs it.

/// Raises the soft limit on open files to the hard one; says what it did, or why not.
pub fn raise() -> String {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct given, nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return format!(
            "open files: cannot read the limit ({})",
            std::io::Error::last_os_error()
        );
    }
    if lim.rlim_cur >= lim.rlim_max {
        return format!("open files: at most {}", lim.rlim_cur);
    }
    let before = lim.rlim_cur;
    let raised = libc::rlimit {
        rlim_cur: lim.rlim_max,
        rlim_max: lim.rlim_max,
    };
    // SAFETY: setrlimit reads the struct given; raising the soft limit up to the hard one is
    // always allowed.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
        return format!(
            "open files: at most {before}; raising it to {} failed ({})",
            lim.rlim_max,
            std::io::Error::last_os_error()
        );
    }
    format!("open files: at most {} (raised from {before})", lim.rlim_max)
}
