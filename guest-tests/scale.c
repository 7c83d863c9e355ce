// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * scale: one process with 100,000 threads (PIDMAP_SCALE_THREADS), and the
 * listings that must stay exact around it.
 *
 * The holder (thread_holder.h) is one thread group of N + 1 tasks, which
 * pushes the pid IDR three levels deep with N unmarked entries among a few
 * dozen marked ones.  With all of them alive:
 *
 *  1. PIDMAP_SCOPE_TASKS, in one call and in chunks of 256, equals the /proc
 *     walk (/proc and every /proc/PID/task).  It walks the IDR's slots, not
 *     the leader marks, so it is the base for the next check.
 *  2. PIDMAP_SCOPE_PROCS, in one call and in chunks, equals the thread-group ids
 *     of all tasks of step 1, each read from /proc/TID/status (the holder's
 *     threads by their /proc/H/task membership).  /proc root itself walks
 *     the same marks on this kernel, so it is compared too, but it is not
 *     the reference.  In particular the holder is listed once and none of
 *     its threads is.
 *  3. PIDMAP_SCOPE_THREADS of the holder, asked by a pidfd of it and by a
 *     PIDFD_THREAD pidfd of one of its threads, in one call and in chunks,
 *     equals /proc/H/task: N + 1 ids.
 *  4. PIDMAP_SCOPE_CHILDREN of this process (PIDFD_SELF_THREAD_GROUP) is
 *     exactly the holder.
 *
 * After SIGKILL and the reap, PIDMAP_SCOPE_PROCS equals /proc root again
 * without the holder, and SCOPE_THREADS of the holder's pidfd (opened
 * while it lived) is ESRCH.
 *
 * Kernel workers come and go, so a comparison with /proc is retried a few
 * times before it counts as a failure; the holder's own tasks never move.
 * Every listing must be strictly ascending (pt_enumerate counts repeats and
 * steps back).  Fewer threads than asked for is a failure, not a skip: the
 * runner sizes the guest for them.
 */
#include "pidmap_test.h"	/* first: it defines _GNU_SOURCE */
#include "thread_holder.h"

#define DEFAULT_THREADS 100000
#define MEM_FLOOR_KIB (64 * 1024)
#define SPAWN_BUDGET_S 900.0
#define ATTEMPTS 5

static int failures;
static size_t one_call_cap;	/* room for every task, threads included */

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pt_msg("FAIL", fmt, ap);
	va_end(ap);
	failures++;
}

/* One call with room for everything: @cap ids (u32, as the ABI has them). */
static int list_one_call(int pidfd, __u32 scope, struct pt_ids *out, size_t cap)
{
	_Static_assert(sizeof(__u32) == sizeof(int), "ids fit an int array");
	long r;

	pt_ids_clear(out);
	if (out->cap < cap) {
		int *v = realloc(out->v, cap * sizeof(int));

		if (!v)
			pt_die("realloc");
		out->v = v;
		out->cap = cap;
	}
	/* Ids fit in 31 bits (pid_max): as ints they sort the same. */
	r = pidmap_list(scope, pidfd, 0, 0, 0, (__u32 *)out->v, cap);
	if (r < 0)
		return errno;
	if ((size_t)r >= cap)
		return E2BIG;	/* no room left to know the listing ended */
	out->n = (size_t)r;
	for (size_t i = 1; i < out->n; i++)
		if (out->v[i] <= out->v[i - 1])
			return EDOM;
	return 0;
}

/* Chunks of 256: the ABI's resume-after-last_id loop, checked call by call. */
static int list_chunked(int pidfd, __u32 scope, struct pt_ids *out)
{
	struct pt_enum_stats st = { 0 };
	int e = pt_enumerate(PT_PIDMAP, scope, pidfd, 0, 256, out, &st);

	if (!e && (st.dups || st.order || st.overrun))
		return EDOM;
	return e;
}

/* The holder's tasks: readdir of /proc/H/task, which follows its thread list. */
static void holder_tasks(pid_t holder, struct pt_ids *out)
{
	char path[64];
	int e;

	snprintf(path, sizeof(path), "/proc/%d/task", holder);
	pt_ids_clear(out);
	e = pt_readdir_ids(path, out);
	if (e)
		pt_die("readdir %s: %s", path, pt_errname(e));
}

/* Leaders of every task in @tasks: the holder's by membership, others by status. */
static void leaders_of(const struct pt_ids *tasks, const struct pt_ids *holder_set,
		       pid_t holder, struct pt_ids *out)
{
	pt_ids_clear(out);
	pt_ids_push(out, holder);
	for (size_t i = 0; i < tasks->n; i++) {
		int tgid;

		if (pt_ids_has(holder_set, tasks->v[i]))
			continue;
		tgid = proc_tgid_of(tasks->v[i]);
		/* Kept sorted, so that pt_ids_has() can search it. */
		if (tgid > 0 && !pt_ids_has(out, tgid)) {
			pt_ids_push(out, tgid);
			pt_ids_sort(out);
		}
	}
}

/*
 * Compare one pidmap listing with its reference, up to ATTEMPTS times
 * (kernel workers may start or end in between).  @how names the listing.
 */
typedef int (*lister)(int pidfd, __u32 scope, struct pt_ids *out);
typedef void (*reference)(struct pt_ids *out, void *ctx);

static int one_call_lister(int pidfd, __u32 scope, struct pt_ids *out)
{
	return list_one_call(pidfd, scope, out, one_call_cap);
}

static void settle(const char *how, lister list, int pidfd, __u32 scope,
		   reference ref, void *ctx)
{
	struct pt_ids got = { 0 }, want = { 0 };
	int attempt, e = 0;

	for (attempt = 1; attempt <= ATTEMPTS; attempt++) {
		e = list(pidfd, scope, &got);
		if (e)
			break;
		ref(&want, ctx);
		if (pt_ids_equal(&got, &want)) {
			pt_info("%s: %zu ids, equal to the reference (attempt %d)",
				how, got.n, attempt);
			goto out;
		}
	}
	if (e) {
		fail("%s: %s", how, e == EDOM ? "not strictly ascending" : pt_errname(e));
	} else {
		pt_ids_diff(how, &got, &want);
		failures++;
	}
out:
	pt_ids_free(&got);
	pt_ids_free(&want);
}

struct world {
	pid_t holder;
	int holder_fd;			/* a pidfd of it */
	struct pt_ids holder_set;	/* /proc/H/task while alive */
};

static void ref_all_tasks(struct pt_ids *out, void *ctx)
{
	(void)ctx;
	if (pt_proc_all_tasks(out))
		pt_die("walking /proc");
}

static void ref_leaders(struct pt_ids *out, void *ctx)
{
	struct world *w = ctx;
	struct pt_ids all = { 0 };
	int e = list_chunked(0, PIDMAP_SCOPE_TASKS, &all);

	if (e)
		pt_die("PIDMAP_SCOPE_TASKS for the reference: %s", pt_errname(e));
	leaders_of(&all, &w->holder_set, w->holder, out);
	pt_ids_free(&all);
}

static void ref_proc_root(struct pt_ids *out, void *ctx)
{
	(void)ctx;
	if (pt_proc_tgids(out))
		pt_die("readdir /proc");
}

static void ref_holder_tasks(struct pt_ids *out, void *ctx)
{
	struct world *w = ctx;

	pt_ids_clear(out);
	for (size_t i = 0; i < w->holder_set.n; i++)
		pt_ids_push(out, w->holder_set.v[i]);
}

static void ref_children(struct pt_ids *out, void *ctx)
{
	struct world *w = ctx;

	pt_ids_clear(out);
	if (w->holder > 0)
		pt_ids_push(out, w->holder);
}

static void check_loaded(struct world *w)
{
	static const struct {
		const char *name;
		lister list;
	} ways[] = {
		{ "one call", one_call_lister },
		{ "chunks of 256", list_chunked },
	};
	char how[128];
	pid_t thread;
	int thread_fd;

	holder_tasks(w->holder, &w->holder_set);
	thread = w->holder_set.v[w->holder_set.n / 2];
	thread_fd = pt_pidfd(thread, thread == w->holder ? 0 : PIDFD_THREAD);
	for (size_t k = 0; k < sizeof(ways) / sizeof(ways[0]); k++) {
		snprintf(how, sizeof(how), "SCOPE_TASKS, %s, vs the /proc walk", ways[k].name);
		settle(how, ways[k].list, 0, PIDMAP_SCOPE_TASKS, ref_all_tasks, w);
		snprintf(how, sizeof(how), "SCOPE_PROCS, %s, vs the Tgid of every task",
			 ways[k].name);
		settle(how, ways[k].list, 0, PIDMAP_SCOPE_PROCS, ref_leaders, w);
		snprintf(how, sizeof(how), "SCOPE_PROCS, %s, vs readdir /proc", ways[k].name);
		settle(how, ways[k].list, 0, PIDMAP_SCOPE_PROCS, ref_proc_root, w);
		snprintf(how, sizeof(how), "SCOPE_THREADS of the holder's pidfd, %s",
			 ways[k].name);
		settle(how, ways[k].list, w->holder_fd, PIDMAP_SCOPE_THREADS, ref_holder_tasks, w);
		snprintf(how, sizeof(how), "SCOPE_THREADS of thread %d's pidfd, %s", thread,
			 ways[k].name);
		settle(how, ways[k].list, thread_fd, PIDMAP_SCOPE_THREADS, ref_holder_tasks, w);
	}
	settle("SCOPE_CHILDREN of the test", one_call_lister, PIDFD_SELF_THREAD_GROUP,
	       PIDMAP_SCOPE_CHILDREN, ref_children, w);
	close(thread_fd);
}

static void check_reaped(struct world *w)
{
	struct pt_ids got = { 0 };
	long r;

	settle("SCOPE_PROCS after the reap vs readdir /proc", one_call_lister, 0,
	       PIDMAP_SCOPE_PROCS, ref_proc_root, w);
	if (list_one_call(0, PIDMAP_SCOPE_PROCS, &got, 4096) == 0 && pt_ids_has(&got, w->holder))
		fail("the reaped holder %d is still listed", w->holder);
	errno = 0;
	r = pidmap_list(PIDMAP_SCOPE_THREADS, w->holder_fd, 0, 0, 0, (__u32 *)got.v, 16);
	if (r != -1 || errno != ESRCH)
		fail("SCOPE_THREADS of the reaped holder %d's pidfd = %ld (%s), want ESRCH",
		     w->holder, r, pt_errname(errno));
	pt_ids_free(&got);
}

int main(void)
{
	struct world w = { 0 };
	struct thread_holder h;
	long want, splats0;
	double t0;

	pt_name = "scale";
	pt_require_syscalls();
	want = pt_env_int("PIDMAP_SCALE_THREADS", DEFAULT_THREADS);
	one_call_cap = (size_t)want * 2 + 65536;
	splats0 = pt_count_splats();

	pt_info("starting a holder of %ld threads; MemAvailable %ld KiB",
		want, th_mem_available_kib());
	if (thread_holder_start(&h, want, MEM_FLOOR_KIB, SPAWN_BUDGET_S))
		pt_die("thread holder");
	pt_info("holder %d: %ld threads in %.1f s; MemAvailable %ld KiB",
		h.pid, h.threads, h.seconds, th_mem_available_kib());
	w.holder = h.pid;
	w.holder_fd = pt_pidfd(h.pid, 0);
	if (h.threads < want) {
		fail("the holder stopped at %ld of %ld threads (memory, limits or time)",
		     h.threads, want);
	} else {
		check_loaded(&w);
		if (w.holder_set.n != (size_t)want + 1)
			fail("/proc/%d/task lists %zu tasks, want %ld", w.holder,
			     w.holder_set.n, want + 1);
	}

	t0 = pt_now();
	if (thread_holder_stop(&h))
		pt_die("stopping the holder");
	pt_info("holder reaped in %.1f s", pt_now() - t0);
	w.holder_set.n = 0;
	check_reaped(&w);
	pt_ids_free(&w.holder_set);

	if (pt_new_splats(splats0) > 0)
		fail("the kernel log has new splats");
	printf("scale: %s: %ld threads, %d failure(s)\n",
	       failures ? "FAIL" : "PASS", want, failures);
	return failures ? KSFT_FAIL : KSFT_PASS;
}
