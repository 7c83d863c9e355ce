/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Shared helpers for the pidmap/fdmap guest reliability programs.
 *
 * The programs are built by `cargo xtask` against the series' uapi headers
 * (crates/pidmap/abi/, on the include path), so they also build against
 * the headers of a kernel without the series; the raw calls are in
 * pidmap_syscalls.h.
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

#include "pidmap_syscalls.h"
#include "proc_field.h"

/* kselftest exit codes: the runner treats anything but 0 as a failure. */
#define KSFT_PASS 0
#define KSFT_FAIL 1
#define KSFT_SKIP 4

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

/*
 * One check of a test that counts its checks: adds 1 to *@checks and, if
 * !@ok, 1 to *@failures and prints the message.  Atomic, so the counters
 * may live in memory that forked processes share.
 */
__attribute__((format(printf, 4, 5), unused))
static void pt_check(unsigned long *checks, unsigned long *failures, int ok,
		     const char *fmt, ...)
{
	__atomic_fetch_add(checks, 1, __ATOMIC_RELAXED);
	if (!ok) {
		va_list ap;

		va_start(ap, fmt);
		pt_msg("FAIL", fmt, ap);
		va_end(ap);
		__atomic_fetch_add(failures, 1, __ATOMIC_RELAXED);
	}
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
	case EBADF: return "EBADF";
	case E2BIG: return "E2BIG";
	default: return "E?";
	}
}

/* ------------------------------------------------------------------ */
/* Syscall presence                                                    */
/* ------------------------------------------------------------------ */

/*
 * Probe the three calls: a valid nr-0 call must return 0 and an unknown
 * flag must be EINVAL.  Only ENOSYS (an unpatched kernel) may skip, and not
 * when the runner demands the syscalls (PIDMAP_REQUIRE_SYSCALL=1, set by
 * `cargo xtask qemu-test`); any other answer (EPERM from a seccomp filter
 * included) is a failure.  Never decide from uname.
 */
static __attribute__((unused)) void pt_require_syscalls(void)
{
	static const char *const names[] = { "pidmap", "pidmap_info", "fdmap" };
	const char *req = getenv("PIDMAP_REQUIRE_SYSCALL");
	int required = req && strcmp(req, "1") == 0;
	int k;

	for (k = 0; k < 3; k++) {
		struct pidmap_req pr;
		struct fdmap_req fr;
		unsigned int bad;
		long r;
		int e;

		for (bad = 0; bad < 2; bad++) {
			unsigned int flags = bad ? 0x80000000u : 0;

			pidmap_req_init(&pr, PIDMAP_SCOPE_PROCS, 0, 0, 0, 0);
			if (k == 1) {
				pr.info_size = sizeof(struct pidmap_info);
				pr.info_mask = PIDMAP_INFO_ALL_FIELDS;
			}
			memset(&fr, 0, sizeof(fr));
			fr.size = sizeof(fr);
			fr.pidfd = PIDFD_SELF_THREAD_GROUP;
			errno = 0;
			r = k == 0 ? sys_pidmap(&pr, NULL, 0, flags)
			  : k == 1 ? sys_pidmap_info(&pr, NULL, 0, flags)
				   : sys_fdmap(&fr, NULL, 0, flags);
			e = errno;
			if (r == -1 && e == ENOSYS && !required) {
				printf("%s: SKIP: %s syscall unavailable (ENOSYS); "
				       "set PIDMAP_REQUIRE_SYSCALL=1 to make this a failure\n",
				       pt_name, names[k]);
				exit(KSFT_SKIP);
			}
			if (!bad && r != 0) {
				pt_err("probe %s(valid, NULL, 0) = %ld errno %s, want 0", names[k],
				       r, pt_errname(e));
				exit(KSFT_FAIL);
			}
			if (bad && (r != -1 || e != EINVAL)) {
				pt_err("probe %s(flags 0x80000000) = %ld errno %s, want EINVAL",
				       names[k], r, pt_errname(e));
				exit(KSFT_FAIL);
			}
		}
	}
}

/* A pidfd of @pid (a thread's, with PIDFD_THREAD, if it is no leader); dies on failure. */
static __attribute__((unused)) int pt_pidfd(pid_t pid, unsigned int flags)
{
	int fd = sys_pidfd_open(pid, flags);

	if (fd < 0)
		pt_die("pidfd_open(%d, %#x)", (int)pid, flags);
	return fd;
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
/* Small files (sysfs, debugfs, /proc/sys, selinuxfs)                  */
/* ------------------------------------------------------------------ */

/* Write @text to @path in one write(2): 0, -errno, or -EIO if short. */
static inline int pt_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(text);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return (int)n;
	return (size_t)n == len ? 0 : -EIO;
}

/* The decimal number that @path starts with, or -1. */
static inline long pt_read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
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
	unsigned long order;	/* an id at or below the cursor */
	unsigned long overrun;	/* a call returned more than nr */
	unsigned long records;	/* pidmap_info(2) records read */
	unsigned long badrec;	/* a record whose mask, tgid or pidfs_id is wrong */
};

/* What an enumeration calls. */
enum pt_kind {
	PT_PIDMAP,	/* pidmap(2): ids */
	PT_PIDMAP_INFO,	/* pidmap_info(2): records of every field, their tids */
	PT_FDMAP,	/* fdmap(2): fd numbers */
};

static inline const char *pt_scope_name(__u32 scope)
{
	switch (scope) {
	case PIDMAP_SCOPE_PROCS: return "PROCS";
	case PIDMAP_SCOPE_TASKS: return "TASKS";
	case PIDMAP_SCOPE_THREADS: return "THREADS";
	case PIDMAP_SCOPE_CHILDREN: return "CHILDREN";
	default: return "SCOPE?";
	}
}

/*
 * Enumerate with @chunk slots per call, resuming after the last id
 * returned (pidmap, pidmap_info: last_id = that id, exclusive; fdmap:
 * first_fd = that fd + 1, inclusive), as the ABI prescribes, until a call
 * returns 0.  @kind says which call; @scope and @filter are pidmap's
 * (ignored by fdmap); @pidfd is the target (THREADS, CHILDREN, fdmap: a
 * pidfd or PIDFD_SELF_*; PROCS, TASKS: 0); @view_fd > 0 is the procfs
 * view, else the default one.
 *
 * Checks that every call's output is strictly ascending and above the
 * cursor, which is also what makes duplicates across calls impossible; any
 * violation is counted (a repeat as a dup, a step back as an order error)
 * rather than aborting, so a stress run reports totals.  Records must have
 * exactly the fields asked for (every field: PIDMAP_INFO_ALL_FIELDS, whatever
 * the task), a tgid and a pidfs id.
 * Returns 0, the errno of the failing call, or EDEADLK when a call returned
 * ids but none of them advanced the cursor (the loop could not terminate).
 */
static __attribute__((unused)) int pt_enumerate_view(enum pt_kind kind, int view_fd, __u32 scope,
			int pidfd, __u32 filter, unsigned int chunk,
			struct pt_ids *out, struct pt_enum_stats *st)
{
	struct pidmap_info recs[64];
	__u32 ids[256];
	int fds[256];
	__u64 cursor = 0;	/* pidmap: last_id; fdmap: first_fd */
	long prev = -1;

	if (chunk > (kind == PT_PIDMAP_INFO ? 64 : 256))
		chunk = kind == PT_PIDMAP_INFO ? 64 : 256;
	if (chunk == 0)
		chunk = 1;
	pt_ids_clear(out);
	for (;;) {
		long r, i;

		switch (kind) {
		case PT_PIDMAP_INFO:
			r = pidmap_info_list(scope, pidfd, view_fd, filter, cursor, recs, chunk,
					     sizeof(recs[0]), PIDMAP_INFO_ALL_FIELDS);
			break;
		case PT_FDMAP:
			r = fdmap_list(pidfd, view_fd, (__u32)cursor, fds, chunk);
			break;
		default:
			r = pidmap_list(scope, pidfd, view_fd, filter, cursor, ids, chunk);
			break;
		}
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
			long x;

			if (kind == PT_PIDMAP_INFO) {
				x = recs[i].tid;
				st->records++;
				if (recs[i].mask != PIDMAP_INFO_ALL_FIELDS || recs[i].tgid <= 0 ||
				    !recs[i].pidfs_id)
					st->badrec++;
			} else {
				x = kind == PT_FDMAP ? (long)fds[i] : (long)ids[i];
			}
			/*
			 * Resuming after the last id means anything <= prev
			 * is either a repeat (already in @out) or a step back.
			 * Neither is stored, so @out stays sorted.
			 */
			if (x <= prev || (kind != PT_FDMAP && x <= (long)cursor) ||
			    (kind == PT_FDMAP && x < (long)cursor)) {
				if (pt_ids_has(out, (int)x))
					st->dups++;
				else
					st->order++;
				continue;
			}
			pt_ids_push(out, (int)x);
			prev = x;
		}
		/* A call with nothing new would loop forever: report it. */
		if (prev < 0 || (kind == PT_FDMAP ? prev < (long)cursor : prev <= (long)cursor))
			return EDEADLK;
		if (prev >= 0x7fffffff)
			return 0;
		cursor = kind == PT_FDMAP ? (__u64)prev + 1 : (__u64)prev;
	}
}

/* The default view (pidmap) or the caller's pid namespace (fdmap). */
static __attribute__((unused)) int pt_enumerate(enum pt_kind kind, __u32 scope, int pidfd,
			__u32 filter, unsigned int chunk, struct pt_ids *out,
			struct pt_enum_stats *st)
{
	return pt_enumerate_view(kind, 0, scope, pidfd, filter, chunk, out, st);
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

/*
 * The thread groups, found without the leader marks that PIDMAP_SCOPE_PROCS and
 * (with the series) /proc readdir both walk: the Tgid: of every task an
 * SCOPE_TASKS walk lists.  Tasks that exit meanwhile are skipped; the caller
 * retries a comparison that a coming or going task disturbed.
 */
static __attribute__((unused)) int pt_tgids_of_all_tasks(__u32 filter, struct pt_ids *out)
{
	struct pt_enum_stats st = { 0 };
	struct pt_ids all = { 0 };
	size_t i;
	int e;

	pt_ids_clear(out);
	e = pt_enumerate(PT_PIDMAP, PIDMAP_SCOPE_TASKS, 0, filter, 256, &all, &st);
	if (e)
		return e;
	for (i = 0; i < all.n; i++) {
		int tgid = proc_tgid_of(all.v[i]);

		if (tgid > 0)
			pt_ids_push(out, tgid);
	}
	pt_ids_free(&all);
	pt_ids_sort(out);
	/* Deduplicate: each group once. */
	if (out->n) {
		size_t k = 1;

		for (i = 1; i < out->n; i++)
			if (out->v[i] != out->v[k - 1])
				out->v[k++] = out->v[i];
		out->n = k;
	}
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

/*
 * kthreadd, found by its flags rather than assumed to be pid 2 (in a pid
 * namespace it has no number at all): the kernel thread whose parent is
 * 0 (field 4 of /proc/PID/stat).  -1 when this /proc shows none.
 */
static __attribute__((unused)) int pt_kthreadd(void)
{
	struct pt_ids tg = { 0 };
	int found = -1;
	size_t i;

	if (pt_readdir_ids("/proc", &tg))
		return -1;
	for (i = 0; i < tg.n && found < 0; i++) {
		char path[64], buf[1024], *p;
		int ppid;

		if (pt_is_kthread(tg.v[i]) != 1)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", tg.v[i]);
		if (proc_read_file(path, buf, sizeof(buf)) < 0)
			continue;
		p = strrchr(buf, ')');
		if (p && sscanf(p + 1, " %*c %d", &ppid) == 1 && ppid == 0)
			found = tg.v[i];
	}
	pt_ids_free(&tg);
	return found;
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
