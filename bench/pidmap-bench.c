// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * pidmap-bench: pidmap(2), pidmap_info(2) and fdmap(2) (the v3 ABI of
 * kernel-patches/series) against the /proc walks they replace.
 *
 * Every case times a baseline (the /proc way, with opendir/readdir as
 * htop/ps do it) and the new way (a few pidmap/fdmap calls) in the same
 * process, interleaved round by round, and reports the median ns per full
 * enumeration of each side and their ratio.  A separate, untimed pass per
 * side counts the syscalls and the bytes copied to user space for one full
 * enumeration (for readdir: what glibc does, openat + fstat + getdents64
 * until 0 + close; bytes are getdents64's return values).
 *
 * Every call lists through the view of this process's /proc (struct
 * pidmap_req.procfs_fd with PIDMAP_VIEW_PROCFS, fdmap's FDMAP_VIEW_PROCFS),
 * as the crate does, so each side sees what the walk sees; the refresh
 * cases also time the records in the default view.  An enumeration calls
 * until the call returns 0, as the man pages say, with the cursor of the
 * last id (pidmap's exclusive last_id, fdmap's inclusive first_fd).
 *
 * The program creates the task populations itself (fork()ed children that
 * start pthreads and block, or one process with many raw clone() threads)
 * and tears them down after each case.
 *
 * On a kernel without the calls (ENOSYS) it runs the /proc baselines
 * only, reports the new side as unavailable, and exits 0.  The refresh
 * cases (a top-style refresh: every task's stat fields) also report their
 * records as unavailable on a kernel with pidmap(2) but without
 * pidmap_info(2), and time the variants that kernel has; their per-task
 * PIDFD_GET_INFO variant (pidfd_open + ioctl + close per task, a lower
 * bound: it has no comm, state, CPU time, rss or start time) runs on any
 * kernel that has PIDFD_GET_INFO (6.13 on), so also on one without
 * pidmap, where its ids come from the /proc readdirs.
 *
 * Usage: pidmap-bench [--quick] [--json] [--rounds N] [--case NAME]...
 *                     [--threads N] [--procs N] [--info-chunk N]
 *                     [--min-sample-us N] [--list]
 * Environment: PIDMAP_BENCH_THREADS=N  threads of the tgid_scale case.
 *
 * Exit status: 0 ok (a missed target is not an error); 1 on an unexpected
 * error: a failed syscall (at once), or a listing that disagrees with /proc
 * (reported with the ids that differ; the other cases still run), or
 * refresh records that disagree between the variants; 2 usage.
 *
 * Build: gcc -static -O2 -Wall -Wextra -pthread -o pidmap-bench pidmap-bench.c
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * PIDFD_THREAD, PIDFD_SELF_*, PIDFD_GET_INFO and struct pidfd_info from
 * the kernel's uapi header.  It includes <linux/fcntl.h>, whose struct
 * flock clashes with glibc's <fcntl.h>: glibc already gives the O_EXCL
 * that PIDFD_THREAD is, so that header is kept out by its include guard.
 */
#ifndef _LINUX_FCNTL_H
#define _LINUX_FCNTL_H
#define PIDMAP_BENCH_NO_LINUX_FCNTL
#endif
#include <linux/pidfd.h>
#ifdef PIDMAP_BENCH_NO_LINUX_FCNTL
#undef _LINUX_FCNTL_H
#undef PIDMAP_BENCH_NO_LINUX_FCNTL
#endif

/*
 * The series' uapi (<linux/pidmap.h>, <linux/fdmap.h>, or its own copy
 * of them for headers without the series; PIDFD_SELF_*, which live in the
 * <linux/fcntl.h> kept out above) and the raw calls, shared with the
 * guest tests; relative to this file, so the bench still builds with one
 * gcc command.
 */
#include "../guest-tests/include/pidmap_uapi.h"
#include "../guest-tests/include/thread_holder.h"

/*
 * Built by `cargo xtask bench --bpf` with -DPIDMAP_BENCH_BPF, the BPF
 * skeleton of bpf/task_record.bpf.c on the include path and libbpf: the
 * refresh then times the BPF programs too (bpf/task_bpf.h).
 */
#ifdef PIDMAP_BENCH_BPF
#include "bpf/task_bpf.h"
#endif

#define JSON_BEGIN "PIDMAP-BENCH-JSON-BEGIN"
#define JSON_END   "PIDMAP-BENCH-JSON-END"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* pidmap/fdmap output buffers, big enough for every case in one call. */
#define IDBUF_CAP (1u << 16)
static __u32 idbuf[IDBUF_CAP];
static __u32 idbuf2[IDBUF_CAP];
static int fdbuf[IDBUF_CAP];

/*
 * getdents64 buffers of the counting pass, the size glibc's opendir uses:
 * one per nesting level (/proc, then /proc/PID/task inside it).
 */
#define DENTS_BUF 32768
#define DENTS_DEPTH 2
static char dentsbuf[DENTS_DEPTH][DENTS_BUF];
static int dents_depth;

static struct {
	bool quick;
	bool json;
	int rounds;
	long min_sample_ns;
	long threads;	/* tgid_scale */
	long procs;	/* procs_only_10k: processes; tasks_all_*, refresh_10k: tasks */
	long info_chunk;	/* records per pidmap_info(2) call */
	const char *only[16];
	int nonly;
} opt;

static bool have_pidmap, have_fdmap;
static volatile long sink;	/* keeps the compiler from dropping walks */

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "pidmap-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		die("clock_gettime: %m");
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Parse a decimal pid/fd name; -1 if it is not all digits. */
static int parse_id(const char *s)
{
	long v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 0x3fffffff)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return (int)v;
}

/*
 * Syscall and byte accounting of one full enumeration, done in an untimed
 * pass with raw syscalls that mirror what glibc's opendir/readdir/closedir
 * issue (openat, fstat, getdents64 until 0, close).
 */
struct cost {
	long syscalls;
	long bytes;
};

/*
 * Raw-syscall listing of one directory: calls fn(id) for numeric names.
 * fn may list a directory in turn (one level deep): each level has its own
 * buffer.
 */
static long raw_list_dir(const char *path, struct cost *c, bool tolerate_gone,
			 void (*fn)(int id, void *arg, struct cost *c), void *arg)
{
	struct stat st;
	long n = 0;
	char *buf;
	int fd;

	if (dents_depth == DENTS_DEPTH)
		die("raw_list_dir: nested too deep");
	buf = dentsbuf[dents_depth];
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_DIRECTORY);
	c->syscalls++;
	if (fd < 0) {
		if (tolerate_gone && errno == ENOENT)
			return 0;
		die("open %s: %m", path);
	}
	if (fstat(fd, &st))
		die("fstat %s: %m", path);
	c->syscalls++;
	dents_depth++;
	for (;;) {
		long len = syscall(SYS_getdents64, fd, buf, DENTS_BUF);
		long off;

		c->syscalls++;
		if (len < 0)
			die("getdents64 %s: %m", path);
		if (len == 0)
			break;
		c->bytes += len;
		for (off = 0; off < len;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			int id = parse_id(d->d_name);

			if (id >= 0) {
				n++;
				if (fn)
					fn(id, arg, c);
			}
			off += d->d_reclen;
		}
	}
	dents_depth--;
	if (close(fd))
		die("close %s: %m", path);
	c->syscalls++;
	return n;
}

/* ---------------------------------------------------------------------- */
/* The enumerations.  Each returns the number of ids it saw, or dies.     */

/* /proc root readdir: thread-group ids. */
static long walk_proc_root(void *unused)
{
	struct dirent *de;
	long n = 0;
	DIR *d;

	(void)unused;
	d = opendir("/proc");
	if (!d)
		die("opendir /proc: %m");
	errno = 0;
	while ((de = readdir(d))) {
		if (parse_id(de->d_name) >= 0)
			n++;
	}
	if (errno)
		die("readdir /proc: %m");
	closedir(d);
	return n;
}

/*
 * The htop-style walk: /proc root, then /proc/PID/task of every process,
 * calling @on_task(@arg, the task directory, pid, tid) for every task; a
 * process that exits meanwhile is left out.  @on_task must leave errno 0
 * (readdir's end-of-directory test).  Returns the number of tasks.
 * Always inlined: each caller's @on_task is then a direct call, so the
 * timed walk costs what its loop does.
 */
static inline __attribute__((always_inline)) long
for_each_proc_task(void (*on_task)(void *arg, DIR *task_dir, int pid, int tid), void *arg)
{
	struct dirent *de;
	long n = 0;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		die("opendir /proc: %m");
	errno = 0;
	while ((de = readdir(d))) {
		int pid = parse_id(de->d_name);
		struct dirent *dte;
		char path[32];
		DIR *dt;

		if (pid < 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		dt = opendir(path);
		if (!dt) {
			if (errno == ENOENT)	/* exited meanwhile */
				goto next;
			die("opendir %s: %m", path);
		}
		errno = 0;
		while ((dte = readdir(dt))) {
			int tid = parse_id(dte->d_name);

			if (tid < 0)
				continue;
			n++;
			on_task(arg, dt, pid, tid);
		}
		if (errno)
			die("readdir %s: %m", path);
		closedir(dt);
next:
		errno = 0;
	}
	if (errno)
		die("readdir /proc: %m");
	closedir(d);
	return n;
}

static inline void sink_tid(void *arg, DIR *task_dir, int pid, int tid)
{
	(void)arg;
	(void)task_dir;
	(void)pid;
	sink = tid;
}

/* The htop-style walk, ids only. */
static long walk_proc_tasks(void *unused)
{
	(void)unused;
	return for_each_proc_task(sink_tid, NULL);
}

/* readdir of /proc/self/fd, leaving out the directory's own fd. */
static long walk_self_fd(void *unused)
{
	struct dirent *de;
	long n = 0;
	DIR *d;
	int self;

	(void)unused;
	d = opendir("/proc/self/fd");
	if (!d)
		die("opendir /proc/self/fd: %m");
	self = dirfd(d);
	errno = 0;
	while ((de = readdir(d))) {
		int fd = parse_id(de->d_name);

		if (fd >= 0 && fd != self)
			n++;
	}
	if (errno)
		die("readdir /proc/self/fd: %m");
	closedir(d);
	return n;
}

/* Ids of one listing, for the cross-checks. */
struct idlist {
	int *v;
	long n, cap;
};

static void idlist_add(int id, void *arg, struct cost *c)
{
	struct idlist *l = arg;

	(void)c;
	if (l->n == l->cap)
		die("more than %ld ids in one listing", l->cap);
	l->v[l->n++] = id;
}

static void idlist_append(struct idlist *l, const void *ids, long n)
{
	const int *v = ids;	/* __u32 ids and int fds: 4 bytes each */
	long i;

	for (i = 0; i < n; i++)
		idlist_add(v[i], l, NULL);
}

/* ---- The calls of the series (v3) ---- */

/* /proc, opened for reading: the view of every call, and the *at() dir. */
static int proc_fd = -1;

/*
 * The request for @scope (@pidfd: the target of PIDMAP_SCOPE_THREADS and
 * _CHILDREN, else 0), through the view of our /proc or, if !@procfs_view,
 * the default view (ptrace_may_access() per task).
 */
static struct pidmap_req pidmap_req(__u32 scope, int pidfd, bool procfs_view)
{
	struct pidmap_req req;

	pidmap_req_init(&req, scope, pidfd, procfs_view ? proc_fd : 0, 0, 0);
	return req;
}

/* Account one call that returned @r elements of @size bytes. */
static void count_call(struct cost *c, long r, size_t size)
{
	if (!c)
		return;
	c->syscalls++;
	if (r > 0)
		c->bytes += r * (long)size;
}

/*
 * One full pidmap(2) enumeration of @scope (@pidfd as in pidmap_req())
 * into @buf (IDBUF_CAP ids): calls until one returns 0, each resuming
 * after the last id.  Returns the number of ids; a target group that
 * exits meanwhile ends its listing (ESRCH).
 */
static long pidmap_all(__u32 scope, int pidfd, __u32 *buf, struct cost *c)
{
	struct pidmap_req req = pidmap_req(scope, pidfd, true);
	long total = 0;

	for (;;) {
		long r;

		if (total == IDBUF_CAP)
			die("pidmap(scope %u): more than %u ids", scope, IDBUF_CAP);
		r = sys_pidmap(&req, buf + total, IDBUF_CAP - total, 0);
		count_call(c, r, sizeof(*buf));
		if (r < 0) {
			if (errno == ESRCH && pidfd)
				return total;	/* the group exited meanwhile */
			die("pidmap(scope %u, last_id %llu): %m", scope,
			    (unsigned long long)req.last_id);
		}
		if (r > (long)(IDBUF_CAP - total))
			die("pidmap returned %ld > nr %ld", r, (long)(IDBUF_CAP - total));
		if (r == 0)
			return total;
		total += r;
		req.last_id = buf[total - 1];
	}
}

static long new_all_tasks(void *unused)
{
	(void)unused;
	return pidmap_all(PIDMAP_SCOPE_TASKS, 0, idbuf, NULL);
}

static long new_procs(void *unused)
{
	(void)unused;
	return pidmap_all(PIDMAP_SCOPE_PROCS, 0, idbuf, NULL);
}

/*
 * The threads of process @pid into @buf: pidfd_open, pidmap(2) of
 * PIDMAP_SCOPE_THREADS on the pidfd, close.  0 if the process is gone.
 */
static long threads_of(int pid, __u32 *buf, struct cost *c)
{
	long n;
	int pidfd = sys_pidfd_open(pid, 0);

	if (c)
		c->syscalls += 2;	/* pidfd_open, close */
	if (pidfd < 0) {
		if (errno == ESRCH)
			return 0;	/* exited meanwhile */
		die("pidfd_open(%d): %m", pid);
	}
	n = pidmap_all(PIDMAP_SCOPE_THREADS, pidfd, buf, c);
	close(pidfd);
	return n;
}

/*
 * What a grouping tool does: the processes, then each one's threads
 * (appended to @ids unless NULL).
 */
static long grouped(struct cost *c, struct idlist *ids)
{
	long nproc = pidmap_all(PIDMAP_SCOPE_PROCS, 0, idbuf, c);
	long n = 0, i;

	for (i = 0; i < nproc; i++) {
		long nt = threads_of((int)idbuf[i], idbuf2, c);

		if (ids)
			idlist_append(ids, idbuf2, nt);
		n += nt;
	}
	return n;
}

static long new_grouped(void *unused)
{
	(void)unused;
	return grouped(NULL, NULL);
}

/*
 * One full fdmap(2) enumeration of our own table (PIDFD_SELF_THREAD_GROUP)
 * through our /proc's view, each call from the fd after the last one.
 */
static long fdmap_all(struct cost *c)
{
	__u32 first_fd = 0;
	long total = 0;

	for (;;) {
		long r;

		if (total == IDBUF_CAP)
			die("fdmap: more than %u fds", IDBUF_CAP);
		r = fdmap_list(PIDFD_SELF_THREAD_GROUP, proc_fd, first_fd, fdbuf + total,
			       IDBUF_CAP - total);
		count_call(c, r, sizeof(*fdbuf));
		if (r < 0)
			die("fdmap(first_fd %u): %m", first_fd);
		if (r > (long)(IDBUF_CAP - total))
			die("fdmap returned %ld > nr %ld", r, (long)(IDBUF_CAP - total));
		if (r == 0)
			return total;
		total += r;
		first_fd = (__u32)fdbuf[total - 1] + 1;
	}
}

static long new_fds(void *unused)
{
	(void)unused;
	return fdmap_all(NULL);
}

/*
 * The untimed pass of each side of a listing case: one full enumeration
 * that counts its syscalls and bytes in @c and collects its ids in @ids,
 * for the cross-check.  Returns the number of ids.
 */

typedef long (*pass_fn)(struct cost *c, struct idlist *ids);

static void idlist_add_tasks(int pid, void *arg, struct cost *c)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	raw_list_dir(path, c, true, idlist_add, arg);
}

static long pass_proc_tasks(struct cost *c, struct idlist *ids)
{
	raw_list_dir("/proc", c, false, idlist_add_tasks, ids);
	return ids->n;
}

static long pass_proc_root(struct cost *c, struct idlist *ids)
{
	return raw_list_dir("/proc", c, false, idlist_add, ids);
}

/* The fd the next open() gets: the lowest free one. */
static int next_fd(void)
{
	int fd = fcntl(proc_fd, F_DUPFD_CLOEXEC, 0);

	if (fd < 0)
		die("F_DUPFD: %m");
	close(fd);
	return fd;
}

static long pass_self_fd(struct cost *c, struct idlist *ids)
{
	int self = next_fd();
	long i;

	raw_list_dir("/proc/self/fd", c, false, idlist_add, ids);
	/* The listing includes the directory's own fd: leave it out. */
	for (i = 0; i < ids->n; i++)
		if (ids->v[i] == self)
			ids->v[i] = ids->v[--ids->n];
	return ids->n;
}

static long pass_new_all_tasks(struct cost *c, struct idlist *ids)
{
	long n = pidmap_all(PIDMAP_SCOPE_TASKS, 0, idbuf, c);

	idlist_append(ids, idbuf, n);
	return n;
}

static long pass_new_procs(struct cost *c, struct idlist *ids)
{
	long n = pidmap_all(PIDMAP_SCOPE_PROCS, 0, idbuf, c);

	idlist_append(ids, idbuf, n);
	return n;
}

static long pass_grouped(struct cost *c, struct idlist *ids)
{
	return grouped(c, ids);
}

static long pass_new_fds(struct cost *c, struct idlist *ids)
{
	long n = fdmap_all(c);

	idlist_append(ids, fdbuf, n);
	return n;
}

/* ---------------------------------------------------------------------- */
/* Timing.                                                                 */

typedef long (*enum_fn)(void *arg);

struct side {
	enum_fn fn;
	void *arg;
	long iters;		/* per sample, so that a sample >= min_sample_ns */
	double samples[64];
	long entries;		/* of the last enumeration */
};

static double sample(struct side *s)
{
	uint64_t t0, t1;
	long i, n = 0;

	t0 = now_ns();
	for (i = 0; i < s->iters; i++)
		n = s->fn(s->arg);
	t1 = now_ns();
	s->entries = n;
	return (double)(t1 - t0) / (double)s->iters;
}

static void calibrate(struct side *s)
{
	uint64_t t0, t1, dt;

	s->fn(s->arg);		/* warm up caches and dentries */
	t0 = now_ns();
	s->entries = s->fn(s->arg);
	t1 = now_ns();
	dt = t1 - t0 ? t1 - t0 : 1;
	s->iters = (long)((uint64_t)opt.min_sample_ns / dt) + 1;
	if (s->iters > (1L << 22))
		s->iters = 1L << 22;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
	double tmp[64];

	memcpy(tmp, v, n * sizeof(*v));
	qsort(tmp, n, sizeof(*tmp), cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/*
 * Time the @n sides of @v (NULL entries: not available), interleaved: each
 * round samples every side, rotating which goes first.
 */
static void run_sides(struct side **v, int n)
{
	int r, i;

	for (i = 0; i < n; i++)
		if (v[i])
			calibrate(v[i]);
	for (r = 0; r < opt.rounds; r++)
		for (i = 0; i < n; i++) {
			struct side *s = v[(r + i) % n];

			if (s)
				s->samples[r] = sample(s);
		}
}

/* Time @a against @b (NULL: not available); medians in *ma and *mb. */
static void run_pair(struct side *a, struct side *b, double *ma, double *mb)
{
	struct side *v[2] = { a, b };

	run_sides(v, 2);
	*ma = a ? median(a->samples, opt.rounds) : -1;
	*mb = b ? median(b->samples, opt.rounds) : -1;
}

/*
 * A fixed reference workload: 64 getppid() calls.  The tgid_scale case
 * cannot interleave idle and loaded (100k threads take minutes to create),
 * so it times this alongside both phases to see how much the machine's
 * speed drifted between them (other guests and builds share the host).
 */
static long ref_syscalls(void *unused)
{
	int i;

	(void)unused;
	for (i = 0; i < 64; i++)
		sink = syscall(SYS_getppid);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Results.                                                                */

struct result {
	char name[48];
	double base_ns, new_ns;		/* new_ns < 0: not available */
	double ratio;			/* < 0: not available */
	double target;
	bool lower_better;		/* tgid_scale: ratio = loaded / idle */
	long entries;			/* ids in one enumeration */
	long base_sys, base_bytes, new_sys, new_bytes;
	long new_entries;		/* ids the syscall returned */
	bool agree;			/* both sides saw the same ids */
	long base_iters, new_iters;
	char extra[2048];		/* extra JSON members, "" or ", ..." */
};

static struct result results[16];
static int nresults;

static struct result *add_result(const char *name, double target, bool lower)
{
	struct result *r;

	if (nresults == ARRAY_SIZE(results))
		die("too many results");
	r = &results[nresults++];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->target = target;
	r->lower_better = lower;
	r->new_ns = r->ratio = -1;
	r->agree = true;
	return r;
}

static bool met(const struct result *r)
{
	if (r->ratio < 0)
		return false;
	return r->lower_better ? r->ratio <= r->target : r->ratio >= r->target;
}

static void print_table(void)
{
	int i;

	note("\n%-32s %14s %14s %9s %8s %5s %8s %9s %9s %10s %10s\n",
	     "case", "baseline_ns", "new_ns", "ratio", "target", "met",
	     "entries", "sys_base", "sys_new", "bytes_base", "bytes_new");
	for (i = 0; i < nresults; i++) {
		const struct result *r = &results[i];
		char nw[32] = "n/a", ra[32] = "n/a", sn[32] = "n/a", bn[32] = "n/a";

		if (r->new_ns >= 0) {
			snprintf(nw, sizeof(nw), "%.0f", r->new_ns);
			snprintf(ra, sizeof(ra), "%.2f", r->ratio);
			snprintf(sn, sizeof(sn), "%ld", r->new_sys);
			snprintf(bn, sizeof(bn), "%ld", r->new_bytes);
		}
		note("%-32s %14.0f %14s %9s %3s%-5g %5s %8ld %9ld %9s %10ld %10s\n",
		     r->name, r->base_ns, nw, ra, r->lower_better ? "<=" : ">=",
		     r->target, r->ratio < 0 ? "n/a" : met(r) ? "yes" : "NO",
		     r->entries, r->base_sys, sn, r->base_bytes, bn);
	}
}

static void print_json(void)
{
	int i;

	printf("%s\n{\n", JSON_BEGIN);
	for (i = 0; i < nresults; i++) {
		const struct result *r = &results[i];

		printf("  \"%s\": {\"baseline_ns\": %.1f, ", r->name, r->base_ns);
		if (r->new_ns >= 0)
			printf("\"new_ns\": %.1f, \"ratio\": %.3f, ", r->new_ns, r->ratio);
		else
			printf("\"new_ns\": null, \"ratio\": null, ");
		printf("\"target\": %g, \"better\": \"%s\", \"met\": %s, ",
		       r->target, r->lower_better ? "lower" : "higher",
		       r->ratio < 0 ? "null" : met(r) ? "true" : "false");
		printf("\"entries\": %ld, \"baseline_syscalls\": %ld, \"baseline_bytes\": %ld, ",
		       r->entries, r->base_sys, r->base_bytes);
		if (r->new_ns >= 0)
			printf("\"syscalls\": %ld, \"bytes\": %ld, ", r->new_sys, r->new_bytes);
		else
			printf("\"syscalls\": null, \"bytes\": null, ");
		if (!r->agree)
			printf("\"agree\": false, \"new_entries\": %ld, ", r->new_entries);
		printf("\"baseline_iters\": %ld, \"new_iters\": %ld, \"rounds\": %d%s}%s\n",
		       r->base_iters, r->new_iters, opt.rounds, r->extra,
		       i + 1 < nresults ? "," : "");
	}
	printf("}\n%s\n", JSON_END);
	fflush(stdout);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

enum listing { LIST_TASKS, LIST_PROCS, LIST_FDS };

/*
 * Whether the /proc side's ids @p and the new side's @q are the same set;
 * if not, report up to 16 ids that only one side has (for a task, its
 * Tgid).  Sorts both.
 */
static bool same_ids(const char *name, enum listing what, struct idlist *p,
		     struct idlist *q)
{
	long i = 0, j = 0, diff = 0;

	qsort(p->v, p->n, sizeof(*p->v), cmp_int);
	qsort(q->v, q->n, sizeof(*q->v), cmp_int);
	while (i < p->n || j < q->n) {
		bool only_p = j >= q->n || (i < p->n && p->v[i] < q->v[j]);
		bool only_q = !only_p && (i >= p->n || q->v[j] < p->v[i]);
		int id = only_p ? p->v[i] : q->v[j];

		if (!only_p && !only_q) {
			i++;
			j++;
			continue;
		}
		if (diff++ < 16) {
			fflush(stdout);
			fprintf(stderr, "  %s: %d only %s", name, id,
				only_p ? "in /proc" : "from the call");
			if (what != LIST_FDS)
				fprintf(stderr, " (Tgid %d)", proc_tgid_of(id));
			fputc('\n', stderr);
		}
		i += only_p;
		j += only_q;
	}
	if (diff) {
		fflush(stdout);
		fprintf(stderr, "pidmap-bench: %s: /proc listed %ld ids, the call %ld; %ld differ\n",
			name, p->n, q->n, diff);
	}
	return !diff;
}

static int failures;

/*
 * A timed enumeration must have listed about as many ids as the untimed
 * pass, else the benchmark timed different work.  Background tasks may
 * come and go (kernel workers) between the two, hence a small slack.
 */
static bool check_count(const char *name, const char *side, long pass, long timed)
{
	long slack = 4 + pass / 100;

	if (labs(pass - timed) <= slack)
		return true;
	fflush(stdout);
	fprintf(stderr,
		"pidmap-bench: %s: the untimed pass saw %ld ids, the timed %s %ld (slack %ld)\n",
		name, pass, side, timed, slack);
	return false;
}

#define IDLIST_CAP (1 << 17)
static int base_id_store[IDLIST_CAP], new_id_store[IDLIST_CAP];

/*
 * The untimed pass of each side, back to back, into @cb/@cn: the same ids,
 * or up to 3 attempts (kernel workers come and go).  @new_pass NULL: the
 * /proc side alone.  Returns whether an attempt agreed.
 */
static bool run_passes(const char *name, enum listing what, pass_fn base_pass,
		       struct cost *cb, pass_fn new_pass, struct cost *cn,
		       long *eb, long *en)
{
	struct idlist bl = { base_id_store, 0, IDLIST_CAP };
	struct idlist nl = { new_id_store, 0, IDLIST_CAP };
	int attempt;

	for (attempt = 1; attempt <= 3; attempt++) {
		memset(cb, 0, sizeof(*cb));
		memset(cn, 0, sizeof(*cn));
		bl.n = nl.n = 0;
		*eb = base_pass(cb, &bl);
		if (!new_pass)
			return true;
		*en = new_pass(cn, &nl);
		if (same_ids(name, what, &bl, &nl)) {
			note("  %s: cross-check: /proc and the call list the same %ld ids (attempt %d)\n",
			     name, *eb, attempt);
			return true;
		}
	}
	return false;
}

/*
 * Time one case: @base vs @new (NULL when the call is missing), then the
 * untimed passes, which must list the same ids; a disagreement is
 * reported, the run goes on, and the exit status is 1.
 */
static struct result *bench_case(const char *name, double target, enum listing what,
				 enum_fn base, pass_fn base_pass, enum_fn new, pass_fn new_pass)
{
	struct side sb = { .fn = base }, sn = { .fn = new };
	struct cost cb, cn;
	struct result *r = add_result(name, target, false);
	long eb = 0, en = 0;

	note("%s: timing ...\n", name);
	run_pair(&sb, new ? &sn : NULL, &r->base_ns, &r->new_ns);
	r->base_iters = sb.iters;
	r->agree = run_passes(name, what, base_pass, &cb, new ? new_pass : NULL, &cn, &eb, &en);
	r->agree &= check_count(name, "/proc walk", eb, sb.entries);
	r->entries = eb;
	r->base_sys = cb.syscalls;
	r->base_bytes = cb.bytes;
	if (new) {
		r->agree &= check_count(name, "call", eb, sn.entries);
		r->new_entries = en;
		r->new_iters = sn.iters;
		r->new_sys = cn.syscalls;
		r->new_bytes = cn.bytes;
		r->ratio = r->base_ns / r->new_ns;
	}
	if (!r->agree) {
		fprintf(stderr, "pidmap-bench: ERROR: %s: the listings disagree\n", name);
		failures++;
	}
	note("%s: baseline %.0f ns, new %s, %ld entries\n", name, r->base_ns,
	     new ? "measured" : "n/a (no syscall)", r->entries);
	return r;
}

/* ---------------------------------------------------------------------- */
/* System limits.                                                          */

static long read_long_file(const char *path)
{
	char buf[64];

	if (proc_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	return strtol(buf, NULL, 10);
}

static bool write_long_file(const char *path, long v)
{
	char buf[32];
	int fd, len;
	bool ok;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	len = snprintf(buf, sizeof(buf), "%ld\n", v);
	ok = write(fd, buf, len) == len;
	close(fd);
	return ok;
}

struct sysctl_save {
	const char *path;
	long orig;	/* -1: untouched */
};

static struct sysctl_save saved[] = {
	{ "/proc/sys/kernel/pid_max", -1 },
	{ "/proc/sys/kernel/threads-max", -1 },
};

/* Raise a sysctl to at least @want (never lower it); restored at exit. */
static void raise_sysctl(struct sysctl_save *s, long want)
{
	long cur = read_long_file(s->path);

	if (cur < 0 || cur >= want)
		return;
	if (!write_long_file(s->path, want)) {
		note("warning: cannot raise %s from %ld to %ld: %s\n", s->path,
		     cur, want, strerror(errno));
		return;
	}
	if (s->orig < 0)
		s->orig = cur;
}

static void restore_sysctls(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(saved); i++)
		if (saved[i].orig >= 0)
			write_long_file(saved[i].path, saved[i].orig);
}

/* Make room for @ntasks more tasks (pids and threads). */
static void make_room(long ntasks)
{
	long want = ntasks + 4096;

	/* pid_max must stay <= PID_MAX_LIMIT (4M on 64-bit). */
	raise_sysctl(&saved[0], want * 2 > 4194304 ? 4194304 : want * 2);
	raise_sysctl(&saved[1], want * 2);
}

/* ---------------------------------------------------------------------- */
/* Task populations.                                                       */

struct pop {
	pid_t *pids;
	long n, cap;
};

static void pop_add(struct pop *p, pid_t pid)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 256;
		p->pids = realloc(p->pids, p->cap * sizeof(*p->pids));
		if (!p->pids)
			die("out of memory");
	}
	p->pids[p->n++] = pid;
}

static void pop_kill(struct pop *p)
{
	long i;

	for (i = 0; i < p->n; i++)
		if (kill(p->pids[i], SIGKILL) && errno != ESRCH)
			die("kill %d: %m", p->pids[i]);
	for (i = 0; i < p->n; i++)
		while (waitpid(p->pids[i], NULL, 0) < 0)
			if (errno != EINTR)
				die("waitpid %d: %m", p->pids[i]);
	free(p->pids);
	memset(p, 0, sizeof(*p));
}

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* In a fresh child: die with the parent, so nothing outlives the run. */
static void child_setup(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		_exit(3);
	if (getppid() != parent)
		_exit(3);
}

/*
 * Fork @nprocs children; each starts @threads - 1 pthreads (16 KiB stacks)
 * so that it has @threads tasks, reports on a pipe, and blocks.
 */
static void spawn_procs(struct pop *p, long nprocs, int threads)
{
	pid_t self = getpid();
	uint64_t t0 = now_ns();
	int pfd[2];
	long i;

	if (pipe2(pfd, O_CLOEXEC))
		die("pipe: %m");
	for (i = 0; i < nprocs; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork #%ld: %m", i);
		if (pid == 0) {
			pthread_attr_t attr;
			pthread_t t;
			char ok = 'k';
			int k;

			child_setup(self);
			close(pfd[0]);
			if (pthread_attr_init(&attr) ||
			    pthread_attr_setstacksize(&attr, 16384))
				_exit(4);
			for (k = 1; k < threads; k++)
				if (pthread_create(&t, &attr, idle_thread, NULL))
					ok = 'E';
			if (write(pfd[1], &ok, 1) != 1)
				_exit(5);
			close(pfd[1]);
			for (;;)
				pause();
		}
		pop_add(p, pid);
	}
	close(pfd[1]);
	for (i = 0; i < nprocs; i++) {
		char c;
		ssize_t n = read(pfd[0], &c, 1);

		if (n < 0 && errno == EINTR) {
			i--;
			continue;
		}
		if (n != 1)
			die("child #%ld did not report (read: %zd, %m)", i, n);
		if (c != 'k')
			die("a child could not start its %d threads", threads - 1);
	}
	close(pfd[0]);
	note("  spawned %ld processes x %d tasks in %.1f s\n", nprocs, threads,
	     (double)(now_ns() - t0) / 1e9);
}

#define MEM_FLOOR_KIB (160 * 1024)	/* stop adding threads below this */
#define SPAWN_BUDGET_S 240.0

/* ---------------------------------------------------------------------- */
/* Cases.                                                                  */

static bool want_case(const char *name)
{
	int i;

	if (!opt.nonly)
		return true;
	for (i = 0; i < opt.nonly; i++)
		if (!strncmp(name, opt.only[i], strlen(opt.only[i])))
			return true;
	return false;
}

static void case_fds(const char *name, long nfds, double target)
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

/*
 * Top the system up to about @want_tasks tasks in @want_procs processes,
 * counting what it already has: extra threads go in processes of 5 tasks,
 * one process takes the remainder (1..3 extra threads), the rest are
 * single-threaded.
 */
static void spawn_about(struct pop *p, long want_tasks, long want_procs)
{
	long tasks0, procs0, dp, dt, multi, rem;

	tasks0 = walk_proc_tasks(NULL);
	procs0 = walk_proc_root(NULL);
	dp = want_procs - procs0;
	dt = want_tasks - tasks0;
	if (dp < 1 || dt < dp) {
		note("  note: the system already has %ld processes, %ld tasks\n",
		     procs0, tasks0);
		dp = dp < 1 ? 1 : dp;
		dt = dt < dp ? dp : dt;
	}
	multi = (dt - dp) / 4;
	if (multi > dp)
		multi = dp;
	rem = dt - dp - multi * 4;
	if (rem > 3 || multi == dp)
		rem = 0;
	make_room(dt);
	spawn_procs(p, multi, 5);
	if (rem)
		spawn_procs(p, 1, (int)rem + 1);
	spawn_procs(p, dp - multi - (rem ? 1 : 0), 1);
	note("  system: %ld processes, %ld tasks\n", walk_proc_root(NULL),
	     walk_proc_tasks(NULL));
}

/* ~250 tasks in ~130 processes, counting what the system already has. */
static void case_250(void)
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

static void case_procs_only(void)
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
 * tasks_all_10k (1,000 x 10, the v1/v2 population) and
 * tasks_all_100x100 (100 x 100, the population of the v3 bar), both
 * judged on the v3 bar for all tasks at 10k: 20x.
 */
static void case_tasks_many(const char *name, int threads, double target)
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

/* ---------------------------------------------------------------------- */
/* refresh: what top/htop do every refresh, end to end.                   */
/*
 * Every variant produces the same array of task records (tid, tgid, ppid,
 * state, utime, stime, rss, start_time, comm), in clock ticks and pages as
 * /proc/PID/stat has them:
 *
 *  - "walk" (the baseline): the htop walk: readdir /proc, readdir every
 *    /proc/PID/task, then open/read/close TID/stat (opened relative to
 *    the task directory's fd, one path lookup) and parse it; its rss is
 *    stat's approximate one;
 *  - "walk_status": the same walk reading TID/status as well, for the
 *    exact VmRSS as ps reads it: the walk that gives what the records give;
 *  - "pidmap": pidmap(PIDMAP_SCOPE_TASKS) for the ids, then /proc/TID/stat
 *    per task.  For a thread id that file is the whole group's stat:
 *    utime/stime are the group's sums, and nothing in it gives the tgid.
 *    That is the shortcut issue 15 measures; its records carry tgid 0
 *    (unknown) and group cputime, and the check treats them as such;
 *  - "pidmap_grouped": pidmap(PIDMAP_SCOPE_PROCS), then per process
 *    pidfd_open, pidmap(PIDMAP_SCOPE_THREADS) on it, close, and an O_PATH
 *    open of /proc/TGID/task, then TID/stat relative to it: the complete
 *    records with pidmap's listing;
 *  - "records" (JSON "new"): pidmap_info(PIDMAP_SCOPE_TASKS) with the
 *    fields' mask, opt.info_chunk records a call (the crate's 512 by
 *    default), through our /proc's view, turned into the same records;
 *  - "records_default" (JSON "bulk_default"): the same in the default
 *    view, where every task costs a ptrace_may_access();
 *  - "records_call" (JSON "bulk_call"): the calls of "records" alone,
 *    without turning the records into the refresh's: the kernel's cost
 *    per record.  Its check pass runs "records" on tid, tgid, ppid only;
 *  - "pidfd_info": the per-task route of 7.3 without the records: the ids
 *    from pidmap(PIDMAP_SCOPE_TASKS) (the "pidmap" variant's listing; on a
 *    kernel without pidmap, the walk's readdirs of /proc and
 *    /proc/PID/task), timed with the rest as every variant's listing is,
 *    then per task pidfd_open(tid, PIDFD_THREAD), ioctl(PIDFD_GET_INFO),
 *    close.  PIDFD_GET_INFO gives pid, tgid, ppid, the credentials and
 *    the cgroup id, and no comm, state, CPU time, rss or start time: a
 *    monitor on this route still reads /proc for those, so its time is a
 *    lower bound of the per-task route's cost, and its records are
 *    checked on tid, tgid and ppid only;
 *  - "bpf_iter" (built with PIDMAP_BENCH_BPF): the iter/task program of
 *    bpf/task_record.bpf.c, the same 168-byte records, read(2) 64 KiB at
 *    a time from a new iterator fd per refresh; its load, verification
 *    and attach are timed once, apart ("bpf_load_ns" and friends);
 *  - "bpf_syscall": the open-coded bpf_iter_task kfuncs in a
 *    BPF_PROG_TYPE_SYSCALL program, one BPF_PROG_RUN per refresh, the
 *    records read from its .bss through the skeleton's mmap.
 *    Both read task->utime/stime raw (no cputime_adjust()): their CPU
 *    times are counted where they differ from the walk's, not required
 *    to match ("bpf_iter_cputime_differs"); their rss is stat's
 *    approximate one, as the walk's is.
 */

/* The refresh's fields (the ids come always). */
#define REFRESH_INFO_MASK (PIDMAP_INFO_ID | PIDMAP_INFO_PPID | PIDMAP_INFO_STATE | \
			   PIDMAP_INFO_CPUTIME | PIDMAP_INFO_START_TIME | \
			   PIDMAP_INFO_RSS | PIDMAP_INFO_COMM)

static bool have_info;		/* pidmap_info(2) is there */

#define REC_COMM 64		/* stat's comm: a kernel thread's full name */

struct task_rec {
	int tid;
	int tgid;		/* 0: the variant cannot tell */
	int ppid;
	char state;
	unsigned long long utime, stime;	/* clock ticks */
	unsigned long long start_time;		/* clock ticks since boot */
	long rss;				/* pages */
	unsigned long long gutime, gstime;	/* check only: group sums */
	long gthreads;				/* check only: threads in the group */
	char comm[REC_COMM];
};

#define REC_CAP 16384

struct refresh {
	const char *name;
	struct task_rec *recs;
	long n;
	long calls;		/* syscalls of the last refresh besides the file reads */
	long stat_reads;	/* /proc files read by the last refresh (or tasks asked) */
	long stat_bytes;
	long missing_fields;	/* records whose mask lacks a field */
	bool group_cputime;	/* utime/stime are the thread group's sums */
	bool ids_only;		/* only tid, tgid, ppid */
	/*
	 * rss is the exact resident set, statm's 2nd field (status VmRSS),
	 * not stat's field 24, which reads the counters' approximate value
	 */
	bool exact_rss;
	/* utime/stime are raw task->utime/stime, not cputime_adjust()ed */
	bool raw_cputime;
	long cputime_differs;	/* raw_cputime: tasks whose times differ from the walk's */
};

static unsigned long long ns_per_tick;
static long page_kib;		/* status gives VmRSS in KiB */

static struct task_rec *rec_push(struct refresh *rf)
{
	if (rf->n == REC_CAP)
		die("%s: more than %d tasks", rf->name, REC_CAP);
	return &rf->recs[rf->n++];
}

/* Skip blanks, then a signed decimal. */
static long long stat_num(const char **pp)
{
	const char *p = *pp;
	long long v = 0;
	bool neg = false;

	while (*p == ' ')
		p++;
	if (*p == '-') {
		neg = true;
		p++;
	}
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (*p++ - '0');
	*pp = p;
	return neg ? -v : v;
}

/*
 * Parse one stat line: "tid (comm) S ppid pgrp session tty tpgid flags
 * minflt cminflt majflt cmajflt utime stime cutime cstime prio nice
 * num_threads itrealvalue starttime vsize rss ...".  0, or -1 if malformed.
 */
static int parse_stat(char *buf, struct task_rec *r)
{
	const char *p;
	char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')');
	size_t len;
	int field;

	if (!open_paren || !close_paren || close_paren < open_paren ||
	    close_paren[1] != ' ' || !close_paren[2])
		return -1;
	p = buf;
	r->tid = (int)stat_num(&p);
	len = (size_t)(close_paren - open_paren - 1);
	if (len >= REC_COMM)
		len = REC_COMM - 1;
	memcpy(r->comm, open_paren + 1, len);
	r->comm[len] = '\0';
	r->state = close_paren[2];
	p = close_paren + 3;
	for (field = 4; field <= 24; field++) {
		long long v = stat_num(&p);

		switch (field) {
		case 4: r->ppid = (int)v; break;
		case 14: r->utime = (unsigned long long)v; break;
		case 15: r->stime = (unsigned long long)v; break;
		case 22: r->start_time = (unsigned long long)v; break;
		case 24: r->rss = (long)v; break;
		}
	}
	return *p == ' ' || *p == '\n' ? 0 : -1;
}

/*
 * Read "TID/@file" relative to @dirfd into @buf (NUL-terminated) and count
 * it.  Returns its length; 0 if the task exited meanwhile (ENOENT, ESRCH).
 */
static ssize_t read_task_file(struct refresh *rf, int dirfd, int tid, const char *file,
			      char *buf, size_t size)
{
	char name[32];
	ssize_t len;
	int fd;

	snprintf(name, sizeof(name), "%d/%s", tid, file);
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ESRCH)
			return 0;
		die("%s: open %s: %m", rf->name, name);
	}
	len = read(fd, buf, size - 1);
	if (len < 0 && errno != ESRCH)
		die("%s: read %s: %m", rf->name, name);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	rf->stat_reads++;
	rf->stat_bytes += len;
	return len;
}

/*
 * Append @tid's record from "TID/stat" relative to @dirfd, with @tgid.
 * Returns it, or NULL if the task exited meanwhile.
 */
static struct task_rec *read_stat_at(struct refresh *rf, int dirfd, int tid, int tgid)
{
	char buf[1024];
	struct task_rec *r;

	if (!read_task_file(rf, dirfd, tid, "stat", buf, sizeof(buf)))
		return NULL;
	r = rec_push(rf);
	if (parse_stat(buf, r))
		die("%s: cannot parse %d/stat: %s", rf->name, tid, buf);
	r->tgid = tgid;
	return r;
}

/*
 * @r's rss from "TID/status" relative to @dirfd: VmRSS, exact, as ps
 * reads it (none for a kernel thread: 0).  False if the task is gone.
 */
static bool read_status_rss(struct refresh *rf, int dirfd, struct task_rec *r)
{
	char buf[4096];
	const char *vm;

	if (!read_task_file(rf, dirfd, r->tid, "status", buf, sizeof(buf)))
		return false;
	vm = strstr(buf, "\nVmRSS:");
	r->rss = vm ? strtol(vm + 7, NULL, 10) / page_kib : 0;
	return true;
}

static void refresh_reset(struct refresh *rf)
{
	rf->n = 0;
	rf->calls = rf->stat_reads = rf->stat_bytes = rf->missing_fields = 0;
}

static inline void read_task_stat(void *arg, DIR *task_dir, int pid, int tid)
{
	read_stat_at(arg, dirfd(task_dir), tid, pid);
	errno = 0;	/* a task that exited meanwhile left ENOENT/ESRCH */
}

static inline void read_task_stat_status(void *arg, DIR *task_dir, int pid, int tid)
{
	struct refresh *rf = arg;
	struct task_rec *r = read_stat_at(rf, dirfd(task_dir), tid, pid);

	if (r && !read_status_rss(rf, dirfd(task_dir), r))
		rf->n--;	/* gone between the two reads */
	errno = 0;
}

/* Baseline: the htop walk, reading each task's stat in its task directory. */
static long refresh_walk(void *arg)
{
	struct refresh *rf = arg;

	refresh_reset(rf);
	for_each_proc_task(read_task_stat, rf);
	return rf->n;
}

/* The same walk reading each task's stat and status (exact rss). */
static long refresh_walk_status(void *arg)
{
	struct refresh *rf = arg;

	refresh_reset(rf);
	for_each_proc_task(read_task_stat_status, rf);
	return rf->n;
}

/* The shortcut: pidmap(PIDMAP_SCOPE_TASKS), then /proc/TID/stat. */
static long refresh_pidmap(void *arg)
{
	struct refresh *rf = arg;
	struct cost c = { 0 };
	long n, i;

	refresh_reset(rf);
	n = pidmap_all(PIDMAP_SCOPE_TASKS, 0, idbuf, &c);
	rf->calls = c.syscalls;
	for (i = 0; i < n; i++)
		read_stat_at(rf, proc_fd, (int)idbuf[i], 0);
	return rf->n;
}

/* The stat files of process @pid's @nt threads (in idbuf2), in /proc/PID/task. */
static void read_group_stats(struct refresh *rf, int pid, long nt)
{
	char path[24];
	int task_fd;
	long t;

	snprintf(path, sizeof(path), "%d/task", pid);
	task_fd = openat(proc_fd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	rf->calls += 2;
	if (task_fd < 0) {
		if (errno == ENOENT)	/* exited meanwhile */
			return;
		die("%s: open /proc/%s: %m", rf->name, path);
	}
	for (t = 0; t < nt; t++)
		read_stat_at(rf, task_fd, (int)idbuf2[t], pid);
	close(task_fd);
}

/*
 * pidmap(PIDMAP_SCOPE_PROCS), per process its threads (pidfd_open,
 * PIDMAP_SCOPE_THREADS, close), then /proc/TGID/task/TID/stat.
 */
static long refresh_pidmap_grouped(void *arg)
{
	struct refresh *rf = arg;
	struct cost c = { 0 };
	long np, p;

	refresh_reset(rf);
	np = pidmap_all(PIDMAP_SCOPE_PROCS, 0, idbuf, &c);
	for (p = 0; p < np; p++) {
		long nt = threads_of((int)idbuf[p], idbuf2, &c);

		if (nt)
			read_group_stats(rf, (int)idbuf[p], nt);
	}
	rf->calls += c.syscalls;
	return rf->n;
}

#define INFO_CHUNK_MAX 4096
static struct pidmap_info infobuf[INFO_CHUNK_MAX];

/* Append @n records of pidmap_info(2) to @rf, as the refresh's records. */
static void records_from_info(struct refresh *rf, const struct pidmap_info *in, long n)
{
	long i;

	for (i = 0; i < n; i++, in++) {
		struct task_rec *out = rec_push(rf);
		size_t len;

		if ((in->mask & REFRESH_INFO_MASK) != REFRESH_INFO_MASK)
			rf->missing_fields++;
		out->tid = in->tid;
		out->tgid = in->tgid;
		out->ppid = in->ppid;
		out->comm[0] = '\0';
		if (rf->ids_only)
			continue;
		out->state = (char)in->state;
		out->utime = in->utime;
		out->stime = in->stime;
		out->start_time = in->start_time;
		out->rss = (long)in->rss_pages;
		len = strnlen(in->comm, sizeof(in->comm));
		if (len >= REC_COMM)
			len = REC_COMM - 1;
		memcpy(out->comm, in->comm, len);
		out->comm[len] = '\0';
	}
}

/*
 * One full pidmap_info(2) listing of every task with the refresh's fields,
 * opt.info_chunk records a call, through our /proc's view or (!@procfs_view)
 * the default one; each chunk goes to @rf (NULL: counted only).  Returns
 * the number of records.
 */
static long info_all(struct refresh *rf, bool procfs_view)
{
	struct pidmap_req req = pidmap_req(PIDMAP_SCOPE_TASKS, 0, procfs_view);
	long total = 0, calls = 0;

	req.info_size = sizeof(struct pidmap_info);
	req.info_mask = REFRESH_INFO_MASK;
	if (rf)
		refresh_reset(rf);
	for (;;) {
		long r = sys_pidmap_info(&req, infobuf, (size_t)opt.info_chunk, 0);

		calls++;
		if (r < 0)
			die("pidmap_info(PIDMAP_SCOPE_TASKS, %s view, last_id %llu): %m",
			    procfs_view ? "procfs" : "default",
			    (unsigned long long)req.last_id);
		if (r > opt.info_chunk)
			die("pidmap_info returned %ld > nr %ld", r, opt.info_chunk);
		if (r == 0)
			break;
		if (rf)
			records_from_info(rf, infobuf, r);
		total += r;
		req.last_id = (__u32)infobuf[r - 1].tid;
	}
	if (rf)
		rf->calls = calls;
	return total;
}

/* The records, through our /proc's view. */
static long refresh_bulk(void *arg)
{
	return info_all(arg, true);
}

/* The records in the default view. */
static long refresh_bulk_default(void *arg)
{
	return info_all(arg, false);
}

/*
 * The calls alone, without turning the records into the refresh's: its
 * cost per record is the kernel's, comparable with the per-id cost of
 * plain pidmap(PIDMAP_SCOPE_TASKS).
 */
static long refresh_bulk_call(void *arg)
{
	(void)arg;
	return info_all(NULL, true);
}

/*
 * Probe pidmap_info(2) with an nr-0 call: 0 means present, ENOSYS absent.
 * Anything else is a broken kernel: stop.
 */
static void probe_info(void)
{
	struct pidmap_req req = pidmap_req(PIDMAP_SCOPE_TASKS, 0, true);
	long r;

	req.info_size = sizeof(struct pidmap_info);
	req.info_mask = REFRESH_INFO_MASK;
	r = sys_pidmap_info(&req, NULL, 0, 0);
	if (r == 0)
		have_info = true;
	else if (errno != ENOSYS)
		die("pidmap_info probe: expected 0 or ENOSYS, got %ld (%m)", r);
}


/* ---- The per-task route of 7.3: pidfd_open + PIDFD_GET_INFO + close ---- */

/*
 * What PIDFD_GET_INFO (Linux 6.13 on; 7.3's include/uapi/linux/pidfd.h)
 * gives for one task: pid, tgid, ppid and the credentials always, the
 * cgroup id when the kernel has cgroups.  It has no comm, state, CPU
 * time, rss or start time: a monitor on this route still reads /proc for
 * those, so this variant is a lower bound of the per-task route's cost.
 * The fallbacks are 7.3's values, for headers older than 6.13; the
 * ioctl's size is part of its number, and the kernel takes any size from
 * PIDFD_INFO_SIZE_VER0 (64) on.
 */
#ifndef PIDFD_GET_INFO
#define PIDFD_INFO_PID		(1UL << 0)
#define PIDFD_INFO_CREDS	(1UL << 1)
#define PIDFD_INFO_CGROUPID	(1UL << 2)
struct pidfd_info {
	__u64 mask;
	__u64 cgroupid;
	__u32 pid, tgid, ppid;
	__u32 ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	__s32 exit_code;
};
#define PIDFD_GET_INFO _IOWR(0xFF, 11, struct pidfd_info)
#endif

/* The fields it has; PID and CREDS come back whether asked or not. */
#define PIDFD_REFRESH_MASK (PIDFD_INFO_PID | PIDFD_INFO_CREDS | PIDFD_INFO_CGROUPID)
#define PIDFD_REQUIRED (PIDFD_INFO_PID | PIDFD_INFO_CREDS)

static bool have_pidfd_info;	/* pidfd_open(PIDFD_THREAD) + PIDFD_GET_INFO work */
static int pidfd_info_errno;	/* what the probe got instead, or 0 */
static long pidfd_gone;		/* tasks that exited between the listing and the ioctl */
static long pidfd_cgroupid;	/* records whose mask has PIDFD_INFO_CGROUPID */

/*
 * One task: pidfd_open(tid, PIDFD_THREAD) (every task, leaders included,
 * so that one flag serves all: a leader's thread pidfd reports the same
 * pid, tgid and ppid), PIDFD_GET_INFO, close.  A task that exited after
 * the listing is skipped and counted: pidfd_open says ESRCH once its pid
 * is freed, EINVAL in the moment its task is detached from a pid not yet
 * freed, and the ioctl ESRCH once the task is gone.
 */
static void pidfd_info_one(struct refresh *rf, int tid)
{
	struct pidfd_info info;
	struct task_rec *r;
	int fd;

	fd = sys_pidfd_open(tid, PIDFD_THREAD);
	if (fd < 0) {
		if (errno == ESRCH || errno == EINVAL) {
			pidfd_gone++;
			return;
		}
		die("%s: pidfd_open(%d, PIDFD_THREAD): %m", rf->name, tid);
	}
	memset(&info, 0, sizeof(info));
	info.mask = PIDFD_REFRESH_MASK;
	if (ioctl(fd, PIDFD_GET_INFO, &info)) {
		if (errno != ESRCH)
			die("%s: ioctl(PIDFD_GET_INFO) on tid %d: %m", rf->name, tid);
		close(fd);
		pidfd_gone++;
		return;
	}
	close(fd);
	rf->stat_reads++;	/* here: tasks asked */
	if ((info.mask & PIDFD_REQUIRED) != PIDFD_REQUIRED)
		rf->missing_fields++;
	if (info.mask & PIDFD_INFO_CGROUPID)
		pidfd_cgroupid++;
	r = rec_push(rf);
	r->tid = (int)info.pid;
	r->tgid = (int)info.tgid;
	r->ppid = (int)info.ppid;
	r->comm[0] = '\0';	/* PIDFD_GET_INFO has none of the rest */
	if ((int)info.pid != tid)
		die("%s: PIDFD_GET_INFO on tid %d's thread pidfd says pid %u",
		    rf->name, tid, info.pid);
	sink = (long)(info.ruid ^ info.euid ^ info.cgroupid);
}

static inline void pidfd_info_task(void *arg, DIR *task_dir, int pid, int tid)
{
	(void)task_dir;
	(void)pid;
	pidfd_info_one(arg, tid);
	errno = 0;	/* readdir's end test */
}

/*
 * The per-task route: the ids from pidmap(PIDMAP_SCOPE_TASKS) (the listing of the
 * "pidmap" variant and of the bulk records), or, on a kernel without
 * pidmap, from the /proc walk's readdirs; the listing is timed with the
 * rest, as it is in every other variant.  Then per task pidfd_open,
 * PIDFD_GET_INFO, close.
 */
static long refresh_pidfd_info(void *arg)
{
	struct refresh *rf = arg;
	struct cost c = { 0 };
	long n, i;

	refresh_reset(rf);
	pidfd_gone = pidfd_cgroupid = 0;
	if (!have_pidmap) {
		for_each_proc_task(pidfd_info_task, rf);
		return rf->n;
	}
	n = pidmap_all(PIDMAP_SCOPE_TASKS, 0, idbuf, &c);
	rf->calls = c.syscalls;
	for (i = 0; i < n; i++)
		pidfd_info_one(rf, (int)idbuf[i]);
	return rf->n;
}

/*
 * Probe the route on ourselves: a kernel before 6.9 rejects PIDFD_THREAD
 * (EINVAL), one before 6.13 lacks PIDFD_GET_INFO (ENOTTY); anything else
 * is a broken kernel: stop.
 */
static void probe_pidfd_info(void)
{
	struct pidfd_info info;
	int fd;

	fd = (int)sys_pidfd_open((pid_t)syscall(SYS_gettid), PIDFD_THREAD);
	if (fd < 0) {
		if (errno != ENOSYS && errno != EINVAL)
			die("pidfd_open probe: expected a pidfd, ENOSYS or EINVAL: %m");
		pidfd_info_errno = errno;
		return;
	}
	memset(&info, 0, sizeof(info));
	info.mask = PIDFD_REFRESH_MASK;
	if (ioctl(fd, PIDFD_GET_INFO, &info)) {
		if (errno != ENOTTY && errno != EINVAL)
			die("PIDFD_GET_INFO probe: expected 0, ENOTTY or EINVAL: %m");
		pidfd_info_errno = errno;
	} else if ((int)info.tgid != getpid() || (int)info.ppid != getppid()) {
		die("PIDFD_GET_INFO probe: tgid %u ppid %u, expected %d %d",
		    info.tgid, info.ppid, getpid(), getppid());
	} else {
		have_pidfd_info = true;
	}
	close(fd);
}
#ifdef PIDMAP_BENCH_BPF
/* ---- BPF: iter/task and the open-coded iterator (bpf/task_record.bpf.c) ---- */

/* The BPF records are pidmap_info(2)'s layout (bpf-tasks.c checks each field). */
_Static_assert(sizeof(struct task_record) == sizeof(struct pidmap_info), "record size");
_Static_assert(offsetof(struct task_record, comm) == offsetof(struct pidmap_info, comm),
	       "record comm");
_Static_assert(offsetof(struct task_record, rss_pages) ==
		       offsetof(struct pidmap_info, rss_pages), "record rss");

static struct task_bpf bpf;
static bool have_bpf_iter, have_bpf_syscall;
static char bpf_state[96] = "absent: not built with PIDMAP_BENCH_BPF";
static struct task_record bpf_buf[REC_CAP];

/* Load, verify and attach once; the SYSCALL program where the kernel allows it. */
static void probe_bpf(void)
{
	if (task_bpf_open(&bpf, true, true)) {
		snprintf(bpf_state, sizeof(bpf_state), "syscall program: %s: %s",
			 bpf.failed_step, strerror(bpf.err));
		task_bpf_close(&bpf);
		if (task_bpf_open(&bpf, true, false)) {
			snprintf(bpf_state, sizeof(bpf_state), "absent: iter/task %s: %s",
				 bpf.failed_step, strerror(bpf.err));
			task_bpf_close(&bpf);
			return;
		}
		have_bpf_iter = true;
		return;
	}
	snprintf(bpf_state, sizeof(bpf_state), "present");
	have_bpf_iter = have_bpf_syscall = true;
}

static long refresh_bpf_iter(void *arg)
{
	struct refresh *rf = arg;
	long n;

	refresh_reset(rf);
	n = task_bpf_iter_read(&bpf, bpf_buf, REC_CAP);
	if (n < 0)
		die("%s: reading the iterator: %s", rf->name, strerror((int)-n));
	rf->calls = bpf.reads + 2;	/* bpf(BPF_ITER_CREATE), the reads, close */
	records_from_info(rf, (const struct pidmap_info *)bpf_buf, n);
	return rf->n;
}

static long refresh_bpf_syscall(void *arg)
{
	struct refresh *rf = arg;
	const struct task_record *recs = NULL;
	long n;

	refresh_reset(rf);
	n = task_bpf_syscall_run(&bpf, &recs);
	if (n < 0)
		die("%s: BPF_PROG_RUN: %s", rf->name, strerror((int)-n));
	if (n > REC_CAP)
		die("%s: more than %d tasks", rf->name, REC_CAP);
	rf->calls = 1;
	records_from_info(rf, (const struct pidmap_info *)recs, n);
	return rf->n;
}

#endif

/* ---- The cross-check ---- */

static int cmp_rec_tid(const void *a, const void *b)
{
	const struct task_rec *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static bool in_pop(const struct pop *p, int tgid)
{
	long i;

	for (i = 0; i < p->n; i++)
		if (p->pids[i] == tgid)
			return true;
	return false;
}

/*
 * Group sums of the baseline's per-thread cputime: the walk lists each
 * group's threads together, so sum every run of one tgid.
 */
static void group_sums(struct refresh *rf)
{
	long i = 0, j, k;

	while (i < rf->n) {
		unsigned long long u = 0, s = 0;

		for (j = i; j < rf->n && rf->recs[j].tgid == rf->recs[i].tgid; j++) {
			u += rf->recs[j].utime;
			s += rf->recs[j].stime;
		}
		for (k = i; k < j; k++) {
			rf->recs[k].gutime = u;
			rf->recs[k].gstime = s;
			rf->recs[k].gthreads = j - i;
		}
		i = j;
	}
}

/*
 * Kernel threads only: stat and the records show a kernel thread's full
 * name where task->comm keeps its first 15 bytes (e.g.
 * "rcu_exp_gp_kthread_worker"), and a workqueue worker as "comm-desc" or
 * "comm+desc", the description changing as the worker moves between
 * queues between two reads.  So compare 15 bytes of a longer name, and a
 * kworker's name before its suffix.
 */
static bool comm_matches(const struct task_rec *a, const struct task_rec *b)
{
	const size_t comm_max = 15;	/* TASK_COMM_LEN - 1 */
	size_t la, lb;

	if (!strcmp(a->comm, b->comm))
		return true;
	if (a->ppid != 2 && a->tid != 2)
		return false;
	la = strlen(a->comm);
	lb = strlen(b->comm);
	if (((la == comm_max && lb > la) || (lb == comm_max && la > lb)) &&
	    !strncmp(a->comm, b->comm, comm_max))
		return true;
	if (strncmp(a->comm, "kworker/", 8) || strncmp(b->comm, "kworker/", 8))
		return false;
	la = strcspn(a->comm, "-+");
	lb = strcspn(b->comm, "-+");
	return la == lb && !strncmp(a->comm, b->comm, la);
}

#define MAX_REPORTED 12

static int check_report(const char *name, const char *variant, int *shown,
			const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int check_report(const char *name, const char *variant, int *shown,
			const char *fmt, ...)
{
	va_list ap;

	if ((*shown)++ >= MAX_REPORTED)
		return 1;
	fflush(stdout);
	fprintf(stderr, "  %s: %s: ", name, variant);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/* statm's 2nd field of task @tid: its exact resident set in pages; -1 if gone. */
static long statm_rss(int tid)
{
	char path[32], buf[256];
	long size, rss;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%d/statm", tid);
	fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return sscanf(buf, "%ld %ld", &size, &rss) == 2 ? rss : -1;
}

/*
 * Compare @b with the baseline @a (both sorted by tid).  Fields of the
 * workload (the case's sleeping tasks) must match exactly.  Elsewhere a
 * running task's state may change and its cputime grow: by at most the
 * @slack ticks that passed during the check (per thread for group sums);
 * the checking process's own rss and state are not compared.  Returns the
 * number of differences.
 */
static long compare_refresh(const char *name, const struct refresh *a,
			    struct refresh *b, const struct pop *work,
			    unsigned long long slack)
{
	pid_t self = getpid();
	long i = 0, j = 0, bad = 0;
	int shown = 0;

	if (b->missing_fields)
		bad += check_report(name, b->name, &shown,
				    "%ld records lack a requested field", b->missing_fields);
	while (i < a->n || j < b->n) {
		const struct task_rec *x = i < a->n ? &a->recs[i] : NULL;
		const struct task_rec *y = j < b->n ? &b->recs[j] : NULL;
		unsigned long long xu, lim;
		bool exact, own;

		if (!y || (x && x->tid < y->tid)) {
			bad += check_report(name, b->name, &shown,
					    "tid %d (%s, tgid %d) only in the walk",
					    x->tid, x->comm, x->tgid);
			i++;
			continue;
		}
		if (!x || y->tid < x->tid) {
			bad += check_report(name, b->name, &shown,
					    "tid %d (%s) only in this variant",
					    y->tid, y->comm);
			j++;
			continue;
		}
		i++;
		j++;
		own = x->tgid == self;
		exact = in_pop(work, x->tgid);
		if (y->tgid != 0 && y->tgid != x->tgid)
			bad += check_report(name, b->name, &shown, "tid %d: tgid %d, walk %d",
					    x->tid, y->tgid, x->tgid);
		if (y->ppid != x->ppid)
			bad += check_report(name, b->name, &shown, "tid %d: ppid %d, walk %d",
					    x->tid, y->ppid, x->ppid);
		if (b->ids_only)
			continue;
		if (!comm_matches(x, y))
			bad += check_report(name, b->name, &shown, "tid %d: comm \"%s\", walk \"%s\"",
					    x->tid, y->comm, x->comm);
		if (y->start_time != x->start_time)
			bad += check_report(name, b->name, &shown,
					    "tid %d: start_time %llu, walk %llu",
					    x->tid, y->start_time, x->start_time);
		if (exact && (x->state != 'S' || y->state != 'S'))
			bad += check_report(name, b->name, &shown,
					    "tid %d: a sleeping workload task in state %c, walk %c",
					    x->tid, y->state, x->state);
		else if (!own && y->state != x->state && x->state != 'R' && y->state != 'R')
			bad += check_report(name, b->name, &shown, "tid %d (%s): state %c, walk %c",
					    x->tid, x->comm, y->state, x->state);
		/*
		 * The walk's rss is stat's approximate one; an exact rss is
		 * compared with statm, read now (a task gone since is skipped).
		 */
		if (!own && !b->exact_rss && y->rss != x->rss)
			bad += check_report(name, b->name, &shown, "tid %d (%s): rss %ld, walk %ld",
					    x->tid, x->comm, y->rss, x->rss);
		if (!own && b->exact_rss) {
			long m = statm_rss(x->tid);

			if (m >= 0 && y->rss != m)
				bad += check_report(name, b->name, &shown,
						    "tid %d (%s): rss %ld, statm %ld (walk's stat %ld)",
						    x->tid, x->comm, y->rss, m, x->rss);
		}
		if (own)
			continue;
		if (b->raw_cputime) {
			b->cputime_differs += y->utime != x->utime || y->stime != x->stime;
			continue;
		}
		if (b->group_cputime) {
			/*
			 * The group's utime + stime is the sum of its threads'
			 * (each adjusted total is its runtime), but the split
			 * between the two is scaled on the group's totals, and
			 * every value is truncated to ticks on its own: compare
			 * the totals, within 2 ticks per thread.
			 */
			xu = x->gutime + x->gstime;
			lim = (unsigned long long)x->gthreads * (exact ? 2 : slack + 2);
			if ((y->utime + y->stime > xu ? y->utime + y->stime - xu :
			     xu - y->utime - y->stime) > lim)
				bad += check_report(name, b->name, &shown,
						    "tid %d (%s): group utime+stime %llu, walk's sum over %ld threads %llu (allowed difference %llu)",
						    x->tid, x->comm, y->utime + y->stime,
						    x->gthreads, xu, lim);
			continue;
		}
		lim = exact ? 0 : slack;
		if ((y->utime > x->utime ? y->utime - x->utime : x->utime - y->utime) > lim ||
		    (y->stime > x->stime ? y->stime - x->stime : x->stime - y->stime) > lim)
			bad += check_report(name, b->name, &shown,
					    "tid %d (%s): utime/stime %llu/%llu, walk %llu/%llu (allowed difference %llu)",
					    x->tid, x->comm, y->utime, y->stime,
					    x->utime, x->stime, lim);
	}
	return bad;
}

/* ---- The variants, their cross-check and their results ---- */

enum {
	V_WALK, V_WALK_STATUS, V_PIDMAP, V_GROUPED, V_RECORDS, V_RECORDS_DEFAULT,
	V_RECORDS_CALL, V_PIDFD,
#ifdef PIDMAP_BENCH_BPF
	V_BPF_ITER, V_BPF_SYSCALL,
#endif
	NVARIANTS
};

struct variant {
	const char *name;	/* in messages */
	const char *key;	/* JSON: <key>_ns, <key>_ratio (the walk's ns / this) */
	enum_fn timed;
	enum_fn check;		/* its cross-check pass; NULL: timed */
	bool group_cputime, ids_only, exact_rss;	/* of its records */
	bool raw_cputime;
};

static const struct variant variants[NVARIANTS] = {
	[V_WALK] = { "walk", "baseline", refresh_walk, NULL, false, false, false },
	[V_WALK_STATUS] = { "walk_status", "walk_status", refresh_walk_status, NULL,
			    false, false, true },
	[V_PIDMAP] = { "pidmap", "pidmap", refresh_pidmap, NULL, true, false, false },
	[V_GROUPED] = { "pidmap_grouped", "pidmap_grouped", refresh_pidmap_grouped, NULL,
			false, false, false },
	[V_RECORDS] = { "records", "new", refresh_bulk, NULL, false, false, true },
	[V_RECORDS_DEFAULT] = { "records_default", "bulk_default", refresh_bulk_default,
				NULL, false, false, true },
	[V_RECORDS_CALL] = { "records_call", "bulk_call", refresh_bulk_call, refresh_bulk,
			     false, true, false },
	[V_PIDFD] = { "pidfd_info", "pidfd_info", refresh_pidfd_info, NULL,
		      false, true, false },
#ifdef PIDMAP_BENCH_BPF
	[V_BPF_ITER] = { "bpf_iter", "bpf_iter", refresh_bpf_iter, NULL,
			 false, false, false, true },
	[V_BPF_SYSCALL] = { "bpf_syscall", "bpf_syscall", refresh_bpf_syscall, NULL,
			    false, false, false, true },
#endif
};

static bool variant_available(int k)
{
	switch (k) {
	case V_PIDMAP:
	case V_GROUPED:
		return have_pidmap;
	case V_RECORDS:
	case V_RECORDS_DEFAULT:
	case V_RECORDS_CALL:
		return have_info;
	case V_PIDFD:
		return have_pidfd_info;
#ifdef PIDMAP_BENCH_BPF
	case V_BPF_ITER:
		return have_bpf_iter;
	case V_BPF_SYSCALL:
		return have_bpf_syscall;
#endif
	default:
		return true;
	}
}

static struct task_rec recs[NVARIANTS][REC_CAP];

/* One refresh case's state: each variant's records and samples. */
struct refresh_run {
	struct refresh rf[NVARIANTS];
	struct side side[NVARIANTS];
	struct side *timed[NVARIANTS];	/* NULL: not available */
	double ns[NVARIANTS];		/* medians; < 0: not available */
};

static void refresh_run_init(struct refresh_run *run)
{
	int k;

	memset(run, 0, sizeof(*run));
	for (k = 0; k < NVARIANTS; k++) {
		const struct variant *v = &variants[k];

		run->rf[k] = (struct refresh){
			.name = v->name, .recs = recs[k], .group_cputime = v->group_cputime,
			.ids_only = v->ids_only, .exact_rss = v->exact_rss,
			.raw_cputime = v->raw_cputime,
		};
		run->side[k] = (struct side){ .fn = v->timed, .arg = &run->rf[k] };
		run->timed[k] = variant_available(k) ? &run->side[k] : NULL;
		run->ns[k] = -1;
	}
}

/*
 * One untimed pass of every variant, back to back, then compare each with
 * the walk: the same tids, and the fields each variant has.  Tasks outside
 * the workload may come and go (kernel workers): the pass is repeated up
 * to 3 times; the case fails unless one is clean.
 */
static bool refresh_check(const char *name, struct refresh_run *run, const struct pop *work)
{
	int attempt, k;

	for (attempt = 1; attempt <= 3; attempt++) {
		uint64_t t0 = now_ns();
		unsigned long long slack;
		long bad = 0;

		for (k = 0; k < NVARIANTS; k++)
			if (run->timed[k])
				(variants[k].check ? variants[k].check : variants[k].timed)(&run->rf[k]);
		slack = (now_ns() - t0) / ns_per_tick + 2;
		group_sums(&run->rf[V_WALK]);
		for (k = 0; k < NVARIANTS; k++)
			if (run->timed[k])
				qsort(run->rf[k].recs, run->rf[k].n, sizeof(struct task_rec),
				      cmp_rec_tid);
		for (k = V_WALK + 1; k < NVARIANTS; k++)
			run->rf[k].cputime_differs = 0;
		for (k = V_WALK + 1; k < NVARIANTS; k++)
			if (run->timed[k])
				bad += compare_refresh(name, &run->rf[V_WALK], &run->rf[k],
						       work, slack);
		if (!bad) {
			note("  %s: cross-check: %ld records agree field by field in every variant (attempt %d, cputime slack %llu ticks)\n",
			     name, run->rf[V_WALK].n, attempt, slack);
			return true;
		}
		fflush(stdout);
		fprintf(stderr, "pidmap-bench: %s: cross-check attempt %d: %ld difference(s)\n",
			name, attempt, bad);
	}
	fprintf(stderr, "pidmap-bench: ERROR: %s: the variants' records disagree\n", name);
	failures++;
	return false;
}

/*
 * The syscalls of one refresh by variant @k: its calls, three per file
 * read (or per task asked), and for the variants that list by readdir
 * the walk's listing, @walk_listing.
 */
static long variant_syscalls(const struct refresh_run *run, int k, long walk_listing)
{
	const struct refresh *rf = &run->rf[k];
	bool by_readdir = k == V_WALK || k == V_WALK_STATUS || (k == V_PIDFD && !have_pidmap);

	return rf->calls + (by_readdir ? walk_listing : 0) + 3 * rf->stat_reads;
}

/* Append printf(@fmt) to @buf of @size, which holds a string. */
static void append(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len >= size - 1)
		die("append: JSON buffer full");
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

/*
 * The JSON members of the variants besides the walk and the records
 * (theirs are the result's baseline and new): "<key>_ns", "<key>_ratio"
 * (the walk's ns / this), "<key>_syscalls", null when not available.
 */
static void variants_json(char *buf, size_t size, const struct refresh_run *run,
			  long walk_listing)
{
	int k;

	for (k = V_WALK + 1; k < NVARIANTS; k++) {
		const char *key = variants[k].key;

		if (k == V_RECORDS)
			continue;
		if (run->ns[k] < 0) {
			append(buf, size, ", \"%s_ns\": null, \"%s_ratio\": null", key, key);
			continue;
		}
		append(buf, size, ", \"%s_ns\": %.1f, \"%s_ratio\": %.3f, \"%s_syscalls\": %ld",
		       key, run->ns[k], key, run->ns[V_WALK] / run->ns[k], key,
		       variant_syscalls(run, k, walk_listing));
	}
	if (run->ns[V_RECORDS] >= 0 && run->ns[V_WALK_STATUS] >= 0)
		append(buf, size, ", \"new_vs_walk_status_ratio\": %.3f",
		       run->ns[V_WALK_STATUS] / run->ns[V_RECORDS]);
}

/* The per-task route's extra members: where its ids came from, or why it is absent. */
static void pidfd_json(char *buf, size_t size, const struct refresh_run *run,
		       long walk_listing)
{
	const struct refresh *rf = &run->rf[V_PIDFD];

	if (run->ns[V_PIDFD] >= 0)
		append(buf, size,
		       ", \"pidfd_info_ids\": \"%s\", \"pidfd_info_gone\": %ld, "
		       "\"pidfd_info_cgroupid\": %s",
		       have_pidmap ? "pidmap" : "proc", pidfd_gone,
		       pidfd_cgroupid == rf->n ? "true" : "false");
	else
		append(buf, size, ", \"pidfd_info_state\": \"absent: %s\"",
		       pidfd_info_errno == ENOSYS ? "no pidfd_open (ENOSYS)" :
		       pidfd_info_errno == EINVAL ? "no PIDFD_THREAD (EINVAL)" :
		       pidfd_info_errno == ENOTTY ? "no PIDFD_GET_INFO (ENOTTY)" :
		       "PIDFD_GET_INFO refused (EINVAL)");
	(void)walk_listing;
}

/* refresh_250's medians and task count, for the cost per record above it. */
static double small_ns[NVARIANTS];
static long small_n;

/*
 * "<key>_ns_per_record": (this case's ns - refresh_250's) / the tasks in
 * between, so a refresh's fixed cost drops out.
 */
static void per_record_json(char *buf, size_t size, const struct refresh_run *run, long n)
{
	int k;

	if (!small_n || n <= small_n)
		return;
	for (k = 0; k < NVARIANTS; k++)
		if (run->ns[k] >= 0 && small_ns[k] >= 0)
			append(buf, size, ", \"%s_ns_per_record\": %.2f", variants[k].key,
			       (run->ns[k] - small_ns[k]) / (double)(n - small_n));
}

static const char *records_state(void)
{
	if (!have_pidmap)
		return "absent: no pidmap (ENOSYS)";
	if (!have_info)
		return "absent: no pidmap_info (ENOSYS)";
	return "present";
}

/* One line per variant: its median and its ratio to the walk. */
static void refresh_note(const char *name, const struct refresh_run *run)
{
	int k;

	note("%s: %ld tasks:", name, run->rf[V_WALK].n);
	for (k = 0; k < NVARIANTS; k++) {
		if (run->ns[k] < 0)
			note(" %s n/a;", variants[k].name);
		else
			note(" %s %.0f ns (%.2fx);", variants[k].name, run->ns[k],
			     run->ns[V_WALK] / run->ns[k]);
	}
	note("\n");
	if (run->ns[V_PIDFD] >= 0)
		note("  %s: pidfd_info: pid, tgid, ppid, creds, cgroup id only (a lower bound), ids from %s, %ld task(s) gone meanwhile in the check pass\n",
		     name, have_pidmap ? "pidmap" : "the /proc readdirs", pidfd_gone);
}

#ifdef PIDMAP_BENCH_BPF
/* The BPF members of a refresh result. */
static void bpf_json(char *buf, size_t size, const struct refresh_run *run)
{
	append(buf, size, ", \"bpf\": \"%s\"", bpf_state);
	if (!have_bpf_iter)
		return;
	append(buf, size,
	       ", \"bpf_open_ns\": %.1f, \"bpf_load_ns\": %.1f, \"bpf_attach_ns\": %.1f"
	       ", \"bpf_iter_cputime_differs\": %ld",
	       bpf.open_ns, bpf.load_ns, bpf.attach_ns, run->rf[V_BPF_ITER].cputime_differs);
	if (have_bpf_syscall)
		append(buf, size, ", \"bpf_syscall_cputime_differs\": %ld",
		       run->rf[V_BPF_SYSCALL].cputime_differs);
}
#endif

static struct refresh_run refresh_runs;

static void refresh_case(const char *name, double target, const struct pop *work,
			 bool small)
{
	struct refresh_run *run = &refresh_runs;
	struct result *r = add_result(name, target, false);
	struct cost cw = { 0 };
	int k;

	refresh_run_init(run);
	note("%s: timing", name);
	for (k = 0; k < NVARIANTS; k++)
		if (run->timed[k])
			note(" %s", variants[k].name);
	note(" ...\n");
	run_sides(run->timed, NVARIANTS);
	for (k = 0; k < NVARIANTS; k++)
		if (run->timed[k])
			run->ns[k] = median(run->side[k].samples, opt.rounds);
	r->agree = refresh_check(name, run, work);
	r->base_ns = run->ns[V_WALK];
	r->base_iters = run->side[V_WALK].iters;
	r->entries = run->rf[V_WALK].n;
	pass_proc_tasks(&cw, &(struct idlist){ base_id_store, 0, IDLIST_CAP });
	r->base_sys = variant_syscalls(run, V_WALK, cw.syscalls);
	r->base_bytes = cw.bytes + run->rf[V_WALK].stat_bytes;
	if (run->timed[V_RECORDS]) {
		r->new_ns = run->ns[V_RECORDS];
		r->ratio = r->base_ns / r->new_ns;
		r->new_iters = run->side[V_RECORDS].iters;
		r->new_entries = run->rf[V_RECORDS].n;
		r->new_sys = run->rf[V_RECORDS].calls;
		r->new_bytes = run->rf[V_RECORDS].n * (long)sizeof(struct pidmap_info);
	}
	variants_json(r->extra, sizeof(r->extra), run, cw.syscalls);
	pidfd_json(r->extra, sizeof(r->extra), run, cw.syscalls);
	append(r->extra, sizeof(r->extra),
	       ", \"bulk\": \"%s\", \"info_chunk\": %ld, \"processes\": %ld, \"stat_reads\": %ld",
	       records_state(), opt.info_chunk, walk_proc_root(NULL),
	       run->rf[V_WALK].stat_reads);
#ifdef PIDMAP_BENCH_BPF
	bpf_json(r->extra, sizeof(r->extra), run);
#endif
	if (small) {
		small_n = run->rf[V_WALK].n;
		memcpy(small_ns, run->ns, sizeof(small_ns));
	} else {
		per_record_json(r->extra, sizeof(r->extra), run, run->rf[V_WALK].n);
	}
	refresh_note(name, run);
}

static void case_refresh(void)
{
	struct pop p = { 0 };

	if (want_case("refresh_250")) {
		spawn_about(&p, 250, 130);
		refresh_case("refresh_250", 20, &p, true);
		pop_kill(&p);
	}
	if (want_case("refresh_10k")) {
		long nprocs = opt.procs / 100;

		make_room(opt.procs);
		spawn_procs(&p, nprocs, 100);
		note("  system: %ld processes, %ld tasks\n", walk_proc_root(NULL),
		     walk_proc_tasks(NULL));
		refresh_case("refresh_10k", 20, &p, false);
		pop_kill(&p);
	}
#ifdef PIDMAP_BENCH_BPF
	/* The BPF comparison's third shape: 1,000 processes of 10 threads. */
	if (want_case("refresh_10k_1000x10")) {
		long nprocs = opt.procs / 10;

		make_room(opt.procs);
		spawn_procs(&p, nprocs, 10);
		note("  system: %ld processes, %ld tasks\n", walk_proc_root(NULL),
		     walk_proc_tasks(NULL));
		refresh_case("refresh_10k_1000x10", 20, &p, false);
		pop_kill(&p);
	}
#endif
}

/* The JSON fields both tgid_scale results carry: the load and the drift. */
static void scale_extra(struct result *r, const struct thread_holder *h,
			struct side *ref_idle, struct side *ref_loaded, double drift)
{
	snprintf(r->extra, sizeof(r->extra),
		 ", \"threads\": %ld, \"threads_wanted\": %ld, \"spawn_s\": %.1f, "
		 "\"ref_idle_ns\": %.1f, \"ref_loaded_ns\": %.1f, \"ref_drift\": %.3f, "
		 "\"ratio_drift_corrected\": %.3f",
		 h->threads + 1, opt.threads, h->seconds,
		 median(ref_idle->samples, opt.rounds),
		 median(ref_loaded->samples, opt.rounds), drift, r->ratio / drift);
}

/*
 * tgid_scale: idle cost of listing thread-group ids, then the cost with one
 * process holding N idle threads.  baseline = idle, new = loaded,
 * ratio = loaded / idle (smaller is better).
 */
static void case_tgid_scale(void)
{
	struct side idle_r = { .fn = walk_proc_root }, load_r = idle_r;
	struct side idle_p = { .fn = new_procs }, load_p = idle_p;
	struct side ref_i = { .fn = ref_syscalls }, ref_l = ref_i;
	struct side *idle[3] = { &idle_r, have_pidmap ? &idle_p : NULL, &ref_i };
	struct side *load[3] = { &load_r, have_pidmap ? &load_p : NULL, &ref_l };
	struct result *rr, *rp = NULL;
	double drift;
	struct cost ci = { 0 }, cl, pl;
	struct thread_holder holder;
	long procs, el = 0, ep = 0;
	bool agree;
	uint64_t t0;

	if (!want_case("tgid_scale_100k_threads"))
		return;
	note("tgid_scale_100k_threads: idle ...\n");
	run_sides(idle, 3);
	procs = pass_proc_root(&ci, &(struct idlist){ base_id_store, 0, IDLIST_CAP });

	make_room(opt.threads);
	note("tgid_scale_100k_threads: spawning %ld threads ...\n", opt.threads);
	if (thread_holder_start(&holder, opt.threads, MEM_FLOOR_KIB, SPAWN_BUDGET_S))
		die("thread holder: %m");
	note("  holder %d: %ld threads (+1) in %.1f s; MemAvailable %ld KiB\n",
	     holder.pid, holder.threads, holder.seconds, th_mem_available_kib());
	if (holder.threads < opt.threads)
		note("  note: stopped at %ld of %ld threads (memory, limits or time budget)\n",
		     holder.threads, opt.threads);

	note("tgid_scale_100k_threads: loaded ...\n");
	run_sides(load, 3);
	drift = median(ref_l.samples, opt.rounds) / median(ref_i.samples, opt.rounds);
	/* Loaded: the idle processes and the holder, in /proc and from pidmap. */
	agree = run_passes("tgid_scale", LIST_PROCS, pass_proc_root, &cl,
			   have_pidmap ? pass_new_procs : NULL, &pl, &el, &ep);
	agree &= check_count("tgid_scale", "loaded readdir", el, load_r.entries);
	agree &= check_count("tgid_scale", "idle readdir", procs, idle_r.entries);
	if (have_pidmap) {
		agree &= check_count("tgid_scale", "loaded pidmap", ep, load_p.entries);
		agree &= check_count("tgid_scale", "idle pidmap", procs, idle_p.entries);
	}
	if (!agree) {
		fprintf(stderr, "pidmap-bench: ERROR: tgid_scale: the listings disagree\n");
		failures++;
	}

	rr = add_result("tgid_scale_100k_threads_readdir", 1.2, true);
	rr->base_ns = median(idle_r.samples, opt.rounds);
	rr->new_ns = median(load_r.samples, opt.rounds);
	rr->ratio = rr->new_ns / rr->base_ns;
	rr->entries = load_r.entries;
	rr->agree = agree;
	rr->base_sys = ci.syscalls;
	rr->base_bytes = ci.bytes;
	rr->new_sys = cl.syscalls;
	rr->new_bytes = cl.bytes;
	rr->base_iters = idle_r.iters;
	rr->new_iters = load_r.iters;
	if (have_pidmap) {
		struct cost pi = { 0 };

		rp = add_result("tgid_scale_100k_threads_pidmap", 1.2, true);
		rp->base_ns = median(idle_p.samples, opt.rounds);
		rp->new_ns = median(load_p.samples, opt.rounds);
		rp->ratio = rp->new_ns / rp->base_ns;
		rp->entries = load_p.entries;
		rp->agree = agree;
		/* Idle cost per enumeration: the calls of loaded, by design. */
		pi.syscalls = pl.syscalls;
		pi.bytes = idle_p.entries * (long)sizeof(int);
		rp->base_sys = pi.syscalls;
		rp->base_bytes = pi.bytes;
		rp->new_sys = pl.syscalls;
		rp->new_bytes = pl.bytes;
		rp->base_iters = idle_p.iters;
		rp->new_iters = load_p.iters;
	}
	scale_extra(rr, &holder, &ref_i, &ref_l, drift);
	note("  reference workload: loaded/idle %.3f (host speed drift); "
	     "readdir %.3f -> %.3f drift-corrected\n", drift, rr->ratio,
	     rr->ratio / drift);
	if (rp) {
		scale_extra(rp, &holder, &ref_i, &ref_l, drift);
		note("  pidmap %.3f -> %.3f drift-corrected\n", rp->ratio,
		     rp->ratio / drift);
	}

	t0 = now_ns();
	if (thread_holder_stop(&holder))
		die("stopping the thread holder: %m");
	note("  holder reaped in %.1f s\n", (double)(now_ns() - t0) / 1e9);
}

/* ---------------------------------------------------------------------- */

/*
 * pidmap(2) and fdmap(2) with nr 0: 0 on a kernel with the series, ENOSYS
 * without.  Anything else is a broken kernel or sandbox: stop.
 */
static void probe(void)
{
	struct pidmap_req req = pidmap_req(PIDMAP_SCOPE_PROCS, 0, true);
	long r = sys_pidmap(&req, NULL, 0, 0);

	if (r == 0)
		have_pidmap = true;
	else if (errno != ENOSYS)
		die("pidmap probe: expected 0 or ENOSYS, got %ld (%m)", r);
	r = fdmap_list(PIDFD_SELF_THREAD_GROUP, proc_fd, 0, NULL, 0);
	if (r == 0)
		have_fdmap = true;
	else if (errno != ENOSYS)
		die("fdmap probe: expected 0 or ENOSYS, got %ld (%m)", r);
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: pidmap-bench [--quick] [--json] [--rounds N] [--case NAME]...\n"
		"                    [--threads N] [--procs N] [--info-chunk N]\n"
		"                    [--min-sample-us N] [--list]\n"
		"  --quick         short smoke run: 3 rounds, 1000 processes, 10000 threads\n"
		"  --json          print the results as JSON between " JSON_BEGIN " and " JSON_END "\n"
		"  --case NAME     run only cases whose name starts with NAME (repeatable)\n"
		"  --threads N     threads of tgid_scale_100k_threads (default 100000;\n"
		"                  also PIDMAP_BENCH_THREADS)\n"
		"  --procs N       processes of procs_only_10k, tasks of tasks_all_10k\n"
		"                  (N/10 processes x 10 threads), tasks_all_100x100 and\n"
		"                  refresh_10k (N/100 processes x 100 threads; default 10000)\n"
		"  --info-chunk N  records per pidmap_info(2) call (default 512, the crate's;\n"
		"                  at most %d)\n"
		"The refresh cases (refresh_250, refresh_10k) time a top-style refresh\n"
		"of every task: the /proc walk (readdir, then each task's stat), the walk\n"
		"reading stat and status (the exact rss), pidmap ids + /proc/TID/stat,\n"
		"pidmap grouped (PROCS, then per process pidfd_open + THREADS + close)\n"
		"+ task stat, the pidmap_info(2) records in our /proc's view and in the\n"
		"default view, the records' calls alone, and pidfd_info: the ids from\n"
		"pidmap (without pidmap: the walk's readdirs), then per task\n"
		"pidfd_open(tid, PIDFD_THREAD), PIDFD_GET_INFO, close.  PIDFD_GET_INFO\n"
		"has pid, tgid, ppid, creds and the cgroup id but no comm, state, CPU\n"
		"time, rss or start time, so that route still needs /proc for those: its\n"
		"figure is a lower bound of the per-task cost.  An untimed pass of every\n"
		"variant must give the walk's tids (and the fields each one has).\n",
		INFO_CHUNK_MAX);
	exit(status);
}

static long parse_num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0)
		usage(2);
	return v;
}

int main(int argc, char **argv)
{
	static const char *cases[] = {
		"fds_4", "fds_1000", "tasks_all_250", "tasks_grouped_250",
		"procs_only_10k", "tasks_all_10k", "tasks_all_100x100",
		"refresh_250", "refresh_10k",
#ifdef PIDMAP_BENCH_BPF
		"refresh_10k_1000x10",
#endif
		"tgid_scale_100k_threads",
	};
	long threads = -1, procs = -1, min_us = -1;
	const char *env;
	struct rlimit rl;
	struct utsname u;
	int i;

	opt.rounds = -1;
	opt.info_chunk = 512;	/* the crate's */
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--quick")) {
			opt.quick = true;
		} else if (!strcmp(a, "--json")) {
			opt.json = true;
		} else if (!strcmp(a, "--list")) {
			for (size_t k = 0; k < ARRAY_SIZE(cases); k++)
				puts(cases[k]);
			return 0;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(0);
		} else if (i + 1 < argc && !strcmp(a, "--rounds")) {
			opt.rounds = (int)parse_num(argv[++i]);
		} else if (i + 1 < argc && !strcmp(a, "--threads")) {
			threads = parse_num(argv[++i]);
		} else if (i + 1 < argc && !strcmp(a, "--procs")) {
			procs = parse_num(argv[++i]);
		} else if (i + 1 < argc && !strcmp(a, "--info-chunk")) {
			opt.info_chunk = parse_num(argv[++i]);
			if (opt.info_chunk < 1 || opt.info_chunk > INFO_CHUNK_MAX)
				usage(2);
		} else if (i + 1 < argc && !strcmp(a, "--min-sample-us")) {
			min_us = parse_num(argv[++i]);
		} else if (i + 1 < argc && !strcmp(a, "--case")) {
			if (opt.nonly == ARRAY_SIZE(opt.only))
				usage(2);
			opt.only[opt.nonly++] = argv[++i];
		} else {
			usage(2);
		}
	}
	env = getenv("PIDMAP_BENCH_THREADS");
	if (threads < 0 && env && *env)
		threads = parse_num(env);
	if (opt.rounds < 0)
		opt.rounds = opt.quick ? 3 : 9;
	if (opt.rounds < 1 || opt.rounds > 63)
		usage(2);
	opt.threads = threads >= 0 ? threads : opt.quick ? 10000 : 100000;
	opt.procs = procs >= 0 ? procs : opt.quick ? 1000 : 10000;
	if (opt.procs < 10)
		opt.procs = 10;
	opt.min_sample_ns = (min_us >= 0 ? min_us : opt.quick ? 1000 : 2000) * 1000;

	/* Children and threads beyond the defaults: as root these succeed. */
	rl.rlim_cur = rl.rlim_max = RLIM_INFINITY;
	if (setrlimit(RLIMIT_NPROC, &rl) && getrlimit(RLIMIT_NPROC, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NPROC, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 4096) {
		rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	atexit(restore_sysctls);

	/* The view of every call must be open for reading (O_PATH is EBADF). */
	proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (proc_fd < 0)
		die("open /proc: %m");
	probe();
	probe_info();
	probe_pidfd_info();
#ifdef PIDMAP_BENCH_BPF
	probe_bpf();
	note("pidmap-bench: BPF %s; load+verify %.1f ms, attach %.3f ms\n", bpf_state,
	     bpf.load_ns / 1e6, bpf.attach_ns / 1e6);
#endif
	ns_per_tick = 1000000000ull / (unsigned long long)sysconf(_SC_CLK_TCK);
	page_kib = sysconf(_SC_PAGESIZE) / 1024;
	if (uname(&u))
		die("uname: %m");
	note("pidmap-bench: kernel %s, pidmap %s, pidmap_info %s, fdmap %s, PIDFD_GET_INFO %s, %d rounds, min sample %ld us, %ld records a call%s\n",
	     u.release, have_pidmap ? "present" : "absent (ENOSYS)",
	     have_info ? "present" : "absent (ENOSYS)",
	     have_fdmap ? "present" : "absent (ENOSYS)",
	     have_pidfd_info ? "present" : "absent", opt.rounds,
	     opt.min_sample_ns / 1000, opt.info_chunk, opt.quick ? ", quick" : "");

	case_fds("fds_4", 4, 30);
	case_fds("fds_1000", 1000, 20);
	case_250();
	case_procs_only();
	case_tasks_many("tasks_all_10k", 10, 20);
	case_tasks_many("tasks_all_100x100", 100, 20);
	case_refresh();
	case_tgid_scale();

	print_table();
	if (opt.json)
		print_json();
	if (failures)
		fprintf(stderr, "pidmap-bench: %d listing(s) disagreed with /proc\n",
			failures);
	return failures ? 1 : 0;
}
