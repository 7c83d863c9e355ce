// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * fatal_signal: a caller killed in the middle of a long pidmap_info(2)
 * call dies within about one chunk of the walk, not at the end of the call.
 *
 * One call may fill up to 1,000,000 records, each with a thread-group CPU
 * sum. cond_resched() in the loop alone would leave SIGKILL waiting for
 * the whole call; the walk checks fatal_signal_pending() before every
 * chunk of at most 256 pids.
 *
 * With a holder of 30,000 idle threads (PIDMAP_SCALE_THREADS, if it is
 * lower, as on the debug kernel): time one whole TASKS records call
 * (the median of 3). Then a child makes the same call over and over,
 * writing to a pipe just before each; the parent waits for that byte,
 * sleeps a fifth of a call and sends SIGKILL, and measures how long the
 * child takes to be reaped. Without the check the child would run on for
 * about four fifths of a call; with it, for one chunk (~1% of a call). The
 * test fails above 40% of a call, in any of 5 trials.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pidmap_test.h"
#include "pidmap_syscalls.h"
#include "thread_holder.h"

#define HOLDER_THREADS 30000
#define MEM_FLOOR_KIB (256 * 1024)
#define TRIALS 5

static struct pidmap_info *recs;
static size_t nrecs;

static long records_call(void)
{
	return pidmap_info_list(PIDMAP_SCOPE_TASKS, 0, 0, 0, 0, recs, nrecs,
				sizeof(recs[0]), PIDMAP_INFO_ALL_FIELDS);
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void sleep_seconds(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s,
			       .tv_nsec = (long)((s - (time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int main(void)
{
	unsigned long checks = 0, failures = 0;
	long splats0 = pt_count_splats();
	struct thread_holder h;
	double whole[3], call, late[TRIALS];
	long n = 0, want;
	int i;

	pt_name = "fatal_signal";
	pt_require_syscalls();
	/* The debug kernel's suite asks scale.c for fewer threads: so do we. */
	want = pt_env_int("PIDMAP_SCALE_THREADS", HOLDER_THREADS);
	if (want > HOLDER_THREADS)
		want = HOLDER_THREADS;
	if (thread_holder_start(&h, want, MEM_FLOOR_KIB, 120.0))
		pt_die("thread holder: %s", strerror(errno));
	nrecs = h.threads + 4096;
	recs = calloc(nrecs, sizeof(*recs));
	if (!recs)
		pt_die("calloc");

	for (i = 0; i < 3; i++) {
		double t0 = pt_now();

		n = records_call();
		whole[i] = pt_now() - t0;
		if (n < h.threads)
			pt_die("a TASKS records call returned %ld (errno %s), want >= %ld",
			       n, n < 0 ? strerror(errno) : "-", h.threads);
	}
	qsort(whole, 3, sizeof(whole[0]), dbl_cmp);
	call = whole[1];

	for (i = 0; i < TRIALS; i++) {
		int go[2];
		pid_t child;
		char c;
		double t0;

		if (pipe(go))
			pt_die("pipe");
		child = fork();
		if (child == 0) {
			close(go[0]);
			for (;;) {
				if (write(go[1], "c", 1) != 1)
					_exit(3);
				records_call();
			}
		}
		close(go[1]);
		if (child < 0 || read(go[0], &c, 1) != 1)
			pt_die("the calling child did not start");
		sleep_seconds(call / 5);
		t0 = pt_now();
		kill(child, SIGKILL);
		while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
			;
		late[i] = pt_now() - t0;
		close(go[0]);
	}

	printf("FATAL-SIGNAL: tasks=%ld call_ms=%.1f", n, call * 1e3);
	for (i = 0; i < TRIALS; i++)
		printf("%s%.1f", i ? "," : " after_kill_ms=", late[i] * 1e3);
	printf(" bar_ms=%.1f\n", call * 0.4 * 1e3);
	for (i = 0; i < TRIALS; i++)
		pt_check(&checks, &failures, late[i] < call * 0.4,
			 "trial %d: the killed caller took %.1f ms to die, a call takes %.1f ms",
			 i, late[i] * 1e3, call * 1e3);
	pt_check(&checks, &failures, call > 0.02,
		 "a whole call takes only %.1f ms: too short to tell a chunk from a call",
		 call * 1e3);
	thread_holder_stop(&h);
	pt_check(&checks, &failures, !pt_new_splats(splats0), "kernel warnings during the test");
	printf("RELIABILITY: name=fatal_signal inputs=%d failures=%lu splats=0\n", TRIALS,
	       failures);
	printf("fatal_signal: %s\n", failures ? "FAIL" : "PASS");
	return failures ? KSFT_FAIL : KSFT_PASS;
}
