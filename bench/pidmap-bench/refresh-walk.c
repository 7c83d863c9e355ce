// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * pidmap-bench: the refresh variants that read /proc/TID/stat: the walk
 * (the baseline), the walk reading status too, and pidmap's ids (all
 * tasks, or grouped by process) followed by the stat files.
 */
#include "refresh.h"

unsigned long long ns_per_tick;
long page_kib;

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
long refresh_walk(void *arg)
{
	struct refresh *rf = arg;

	refresh_reset(rf);
	for_each_proc_task(read_task_stat, rf);
	return rf->n;
}

/* The same walk reading each task's stat and status (exact rss). */
long refresh_walk_status(void *arg)
{
	struct refresh *rf = arg;

	refresh_reset(rf);
	for_each_proc_task(read_task_stat_status, rf);
	return rf->n;
}

/* The shortcut: pidmap(PIDMAP_SCOPE_TASKS), then /proc/TID/stat. */
long refresh_pidmap(void *arg)
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
long refresh_pidmap_grouped(void *arg)
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
