// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * pidmap-bench: the side of the series: full pidmap(2) and fdmap(2)
 * enumerations, timed and counted.
 */
#include "common.h"

/* pidmap/fdmap output buffers, big enough for every case in one call. */
__u32 idbuf[IDBUF_CAP];
__u32 idbuf2[IDBUF_CAP];
static int fdbuf[IDBUF_CAP];

/* ---- The calls of the series ---- */

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
long pidmap_all(__u32 scope, int pidfd, __u32 *buf, struct cost *c)
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

long new_all_tasks(void *unused)
{
	(void)unused;
	return pidmap_all(PIDMAP_SCOPE_TASKS, 0, idbuf, NULL);
}

long new_procs(void *unused)
{
	(void)unused;
	return pidmap_all(PIDMAP_SCOPE_PROCS, 0, idbuf, NULL);
}

/*
 * The threads of process @pid into @buf: pidfd_open, pidmap(2) of
 * PIDMAP_SCOPE_THREADS on the pidfd, close.  0 if the process is gone.
 */
long threads_of(int pid, __u32 *buf, struct cost *c)
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

long new_grouped(void *unused)
{
	(void)unused;
	return grouped(NULL, NULL);
}

/*
 * One full fdmap(2) enumeration of @pidfd's table (PIDFD_SELF_THREAD_GROUP:
 * our own) through our /proc's view into @buf (IDBUF_CAP fds), each call
 * from the fd after the last one.  Returns the number of fds; a target
 * that exits meanwhile ends its listing (ESRCH); -1 (EACCES) for another
 * process's table that we may not read.
 */
long fdmap_all(int pidfd, int *buf, struct cost *c)
{
	__u32 first_fd = 0;
	long total = 0;

	for (;;) {
		long r;

		if (total == IDBUF_CAP)
			die("fdmap: more than %u fds", IDBUF_CAP);
		r = fdmap_list(pidfd, proc_fd, first_fd, buf + total, IDBUF_CAP - total);
		count_call(c, r, sizeof(*buf));
		if (r < 0) {
			if (errno == ESRCH && pidfd != PIDFD_SELF_THREAD_GROUP)
				return total;	/* the target exited meanwhile */
			if (errno == EACCES && pidfd != PIDFD_SELF_THREAD_GROUP)
				return -1;
			die("fdmap(first_fd %u): %m", first_fd);
		}
		if (r > (long)(IDBUF_CAP - total))
			die("fdmap returned %ld > nr %ld", r, (long)(IDBUF_CAP - total));
		if (r == 0)
			return total;
		total += r;
		first_fd = (__u32)buf[total - 1] + 1;
	}
}

long new_fds(void *unused)
{
	(void)unused;
	return fdmap_all(PIDFD_SELF_THREAD_GROUP, fdbuf, NULL);
}

long pass_new_all_tasks(struct cost *c, struct idlist *ids)
{
	long n = pidmap_all(PIDMAP_SCOPE_TASKS, 0, idbuf, c);

	idlist_append(ids, idbuf, n);
	return n;
}

long pass_new_procs(struct cost *c, struct idlist *ids)
{
	long n = pidmap_all(PIDMAP_SCOPE_PROCS, 0, idbuf, c);

	idlist_append(ids, idbuf, n);
	return n;
}

long pass_grouped(struct cost *c, struct idlist *ids)
{
	return grouped(c, ids);
}

long pass_new_fds(struct cost *c, struct idlist *ids)
{
	long n = fdmap_all(PIDFD_SELF_THREAD_GROUP, fdbuf, c);

	idlist_append(ids, fdbuf, n);
	return n;
}
