// SPDX-License-Identifier: MIT OR Apache-2.0
#ifndef PIDMAP_BENCH_REFRESH_H
#define PIDMAP_BENCH_REFRESH_H

#include "common.h"

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
 *    That is the shortcut this case measures; its records carry tgid 0
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
 *    bpf/task_record.bpf.c, the same 200-byte records, read(2) 64 KiB at
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

extern bool have_info;		/* pidmap_info(2) is there */

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

/* Set by main(): stat's clock ticks and pages. */
extern unsigned long long ns_per_tick;
extern long page_kib;		/* status gives VmRSS in KiB */

static inline struct task_rec *rec_push(struct refresh *rf)
{
	if (rf->n == REC_CAP)
		die("%s: more than %d tasks", rf->name, REC_CAP);
	return &rf->recs[rf->n++];
}

static inline void refresh_reset(struct refresh *rf)
{
	rf->n = 0;
	rf->calls = rf->stat_reads = rf->stat_bytes = rf->missing_fields = 0;
}

/* The records' calls take at most this many records a call (--info-chunk). */
#define INFO_CHUNK_MAX 4096

/* refresh-walk.c: the walks and the pidmap variants, which read stat files */
long refresh_walk(void *arg);
long refresh_walk_status(void *arg);
long refresh_pidmap(void *arg);
long refresh_pidmap_grouped(void *arg);

/* refresh-records.c: pidmap_info(2)'s records (and the BPF programs') */
long refresh_bulk(void *arg);
long refresh_bulk_default(void *arg);
long refresh_bulk_call(void *arg);
void probe_info(void);
#ifdef PIDMAP_BENCH_BPF
extern struct task_bpf bpf;
extern bool have_bpf_iter, have_bpf_syscall;
extern char bpf_state[96];
void probe_bpf(void);
long refresh_bpf_iter(void *arg);
long refresh_bpf_syscall(void *arg);
#endif

/* refresh-pidfd.c: the per-task route, pidfd_open + PIDFD_GET_INFO + close */
extern bool have_pidfd_info;	/* pidfd_open(PIDFD_THREAD) + PIDFD_GET_INFO work */
extern int pidfd_info_errno;	/* what the probe got instead, or 0 */
extern long pidfd_gone;		/* tasks that exited between the listing and the ioctl */
extern long pidfd_cgroupid;	/* records whose mask has PIDFD_INFO_CGROUPID */
long refresh_pidfd_info(void *arg);
void probe_pidfd_info(void);

/* refresh-check.c: a variant's records against the walk's */
int cmp_rec_tid(const void *a, const void *b);
void group_sums(struct refresh *rf);
long compare_refresh(const char *name, const struct refresh *a,
		     struct refresh *b, const struct pop *work,
		     unsigned long long slack);

#endif
