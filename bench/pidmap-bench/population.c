// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * pidmap-bench: room for more tasks (pid_max, threads-max, restored at
 * exit) and the task populations the cases spawn and tear down.
 */
#include "common.h"

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

void restore_sysctls(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(saved); i++)
		if (saved[i].orig >= 0)
			write_long_file(saved[i].path, saved[i].orig);
}

/* Make room for @ntasks more tasks (pids and threads). */
void make_room(long ntasks)
{
	long want = ntasks + 4096;

	/* pid_max must stay <= PID_MAX_LIMIT (4M on 64-bit). */
	raise_sysctl(&saved[0], want * 2 > 4194304 ? 4194304 : want * 2);
	raise_sysctl(&saved[1], want * 2);
}

/* ---------------------------------------------------------------------- */
/* Task populations.                                                       */

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

void pop_kill(struct pop *p)
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
 * After every child reported: wait until each has closed its end of the
 * report pipe too, so that no child's fd table changes after the spawn.
 */
static void wait_report_pipe_closed(int fd)
{
	char c;
	ssize_t n;

	while ((n = read(fd, &c, 1)) != 0)
		if (n < 0 && errno != EINTR)
			die("read of the report pipe: %m");
		else if (n > 0)
			die("a child reported twice");
}

/*
 * Fork @nprocs children; each runs @child_init(its index, the fd of its
 * end of the report pipe) unless NULL,
 * starts @threads - 1 pthreads (16 KiB stacks) so that it has @threads
 * tasks, reports on a pipe, closes it, and blocks.
 */
void spawn_procs_with(struct pop *p, long nprocs, int threads,
		      void (*child_init)(long index, int report_fd))
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
			if (child_init)
				child_init(i, pfd[1]);
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
	wait_report_pipe_closed(pfd[0]);
	close(pfd[0]);
	note("  spawned %ld processes x %d tasks in %.1f s\n", nprocs, threads,
	     (double)(now_ns() - t0) / 1e9);
}

void spawn_procs(struct pop *p, long nprocs, int threads)
{
	spawn_procs_with(p, nprocs, threads, NULL);
}

/*
 * Top the system up to about @want_tasks tasks in @want_procs processes,
 * counting what it already has: extra threads go in processes of 5 tasks,
 * one process takes the remainder (1..3 extra threads), the rest are
 * single-threaded.
 */
void spawn_about(struct pop *p, long want_tasks, long want_procs)
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
