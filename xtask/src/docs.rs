//! `cargo xtask docs`: the CLI's man page and shell completions, generated
//! from its clap definition so they can never drift from the real options.

use crate::paths::target_dir;
use crate::run::step;
use anyhow::{Context, Result};
use clap_complete::Shell;
use std::fs;

pub fn generate() -> Result<()> {
    let out = target_dir().join("dist");
    let man_dir = out.join("man/man1");
    let completion_dir = out.join("completions");
    fs::create_dir_all(&man_dir)?;
    fs::create_dir_all(&completion_dir)?;

    let command = pidmap_cli::command();
    let name = command.get_name().to_string();
    let man_path = man_dir.join(format!("{name}.1"));
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone()).render(&mut page)?;
    fs::write(&man_path, page).with_context(|| format!("cannot write {}", man_path.display()))?;
    step(format!("wrote {}", man_path.display()));

    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        let path = clap_complete::generate_to(shell, &mut command.clone(), &name, &completion_dir)?;
        step(format!("wrote {}", path.display()));
    }
    Ok(())
}
