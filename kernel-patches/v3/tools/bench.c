// SPDX-License-Identifier: GPL-2.0
/*
 * v3 refresh bench: a top-style refresh of every task, three ways, in one
 * boot, interleaved, ROUNDS each, medians and ranges:
 *  - walk: readdir /proc, every /proc/PID/task, read every TID/stat and
 *    TID/status (VmRSS, as ps reads it); walk-stat: stat only (v2's walk);
 *  - info-procfs: pidmap_info(PIDMAP_SCOPE_TASKS) through a view of /proc
 *    (hidepid=off: what the walk sees), every field, 128 records a call;
 *  - info-default: the same in the default view (ptrace rule per task);
 *  - pidfd: per task pidfd_open(PIDFD_THREAD), PIDFD_GET_INFO, close.
 * Usage: bench NPROCS THREADS_PER_PROC
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/pidfd.h>
#include <linux/pidmap.h>
#include <linux/fdmap.h>

#define ROUNDS 7
#define CHUNK 128	/* records per call; the crate asks for 512 */
#define CRATE_CHUNK 512

static long sys_pidmap_info(const struct pidmap_req *req, void *buf, size_t nr)
{
	return syscall(474, req, buf, nr, 0);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *park(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void spawn(int procs, int threads)
{
	int i, j;

	for (i = 0; i < procs; i++) {
		if (fork() == 0) {
			pthread_t t;

			for (j = 1; j < threads; j++)
				pthread_create(&t, NULL, park, NULL);
			park(NULL);
		}
	}
}

static char buf[4096];

static int read_file(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? 0 : -1;
}

static bool is_id(const char *name)
{
	return name[0] >= '0' && name[0] <= '9';
}

/*
 * readdir /proc and every /proc/PID/task; for each task, @visit(the task
 * directory, the tid's name, @arg). Return: how many visits returned 1.
 */
static long for_each_task(int (*visit)(DIR *task, const char *tid, int arg),
			  int arg)
{
	DIR *root = opendir("/proc"), *task;
	struct dirent *p, *t;
	char path[300];
	long n = 0;

	while ((p = readdir(root))) {
		if (!is_id(p->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", p->d_name);
		task = opendir(path);
		if (!task)
			continue;
		while ((t = readdir(task)))
			if (is_id(t->d_name))
				n += visit(task, t->d_name, arg);
		closedir(task);
	}
	closedir(root);
	return n;
}

/* Read TID/stat, and TID/status if @with_status: 1 if all were read. */
static int read_task(DIR *task, const char *tid, int with_status)
{
	int tfd = openat(dirfd(task), tid, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ok;

	if (tfd < 0)
		return 0;
	ok = !read_file(tfd, "stat") &&
	     (!with_status || !read_file(tfd, "status"));
	close(tfd);
	return ok;
}

static long walk(int with_status)
{
	return for_each_task(read_task, with_status);
}

static struct pidmap_info recs[CRATE_CHUNK];

/* Every task's record, @chunk records per call. */
static long info(int procfs_fd, size_t chunk)
{
	struct pidmap_req req = {
		.size = sizeof(req),
		.scope = PIDMAP_SCOPE_TASKS,
		.info_size = sizeof(struct pidmap_info),
		.info_mask = ~0ULL >> 1,
	};
	long n = 0, r;

	if (procfs_fd >= 0) {
		req.filter = PIDMAP_VIEW_PROCFS;
		req.procfs_fd = procfs_fd;
	}
	while ((r = sys_pidmap_info(&req, recs, chunk)) > 0) {
		n += r;
		req.last_id = recs[r - 1].tid;
	}
	return r < 0 ? -1 : n;
}

static long per_pidfd(int procfs_fd)
{
	struct pidmap_req req = {
		.size = sizeof(req),
		.scope = PIDMAP_SCOPE_TASKS,
		.filter = PIDMAP_VIEW_PROCFS,
		.procfs_fd = procfs_fd,
	};
	static __u32 ids[1 << 16];
	struct pidfd_info pi;
	long n = 0, r, i, got = 0;

	while ((r = syscall(473, &req, ids + n, 4096, 0)) > 0) {
		n += r;
		req.last_id = ids[n - 1];
	}
	for (i = 0; i < n; i++) {
		int fd = syscall(SYS_pidfd_open, ids[i], PIDFD_THREAD);

		if (fd < 0)
			continue;
		memset(&pi, 0, sizeof(pi));
		pi.mask = PIDFD_INFO_CGROUPID | PIDFD_INFO_EXIT;
		if (!ioctl(fd, PIDFD_GET_INFO, &pi))
			got++;
		close(fd);
	}
	return got;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Listing: the /proc walks and the calls that replace them. */
static int count_task(DIR *task, const char *tid, int arg)
{
	(void)task;
	(void)tid;
	(void)arg;
	return 1;
}

static long list_tasks_walk(void)
{
	return for_each_task(count_task, 0);
}

static long list_procs_walk(void)
{
	DIR *root = opendir("/proc");
	struct dirent *p;
	long n = 0;

	while ((p = readdir(root)))
		n += is_id(p->d_name);
	closedir(root);
	return n;
}

static __u32 idbuf[1024];

static long list_pidmap(__u32 scope, int procfs_fd)
{
	struct pidmap_req req = {
		.size = sizeof(req),
		.scope = scope,
		.filter = PIDMAP_VIEW_PROCFS,
		.procfs_fd = procfs_fd,
	};
	long n = 0, r;

	while ((r = syscall(473, &req, idbuf, 1024, 0)) > 0) {
		n += r;
		req.last_id = idbuf[r - 1];
	}
	return r < 0 ? -1 : n;
}

static long list_fds_walk(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the directory's own fd */
}

static long list_fdmap(int procfs_fd)
{
	struct fdmap_req req = {
		.size = sizeof(req),
		.pidfd = -10001,	/* PIDFD_SELF_THREAD_GROUP */
		.view = FDMAP_VIEW_PROCFS,
		.procfs_fd = procfs_fd,
	};
	long n = 0, r;

	while ((r = syscall(475, &req, (int *)idbuf, 1024, 0)) > 0) {
		n += r;
		req.first_fd = idbuf[r - 1] + 1;
	}
	return r < 0 ? -1 : n;
}

/* bench list NPROCS THREADS: the three listings, walk against the call */
static long listing_case(int k, int procfs)
{
	switch (k) {
	case 0: return list_tasks_walk();
	case 1: return list_pidmap(PIDMAP_SCOPE_TASKS, procfs);
	case 2: return list_procs_walk();
	case 3: return list_pidmap(PIDMAP_SCOPE_PROCS, procfs);
	case 4: return list_fds_walk();
	default: return list_fdmap(procfs);
	}
}

static long refresh_case(int k, int procfs)
{
	switch (k) {
	case 0: return walk(1);
	case 1: return walk(0);
	case 2: return info(procfs, CHUNK);
	case 3: return info(-1, CHUNK);
	case 4: return info(procfs, CRATE_CHUNK);
	default: return per_pidfd(procfs);
	}
}

/*
 * Run @n cases ROUNDS times, interleaved, and print each one's median and
 * range, and how many times faster than case @base[k] (and @base2) it is.
 */
static void run_cases(const char *tag, const char *const *name, int n,
		      long (*run)(int k, int procfs), int procfs,
		      const int *base, int base2)
{
	double t[8][ROUNDS], t0;
	long cnt[8] = { 0 };
	int r, k;

	for (r = 0; r < ROUNDS; r++) {
		for (k = 0; k < n; k++) {
			t0 = now();
			cnt[k] = run(k, procfs);
			t[k][r] = now() - t0;
		}
	}
	for (k = 0; k < n; k++)
		qsort(t[k], ROUNDS, sizeof(double), cmpd);
	for (k = 0; k < n; k++) {
		printf("%s %-14s n=%ld median=%.3f ms range=%.3f-%.3f ms %s/this=%.2fx",
		       tag, name[k], cnt[k], t[k][ROUNDS / 2] * 1e3,
		       t[k][0] * 1e3, t[k][ROUNDS - 1] * 1e3, name[base[k]],
		       t[base[k]][ROUNDS / 2] / t[k][ROUNDS / 2]);
		if (base2 >= 0)
			printf(" %s/this=%.2fx", name[base2],
			       t[base2][ROUNDS / 2] / t[k][ROUNDS / 2]);
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	int list = argc > 1 && !strcmp(argv[1], "list");
	int procs = argc > 1 + list ? atoi(argv[1 + list]) : 0;
	int threads = argc > 2 + list ? atoi(argv[2 + list]) : 1;
	int procfs = open("/proc", O_RDONLY | O_DIRECTORY);

	spawn(procs, threads);
	sleep(2);
	if (list) {
		static const char *const name[] = {
			"tasks-walk", "tasks-pidmap", "procs-walk",
			"procs-pidmap", "fds1000-walk", "fds1000-fdmap" };
		static const int base[] = { 0, 0, 2, 2, 4, 4 };
		int fd = open("/dev/null", O_RDONLY), i;

		for (i = 0; i < 1000 - 4; i++)
			dup(fd);
		run_cases("V3-LIST", name, 6, listing_case, procfs, base, -1);
	} else {
		static const char *const name[] = {
			"walk", "walk-stat", "info-procfs", "info-default",
			"info-procfs512", "pidfd" };
		static const int base[] = { 0, 0, 0, 0, 0, 0 };

		run_cases("V3-BENCH", name, 6, refresh_case, procfs, base, 1);
	}
	kill(0, SIGKILL);
	return 0;
}
