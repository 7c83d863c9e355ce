/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * task_bpf.h: loads task_record.bpf.c through its libbpf skeleton
 * (task_record.skel.h, made by `bpftool gen skeleton`) and reads the
 * records back, in the two ways a monitor would:
 * - the `iter/task` program: bpf_iter_create() on its link, then read(2)
 *   in 64 KiB chunks until end of file, one fd per refresh;
 * - the BPF_PROG_TYPE_SYSCALL program: one BPF_PROG_RUN, then the records
 *   straight from the skeleton's mmap of its .bss.
 * Setup (open, load with verification, attach) is timed apart, per step.
 * Build with -DTASK_RECORD_SYSCALL_PROG, as task_record.bpf.c, when the
 * kernel's BTF has the open-coded task iterator (6.7 and later).
 */
#ifndef TASK_BPF_H
#define TASK_BPF_H

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "task_record.h"
#include "task_record.skel.h"

#define TASK_BPF_READ_CHUNK (64 * 1024)

struct task_bpf {
	struct task_record_skel *skel;
	struct bpf_link *iter_link;
	bool iter, syscall;
	/* The step that failed ("open", "load", "attach") and its errno. */
	const char *failed_step;
	int err;
	/* nanoseconds per setup step */
	double open_ns, load_ns, attach_ns;
	/* read(2) calls of the last iterator read */
	long reads;
};

static inline double task_bpf_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int task_bpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_WARN || !getenv("TASK_BPF_VERBOSE"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static inline int task_bpf_fail(struct task_bpf *tb, const char *step, int err)
{
	tb->failed_step = step;
	tb->err = err < 0 ? -err : err;
	if (!tb->err)
		tb->err = EINVAL;
	return -tb->err;
}

/*
 * Open, load (the verifier runs here) and attach the programs asked for.
 * 0, or -errno with tb->failed_step naming the step. Either way, call
 * task_bpf_close().
 */
static inline int task_bpf_open(struct task_bpf *tb, bool iter, bool syscall)
{
	double t0;
	int err;

	memset(tb, 0, sizeof(*tb));
	tb->iter = iter;
	tb->syscall = syscall;
	libbpf_set_print(task_bpf_quiet);

	t0 = task_bpf_now_ns();
	tb->skel = task_record_skel__open();
	tb->open_ns = task_bpf_now_ns() - t0;
	if (!tb->skel)
		return task_bpf_fail(tb, "open", errno);
	bpf_program__set_autoload(tb->skel->progs.task_records, iter);
#ifdef TASK_RECORD_SYSCALL_PROG
	bpf_program__set_autoload(tb->skel->progs.fill_records, syscall);
#else
	/* Built against a kernel BTF without the open-coded task iterator. */
	if (syscall)
		return task_bpf_fail(tb, "open", EOPNOTSUPP);
#endif

	t0 = task_bpf_now_ns();
	err = task_record_skel__load(tb->skel);
	tb->load_ns = task_bpf_now_ns() - t0;
	if (err)
		return task_bpf_fail(tb, "load", err);

	if (iter) {
		t0 = task_bpf_now_ns();
		tb->iter_link = bpf_program__attach_iter(tb->skel->progs.task_records, NULL);
		tb->attach_ns = task_bpf_now_ns() - t0;
		if (!tb->iter_link)
			return task_bpf_fail(tb, "attach", errno);
	}
	return 0;
}

static inline void task_bpf_close(struct task_bpf *tb)
{
	if (tb->iter_link)
		bpf_link__destroy(tb->iter_link);
	if (tb->skel)
		task_record_skel__destroy(tb->skel);
	tb->iter_link = NULL;
	tb->skel = NULL;
}

/*
 * One pass of the iterator: a new iterator fd, read(2) of 64 KiB at a time
 * into @out (room for @cap records) until end of file. The number of
 * records, or -errno (-ENOSPC: more than @cap tasks).
 */
static inline long task_bpf_iter_read(struct task_bpf *tb, struct task_record *out, long cap)
{
	size_t room = (size_t)cap * sizeof(*out), got = 0;
	int fd = bpf_iter_create(bpf_link__fd(tb->iter_link));

	tb->reads = 0;
	if (fd < 0)
		return -errno;
	for (;;) {
		size_t want = room - got < TASK_BPF_READ_CHUNK ? room - got : TASK_BPF_READ_CHUNK;
		ssize_t n;

		if (!want) {
			close(fd);
			return -ENOSPC;
		}
		n = read(fd, (char *)out + got, want);
		tb->reads++;
		if (n < 0) {
			int err = errno;

			if (err == EINTR || err == EAGAIN)
				continue;
			close(fd);
			return -err;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (got % sizeof(*out)) /* a record cut short: not the program's output */
		return -EPROTO;
	return (long)(got / sizeof(*out));
}

/*
 * One BPF_PROG_RUN of the open-coded iterator; *@out points at the
 * records in the skeleton's .bss mmap, valid until the next run. The
 * number of records, or -errno (-ENOSPC: more than TASK_RECORD_MAX tasks).
 */
static inline long task_bpf_syscall_run(struct task_bpf *tb, const struct task_record **out)
{
#ifndef TASK_RECORD_SYSCALL_PROG
	(void)tb;
	(void)out;
	return -EOPNOTSUPP;
#else
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int err = bpf_prog_test_run_opts(bpf_program__fd(tb->skel->progs.fill_records), &opts);

	if (err)
		return -errno;
	if (tb->skel->bss->overflowed)
		return -ENOSPC;
	*out = tb->skel->bss->records;
	return (long)tb->skel->bss->nr_records;
#endif
}

#endif /* TASK_BPF_H */
