//! `wrt cache`: where compiled modules are cached, how much room they take, and clearing them.

use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use wrt_runtime::{CacheMode, DEFAULT_CACHE_LIMIT};

/// Show or clear the cache of compiled modules
#[derive(Debug, Args)]
pub(crate) struct CacheArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Print the cache directory
    Dir,
    /// Print how many compiled modules the cache holds, their size on disk, and the limit past
    /// which the ones used longest ago are removed
    Size,
    /// Remove every compiled module from the cache
    Clean,
}

impl CacheArgs {
    pub(crate) fn run(self) -> anyhow::Result<ExitCode> {
        let cache = CacheMode::User;
        let dir = cache.dir().context("no cache directory: neither `XDG_CACHE_HOME` nor `HOME` is set")?;
        match self.action {
            Action::Dir => out!("{}", dir.display()),
            Action::Size => {
                let usage = cache.usage().with_context(|| format!("failed to read `{}`", dir.display()))?;
                out!(
                    "{} in {} entries ({}), limit {}",
                    megabytes(usage.bytes),
                    usage.entries,
                    dir.display(),
                    megabytes(DEFAULT_CACHE_LIMIT)
                );
            }
            Action::Clean => {
                let removed = cache.clean().with_context(|| format!("failed to clean `{}`", dir.display()))?;
                out!("removed {} entries, {} ({})", removed.entries, megabytes(removed.bytes), dir.display());
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}
