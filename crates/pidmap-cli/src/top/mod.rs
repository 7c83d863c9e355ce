//! `pidmap top`: interactive on a terminal ([`ui`], htop's and top's
//! keys), else every task, one table per refresh, like `top -b`
//! ([`batch`]).
//!
//! The interactive top's modules, each depending only on those listed
//! before it: [`row`] (a table row), [`columns`] (what a column shows),
//! [`model`] (rows from records, filters, order), [`actions`] (signals,
//! renice), [`state`] (what the screen shows), [`input`] (keys and
//! mouse), [`meters`] (htop's CPU bars), [`view`] (drawing a frame) and
//! [`ui`] (the event loop and the terminal).

mod actions;
mod batch;
mod columns;
mod input;
mod meters;
mod model;
mod row;
mod state;
mod ui;
mod view;

use std::io::Write;

use anyhow::Result;
use pidmap::Query;

use crate::args::{Cli, TopArgs};
use crate::backend::{open_with, proc_root};
use crate::listing::with_kthreads;
use crate::users;

/// `pidmap top`.
pub fn run(cli: &Cli, args: &TopArgs, out: &mut dyn Write) -> Result<bool> {
    let filter = model::Filter {
        pids: args.pids.clone(),
        euid: args.user.as_deref().map(users::uid_of).transpose()?,
        ..model::Filter::default()
    };
    if ui::wanted(args.batch, cli.json) {
        let opts = ui::Options {
            interval: args.interval,
            iterations: args.iterations,
            threads: args.threads,
            no_kthreads: args.kthreads.no_kthreads,
            filter,
            proc_root: proc_root(cli),
        };
        return ui::run(open_with(cli, true)?, opts).map(|()| true);
    }
    batch::run(
        open_with(cli, true)?,
        with_kthreads(Query::all_tasks(), args.kthreads),
        batch::Options {
            interval: args.interval,
            iterations: args.iterations,
            json: cli.json,
            uids: filter.euid.is_some(),
        },
        &|info| filter.keeps(info),
        out,
    )
    .map(|()| true)
}
