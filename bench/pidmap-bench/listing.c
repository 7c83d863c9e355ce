// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * pidmap-bench: the listing cases: fds_4 and fds_1000 (fdmap(2) against
 * readdir of /proc/self/fd), tasks_all_250, tasks_grouped_250,
 * procs_only_10k, tasks_all_10k and tasks_all_100x100 (pidmap(2) against
 * the /proc walks).
 */
#include "common.h"

void case_fds(const char *name, long nfds, double target)
{
	int opened[4096];
	long have, i, nopened = 0;

	if (!want_case(name))
		return;
	have = walk_self_fd(NULL);
	if (nfds > (long)ARRAY_SIZE(opened))
		die("%s: too many fds", name);
	for (i = have; i < nfds; i++) {
		int fd = open("/", O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			die("open /: %m");
		opened[nopened++] = fd;
	}
	if (walk_self_fd(NULL) != nfds)
		note("  note: %s runs with %ld fds open\n", name, walk_self_fd(NULL));
	bench_case(name, target, LIST_FDS, walk_self_fd, pass_self_fd,
		   have_fdmap ? new_fds : NULL, pass_new_fds);
	for (i = 0; i < nopened; i++)
		close(opened[i]);
}

/* ~250 tasks in ~130 processes, counting what the system already has. */
void case_250(void)
{
	struct pop p = { 0 };
	struct result *r;

	if (!want_case("tasks_all_250") && !want_case("tasks_grouped_250"))
		return;
	spawn_about(&p, 250, 130);

	if (want_case("tasks_all_250")) {
		r = bench_case("tasks_all_250", 300, LIST_TASKS,
			       walk_proc_tasks, pass_proc_tasks,
			       have_pidmap ? new_all_tasks : NULL,
			       pass_new_all_tasks);
		snprintf(r->extra, sizeof(r->extra), ", \"processes\": %ld",
			 walk_proc_root(NULL));
	}
	if (want_case("tasks_grouped_250")) {
		r = bench_case("tasks_grouped_250", 10, LIST_TASKS, walk_proc_tasks,
			       pass_proc_tasks, have_pidmap ? new_grouped : NULL,
			       pass_grouped);
		snprintf(r->extra, sizeof(r->extra), ", \"processes\": %ld",
			 walk_proc_root(NULL));
	}
	pop_kill(&p);
}

void case_procs_only(void)
{
	struct pop p = { 0 };
	struct result *r;

	if (!want_case("procs_only_10k"))
		return;
	make_room(opt.procs);
	spawn_procs(&p, opt.procs, 1);
	r = bench_case("procs_only_10k", 10, LIST_PROCS, walk_proc_root, pass_proc_root,
		       have_pidmap ? new_procs : NULL, pass_new_procs);
	snprintf(r->extra, sizeof(r->extra), ", \"spawned_processes\": %ld",
		 opt.procs);
	pop_kill(&p);
}

/*
 * All tasks with opt.procs more tasks, in processes of @threads tasks:
 * tasks_all_10k (1,000 x 10) and tasks_all_100x100 (100 x 100), both
 * judged on the target for all tasks at 10k: 20x.
 */
void case_tasks_many(const char *name, int threads, double target)
{
	long nprocs = opt.procs / threads;
	struct pop p = { 0 };
	struct result *r;

	if (!want_case(name))
		return;
	make_room(opt.procs);
	spawn_procs(&p, nprocs, threads);
	r = bench_case(name, target, LIST_TASKS, walk_proc_tasks, pass_proc_tasks,
		       have_pidmap ? new_all_tasks : NULL, pass_new_all_tasks);
	snprintf(r->extra, sizeof(r->extra),
		 ", \"processes\": %ld, \"spawned_processes\": %ld, \"threads_per_process\": %d",
		 walk_proc_root(NULL), nprocs, threads);
	pop_kill(&p);
}
