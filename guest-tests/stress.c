// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * stress: pidmap/fdmap enumerations racing against task and fd churn.
 *
 * Checker side (three threads of this process, concurrently, for
 * PIDMAP_STRESS_SECONDS, default 60):
 *   1. pidmap(2) in every scope (PROCS, TASKS, THREADS, CHILDREN, each with
 *      and without PIDMAP_FILTER_NO_KTHREADS; THREADS and CHILDREN of
 *      pidfds, and of PIDFD_SELF_THREAD_GROUP for ourselves) in chunks of
 *      mostly 7, so one enumeration spans many calls (each resuming after
 *      the last id returned) while the task set changes under it;
 *   2. fdmap(2) of this process (PIDFD_SELF_THREAD_GROUP, PIDFD_SELF_THREAD
 *      and a pidfd of it: one fd table);
 *   3. fdmap(2) of the busy "target" process, by pidfd.
 * Storm side (other processes, until the checkers are done):
 *   - two forkers: fork/exit storms (3 of 4 by vfork(), which is cheap
 *     enough under KASAN to churn pids fast; of the full fork()s, every
 *     other child dies multi-threaded);
 *   - the target: thread create/exit storm and dup/dup2/close storm;
 *   - exec loopers: a non-leader thread execve()s /proc/self/exe with
 *     "--exec-worker", which re-enters main() as a short-lived worker that
 *     does the same again (de_thread: the exec'ing thread takes over the
 *     leader's pid), until told to stop.
 * Every fourth pidmap enumeration on average is a pidmap_info(2) one
 * (records of every field) instead of ids, so records are gathered while
 * their tasks exit, exec and change under them; every record must carry
 * exactly the fields asked for, a tgid and a pidfs id.
 * Checks per enumeration: strictly ascending across calls (so no duplicate),
 * every "stable" id (a task or fd alive for the whole run) present, no
 * call returning more than asked, no unexpected error.  Kernel splats are
 * counted from the ring buffer; the xtask harness also scans the log.
 */
#include "pidmap_test.h"	/* first: it defines _GNU_SOURCE */

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define N_STABLE_THREADS 4	/* target threads alive for the whole run */
/*
 * Blocked threads that bring the target to 256 threads, and a few more
 * while the spawners churn: around that size a walk that read the thread
 * list of a small group and the pid XArray above it would keep switching
 * between the two paths from one call of an enumeration to the next.  The main thread, the stable threads, the spawners and the
 * duppers are the other 9.
 */
#define N_BULK_THREADS 247
#define MAX_TARGET_TIDS (N_STABLE_THREADS + N_BULK_THREADS)
#define N_SPAWNERS 2		/* target threads doing create/join storms */
#define N_DUPPERS 2		/* target threads doing dup/close storms */
#define N_SLEEPERS 2		/* idle child processes of the checker */
#define N_LOOPERS 2		/* exec-from-non-leader-thread processes */
#define N_CHECKERS 3
#define N_FORKERS 2		/* fork/exit storm processes */
#define MAX_STABLE_FDS 16	/* 8 fixed numbers, the bulk pipe, the memfd */
#define DUP_RANGE 800		/* dup2 targets stay below this */

/* Lives in a memfd so exec'd workers can map it again by fd number. */
struct shared {
	volatile int stop;		/* storms and sleepers end */
	volatile int target_ready;
	pid_t target_pid;
	pid_t target_tids[MAX_TARGET_TIDS];	/* its threads alive throughout */
	int n_target_tids;
	int target_fds[MAX_STABLE_FDS];
	int n_target_fds;
	pid_t forker_pid[N_FORKERS];
	volatile pid_t forker_child[N_FORKERS];	/* each forker's stable child */
	/* Storm counters, updated with __atomic builtins. */
	unsigned long forks, vforks, thread_spawns, execs, dupcloses;
	unsigned long storm_errors;
};

static struct shared *sh;
static int memfd = -1;
static double deadline;

/* ------------------------------------------------------------------ */
/* Storm side                                                          */
/* ------------------------------------------------------------------ */

static void count(unsigned long *c, unsigned long n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

static void storm_error(const char *what)
{
	/*
	 * EAGAIN/ENOMEM under pressure are expected, and so is EBUSY from
	 * dup2() onto a slot another thread's dup() has reserved but not yet
	 * installed.  Report anything else.
	 */
	if (errno != EAGAIN && errno != ENOMEM && errno != EMFILE && errno != EBUSY)
		pt_err("storm: %s: %s", what, strerror(errno));
	count(&sh->storm_errors, 1);
}

static void *idle_thread(void *arg)
{
	(void)arg;
	while (!sh->stop)
		usleep(20000);
	return NULL;
}

static int bulk_pipe[2];	/* EOF releases the target's blocked threads */

static void *blocked_thread(void *arg)
{
	char c;

	(void)arg;
	while (read(bulk_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void *short_thread(void *arg)
{
	(void)arg;
	return NULL;
}

static int forker_idx;	/* which forker this process is (set before fork) */

/*
 * vfork() in a frame of its own: the child only _exit()s, so the caller's
 * locals cannot be clobbered by the child running on the shared stack.
 */
static __attribute__((noinline)) pid_t vfork_exit(void)
{
	pid_t pid = vfork();

	if (pid == 0)
		_exit(0);
	return pid;
}

/* fork/exit storm: the forked set changes under SCOPE_PROCS/TASKS/CHILDREN. */
static void forker_main(void)
{
	unsigned long n = 0;
	pid_t stable = fork();

	if (stable < 0)
		pt_die("fork forker child");
	if (stable == 0) {
		while (!sh->stop)
			usleep(20000);
		_exit(0);
	}
	sh->forker_child[forker_idx] = stable;
	while (!sh->stop) {
		pid_t pid;

		if (n++ & 3) {
			pid = vfork_exit();
		} else {
			pid = fork();
			if (pid == 0) {
				/* Every other one dies multi-threaded (exit_group). */
				if (n & 4) {
					pthread_t t;

					if (pthread_create(&t, NULL, idle_thread, NULL) != 0)
						_exit(2);
				}
				_exit(0);
			}
		}
		if (pid < 0) {
			storm_error("fork");
			usleep(1000);
			continue;
		}
		if (waitpid(pid, NULL, 0) != pid)
			storm_error("waitpid");
		count((n & 3) == 1 ? &sh->forks : &sh->vforks, 1);
	}
	if (waitpid(stable, NULL, 0) != stable)
		pt_die("waitpid forker child");
	_exit(0);
}

static void *spawner_thread(void *arg)
{
	unsigned long n = 0;

	(void)arg;
	while (!sh->stop) {
		pthread_t t;
		pthread_attr_t attr;
		int detached = (n++ & 7) == 0;
		int e;

		/* Mostly joined threads; some detached, reaped by the kernel. */
		if (pthread_attr_init(&attr))
			pt_die("pthread_attr_init");
		if (detached && pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED))
			pt_die("pthread_attr_setdetachstate");
		e = pthread_create(&t, &attr, short_thread, NULL);
		pthread_attr_destroy(&attr);
		if (e) {
			errno = e;
			storm_error("pthread_create");
			usleep(1000);
			continue;
		}
		if (!detached && pthread_join(t, NULL))
			pt_die("pthread_join");
		count(&sh->thread_spawns, 1);
	}
	return NULL;
}

static int is_stable_fd(int fd)
{
	int i;

	for (i = 0; i < sh->n_target_fds; i++)
		if (sh->target_fds[i] == fd)
			return 1;
	return 0;
}

static void *dupper_thread(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg * 7919u + (unsigned int)getpid();
	int src = sh->target_fds[sh->n_target_fds - 1];

	while (!sh->stop) {
		int fd, fd2, want;

		/* Lowest-free slot: churns the low part of open_fds. */
		fd = dup(src);
		if (fd < 0) {
			storm_error("dup");
			continue;
		}
		/*
		 * A random high slot: churns the bitmap far from the low fds
		 * and sometimes grows the table.  Never a stable fd number:
		 * dup2 onto one would close it.
		 */
		do
			want = 3 + (int)(rand_r(&seed) % (DUP_RANGE - 3));
		while (is_stable_fd(want));
		fd2 = dup2(src, want);
		if (fd2 < 0)
			storm_error("dup2");
		/* Our dup() result may have been replaced by another thread's
		 * dup2 meanwhile; either way it is not a stable fd. */
		if (close(fd) && errno != EBADF)
			storm_error("close");
		if (fd2 >= 0 && close(fd2) && errno != EBADF)
			storm_error("close");
		count(&sh->dupcloses, 2);
	}
	return NULL;
}

/* The fdmap/TASKS target: stable threads and fds plus thread and fd storms. */
static void target_main(void)
{
	static const int wanted[] = { 5, 17, 64, 100, 255, 256, 511, 700 };
	pthread_t stable[N_STABLE_THREADS], spawn[N_SPAWNERS], dupper[N_DUPPERS];
	static pthread_t bulk[N_BULK_THREADS];
	pthread_attr_t small;
	struct rlimit rl;
	int i, null_fd;

	/* Stable fds at fixed numbers, some past the initial 64-slot table. */
	if (getrlimit(RLIMIT_NOFILE, &rl))
		pt_die("getrlimit");
	if (rl.rlim_cur < 1024 && rl.rlim_max >= 1024) {
		rl.rlim_cur = 1024;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			pt_die("setrlimit");
	}
	null_fd = open("/dev/null", O_RDONLY);
	if (null_fd < 0)
		null_fd = dup(memfd);	/* a guest without /dev/null */
	if (null_fd < 0)
		pt_die("open /dev/null");
	sh->n_target_fds = 0;
	for (i = 0; i < (int)(sizeof(wanted) / sizeof(wanted[0])); i++) {
		if ((rlim_t)wanted[i] >= rl.rlim_cur || wanted[i] == memfd)
			continue;
		if (dup2(null_fd, wanted[i]) != wanted[i])
			pt_die("dup2 stable fd %d", wanted[i]);
		sh->target_fds[sh->n_target_fds++] = wanted[i];
	}
	/*
	 * The bulk threads' pipe is stable too, and must be: a dup2() of the
	 * storm landing on it would close it and end those threads.
	 */
	if (pipe(bulk_pipe))
		pt_die("pipe");
	sh->target_fds[sh->n_target_fds++] = bulk_pipe[0];
	sh->target_fds[sh->n_target_fds++] = bulk_pipe[1];
	/* memfd is inherited and untouched: stable too (and used as dup source). */
	sh->target_fds[sh->n_target_fds++] = memfd;
	if (close(null_fd))
		pt_die("close");

	for (i = 0; i < N_STABLE_THREADS; i++)
		if (pthread_create(&stable[i], NULL, idle_thread, NULL))
			pt_die("pthread_create stable");
	if (pthread_attr_init(&small) ||
	    pthread_attr_setstacksize(&small, 1024 * 1024))
		pt_die("bulk thread setup");
	for (i = 0; i < N_BULK_THREADS; i++) {
		int e = pthread_create(&bulk[i], &small, blocked_thread, NULL);

		if (e) {
			errno = e;	/* pthread_create does not set it */
			pt_die("pthread_create bulk %d", i);
		}
	}
	/*
	 * The tids are only known inside the threads: read them from /proc
	 * now, before any churn starts, so every one listed is stable.
	 */
	{
		struct pt_ids tids = { 0 };
		char path[64];
		int n = 0;
		size_t j;

		snprintf(path, sizeof(path), "/proc/%d/task", getpid());
		if (pt_readdir_ids(path, &tids))
			pt_die("readdir %s", path);
		for (j = 0; j < tids.n && n < MAX_TARGET_TIDS; j++)
			if (tids.v[j] != getpid())
				sh->target_tids[n++] = tids.v[j];
		if (n != MAX_TARGET_TIDS)
			pt_die("target: found %d stable threads", n);
		sh->n_target_tids = n;
		pt_ids_free(&tids);
	}
	for (i = 0; i < N_SPAWNERS; i++)
		if (pthread_create(&spawn[i], NULL, spawner_thread, NULL))
			pt_die("pthread_create spawner");
	for (i = 0; i < N_DUPPERS; i++)
		if (pthread_create(&dupper[i], NULL, dupper_thread, (void *)(uintptr_t)(i + 1)))
			pt_die("pthread_create dupper");
	__atomic_store_n(&sh->target_ready, 1, __ATOMIC_RELEASE);

	for (i = 0; i < N_SPAWNERS; i++)
		pthread_join(spawn[i], NULL);
	for (i = 0; i < N_DUPPERS; i++)
		pthread_join(dupper[i], NULL);
	for (i = 0; i < N_STABLE_THREADS; i++)
		pthread_join(stable[i], NULL);
	close(bulk_pipe[1]);
	for (i = 0; i < N_BULK_THREADS; i++)
		pthread_join(bulk[i], NULL);
	_exit(0);
}

/* ------------------------------------------------------------------ */
/* Exec from a non-leader thread                                       */
/* ------------------------------------------------------------------ */

static char exec_fd_arg[16];

static void *exec_thread(void *arg)
{
	char *const argv[] = { "stress", "--exec-worker", exec_fd_arg, NULL };

	(void)arg;
	/* Give the sleeper threads a moment so de_thread has threads to kill. */
	sched_yield();
	if (sh->stop)
		_exit(0);
	execve("/proc/self/exe", argv, environ);
	pt_err("execve /proc/self/exe: %s", strerror(errno));
	_exit(3);
}

/*
 * One generation of an exec looper: the leader parks, two threads idle, and a
 * third execve()s.  The process keeps its pid across generations, so the
 * checker counts it as stable: it must never be missing from PROC/ALL_TASKS.
 */
static void exec_worker(void)
{
	pthread_t t;
	int i;

	if (sh->stop)
		_exit(0);
	snprintf(exec_fd_arg, sizeof(exec_fd_arg), "%d", memfd);
	for (i = 0; i < 2; i++)
		if (pthread_create(&t, NULL, idle_thread, NULL))
			pt_die("exec worker: pthread_create");
	if (pthread_create(&t, NULL, exec_thread, NULL))
		pt_die("exec worker: pthread_create");
	/* de_thread kills this thread when the exec succeeds. */
	for (;;)
		pause();
}

static void map_shared(int fd)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED)
		pt_die("mmap memfd");
	memfd = fd;
}

/* ------------------------------------------------------------------ */
/* Checker side                                                        */
/* ------------------------------------------------------------------ */

struct side {
	const char *name;
	struct pt_enum_stats st;
	unsigned long enums, misses, exec_misses, errors, kthread_leaks;
};

static struct side sides[N_CHECKERS];
static pid_t children[1 + N_FORKERS + N_SLEEPERS + N_LOOPERS];
static int n_children;
static pid_t loopers[N_LOOPERS];
/* pidfds of the targets: the calls name a target only by pidfd. */
static int target_fd, self_fd, looper_fd[N_LOOPERS], forker_fd[N_FORKERS];
static pid_t sleepers[N_SLEEPERS];
static pid_t checker_tids[N_CHECKERS];
static int self_fds[4];
static int kthreadd = -1;	/* found by PF_KTHREAD, not assumed to be 2 */
static volatile int checkers_go;	/* set once every checker tid is known */
/*
 * Checker tids are stable ids: no checker may exit while another is still
 * in its last enumeration, so they leave together.
 */
static pthread_barrier_t checkers_done;

static void checker_finish(void)
{
	int e = pthread_barrier_wait(&checkers_done);

	if (e && e != PTHREAD_BARRIER_SERIAL_THREAD) {
		errno = e;
		pt_die("pthread_barrier_wait");
	}
}

/* Publish this checker's tid, then wait until all are known. */
static void checker_start(int idx)
{
	__atomic_store_n(&checker_tids[idx], pt_gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&checkers_go, __ATOMIC_ACQUIRE))
		usleep(1000);
}

static void report_miss(struct side *s, const char *what, int id, size_t n)
{
	/* Print the first few only: a broken kernel would flood the console. */
	if (s->misses + s->exec_misses <= 10)
		pt_err("%s: stable id %d missing from %s (listed %zu ids, %.2f s before the end)",
		       s->name, id, what, n, deadline - pt_now());
}

static void expect(struct side *s, const struct pt_ids *got, const char *what,
		   const int *ids, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (ids[i] > 0 && !pt_ids_has(got, ids[i])) {
			s->misses++;
			report_miss(s, what, ids[i], got->n);
		}
}

static void expect_fds(struct side *s, const struct pt_ids *got, const char *what,
		       const int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!pt_ids_has(got, fds[i])) {
			s->misses++;
			report_miss(s, what, fds[i], got->n);
		}
}

static int run_enum(struct side *s, enum pt_kind kind, __u32 scope, int pidfd, __u32 filter,
		    unsigned int chunk, struct pt_ids *out, const char *what)
{
	unsigned long repeats = s->st.dups + s->st.order;
	unsigned long bad = s->st.badrec;
	int e = pt_enumerate(kind, scope, pidfd, filter, chunk, out, &s->st);

	s->enums++;
	/* Name the first few enumerations that went back or repeated an id. */
	if (s->st.dups + s->st.order > repeats && repeats < 10)
		pt_err("%s: %s pidfd %d filter %#x chunk %u%s: %lu ids repeated or out of order",
		       s->name, what, pidfd, filter, chunk, kind == PT_PIDMAP_INFO ? " records" : "",
		       s->st.dups + s->st.order - repeats);
	if (s->st.badrec > bad && bad < 10)
		pt_err("%s: %s pidfd %d filter %#x chunk %u: %lu records with a wrong mask, "
		       "tgid or pidfs_id", s->name, what, pidfd, filter, chunk, s->st.badrec - bad);
	if (e) {
		s->errors++;
		if (s->errors <= 10)
			pt_err("%s: %s pidfd %d filter %#x chunk %u%s: %s", s->name, what,
			       pidfd, filter, chunk, kind == PT_PIDMAP_INFO ? " records" : "",
			       e == EDEADLK ? "no progress" : strerror(e));
	}
	return e;
}

static unsigned int pick_chunk(unsigned long n)
{
	/* Mostly 7 (many calls per enumeration), sometimes 1, 3 or 64. */
	static const unsigned int chunks[] = { 7, 7, 7, 1, 7, 3, 7, 64 };

	return chunks[n % (sizeof(chunks) / sizeof(chunks[0]))];
}

static void *pidmap_checker(void *arg)
{
	struct side *s = arg;
	struct pt_ids got = { 0 };
	static int tasks[32 + MAX_TARGET_TIDS];
	int procs[16], kids[16];
	int np = 0, nt = 0, nk = 0, i;
	unsigned long n = 0;
	pid_t me = getpid();

	checker_start(0);
	/* Thread-group ids alive for the whole run. */
	procs[np++] = me;
	if (kill(1, 0) == 0 || errno == EPERM)
		procs[np++] = 1;
	for (i = 0; i < n_children; i++)
		procs[np++] = children[i];
	for (i = 0; i < N_FORKERS; i++)
		procs[np++] = sh->forker_child[i];
	/* Every stable task id: the above plus stable threads. */
	memcpy(tasks, procs, (size_t)np * sizeof(int));
	nt = np;
	for (i = 0; i < sh->n_target_tids; i++)
		tasks[nt++] = sh->target_tids[i];
	for (i = 0; i < N_CHECKERS; i++)
		tasks[nt++] = checker_tids[i];
	for (i = 0; i < n_children; i++)
		kids[nk++] = children[i];

	while (pt_now() < deadline) {
		unsigned int chunk = pick_chunk(n);
		__u32 ik = (n & 1) ? PIDMAP_FILTER_NO_KTHREADS : 0;

		/* Records instead of ids, in every mode (the modes cycle 0..6). */
		enum pt_kind kind = ((n / 14) & 3) == 1 ? PT_PIDMAP_INFO : PT_PIDMAP;
		int mode = (int)((n >> 1) % 7);
		int tg[1];
		const char *what;

		n++;
		switch (mode) {
		case 0:
		case 1:
			what = mode ? "TASKS" : "PROCS";
			if (run_enum(s, kind, mode ? PIDMAP_SCOPE_TASKS : PIDMAP_SCOPE_PROCS, 0, ik,
				     chunk, &got, what))
				break;
			/*
			 * An exec looper keeps its tgid (and the tid equal to
			 * it) through de_thread; misses there are counted
			 * apart since that is the racy path.
			 */
			for (i = 0; i < N_LOOPERS; i++)
				if (!pt_ids_has(&got, loopers[i])) {
					s->exec_misses++;
					report_miss(s, what, loopers[i], got.n);
				}
			if (mode)
				expect(s, &got, what, tasks, nt);
			else
				expect(s, &got, what, procs, np);
			/* kthreadd is listed without the modifier only. */
			if (kthreadd > 0 && ik && pt_ids_has(&got, kthreadd)) {
				s->kthread_leaks++;
				if (s->kthread_leaks <= 3)
					pt_err("%s|NO_KTHREADS listed kthreadd", what);
			}
			if (kthreadd > 0 && !ik && !pt_ids_has(&got, kthreadd)) {
				s->misses++;
				report_miss(s, what, kthreadd, got.n);
			}
			break;
		case 2:
			if (run_enum(s, kind, PIDMAP_SCOPE_THREADS, target_fd, ik, chunk, &got,
				     "THREADS(target)"))
				break;
			tg[0] = sh->target_pid;
			expect(s, &got, "THREADS(target)", tg, 1);
			expect(s, &got, "THREADS(target)", sh->target_tids, sh->n_target_tids);
			break;
		case 3:
			if (run_enum(s, kind, PIDMAP_SCOPE_THREADS,
				     (n & 4) ? self_fd : PIDFD_SELF_THREAD_GROUP, ik, chunk, &got,
				     "THREADS(self)"))
				break;
			tg[0] = me;
			expect(s, &got, "THREADS(self)", tg, 1);
			expect(s, &got, "THREADS(self)", checker_tids, N_CHECKERS);
			break;
		case 4:
			/* The exec looper's group keeps its id across de_thread. */
			i = (int)(n % N_LOOPERS);
			if (run_enum(s, kind, PIDMAP_SCOPE_THREADS, looper_fd[i], ik, chunk, &got,
				     "THREADS(exec looper)"))
				break;
			if (!pt_ids_has(&got, loopers[i])) {
				s->exec_misses++;
				report_miss(s, "THREADS(exec looper)", loopers[i], got.n);
			}
			break;
		case 5:
			if (run_enum(s, kind, PIDMAP_SCOPE_CHILDREN,
				     (n & 4) ? self_fd : PIDFD_SELF_THREAD_GROUP, ik, chunk, &got,
				     "CHILDREN(self)"))
				break;
			expect(s, &got, "CHILDREN(self)", kids, nk);
			break;
		case 6:
			/* A forker's children: one stable among a storm of short ones. */
			i = (int)((n >> 3) % N_FORKERS);
			if (run_enum(s, kind, PIDMAP_SCOPE_CHILDREN, forker_fd[i], ik, chunk, &got,
				     "CHILDREN(forker)"))
				break;
			tg[0] = sh->forker_child[i];
			expect(s, &got, "CHILDREN(forker)", tg, 1);
			break;
		}
	}
	pt_ids_free(&got);
	checker_finish();
	return NULL;
}

static void *fdmap_self_checker(void *arg)
{
	struct side *s = arg;
	struct pt_ids got = { 0 };
	unsigned long n = 0;

	checker_start(1);
	while (pt_now() < deadline) {
		/* Our pidfd and both PIDFD_SELF_* must mean the same fd table. */
		int pidfd = n % 3 == 0 ? self_fd
			  : n % 3 == 1 ? PIDFD_SELF_THREAD_GROUP : PIDFD_SELF_THREAD;

		if (!run_enum(s, PT_FDMAP, 0, pidfd, 0, pick_chunk(n), &got, "fdmap(self)"))
			expect_fds(s, &got, "fdmap(self)", self_fds, 4);
		n++;
	}
	pt_ids_free(&got);
	checker_finish();
	return NULL;
}

static void *fdmap_target_checker(void *arg)
{
	struct side *s = arg;
	struct pt_ids got = { 0 };
	unsigned long n = 0;

	checker_start(2);
	while (pt_now() < deadline) {
		if (!run_enum(s, PT_FDMAP, 0, target_fd, 0, pick_chunk(n), &got, "fdmap(target)"))
			expect_fds(s, &got, "fdmap(target)", sh->target_fds, sh->n_target_fds);
		n++;
	}
	pt_ids_free(&got);
	checker_finish();
	return NULL;
}

static pid_t spawn(void (*fn)(void))
{
	pid_t parent = getpid();
	pid_t pid = fork();

	if (pid < 0)
		pt_die("fork");
	if (pid == 0) {
		/* If the checker dies (alarm, pt_die), the storms must not run on. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
			pt_die("PR_SET_PDEATHSIG");
		if (getppid() != parent)
			_exit(1);
		fn();	/* never returns */
	}
	children[n_children++] = pid;
	return pid;
}

static void sleeper_main(void)
{
	while (!sh->stop)
		usleep(20000);
	_exit(0);
}

static void looper_main(void)
{
	char *const argv[] = { "stress", "--exec-worker", exec_fd_arg, "first", NULL };

	/* Generation 0 runs from the leader; every later one from a thread. */
	snprintf(exec_fd_arg, sizeof(exec_fd_arg), "%d", memfd);
	execve("/proc/self/exe", argv, environ);
	pt_die("execve /proc/self/exe");
}

int main(int argc, char **argv)
{
	void *(*const fns[N_CHECKERS])(void *) = {
		pidmap_checker, fdmap_self_checker, fdmap_target_checker,
	};
	static const char *const names[N_CHECKERS] = {
		"pidmap", "fdmap_self", "fdmap_target",
	};
	pthread_t thr[N_CHECKERS];
	unsigned long total_calls = 0, total_enums = 0, dups = 0, order = 0;
	unsigned long records = 0, badrec = 0;
	unsigned long misses = 0, exec_misses = 0, errors = 0, leaks = 0, overrun = 0;
	unsigned long storm_ops;
	int seconds, i, failed = 0;
	long splats0, splats;

	pt_name = "stress";
	if (argc >= 3 && !strcmp(argv[1], "--exec-worker")) {
		map_shared(atoi(argv[2]));
		/* Generation 0 ("first") came from the leader, not a thread. */
		if (argc == 3)
			count(&sh->execs, 1);
		exec_worker();
	}
	pt_require_syscalls();
	seconds = pt_env_int("PIDMAP_STRESS_SECONDS", 60);
	if (seconds < 1)
		seconds = 1;
	splats0 = pt_count_splats();
	/* A hung kernel path must not hang the suite: die well before 300 s. */
	alarm((unsigned int)seconds + 120);

	/* Without MFD_CLOEXEC: exec'd workers find it by number. */
	i = (int)syscall(SYS_memfd_create, "pidmap-stress", 0);
	if (i < 0)
		pt_die("memfd_create");
	if (ftruncate(i, sizeof(struct shared)))
		pt_die("ftruncate");
	map_shared(i);
	snprintf(exec_fd_arg, sizeof(exec_fd_arg), "%d", memfd);

	kthreadd = pt_kthreadd();
	if (kthreadd <= 0)
		pt_die("no kthreadd (a kernel thread with parent 0) in /proc");

	/* Fork every process before any thread exists in this one. */
	sh->target_pid = spawn(target_main);
	for (i = 0; i < N_FORKERS; i++) {
		forker_idx = i;
		sh->forker_pid[i] = spawn(forker_main);
	}
	for (i = 0; i < N_SLEEPERS; i++)
		sleepers[i] = spawn(sleeper_main);
	for (i = 0; i < N_LOOPERS; i++)
		loopers[i] = spawn(looper_main);
	for (i = 0; i < N_FORKERS; i++)
		while (!sh->forker_child[i])
			usleep(10000);
	while (!__atomic_load_n(&sh->target_ready, __ATOMIC_ACQUIRE)) {
		/* A target that died in its setup would leave us waiting. */
		if (waitpid(sh->target_pid, NULL, WNOHANG) == sh->target_pid)
			pt_die("the target process died during setup");
		usleep(10000);
	}

	target_fd = pt_pidfd(sh->target_pid, 0);
	self_fd = pt_pidfd(getpid(), 0);
	for (i = 0; i < N_FORKERS; i++)
		forker_fd[i] = pt_pidfd(sh->forker_pid[i], 0);
	for (i = 0; i < N_LOOPERS; i++)
		looper_fd[i] = pt_pidfd(loopers[i], 0);

	/* Stable fds of this process: fd 0..2 may be absent in a guest. */
	self_fds[0] = memfd;
	for (i = 1; i < 4; i++) {
		self_fds[i] = fcntl(memfd, F_DUPFD, 40 + 60 * i);
		if (self_fds[i] < 0)
			pt_die("F_DUPFD");
	}

	pt_info("running %d s: target %d, forkers %d %d, exec loopers %d %d",
		seconds, sh->target_pid, sh->forker_pid[0], sh->forker_pid[1], loopers[0],
		loopers[1]);
	deadline = pt_now() + seconds + 0.5;	/* + the checkers' start-up */
	if (pthread_barrier_init(&checkers_done, NULL, N_CHECKERS))
		pt_die("pthread_barrier_init");
	/* Checker tids are stable ids too: start checking once all are known. */
	for (i = 0; i < N_CHECKERS; i++) {
		int e;

		sides[i].name = names[i];
		e = pthread_create(&thr[i], NULL, fns[i], &sides[i]);
		if (e) {
			errno = e;
			pt_die("pthread_create checker");
		}
		while (!__atomic_load_n(&checker_tids[i], __ATOMIC_ACQUIRE))
			usleep(1000);
	}
	pt_info("checker tids %d %d %d", checker_tids[0], checker_tids[1], checker_tids[2]);
	__atomic_store_n(&checkers_go, 1, __ATOMIC_RELEASE);
	for (i = 0; i < N_CHECKERS; i++)
		pthread_join(thr[i], NULL);

	sh->stop = 1;
	for (i = 0; i < n_children; i++) {
		int status;

		if (waitpid(children[i], &status, 0) != children[i])
			pt_die("waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			pt_err("child %d ended with status %#x", children[i], status);
			failed = 1;
		}
	}

	for (i = 0; i < N_CHECKERS; i++) {
		struct side *s = &sides[i];

		printf("STRESS: side=%s calls=%lu enumerations=%lu dups=%lu order=%lu "
		       "overrun=%lu misses=%lu exec_misses=%lu errors=%lu kthread_leaks=%lu "
		       "records=%lu bad_records=%lu\n",
		       s->name, s->st.calls, s->enums, s->st.dups, s->st.order,
		       s->st.overrun, s->misses, s->exec_misses, s->errors, s->kthread_leaks,
		       s->st.records, s->st.badrec);
		records += s->st.records;
		badrec += s->st.badrec;
		total_calls += s->st.calls;
		total_enums += s->enums;
		dups += s->st.dups;
		order += s->st.order;
		overrun += s->st.overrun;
		misses += s->misses;
		exec_misses += s->exec_misses;
		errors += s->errors;
		leaks += s->kthread_leaks;
	}
	storm_ops = sh->forks + sh->vforks + sh->thread_spawns + sh->execs + sh->dupcloses;
	printf("STRESS: side=storms forks=%lu vforks=%lu thread_spawns=%lu execs_from_thread=%lu "
	       "dup_close=%lu storm_errors=%lu\n",
	       sh->forks, sh->vforks, sh->thread_spawns, sh->execs, sh->dupcloses, sh->storm_errors);
	splats = pt_new_splats(splats0);
	printf("RELIABILITY: name=stress seconds=%d ops=%lu enumerations=%lu faults=%lu "
	       "inputs=0 dups=%lu misses=%lu order=%lu overrun=%lu errors=%lu "
	       "kthread_leaks=%lu splats=%ld\n",
	       seconds, total_calls, total_enums, storm_ops, dups, misses + exec_misses,
	       order, overrun, errors, leaks, splats);
	fflush(stdout);

	if (dups || misses || exec_misses || order || overrun || errors || leaks || splats > 0 ||
	    badrec)
		failed = 1;
	if (!records) {
		pt_err("no pidmap_info(2) record was read");
		failed = 1;
	}
	/* A run where a side did nothing proves nothing. */
	if (!sh->forks || !sh->vforks || !sh->thread_spawns || !sh->execs || !sh->dupcloses) {
		pt_err("a storm side made no progress");
		failed = 1;
	}
	for (i = 0; i < N_CHECKERS; i++)
		if (!sides[i].enums) {
			pt_err("checker %s made no progress", sides[i].name);
			failed = 1;
		}
	printf("%s: %s\n", pt_name, failed ? "FAIL" : "PASS");
	return failed ? KSFT_FAIL : KSFT_PASS;
}
