//! git, run by pokeshell with a deadline and a bound on its output: a worktree per agent.

pub mod worktree;
