// SPDX-License-Identifier: GPL-2.0
/*
 * What each field of a pidmap_info(2) record costs, for the kernel work
 * behind the records benchmarks.
 *
 * Forks PROCS processes of THREADS threads each (the leaders included,
 * idle threads from guest-tests/include/thread_holder.h), then reads the
 * record of every task of the system, PIDMAP_INFO_RECORDS per call, once
 * per field mask below: the id alone, the id and one field, the fields of
 * a top-style refresh, and all of them; then the id alone one record per
 * call (the difference to 512 a call is a call's fixed cost), and all
 * fields with 4,096-byte records (the 3,896 bytes past the kernel's
 * struct are cleared by copy_struct_to_user(), a string instruction like
 * the copy of the struct itself: the difference, per byte, is what a
 * byte of the copy costs). The first line is pidmap(2)'s listing of the
 * same tasks, ids only. Everything runs in both views, /proc's (the
 * procfs_fd, as the crate calls them) and the default one (no view fd:
 * ptrace's rule per task), so the difference is the visibility decision.
 * All of it runs interleaved, ROUNDS rounds; each line gives the median
 * over the rounds. Last, a calibration in user space: a 200-byte
 * `rep movsb`, and the CPU's erms and fsrm flags, which decide whether
 * the kernel's copy and clear are `rep movsb`/`rep stosb`.
 *
 * On the instruction clock (`cargo xtask qemu-run --instructions`), a
 * guest nanosecond is one instruction and a boot repeats exactly, so the
 * "per task" column is instructions per record; on TCG's wall clock it is
 * time, and differs between boots.
 *
 *   gcc -O2 -static -I crates/pidmap/abi -o target/record-costs \
 *       bench/record-costs.c
 *   cargo xtask qemu-run --instructions --add target/record-costs -- \
 *       /add/record-costs 100 100 5
 *
 * Usage: record-costs [--procfs-view|--default-view] [PROCS [THREADS [ROUNDS]]]
 *        (default 100 100 11, both views)
 *
 * --procfs-view runs only the calls through /proc's view, --default-view
 * only those without one, where every task's record, and every thread's
 * listing, takes the ptrace check.
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
#define BIG_RECORD 4096		/* bytes, for the copy's cost per byte */

static struct pidmap_info records[PIDMAP_INFO_RECORDS];
static char big_records[PIDMAP_INFO_RECORDS][BIG_RECORD]
	__attribute__((aligned(8)));
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

/*
 * Every task's record with @mask, @per_call records of @size bytes a call
 * from the cursor on; the count.
 */
static long read_records(__u64 mask, size_t per_call, __u32 size)
{
	void *buf = size == BIG_RECORD ? (void *)big_records : (void *)records;
	struct pidmap_req req;
	long n, total = 0;

	pidmap_req_init(&req, PIDMAP_SCOPE_TASKS, 0, view_fd, 0, 0);
	req.info_size = size;
	req.info_mask = mask;
	for (;;) {
		const struct pidmap_info *last;

		n = sys_pidmap_info(&req, buf, per_call, 0);
		if (n < 0)
			die("pidmap_info");
		if (n == 0)
			return total;
		total += n;
		last = (const void *)((const char *)buf + (size_t)(n - 1) * size);
		req.last_id = (__u32)last->tid;
	}
}

/* A row of the table: a mask, how many records a call and their size. */
struct row {
	const char *name;
	__u64 mask;
	size_t per_call;
	__u32 size;
};

#define NR_ROWS (NR_MASKS + 2)
static struct row rows[NR_ROWS];

static void fill_rows(void)
{
	for (size_t m = 0; m < NR_MASKS; m++)
		rows[m] = (struct row){ masks[m].name, masks[m].mask,
					PIDMAP_INFO_RECORDS,
					sizeof(struct pidmap_info) };
	rows[NR_MASKS] = (struct row){ "id, 1 a call", PIDMAP_INFO_ID, 1,
				       sizeof(struct pidmap_info) };
	rows[NR_MASKS + 1] = (struct row){ "all, 4096 B each",
					   PIDMAP_INFO_ALL_FIELDS,
					   PIDMAP_INFO_RECORDS, BIG_RECORD };
}

/* Instructions (ns on this clock) of one 200-byte rep movsb, median of 101. */
static double rep_movsb_200(void)
{
	static char src[200], dst[200];
	double ns[101];

	for (int i = 0; i < 101; i++) {
		void *d = dst;
		const void *s = src;
		size_t n = sizeof(src);
		double start = th_now();

		for (int k = 0; k < 1000; k++) {
			d = dst;
			s = src;
			n = sizeof(src);
			asm volatile("rep movsb"
				     : "+D"(d), "+S"(s), "+c"(n)
				     :
				     : "memory");
		}
		ns[i] = (th_now() - start) * 1e9 / 1000;
	}
	for (int i = 1; i < 101; i++)	/* insertion sort: 101 values */
		for (int j = i; j > 0 && ns[j - 1] > ns[j]; j--) {
			double t = ns[j];

			ns[j] = ns[j - 1];
			ns[j - 1] = t;
		}
	return ns[50];
}

/* Whether /proc/cpuinfo's first flags line has @flag. */
static bool cpu_has(const char *flag)
{
	char line[8192];
	bool found = false;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		for (char *tok = strtok(strchr(line, ':') + 1, " \n"); tok;
		     tok = strtok(NULL, " \n"))
			if (!strcmp(tok, flag))
				found = true;
		break;
	}
	fclose(f);
	return found;
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
	bool only_default = argc > 1 && !strcmp(argv[1], "--default-view");
	bool only_procfs = argc > 1 && !strcmp(argv[1], "--procfs-view");
	int skip = only_default || only_procfs;
	char **arg = argv + 1 + skip;
	int nargs = argc - 1 - skip;
	int procs = nargs > 0 ? atoi(arg[0]) : 100;
	int threads = nargs > 1 ? atoi(arg[1]) : 100;
	int rounds = nargs > 2 ? atoi(arg[2]) : 11;
	/* [view][0]: the listing, [view][1 + r]: row r */
	static double ns[2][NR_ROWS + 1][MAX_ROUNDS];
	static long counted[2][NR_ROWS + 1];
	int proc_fd;
	struct thread_holder *family;

	if (procs < 0 || threads < 1 || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr,
			"usage: record-costs [--procfs-view|--default-view] [PROCS [THREADS [ROUNDS<=%d]]]\n",
			MAX_ROUNDS);
		return 2;
	}
	fill_rows();
	proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (proc_fd < 0)
		die("/proc");
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
		for (int v = 0; v < 2; v++) {
			double start;
			long listed;

			if ((v == 0 && only_default) || (v == 1 && only_procfs))
				continue;
			view_fd = v == 0 ? proc_fd : -1;
			start = th_now();
			listed = list_tasks();
			ns[v][0][r] = (th_now() - start) * 1e9;
			counted[v][0] = listed;
			for (size_t m = 0; m < NR_ROWS; m++) {
				long tasks;

				start = th_now();
				tasks = read_records(rows[m].mask,
						     rows[m].per_call,
						     rows[m].size);
				ns[v][m + 1][r] = (th_now() - start) * 1e9;
				counted[v][m + 1] = tasks;
				/* A kernel worker may come or go between calls */
				if (tasks != listed)
					fprintf(stderr, "note: %s: %ld records, %ld tasks listed\n",
						rows[m].name, tasks, listed);
			}
		}
	}
	for (int v = 0; v < 2; v++) {
		if ((v == 0 && only_default) || (v == 1 && only_procfs))
			continue;
		printf("view: %s\n", v ? "default (the ptrace rule)" : "/proc's");
		report("listing (pidmap)", ns[v][0], rounds, counted[v][0]);
		for (size_t m = 0; m < NR_ROWS; m++)
			report(rows[m].name, ns[v][m + 1], rounds,
			       counted[v][m + 1]);
	}
	printf("calibration: rep movsb of 200 bytes in user space: %.1f per copy; cpu erms %d, fsrm %d\n",
	       rep_movsb_200(), cpu_has("erms"), cpu_has("fsrm"));

	for (int p = 0; p < procs; p++)
		if (thread_holder_stop(&family[p]))
			die("thread_holder_stop");
	return 0;
}
