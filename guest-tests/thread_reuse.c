// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * thread_reuse: a THREADS record is always the record of a thread of the
 * group that was asked for, while thread ids are freed and reused as fast
 * as a small pid namespace allows.
 *
 * A pidmap_info(2) that listed a group's threads by number and then looked
 * each number up again (find_pid_ns()) to fill its record would, for a
 * number freed and taken by another task in between, give that task's
 * record under the group's name. The series fills each record from the
 * struct pid the walk found, with its reference.
 *
 * In a new pid namespace whose pid_max is 400 (so that numbers come round
 * every ~100 allocations after the first wrap):
 *   - a group G whose threads each log (tid, pidfs id of the thread's pid)
 *     in shared memory, start their successor and exit, over and over;
 *   - a process C that forks and reaps short-lived children, so that the
 *     numbers G's threads free are taken by tasks of other groups;
 *   - the namespace's init lists THREADS of G with pidmap_info(2), 16
 *     records per call, for a few seconds.
 * Every record must have tgid == G, and its (tid, pidfs_id) pair must be
 * one a thread of G logged (checked after G has stopped, when the log is
 * complete). The run must show numbers really reused (a tid logged with
 * two pidfs ids) and a minimum of records, or it proves nothing and fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pidmap_test.h"
#include "pidmap_syscalls.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

#define LOG_MAX (1 << 20)
#define CHURN_THREADS 8
#define RUN_SECONDS 4.0
/*
 * A slow guest (the debug kernel under TCG on a busy host) may start too
 * few threads in RUN_SECONDS for numbers to come round: go on until G has
 * started more threads than the namespace has numbers, for at most
 * MAX_SECONDS.
 */
#define MIN_THREADS 450
#define MAX_SECONDS 40.0
#define MIN_RECORDS 2000

struct thread_entry {
	int tid;
	unsigned long long ino;
};

struct shared {
	atomic_int stop;
	atomic_int live;
	atomic_long logged;
	struct thread_entry log[LOG_MAX];
};

static struct shared *sh;

static unsigned long long thread_pidfs_id(void)
{
	int fd = sys_pidfd_open(pt_gettid(), PIDFD_THREAD);
	struct stat st;

	if (fd < 0 || fstat(fd, &st))
		pt_die("pidfd of thread %d: %s", pt_gettid(), strerror(errno));
	close(fd);
	return st.st_ino;
}

static void log_self(void)
{
	long slot = atomic_fetch_add(&sh->logged, 1);

	if (slot < LOG_MAX) {
		sh->log[slot].ino = thread_pidfs_id();
		sh->log[slot].tid = pt_gettid();
	}
}

static void *churn_thread(void *arg)
{
	pthread_t next;

	(void)arg;
	log_self();
	/* Hand over to a successor, which gets a new (or reused) number. */
	if (!atomic_load(&sh->stop) && atomic_load(&sh->logged) < LOG_MAX &&
	    !pthread_create(&next, NULL, churn_thread, NULL)) {
		pthread_detach(next);
		return NULL;
	}
	atomic_fetch_sub(&sh->live, 1);
	return NULL;
}

static void __attribute__((noreturn)) group_main(void)
{
	pthread_t t;
	int i;

	log_self();	/* the leader is listed too */
	atomic_store(&sh->live, CHURN_THREADS);
	for (i = 0; i < CHURN_THREADS; i++) {
		if (pthread_create(&t, NULL, churn_thread, NULL))
			pt_die("pthread_create: %s", strerror(errno));
		pthread_detach(t);
	}
	while (atomic_load(&sh->live) > 0)
		usleep(1000);
	_exit(0);
}

static void __attribute__((noreturn)) forker_main(void)
{
	while (!atomic_load(&sh->stop)) {
		pid_t p = fork();

		if (p == 0)
			_exit(0);
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	_exit(0);
}

static int entry_cmp(const void *a, const void *b)
{
	const struct thread_entry *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int write_pid_max(int value)
{
	char buf[32];
	int fd = open("/proc/sys/kernel/pid_max", O_WRONLY | O_CLOEXEC);
	int len = snprintf(buf, sizeof(buf), "%d", value);
	int ok;

	if (fd < 0)
		return -errno;
	ok = write(fd, buf, len) == len;
	close(fd);
	return ok ? 0 : -errno;
}

/* The namespace's init: run G and C, list G's threads, check. */
static int ns_init_main(void)
{
	static struct pidmap_info recs[16];
	struct thread_entry *seen;
	unsigned long checks = 0, failures = 0;
	long nseen = 0, seen_max = 4 * LOG_MAX, logged, i, reused = 0;
	long calls = 0, wrong_group = 0, unknown = 0;
	pid_t group, forker;
	int pidfd, err, status;
	double end, hard_end;

	err = write_pid_max(400);
	if (err) {
		printf("thread_reuse: FAIL: setting the namespace's pid_max: %s\n",
		       strerror(-err));
		return KSFT_FAIL;
	}
	seen = calloc(seen_max, sizeof(*seen));
	if (!seen)
		pt_die("calloc");

	group = fork();
	if (group == 0)
		group_main();
	forker = fork();
	if (forker == 0)
		forker_main();
	if (group < 0 || forker < 0)
		pt_die("fork: %s", strerror(errno));
	pidfd = sys_pidfd_open(group, 0);
	if (pidfd < 0)
		pt_die("pidfd_open(%d): %s", group, strerror(errno));

	end = pt_now() + RUN_SECONDS;
	hard_end = pt_now() + MAX_SECONDS;
	while (pt_now() < end ||
	       (atomic_load(&sh->logged) < MIN_THREADS && pt_now() < hard_end)) {
		__u64 last = 0;
		long n;

		do {
			n = pidmap_info_list(PIDMAP_SCOPE_THREADS, pidfd, 0, 0, last,
					     recs, 16, sizeof(recs[0]), PIDMAP_INFO_ID);
			calls++;
			if (n < 0)
				pt_die("pidmap_info(THREADS of %d): %s", group,
				       strerror(errno));
			for (i = 0; i < n; i++) {
				if ((pid_t)recs[i].tgid != group)
					wrong_group++;
				if (nseen < seen_max) {
					seen[nseen].tid = recs[i].tid;
					seen[nseen].ino = recs[i].pidfs_id;
					nseen++;
				}
				last = recs[i].tid;
			}
		} while (n == 16);
	}
	atomic_store(&sh->stop, 1);
	if (waitpid(group, &status, 0) != group || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		pt_die("the thread group did not end cleanly (status %#x)", status);
	waitpid(forker, NULL, 0);

	logged = atomic_load(&sh->logged);
	if (logged > LOG_MAX)
		logged = LOG_MAX;
	qsort(sh->log, logged, sizeof(sh->log[0]), entry_cmp);
	for (i = 1; i < logged; i++)
		if (sh->log[i].tid == sh->log[i - 1].tid &&
		    sh->log[i].ino != sh->log[i - 1].ino)
			reused++;
	for (i = 0; i < nseen; i++)
		if (!bsearch(&seen[i], sh->log, logged, sizeof(sh->log[0]), entry_cmp))
			unknown++;

	printf("THREAD-REUSE: calls=%ld records=%ld threads_logged=%ld reused_tids=%ld wrong_group=%ld unknown_pairs=%ld\n",
	       calls, nseen, logged, reused, wrong_group, unknown);
	pt_check(&checks, &failures, wrong_group == 0,
		 "%ld records of G's threads carry another group's tgid", wrong_group);
	pt_check(&checks, &failures, unknown == 0,
		 "%ld records carry a (tid, pidfs id) that no thread of G had", unknown);
	pt_check(&checks, &failures, reused > 0,
		 "no thread id was reused: the test proved nothing");
	pt_check(&checks, &failures, nseen >= MIN_RECORDS,
		 "only %ld records were checked (want %d)", nseen, MIN_RECORDS);
	printf("RELIABILITY: name=thread_reuse inputs=%ld failures=%lu splats=0\n",
	       nseen, failures);
	return failures ? KSFT_FAIL : KSFT_PASS;
}

int main(void)
{
	long splats0 = pt_count_splats();
	pid_t init;
	int status;

	pt_name = "thread_reuse";
	pt_require_syscalls();
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		pt_die("mmap: %s", strerror(errno));
	if (unshare(CLONE_NEWPID))
		pt_die("unshare(CLONE_NEWPID): %s", strerror(errno));
	init = fork();
	if (init == 0)
		_exit(ns_init_main());
	if (init < 0 || waitpid(init, &status, 0) != init)
		pt_die("the namespace's init: %s", strerror(errno));
	if (pt_new_splats(splats0)) {
		printf("thread_reuse: FAIL: kernel warnings during the test\n");
		return KSFT_FAIL;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != KSFT_PASS) {
		printf("thread_reuse: FAIL\n");
		return KSFT_FAIL;
	}
	printf("thread_reuse: PASS\n");
	return KSFT_PASS;
}
