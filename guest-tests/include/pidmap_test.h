/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Shared helpers for the pidmap/fdmap guest reliability programs.
 *
 * The programs are built by `cargo xtask` against the patched uapi headers,
 * but must also build on a plain host (where <linux/pidmap.h> does not
 * exist), so every ABI constant has a fallback (pidmap_uapi.h).
 *
 * Everything here is static inline / static: each test is one .c file.
 */
#ifndef PIDMAP_TEST_H
#define PIDMAP_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pidmap_uapi.h"
#include "proc_field.h"

/* kselftest exit codes: the runner treats anything but 0 as a failure. */
#define KSFT_PASS 0
#define KSFT_FAIL 1
#define KSFT_SKIP 4

#ifdef PIDMAP_TEST_EMULATE
/*
 * Host self-test of the test programs themselves (build with
 * -DPIDMAP_TEST_EMULATE): the two calls emulated from /proc, with the ABI's
 * argument checks, and user copies through process_vm_writev() so a bad
 * buffer gives EFAULT instead of a crash.  Never used for a real result.
 */
#include <sys/uio.h>
int pt_emu_readdir(const char *path, int *v, int cap);
static long pt_emu_copy(int *dst, const int *src, long n)
{
	struct iovec l = { (void *)src, (size_t)n * sizeof(int) };
	struct iovec r = { dst, (size_t)n * sizeof(int) };
	ssize_t w;

	if (n == 0)
		return 0;
	w = process_vm_writev(getpid(), &l, 1, &r, 1, 0);
	if (w <= 0) {
		errno = EFAULT;
		return -1;
	}
	return w / (long)sizeof(int);
}

static int pt_emu_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static long pt_emu_list(const char *path, int *ids, unsigned int count,
			int start, int enoent)
{
	static __thread int v[65536];
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0, k = 0, i;

	if (!d) {
		errno = errno == ENOENT ? enoent : errno;
		return -1;
	}
	while ((de = readdir(d)) != NULL && n < 65536) {
		char *end;
		long x = strtol(de->d_name, &end, 10);

		if (!*end && end != de->d_name && x >= start)
			v[n++] = (int)x;
	}
	closedir(d);
	qsort(v, (size_t)n, sizeof(int), pt_emu_cmp);
	for (i = 0; i < n; i++)
		if (!k || v[i] != v[k - 1])
			v[k++] = v[i];
	if ((unsigned int)k > count)
		k = (int)count;
	return pt_emu_copy(ids, v, k);
}

static inline long sys_pidmap(pid_t pid, int *pids, unsigned int count,
			      int start, unsigned int flags)
{
	unsigned int mode = flags & PIDMAP_MODE_MASK;
	char path[64];

	if ((flags & ~(PIDMAP_MODE_MASK | PIDMAP_IGNORE_KTHREADS)) || start < 0 ||
	    pid < 0 || __builtin_popcount(mode) != 1 ||
	    (pid && (mode == PIDMAP_PROC || mode == PIDMAP_ALL_TASKS))) {
		errno = EINVAL;
		return -1;
	}
	if (count == 0)
		return 0;
	if (!pid)
		pid = getpid();
	switch (mode) {
	case PIDMAP_PROC:
		return pt_emu_list("/proc", pids, count, start, ESRCH);
	case PIDMAP_TASKS:
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		return pt_emu_list(path, pids, count, start, ESRCH);
	case PIDMAP_ALL_TASKS:
	case PIDMAP_CHILDREN:
	default: {
		/* Emulated coarsely: enough to exercise the checkers. */
		static __thread int v[65536];
		DIR *d = opendir("/proc");
		struct dirent *de;
		int n = 0, k = 0, i;

		if (mode == PIDMAP_CHILDREN) {
			snprintf(path, sizeof(path), "/proc/%d", pid);
			if (access(path, F_OK)) {
				errno = ESRCH;
				return -1;
			}
		}
		if (!d)
			return -1;
		while ((de = readdir(d)) != NULL) {
			char buf[512], *p;
			int tg = atoi(de->d_name), fd;
			ssize_t r;

			if (tg <= 0)
				continue;
			if (mode == PIDMAP_ALL_TASKS) {
				static __thread int t[4096];
				int m, j;

				snprintf(path, sizeof(path), "/proc/%d/task", tg);
				m = pt_emu_readdir(path, t, 4096);
				for (j = 0; j < m && n < 65536; j++)
					if (t[j] >= start)
						v[n++] = t[j];
				continue;
			}
			snprintf(path, sizeof(path), "/proc/%d/stat", tg);
			fd = open(path, O_RDONLY);
			if (fd < 0)
				continue;
			r = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			if (r <= 0)
				continue;
			buf[r] = 0;
			p = strrchr(buf, ')');
			if (p && atoi(p + 4) == pid && tg >= start && n < 65536)
				v[n++] = tg;
		}
		closedir(d);
		qsort(v, (size_t)n, sizeof(int), pt_emu_cmp);
		for (i = 0; i < n; i++)
			if (!k || v[i] != v[k - 1])
				v[k++] = v[i];
		if ((unsigned int)k > count)
			k = (int)count;
		return pt_emu_copy(pids, v, k);
	}
	}
}

int pt_emu_readdir(const char *path, int *v, int cap)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL && n < cap)
		if (atoi(de->d_name) > 0)
			v[n++] = atoi(de->d_name);
	closedir(d);
	return n;
}

static inline long sys_fdmap(pid_t pid, int *fds, unsigned int count,
			     int start, unsigned int flags)
{
	char path[64];

	if (flags || start < 0 || pid < 0) {
		errno = EINVAL;
		return -1;
	}
	if (count == 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/fd", pid ? pid : getpid());
	return pt_emu_list(path, fds, count, start, ESRCH);
}
#endif

static inline pid_t pt_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* ------------------------------------------------------------------ */
/* Diagnostics                                                         */
/* ------------------------------------------------------------------ */

static __attribute__((unused)) const char *pt_name = "pidmap-test";

static __attribute__((unused)) void pt_msg(const char *level, const char *fmt, va_list ap)
{
	/* One line per message, prefixed so the serial log stays greppable. */
	char buf[1024];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "%s: %s: %s\n", pt_name, level, buf);
	fflush(stderr);
}

__attribute__((format(printf, 1, 2), unused)) static void pt_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pt_msg("info", fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 1, 2), unused)) static void pt_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pt_msg("FAIL", fmt, ap);
	va_end(ap);
}

/* Setup errors (fork, mmap, ...) are not kernel findings: bail out loudly. */
__attribute__((format(printf, 1, 2), noreturn, unused)) static void pt_die(const char *fmt, ...)
{
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	pt_msg("FATAL", fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: FATAL: (errno %d: %s)\n", pt_name, saved, strerror(saved));
	exit(KSFT_FAIL);
}

static inline const char *pt_errname(int e)
{
	switch (e) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case ESRCH: return "ESRCH";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOSYS: return "ENOSYS";
	case ENOENT: return "ENOENT";
	case ENOMEM: return "ENOMEM";
	case EINTR: return "EINTR";
	default: return "E?";
	}
}

/* ------------------------------------------------------------------ */
/* Syscall presence                                                    */
/* ------------------------------------------------------------------ */

/*
 * Probe with an invalid flag: a patched kernel must say EINVAL, an unpatched
 * one ENOSYS, and a seccomp sandbox usually EPERM.  Never decide from uname.
 * On absence: fail when the runner demands the syscall (PIDMAP_REQUIRE_SYSCALL=1,
 * set by `cargo xtask qemu-test`), otherwise skip with the kselftest code.
 */
static __attribute__((unused)) void pt_require_syscalls(void)
{
	const char *req = getenv("PIDMAP_REQUIRE_SYSCALL");
	int required = req && strcmp(req, "1") == 0;
	long r;
	int e;

	errno = 0;
	r = sys_pidmap(0, NULL, 0, 0, 0x80000000u);
	e = errno;
	if (r == -1 && (e == ENOSYS || e == EPERM)) {
		if (required) {
			pt_err("pidmap syscall %d unavailable (%s) but PIDMAP_REQUIRE_SYSCALL=1",
			       __NR_pidmap, pt_errname(e));
			exit(KSFT_FAIL);
		}
		printf("%s: SKIP: pidmap syscall %d unavailable (%s); "
		       "set PIDMAP_REQUIRE_SYSCALL=1 to make this a failure\n",
		       pt_name, __NR_pidmap, pt_errname(e));
		exit(KSFT_SKIP);
	}
	if (r != -1 || e != EINVAL) {
		pt_err("probe pidmap(0, NULL, 0, 0, 0x80000000) = %ld errno %s, want EINVAL",
		       r, pt_errname(e));
		exit(KSFT_FAIL);
	}
	errno = 0;
	r = sys_fdmap(0, NULL, 0, 0, 0x80000000u);
	e = errno;
	if (r != -1 || e != EINVAL) {
		if (r == -1 && (e == ENOSYS || e == EPERM) && !required) {
			printf("%s: SKIP: fdmap syscall %d unavailable (%s)\n",
			       pt_name, __NR_fdmap, pt_errname(e));
			exit(KSFT_SKIP);
		}
		pt_err("probe fdmap(0, NULL, 0, 0, 0x80000000) = %ld errno %s, want EINVAL",
		       r, pt_errname(e));
		exit(KSFT_FAIL);
	}
}

/* ------------------------------------------------------------------ */
/* Time                                                                */
/* ------------------------------------------------------------------ */

static inline double pt_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		pt_die("clock_gettime");
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline int pt_env_int(const char *name, int def)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return def;
	n = strtol(v, &end, 10);
	if (*end || n < 0 || n > 1000000000)
		return def;
	return (int)n;
}

/* ------------------------------------------------------------------ */
/* Integer sets (sorted int arrays)                                    */
/* ------------------------------------------------------------------ */

struct pt_ids {
	int *v;
	size_t n, cap;
};

static inline void pt_ids_clear(struct pt_ids *s)
{
	s->n = 0;
}

static inline void pt_ids_free(struct pt_ids *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

static inline void pt_ids_push(struct pt_ids *s, int x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		int *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			pt_die("realloc");
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x;
}

static __attribute__((unused)) int pt_int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static inline void pt_ids_sort(struct pt_ids *s)
{
	qsort(s->v, s->n, sizeof(int), pt_int_cmp);
}

static inline int pt_ids_has(const struct pt_ids *s, int x)
{
	return s->n && bsearch(&x, s->v, s->n, sizeof(int), pt_int_cmp) != NULL;
}

static inline int pt_ids_equal(const struct pt_ids *a, const struct pt_ids *b)
{
	return a->n == b->n && (a->n == 0 || !memcmp(a->v, b->v, a->n * sizeof(int)));
}

/* Print a short diff of two sorted sets, for failure messages. */
static __attribute__((unused)) void pt_ids_diff(const char *what, const struct pt_ids *got,
			const struct pt_ids *want)
{
	size_t i;
	int shown = 0;

	for (i = 0; i < got->n && shown < 20; i++)
		if (!pt_ids_has(want, got->v[i])) {
			pt_err("%s: %d listed but not expected", what, got->v[i]);
			shown++;
		}
	for (i = 0; i < want->n && shown < 40; i++)
		if (!pt_ids_has(got, want->v[i])) {
			pt_err("%s: %d expected but missing", what, want->v[i]);
			shown++;
		}
	pt_err("%s: got %zu ids, want %zu", what, got->n, want->n);
}

/* ------------------------------------------------------------------ */
/* Chunked enumeration with the ABI's checks                           */
/* ------------------------------------------------------------------ */

struct pt_enum_stats {
	unsigned long calls;	/* syscalls issued */
	unsigned long dups;	/* an id repeated within one enumeration */
	unsigned long order;	/* an id below the previous one or below start */
	unsigned long overrun;	/* a call returned more than count */
};

/*
 * Enumerate with `chunk` slots per call, resuming at last + 1, as the ABI
 * prescribes.  Checks that every call's output is strictly ascending and
 * >= start, which is also what makes duplicates across calls impossible;
 * any violation is counted (a repeat as a dup, a step back as an order
 * error) rather than aborting, so a stress run reports totals.
 * Returns 0, the errno of the failing call, or EDEADLK when a call returned
 * ids but none of them advanced the cursor (the loop could not terminate).
 */
static __attribute__((unused)) int pt_enumerate(int is_fdmap, pid_t pid, unsigned int flags,
			unsigned int chunk, struct pt_ids *out,
			struct pt_enum_stats *st)
{
	int buf[256];
	int start = 0;
	int prev = -1;

	if (chunk > 256)
		chunk = 256;
	pt_ids_clear(out);
	for (;;) {
		long r, i;

		r = is_fdmap ? sys_fdmap(pid, buf, chunk, start, flags)
			     : sys_pidmap(pid, buf, chunk, start, flags);
		st->calls++;
		if (r < 0)
			return errno;
		if (r == 0)
			return 0;
		if ((unsigned long)r > chunk) {
			st->overrun++;
			r = chunk;
		}
		for (i = 0; i < r; i++) {
			int x = buf[i];

			/*
			 * Resuming at last + 1 means anything <= prev is
			 * either a repeat (already in `out`) or a step back.
			 * Neither is stored, so `out` stays sorted.
			 */
			if (x <= prev) {
				if (pt_ids_has(out, x))
					st->dups++;
				else
					st->order++;
				continue;
			}
			pt_ids_push(out, x);
			prev = x;
		}
		/* A call with nothing new would loop forever: report it. */
		if (prev < start)
			return EDEADLK;
		if (prev == 0x7fffffff)
			return 0;
		start = prev + 1;
	}
}

/* ------------------------------------------------------------------ */
/* /proc references                                                    */
/* ------------------------------------------------------------------ */

static inline int pt_parse_id(const char *s)
{
	long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > 0x7fffffff)
			return -1;
	}
	return (int)v;
}

/* Numeric entries of a directory; returns 0 or errno of opendir. */
static __attribute__((unused)) int pt_readdir_ids(const char *path, struct pt_ids *out)
{
	DIR *d = opendir(path);
	struct dirent *de;

	if (!d)
		return errno;
	while ((errno = 0, de = readdir(d)) != NULL) {
		int id = pt_parse_id(de->d_name);

		if (id >= 0)
			pt_ids_push(out, id);
	}
	closedir(d);
	pt_ids_sort(out);
	return 0;
}

/* /proc root: thread-group ids of the pid namespace of this /proc. */
static __attribute__((unused)) int pt_proc_tgids(struct pt_ids *out)
{
	pt_ids_clear(out);
	return pt_readdir_ids("/proc", out);
}

/* /proc + /proc/PID/task: every task id. Processes may vanish: skip them. */
static __attribute__((unused)) int pt_proc_all_tasks(struct pt_ids *out)
{
	struct pt_ids tg = { 0 };
	char path[64];
	size_t i;
	int e;

	pt_ids_clear(out);
	e = pt_readdir_ids("/proc", &tg);
	if (e)
		return e;
	for (i = 0; i < tg.n; i++) {
		snprintf(path, sizeof(path), "/proc/%d/task", tg.v[i]);
		(void)pt_readdir_ids(path, out);
	}
	pt_ids_free(&tg);
	pt_ids_sort(out);
	return 0;
}

/* Is this pid a kernel thread?  PF_KTHREAD (0x00200000) in /proc/PID/stat. */
static __attribute__((unused)) int pt_is_kthread(int pid)
{
	char path[64], buf[1024];
	unsigned long flags = 0;
	char *p;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (proc_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	/* comm may hold spaces and parens: fields restart after the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	/* After ") " come state(3) ppid pgrp session tty_nr tpgid flags(9). */
	for (i = 0; i < 7 && p; i++)
		p = strchr(p + 1, ' ');
	if (!p)
		return -1;
	flags = strtoul(p + 1, NULL, 10);
	return (flags & 0x00200000ul) != 0;
}

/* ------------------------------------------------------------------ */
/* Kernel log: count splats, so a program can report its own number   */
/* ------------------------------------------------------------------ */

static const char *const pt_splat_patterns[] = {
	"BUG:", "WARNING:", "KASAN", "possible circular locking",
	"suspicious RCU usage", "Call Trace", "INFO: task",
};

/*
 * Count splat markers in the kernel ring buffer, or -1 when it cannot be
 * read (not root, or dmesg_restrict on a host).  The xtask harness scans
 * the serial log as well; this count only lets each program report it.
 */
static __attribute__((unused)) long pt_count_splats(void)
{
	int size = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	long count = 0;
	char *buf, *line;
	int n;

	if (size <= 0)
		return -1;
	buf = malloc((size_t)size + 1);
	if (!buf)
		return -1;
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, size);
	if (n < 0) {
		free(buf);
		return -1;
	}
	buf[n] = 0;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		size_t i;

		for (i = 0; i < sizeof(pt_splat_patterns) / sizeof(pt_splat_patterns[0]); i++)
			if (strstr(line, pt_splat_patterns[i])) {
				count++;
				break;
			}
	}
	free(buf);
	return count;
}

/* Splats logged since `before` (from pt_count_splats at program start). */
static __attribute__((unused)) long pt_new_splats(long before)
{
	long now = pt_count_splats();

	if (now < 0 || before < 0)
		return -1;
	return now > before ? now - before : 0;
}

#endif /* PIDMAP_TEST_H */
