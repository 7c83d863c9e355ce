// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * pidmap-bench: what its files share.  main.c says what the program does;
 * the files are its parts:
 *
 *   common.c      the options, the probes' answers, die(), note(), append()
 *   walk.c        the /proc side of the listings: timed walks, counted passes
 *   calls.c       the side of the series: pidmap(2) and fdmap(2) listings
 *   timing.c      the interleaved rounds and their medians
 *   results.c     the results, their table and JSON, the listings' cross-check
 *   population.c  the sysctls and the task populations a case spawns
 *   listing.c     the listing cases: fds_*, tasks_*, procs_only_10k
 *   refresh*.c    the refresh cases (refresh.h)
 *   scale.c       tgid_scale_100k_threads
 *   lsof.c        lsof_1000x16: every fd of every process with its target
 *
 * The helpers of the timed loops are inline here, so that each walk
 * compiles as it did when the bench was one file.
 */
#ifndef PIDMAP_BENCH_COMMON_H
#define PIDMAP_BENCH_COMMON_H

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
 * The raw calls, shared with the guest tests (relative to this file), and
 * through them the series' uapi: <linux/pidmap.h> and <linux/fdmap.h>
 * from crates/pidmap/abi/, which xtask puts on the include path, and
 * PIDFD_SELF_*, which live in the <linux/fcntl.h> kept out above.
 */
#include "../../guest-tests/include/pidmap_syscalls.h"
#include "../../guest-tests/include/thread_holder.h"

/*
 * Built by `cargo xtask bench --bpf` with -DPIDMAP_BENCH_BPF, the BPF
 * skeleton of bench/bpf/task_record.bpf.c on the include path and libbpf: the
 * refresh then times the BPF programs too (bench/bpf/task_bpf.h).
 */
#ifdef PIDMAP_BENCH_BPF
#include "../bpf/task_bpf.h"
#endif

#define JSON_BEGIN "PIDMAP-BENCH-JSON-BEGIN"
#define JSON_END   "PIDMAP-BENCH-JSON-END"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* pidmap/fdmap output buffers, big enough for every case in one call. */
#define IDBUF_CAP (1u << 16)
extern __u32 idbuf[IDBUF_CAP];
extern __u32 idbuf2[IDBUF_CAP];

struct options {
	bool quick;
	bool json;
	int rounds;
	long min_sample_ns;
	long threads;	/* tgid_scale */
	long procs;	/* procs_only_10k: processes; tasks_all_*, refresh_10k: tasks */
	long info_chunk;	/* records per pidmap_info(2) call */
	const char *only[16];
	int nonly;
};
extern struct options opt;

extern bool have_pidmap, have_fdmap;
extern volatile long sink;	/* keeps the compiler from dropping walks */
/* /proc, opened for reading: the view of every call, and the *at() dir. */
extern int proc_fd;
/* Listings that disagreed: the exit status is 1. */
extern int failures;

void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Whether --case selects @name (no --case: every case). */
bool want_case(const char *name);
/* Append printf(@fmt) to @buf of @size, which holds a string. */
void append(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		die("clock_gettime: %m");
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Parse a decimal pid/fd name; -1 if it is not all digits. */
static inline int parse_id(const char *s)
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

/* Ids of one listing, for the cross-checks. */
struct idlist {
	int *v;
	long n, cap;
};

/*
 * The request for @scope (@pidfd: the target of PIDMAP_SCOPE_THREADS and
 * _CHILDREN, else 0), through the view of our /proc or, if !@procfs_view,
 * the default view (ptrace_may_access() per task).
 */
static inline struct pidmap_req pidmap_req(__u32 scope, int pidfd, bool procfs_view)
{
	struct pidmap_req req;

	pidmap_req_init(&req, scope, pidfd, procfs_view ? proc_fd : 0, 0, 0);
	return req;
}

/*
 * The untimed pass of each side of a listing case: one full enumeration
 * that counts its syscalls and bytes in @c and collects its ids in @ids,
 * for the cross-check.  Returns the number of ids.
 */

typedef long (*pass_fn)(struct cost *c, struct idlist *ids);

/* ---- walk.c: the /proc side ---- */

long walk_proc_root(void *unused);
long walk_proc_tasks(void *unused);
long walk_self_fd(void *unused);
void idlist_append(struct idlist *l, const void *ids, long n);
long pass_proc_tasks(struct cost *c, struct idlist *ids);
long pass_proc_root(struct cost *c, struct idlist *ids);
long pass_self_fd(struct cost *c, struct idlist *ids);

/* ---- calls.c: the calls of the series ---- */

long pidmap_all(__u32 scope, int pidfd, __u32 *buf, struct cost *c);
long threads_of(int pid, __u32 *buf, struct cost *c);
long new_all_tasks(void *unused);
long new_procs(void *unused);
long new_grouped(void *unused);
long new_fds(void *unused);
long pass_new_all_tasks(struct cost *c, struct idlist *ids);
long pass_new_procs(struct cost *c, struct idlist *ids);
long pass_grouped(struct cost *c, struct idlist *ids);
long pass_new_fds(struct cost *c, struct idlist *ids);
long fdmap_all(int pidfd, int *buf, struct cost *c);

/* ---- timing.c ---- */

typedef long (*enum_fn)(void *arg);

struct side {
	enum_fn fn;
	void *arg;
	long iters;		/* per sample, so that a sample >= min_sample_ns */
	double samples[64];
	long entries;		/* of the last enumeration */
};

double median(const double *v, int n);
void run_sides(struct side **v, int n);
void run_pair(struct side *a, struct side *b, double *ma, double *mb);

/* ---- results.c ---- */

struct result {
	char name[48];
	double base_ns, new_ns;		/* new_ns < 0: not available */
	double ratio;			/* < 0: not available */
	double target;			/* NO_TARGET: reported, not judged */
	bool lower_better;		/* tgid_scale: ratio = loaded / idle */
	long entries;			/* ids in one enumeration */
	long base_sys, base_bytes, new_sys, new_bytes;
	long new_entries;		/* ids the syscall returned */
	bool agree;			/* both sides saw the same ids */
	long base_iters, new_iters;
	char extra[2048];		/* extra JSON members, "" or ", ..." */
};

/* The target of a case with none: reported, not judged. */
#define NO_TARGET (-1.0)

enum listing { LIST_TASKS, LIST_PROCS, LIST_FDS };

#define IDLIST_CAP (1 << 17)
/* The cross-check's id lists; also the scratch of a counted /proc pass. */
extern int base_id_store[IDLIST_CAP];

struct result *add_result(const char *name, double target, bool lower);
void print_table(void);
void print_json(void);
bool check_count(const char *name, const char *side, long pass, long timed);
bool run_passes(const char *name, enum listing what, pass_fn base_pass,
		struct cost *cb, pass_fn new_pass, struct cost *cn,
		long *eb, long *en);
struct result *bench_case(const char *name, double target, enum listing what,
			  enum_fn base, pass_fn base_pass, enum_fn new, pass_fn new_pass);

/* ---- population.c: system limits and task populations ---- */

struct pop {
	pid_t *pids;
	long n, cap;
};

void restore_sysctls(void);
void make_room(long ntasks);
void pop_kill(struct pop *p);
void spawn_procs(struct pop *p, long nprocs, int threads);
void spawn_procs_with(struct pop *p, long nprocs, int threads,
		      void (*child_init)(long index, int report_fd));
void spawn_about(struct pop *p, long want_tasks, long want_procs);

/* ---- The cases ---- */

/* listing.c */
void case_fds(const char *name, long nfds, double target);
void case_250(void);
void case_procs_only(void);
void case_tasks_many(const char *name, int threads, double target);
/* refresh.c */
void case_refresh(void);
/* scale.c */
void case_tgid_scale(void);
/* lsof.c */
void case_lsof(void);

#endif
