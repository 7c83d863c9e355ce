// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * failslab: the pid allocator keeps its order when the allocation of an
 * XArray node fails (series A, patches 1 and 2). The debug kernel
 * only (CONFIG_FAILSLAB): cargo xtask adds it to that kernel's suite, where
 * failslab missing fails the test.
 *
 * alloc_pid() first reserves a number in each namespace's XArray under
 * pidmap_lock with GFP_NOWAIT. Were __xa_alloc_cyclic() to restart from
 * the bottom of the namespace when that node allocation fails, a fork under
 * memory pressure would get a low, recently freed number. The series
 * retries with GFP_KERNEL outside the lock, which keeps the cyclic order.
 *
 * In a new pid namespace, its init forks and reaps NFORKS children one
 * after the other while failslab fails every slab allocation of that task
 * that may not sleep (task-filter with /proc/self/make-it-fail,
 * ignore-gfp-wait: GFP_NOWAIT and GFP_ATOMIC fail, GFP_KERNEL does not).
 * Each 64th number needs a new node, so the run crosses NFORKS / 64 failed
 * node allocations. Every child's number in the namespace must be larger
 * than the one before (no wrap: a new namespace's pid_max is far above
 * NFORKS), failslab's own counter must show failures injected, most forks
 * must succeed, and the kernel log must stay clean.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pidmap_test.h"

#define NFORKS 1000
#define TIMES 1000000L
#define FAILSLAB "/sys/kernel/debug/failslab/"

static void set(const char *attr, const char *value)
{
	char path[128];

	snprintf(path, sizeof(path), FAILSLAB "%s", attr);
	if (pt_write_file(path, value))
		pt_die("%s <- %s: %s (CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_DEBUG_FS?)", path,
		       value, strerror(errno));
}

/*
 * The namespace's init: forks under failslab. Exits 0 if the order held;
 * prints its counts either way.
 */
static int forker(void)
{
	long ok = 0, failed = 0, out_of_order = 0;
	pid_t last = 1;

	if (pt_write_file("/proc/self/make-it-fail", "1"))
		pt_die("make-it-fail: %s", strerror(errno));
	for (int i = 0; i < NFORKS; i++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid < 0) {
			failed++;
			continue;
		}
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		if (pid <= last) {
			if (out_of_order < 5)
				printf("failslab: pid %d after %d\n", pid, last);
			out_of_order++;
		}
		last = pid;
		ok++;
	}
	pt_write_file("/proc/self/make-it-fail", "0");
	printf("failslab: forks=%ld failed=%ld out_of_order=%ld last_pid=%d\n", ok, failed,
	       out_of_order, last);
	return out_of_order == 0 && ok >= NFORKS / 2 ? 0 : 1;
}

int main(void)
{
	unsigned long checks = 0, failures = 0;
	long splats0 = pt_count_splats(), left, injected;
	char times[32];
	int status;
	pid_t outer;

	pt_name = "failslab";
	mkdir("/sys/kernel/debug", 0755);
	if (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) && errno != EBUSY)
		pt_die("mounting debugfs: %s", strerror(errno));
	snprintf(times, sizeof(times), "%ld", TIMES);
	set("task-filter", "Y");
	set("ignore-gfp-wait", "Y");
	set("cache-filter", "N");
	set("verbose", "0");
	set("space", "0");
	set("interval", "1");
	set("probability", "100");
	set("times", times);

	outer = fork();
	if (outer < 0)
		pt_die("fork");
	if (outer == 0) {
		pid_t init;

		if (unshare(CLONE_NEWPID))
			pt_die("unshare(CLONE_NEWPID): %s", strerror(errno));
		init = fork();
		if (init < 0)
			pt_die("fork");
		if (init == 0)
			_exit(forker());
		if (waitpid(init, &status, 0) != init)
			pt_die("waitpid");
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 2);
	}
	if (waitpid(outer, &status, 0) != outer)
		pt_die("waitpid");
	left = pt_read_long(FAILSLAB "times");
	set("probability", "0");
	injected = left >= 0 ? TIMES - left : -1;

	pt_check(&checks, &failures, WIFEXITED(status) && WEXITSTATUS(status) == 0,
		 "forks under failslab: the pid order did not hold, or too few forks succeeded");
	pt_check(&checks, &failures, injected > 0,
		 "failslab injected %ld failures: the run proves nothing", injected);
	pt_check(&checks, &failures, pt_new_splats(splats0) == 0, "%ld new kernel splat lines",
		 pt_new_splats(splats0));
	printf("RELIABILITY: name=failslab checks=%lu failures=%lu injected=%ld splats=%ld\n",
	       checks, failures, injected, pt_new_splats(splats0));
	if (failures) {
		printf("failslab: FAIL\n");
		return KSFT_FAIL;
	}
	printf("failslab: PASS\n");
	return KSFT_PASS;
}
