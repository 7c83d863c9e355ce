// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * pidmap-bench: the /proc side of the listings: the timed walks, as htop
 * and ps do them with opendir/readdir, and the untimed passes that count
 * their syscalls and bytes and collect their ids.
 */
#include "common.h"

/*
 * getdents64 buffers of the counting pass, the size glibc's opendir uses:
 * one per nesting level (/proc, then /proc/PID/task inside it).
 */
#define DENTS_BUF 32768
#define DENTS_DEPTH 2
static char dentsbuf[DENTS_DEPTH][DENTS_BUF];
static int dents_depth;

/* ---------------------------------------------------------------------- */
/* The enumerations.  Each returns the number of ids it saw, or dies.     */

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

/* /proc root readdir: thread-group ids. */
long walk_proc_root(void *unused)
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

static inline void sink_tid(void *arg, DIR *task_dir, int pid, int tid)
{
	(void)arg;
	(void)task_dir;
	(void)pid;
	sink = tid;
}

/* The htop-style walk, ids only. */
long walk_proc_tasks(void *unused)
{
	(void)unused;
	return for_each_proc_task(sink_tid, NULL);
}

/* readdir of /proc/self/fd, leaving out the directory's own fd. */
long walk_self_fd(void *unused)
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

static void idlist_add(int id, void *arg, struct cost *c)
{
	struct idlist *l = arg;

	(void)c;
	if (l->n == l->cap)
		die("more than %ld ids in one listing", l->cap);
	l->v[l->n++] = id;
}

void idlist_append(struct idlist *l, const void *ids, long n)
{
	const int *v = ids;	/* __u32 ids and int fds: 4 bytes each */
	long i;

	for (i = 0; i < n; i++)
		idlist_add(v[i], l, NULL);
}

static void idlist_add_tasks(int pid, void *arg, struct cost *c)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	raw_list_dir(path, c, true, idlist_add, arg);
}

long pass_proc_tasks(struct cost *c, struct idlist *ids)
{
	raw_list_dir("/proc", c, false, idlist_add_tasks, ids);
	return ids->n;
}

long pass_proc_root(struct cost *c, struct idlist *ids)
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

long pass_self_fd(struct cost *c, struct idlist *ids)
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
