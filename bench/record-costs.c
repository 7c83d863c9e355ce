// SPDX-License-Identifier: GPL-2.0
/*
 * What each field of a pidmap_info(2) record costs, for the kernel work
 * behind the records benchmarks.
 *
 * Forks PROCS processes of THREADS threads each (the leaders included,
 * idle threads from guest-tests/include/thread_holder.h), then reads the record of every task of the system, PIDMAP_INFO_RECORDS
 * per call, once per field mask below: the id alone, the id and one field,
 * the fields of a top-style refresh, and all of them. The masks run
 * interleaved, ROUNDS rounds; each line gives the median over the rounds.
 * The first line is pidmap(2)'s listing of the same tasks, ids only.
 *
 * On the instruction clock (`cargo xtask qemu-run --instructions`), a
 * guest nanosecond is one instruction and a boot repeats exactly, so the
 * "per task" column is instructions per record; on TCG's wall clock it is
 * time, and differs between boots.
 *
 *   gcc -O2 -static -o target/record-costs bench/record-costs.c
 *   cargo xtask qemu-run --instructions --add target/record-costs -- \
 *       /add/record-costs 100 100 11
 *
 * Usage: record-costs [--default-view] [PROCS [THREADS [ROUNDS]]]
 *        (default 100 100 11)
 *
 * The calls go through /proc's view (its procfs_fd), as the crate
 * makes them; --default-view makes them without one, where every task's
 * record, and every thread's listing, takes the ptrace check.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../guest-tests/include/pidmap_syscalls.h"
#include "../guest-tests/include/thread_holder.h"

#define PIDMAP_INFO_RECORDS 512		/* per call, as the crate reads them */
#define MAX_ROUNDS 64
#define MAX_TASKS (1 << 17)
#define MEM_FLOOR_KIB (160 * 1024)	/* as bench/pidmap-bench/scale.c */
#define SPAWN_BUDGET_S 240.0

static struct pidmap_info records[PIDMAP_INFO_RECORDS];
static int view_fd = -1;	/* /proc, or -1: the default view */
static __u32 ids[MAX_TASKS];

static const struct {
	const char *name;
	__u64 mask;
} masks[] = {
	{ "id", PIDMAP_INFO_ID },
	{ "id + ppid", PIDMAP_INFO_ID | PIDMAP_INFO_PPID },
	{ "id + creds", PIDMAP_INFO_ID | PIDMAP_INFO_CREDS },
	{ "id + sched", PIDMAP_INFO_ID | PIDMAP_INFO_SCHED },
	{ "id + num_threads", PIDMAP_INFO_ID | PIDMAP_INFO_NUM_THREADS },
	{ "id + cputime", PIDMAP_INFO_ID | PIDMAP_INFO_CPUTIME },
	{ "id + start_time", PIDMAP_INFO_ID | PIDMAP_INFO_START_TIME },
	{ "id + rss", PIDMAP_INFO_ID | PIDMAP_INFO_RSS },
	{ "id + state", PIDMAP_INFO_ID | PIDMAP_INFO_STATE },
	{ "id + comm", PIDMAP_INFO_ID | PIDMAP_INFO_COMM },
	{ "id + task_flags", PIDMAP_INFO_ID | PIDMAP_INFO_TASK_FLAGS },
	{ "id + faults", PIDMAP_INFO_ID | PIDMAP_INFO_FAULTS },
	{ "id + ctxsw", PIDMAP_INFO_ID | PIDMAP_INFO_CTXSW },
	{ "top refresh", PIDMAP_INFO_ID | PIDMAP_INFO_PPID | PIDMAP_INFO_STATE |
			 PIDMAP_INFO_CPUTIME | PIDMAP_INFO_START_TIME |
			 PIDMAP_INFO_RSS | PIDMAP_INFO_COMM },
	{ "all", PIDMAP_INFO_ALL_FIELDS },
};
#define NR_MASKS (sizeof(masks) / sizeof(masks[0]))

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Every task's id, from one pidmap(2) call; the count. */
static long list_tasks(void)
{
	struct pidmap_req req;
	long n;

	pidmap_req_init(&req, PIDMAP_SCOPE_TASKS, 0, view_fd, 0, 0);
	n = sys_pidmap(&req, ids, MAX_TASKS, 0);
	if (n < 0)
		die("pidmap");
	if (n == MAX_TASKS) {
		fprintf(stderr, "more than %d tasks\n", MAX_TASKS);
		exit(1);
	}
	return n;
}

/* Every task's record with @mask, from the cursor on; the count. */
static long read_records(__u64 mask)
{
	struct pidmap_req req;
	long n, total = 0;

	pidmap_req_init(&req, PIDMAP_SCOPE_TASKS, 0, view_fd, 0, 0);
	req.info_size = sizeof(struct pidmap_info);
	req.info_mask = mask;
	for (;;) {
		n = sys_pidmap_info(&req, records, PIDMAP_INFO_RECORDS, 0);
		if (n < 0)
			die("pidmap_info");
		if (n == 0)
			return total;
		total += n;
		req.last_id = (__u32)records[n - 1].tid;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *name, double *ns, int rounds, long tasks)
{
	qsort(ns, rounds, sizeof(*ns), cmp_double);
	printf("%-18s %12.0f per call-set %9.1f per task (min %.1f, max %.1f), %ld tasks\n",
	       name, ns[rounds / 2], ns[rounds / 2] / tasks, ns[0] / tasks,
	       ns[rounds - 1] / tasks, tasks);
}

int main(int argc, char **argv)
{
	bool default_view = argc > 1 && !strcmp(argv[1], "--default-view");
	char **arg = argv + 1 + default_view;
	int nargs = argc - 1 - default_view;
	int procs = nargs > 0 ? atoi(arg[0]) : 100;
	int threads = nargs > 1 ? atoi(arg[1]) : 100;
	int rounds = nargs > 2 ? atoi(arg[2]) : 11;
	static double ns[NR_MASKS + 1][MAX_ROUNDS];
	long tasks = 0, listed = 0;
	struct thread_holder *family;

	if (procs < 0 || threads < 1 || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr,
			"usage: record-costs [--default-view] [PROCS [THREADS [ROUNDS<=%d]]]\n",
			MAX_ROUNDS);
		return 2;
	}
	if (!default_view) {
		view_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (view_fd < 0)
			die("/proc");
	}
	printf("view: %s\n", default_view ? "default (the ptrace rule)" : "/proc's");
	family = calloc(procs ? procs : 1, sizeof(*family));
	if (!family)
		die("calloc");
	for (int p = 0; p < procs; p++) {
		if (thread_holder_start(&family[p], threads - 1, MEM_FLOOR_KIB,
					SPAWN_BUDGET_S))
			die("thread_holder_start");
		if (family[p].threads != threads - 1) {
			fprintf(stderr, "process %d: %ld threads of %d\n", p,
				family[p].threads + 1, threads);
			return 1;
		}
	}

	for (int r = 0; r < rounds; r++) {
		double start = th_now();

		listed = list_tasks();
		ns[0][r] = (th_now() - start) * 1e9;
		for (size_t m = 0; m < NR_MASKS; m++) {
			start = th_now();
			tasks = read_records(masks[m].mask);
			ns[m + 1][r] = (th_now() - start) * 1e9;
			/* A kernel worker may come or go between calls */
			if (tasks != listed)
				fprintf(stderr, "note: %s: %ld records, %ld tasks listed\n",
					masks[m].name, tasks, listed);
		}
	}
	report("listing (pidmap)", ns[0], rounds, listed);
	for (size_t m = 0; m < NR_MASKS; m++)
		report(masks[m].name, ns[m + 1], rounds, tasks);

	for (int p = 0; p < procs; p++)
		if (thread_holder_stop(&family[p]))
			die("thread_holder_stop");
	return 0;
}
