//! git, run by pokeshell with a deadline and a bound on its output: a worktree per agent, and what
//! each agent changed.

pub mod changes;
pub mod worktree;
