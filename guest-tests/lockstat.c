// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * lockstat: no caller can stretch tasklist_lock, measured.
 *
 * Process A has PIDMAP_LOCKSTAT_CHILDREN children (default 20,000), process
 * B has 256.  Two measurements, each over TRIALS interleaved trials:
 *
 *  1. tasklist_lock's read hold-time max (CONFIG_LOCK_STAT, /proc/lock_stat,
 *     reset with `echo 0 > /proc/lock_stat` before each phase) while we
 *     list A's children in chunks of 256, vs the same for B, vs an idle
 *     phase of the same length (the noise floor: what the rest of the
 *     system holds the lock for meanwhile).
 *  2. The worst-case latency of fork() in a fork loop while we list A's
 *     children in a loop on the other CPU, vs the same loop when idle.
 *
 * Why medians over trials: under QEMU TCG a single maximum is at the mercy
 * of the host (five helpers share two cores here), and both a hold time and
 * a fork latency include any time the vCPU thread was descheduled.  Idle
 * and loaded trials alternate, so a burst of host load hits both kinds;
 * the median of each kind drops the trials a burst hit.  The lock ratio
 * divides by max(median small, median idle): a hold that the idle system
 * shows as well is noise, not the enumeration's.  The limit (2x) is then
 * asserted on the lock ratio, and only where lock_stat exists (the debug
 * kernel).  The fork figures are printed but
 * never judged: they are timed maxima under TCG, where both vCPUs busy
 * against one idle changes what the host gives each vCPU thread, and timed
 * ratios swing 2-3x between boots (7.3 debug kernel: 2.29x, with the
 * listing holding no tasklist_lock at all).  Fork cost is guarded on the
 * instruction clock instead, by `cargo xtask forkcost --check`.
 *
 * Output: LOCKSTAT-RATIO / FORKLAT-RATIO lines, key=value, one per figure.
 */
#include "pidmap_test.h"	/* first: it defines _GNU_SOURCE */

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/wait.h>

#define TRIALS 5
#define SMALL 256
#define CHUNK 256
#define FORKS_PER_TRIAL 200
#define STACK 4096
#define MAX_RATIO 2.0

static int kid_main(void *arg)
{
	(void)arg;
	/* Leave with the parent: 20,000 orphans would burden later tests. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;)
		pause();
	return 0;
}

/*
 * A parent of @n idle children, created with CLONE_VM so that 20,000 of
 * them cost a kernel stack and a task_struct each, not an mm.  It reports
 * on @ready once they all exist and idles until killed (PDEATHSIG takes
 * the children along).
 */
static pid_t spawn_parent(int n, int ready)
{
	pid_t pid = fork();

	if (pid < 0)
		pt_die("fork");
	if (pid == 0) {
		unsigned char *stacks;
		int i;

		/* If we are killed (the suite's timeout), everything goes. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		stacks = mmap(NULL, (size_t)n * STACK, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (stacks == MAP_FAILED)
			pt_die("mmap stacks");
		for (i = 0; i < n; i++) {
			pid_t k = clone(kid_main, stacks + (size_t)(i + 1) * STACK,
					CLONE_VM | SIGCHLD, NULL);

			if (k < 0)
				pt_die("clone child %d of %d", i, n);
		}
		if (write(ready, "r", 1) != 1)
			pt_die("write");
		for (;;)
			pause();
	}
	return pid;
}

/*
 * One chunked PIDMAP_SCOPE_CHILDREN enumeration of the process of
 * @pidfd, resuming after the last id returned; returns the count.
 */
static long list_children(int pidfd)
{
	static __u32 buf[CHUNK];
	long total = 0;
	__u64 last = 0;

	for (;;) {
		long r = pidmap_list(PIDMAP_SCOPE_CHILDREN, pidfd, 0, 0, last, buf, CHUNK);

		if (r < 0)
			pt_die("pidmap CHILDREN of pidfd %d", pidfd);
		if (r == 0)
			return total;
		if (buf[r - 1] <= last)
			pt_die("pidmap CHILDREN of pidfd %d did not advance past %llu", pidfd,
			       (unsigned long long)last);
		total += r;
		last = buf[r - 1];
	}
}

/*
 * tasklist_lock's read hold-time max in µs since the last reset, and in
 * *@acq its read acquisitions; both 0 when lock_stat has no "-R" line for
 * it (no reader since the reset).
 */
static double read_hold_max(double *acq)
{
	char line[512];
	double v = 0;

	*acq = 0;
	FILE *f = fopen("/proc/lock_stat", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char name[128];
		double x[10];

		/* class-R: con-bounces contentions wait-min wait-max wait-total
		 * wait-avg acq-bounces acquisitions hold-min hold-max ... */
		if (sscanf(line, " %127s %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf", name, &x[0],
			   &x[1], &x[2], &x[3], &x[4], &x[5], &x[6], &x[7], &x[8], &x[9]) == 11 &&
		    !strcmp(name, "tasklist_lock-R:")) {
			v = x[9];
			*acq = x[7];
			break;
		}
	}
	fclose(f);
	return v;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
	double s[TRIALS];

	memcpy(s, v, (size_t)n * sizeof(double));
	qsort(s, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/*
 * The fork loop, in its own process: on each byte from @go it runs
 * FORKS_PER_TRIAL fork()s and answers the slowest fork() call in µs.
 */
static void forker(int go, int answer)
{
	char c;

	while (read(go, &c, 1) == 1) {
		double worst = 0;
		int i;

		for (i = 0; i < FORKS_PER_TRIAL; i++) {
			double t0 = pt_now(), dt;
			pid_t p = fork();

			dt = (pt_now() - t0) * 1e6;
			if (p < 0)
				pt_die("fork");
			if (p == 0)
				_exit(0);
			if (dt > worst)
				worst = dt;
			waitpid(p, NULL, 0);
		}
		if (write(answer, &worst, sizeof(worst)) != sizeof(worst))
			pt_die("write");
	}
	_exit(0);
}

static void print_list(const char *key, const double *v)
{
	int i;

	printf(" %s=", key);
	for (i = 0; i < TRIALS; i++)
		printf("%s%.2f", i ? "," : "", v[i]);
}

int main(void)
{
	int nbig = pt_env_int("PIDMAP_LOCKSTAT_CHILDREN", 20000);
	double hold_big[TRIALS], hold_small[TRIALS], hold_idle[TRIALS];
	double acq_big[TRIALS], acq_small[TRIALS], acq_idle[TRIALS];
	double fork_idle[TRIALS], fork_loaded[TRIALS];
	int ready[2], go[2], answer[2], t, have_lockstat, failed = 0;
	pid_t big, small, fk;
	int big_fd, small_fd;
	double t0, list_secs = 0, start = pt_now();
	int listings = 0;
	long n;
	char c;

	pt_name = "lockstat";
	pt_require_syscalls();
	if (getuid() != 0) {
		pt_err("must run as root (it resets /proc/lock_stat)");
		return KSFT_FAIL;
	}
	have_lockstat = access("/proc/lock_stat", R_OK) == 0;
	if (!have_lockstat && getenv("PIDMAP_KERNEL") &&
	    !strcmp(getenv("PIDMAP_KERNEL"), "debug")) {
		pt_err("the debug kernel has no /proc/lock_stat (CONFIG_LOCK_STAT)");
		return KSFT_FAIL;
	}
	if (have_lockstat && pt_write_file("/proc/sys/kernel/lock_stat", "1"))
		pt_die("enable lock_stat");
	/* Orphaned children come back to us, to be reaped at the end. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) || pipe(ready))
		pt_die("prctl/pipe");

	t0 = pt_now();
	big = spawn_parent(nbig, ready[1]);
	if (read(ready[0], &c, 1) != 1)
		pt_die("the %d-child parent did not start", nbig);
	small = spawn_parent(SMALL, ready[1]);
	if (read(ready[0], &c, 1) != 1)
		pt_die("the %d-child parent did not start", SMALL);
	big_fd = pt_pidfd(big, 0);
	small_fd = pt_pidfd(small, 0);
	printf("lockstat: %d + %d children in %.1f s\n", nbig, SMALL, pt_now() - t0);
	fflush(stdout);
	t0 = pt_now();
	n = list_children(big_fd);
	printf("lockstat: one listing of %ld children in %.3f s\n", n, pt_now() - t0);
	if (n != nbig || list_children(small_fd) != SMALL) {
		pt_err("CHILDREN lists %ld of %d children", n, nbig);
		failed = 1;
	}

	/* After the parents: their children must not hold the forker's pipes. */
	if (pipe(go) || pipe(answer))
		pt_die("pipe");
	fk = fork();
	if (fk < 0)
		pt_die("fork");
	if (fk == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		close(answer[0]);
		forker(go[0], answer[1]);
	}
	close(go[0]);
	close(answer[1]);

	for (t = 0; t < TRIALS; t++) {
		double end;

		/* 1. Lock hold: big, small, idle, each from a reset. */
		if (have_lockstat) {
			pt_write_file("/proc/lock_stat", "0");
			t0 = pt_now();
			list_children(big_fd);
			list_children(big_fd);
			list_secs = pt_now() - t0;
			hold_big[t] = read_hold_max(&acq_big[t]);
			pt_write_file("/proc/lock_stat", "0");
			for (end = pt_now() + list_secs; pt_now() < end;)
				list_children(small_fd);
			hold_small[t] = read_hold_max(&acq_small[t]);
			pt_write_file("/proc/lock_stat", "0");
			usleep((useconds_t)(list_secs * 1e6));
			hold_idle[t] = read_hold_max(&acq_idle[t]);
		} else {
			hold_big[t] = hold_small[t] = hold_idle[t] = -1;
			acq_big[t] = acq_small[t] = acq_idle[t] = -1;
		}

		printf("lockstat: trial %d: lock phases done at %.1f s\n", t, pt_now() - start);
		fflush(stdout);
		/* 2. Fork latency: idle, then while we list the big parent. */
		if (write(go[1], "i", 1) != 1 ||
		    read(answer[0], &fork_idle[t], sizeof(double)) != sizeof(double))
			pt_die("forker (idle)");
		if (write(go[1], "l", 1) != 1)
			pt_die("forker (loaded)");
		for (;;) {
			struct timeval tv = { 0, 0 };
			fd_set rd;

			list_children(big_fd);
			listings++;
			FD_ZERO(&rd);
			FD_SET(answer[0], &rd);
			if (select(answer[0] + 1, &rd, NULL, NULL, &tv) == 1)
				break;
		}
		if (read(answer[0], &fork_loaded[t], sizeof(double)) != sizeof(double))
			pt_die("forker (loaded)");
		printf("lockstat: trial %d: fork phases done at %.1f s (%d listings)\n", t,
		       pt_now() - start, listings);
		fflush(stdout);
	}
	close(go[1]);
	waitpid(fk, NULL, 0);
	kill(big, SIGKILL);
	kill(small, SIGKILL);
	/* Reap everything, the orphaned children included (we are their subreaper). */
	while (wait(NULL) > 0 || errno == EINTR)
		;
	if (errno != ECHILD)
		pt_die("wait");
	printf("lockstat: all children reaped at %.1f s\n", pt_now() - start);

	printf("LOCKSTAT: children_big=%d children_small=%d trials=%d clock=%s", nbig, SMALL,
	       TRIALS, getenv("PIDMAP_GUEST_CLOCK") ? getenv("PIDMAP_GUEST_CLOCK") : "time");
	print_list("hold_max_us_big", hold_big);
	print_list("hold_max_us_small", hold_small);
	print_list("hold_max_us_idle", hold_idle);
	print_list("read_acquisitions_big", acq_big);
	print_list("read_acquisitions_small", acq_small);
	print_list("read_acquisitions_idle", acq_idle);
	print_list("fork_max_us_idle", fork_idle);
	print_list("fork_max_us_loaded", fork_loaded);
	printf("\n");

	if (have_lockstat) {
		double mb = median(hold_big, TRIALS), ms = median(hold_small, TRIALS);
		double mi = median(hold_idle, TRIALS);
		double floor = ms > mi ? ms : mi;
		double ratio = floor > 0 ? mb / floor : (mb > 0 ? 1e9 : 1.0);

		printf("LOCKSTAT-RATIO: name=tasklist_lock_read_hold_max ratio=%.3f median_big_us=%.2f "
		       "median_small_us=%.2f median_idle_us=%.2f max_ratio=%.1f pass=%s\n", ratio, mb, ms,
		       mi, MAX_RATIO, ratio <= MAX_RATIO ? "yes" : "NO");
		if (ratio > MAX_RATIO)
			failed = 1;
	} else {
		printf("LOCKSTAT-RATIO: name=tasklist_lock_read_hold_max ratio=unavailable "
		       "(no CONFIG_LOCK_STAT on the %s kernel)\n",
		       getenv("PIDMAP_KERNEL") ? getenv("PIDMAP_KERNEL") : "?");
	}
	{
		double ml = median(fork_loaded, TRIALS), mi = median(fork_idle, TRIALS);
		double ratio = mi > 0 ? ml / mi : 1e9;

		printf("FORKLAT-RATIO: name=fork_worst_case ratio=%.3f median_loaded_us=%.2f "
		       "median_idle_us=%.2f max_ratio=%.1f judged=no pass=%s\n", ratio, ml, mi, MAX_RATIO,
		       ratio <= MAX_RATIO ? "yes" : "NO");
	}
	printf("lockstat: %s\n", failed ? "FAIL" : "PASS");
	return failed ? KSFT_FAIL : KSFT_PASS;
}
