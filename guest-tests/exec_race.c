// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * exec_race: a process pidfd names the process while its threads exec.
 *
 * A target process of four threads (the leader, two idle threads and one
 * that execve()s) re-executes itself from a non-leader thread, again and
 * again: each exec goes through de_thread(), which kills the other
 * threads, gives the exec'ing thread the leader's pid (exchange_tids(),
 * transfer_pid()) and releases the old leader. The process, and so its
 * pidfd, lives throughout. Meanwhile this process calls, round after
 * round, through a pidfd of it (not PIDFD_THREAD):
 *   - fdmap(2): must not fail (an empty table is the old leader's, whose
 *     /proc/PID/fd is empty too, before the exec takes its place);
 *   - pidmap(2) PIDMAP_SCOPE_THREADS: must not fail and must list the
 *     tgid, which always names a thread of the group;
 *   - pidmap_info(2) PIDMAP_SCOPE_THREADS: must not fail and must carry a
 *     record for the tgid, with that tgid.
 * Any error (ESRCH above all) or missing leader is a failure, counted per
 * call and reported with the number of rounds and execs.
 *
 * With two CPUs or more, the lister runs on CPU 0 and the target's leader
 * and idle threads on CPU 1, while the thread that execs runs on CPU 0 as
 * SCHED_FIFO: de_thread() sleeps until the old leader has exited on CPU 1,
 * and its wakeup preempts the lister wherever it is in its call, so the
 * exec's tail (the leader swapped and released) runs inside the lister's
 * call, between any two of its steps, instead of only when the host
 * happens to stop a vCPU there.
 *
 * It runs twice: as root, then as uid 65534 without capabilities listing
 * a target of its own uid, so that every call also applies ptrace's rule
 * (the same uids and a dumpable target) while de_thread() swaps the
 * leader. Each pass is PIDMAP_EXEC_RACE_STORMS targets (default 3) of
 * PIDMAP_EXEC_RACE_EXECS execs each (default 300), one after the other. PIDMAP_EXEC_RACE_CALLS
 * picks the calls by their first letters, "f", "t" and "r" (default "ftr":
 * fdmap, THREADS, records).
 */
#include "pidmap_test.h"	/* first: it defines _GNU_SOURCE */

#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define N_IDLE 2		/* besides the leader and the exec'ing thread */
#define MAX_IDS 64

struct shared {
	int execs;		/* exec attempts of the current target */
	int limit;		/* its last generation parks instead */
};

static struct shared *sh;
static char memfd_arg[16];
static int pinned;		/* two CPUs or more: lister and exec on CPU 0 */
static const char *calls = "ftr";

/* Run the calling thread on @cpu with @policy, when there are two CPUs. */
static void place(int policy, int cpu)
{
	struct sched_param sp = { .sched_priority = policy == SCHED_FIFO ? 10 : 0 };
	cpu_set_t set;

	if (!pinned)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) ||
	    sched_setscheduler(0, policy, &sp))
		pt_die("placing a thread on CPU %d: %s", cpu, strerror(errno));
}

static void map_shared(int fd)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED)
		pt_die("mmap memfd");
}

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void *exec_thread(void *arg)
{
	char *const argv[] = { "exec_race", "--exec-worker", memfd_arg, NULL };

	(void)arg;
	place(SCHED_FIFO, 0);
	__atomic_fetch_add(&sh->execs, 1, __ATOMIC_RELAXED);
	execve("/proc/self/exe", argv, environ);
	pt_err("execve /proc/self/exe: %s", strerror(errno));
	_exit(3);
}

/* One generation of the target: two idle threads and one that execs. */
static void __attribute__((noreturn)) exec_worker(void)
{
	pthread_t t;
	int i;

	/* The exec'd thread was the FIFO one on CPU 0: the leader is not. */
	place(SCHED_OTHER, 1);
	for (i = 0; i < N_IDLE; i++)
		if (pthread_create(&t, NULL, idle_thread, NULL))
			pt_die("pthread_create");
	if (__atomic_load_n(&sh->execs, __ATOMIC_RELAXED) < sh->limit &&
	    pthread_create(&t, NULL, exec_thread, NULL))
		pt_die("pthread_create");
	/* de_thread() kills the leader when the exec succeeds. */
	for (;;)
		pause();
}

struct counts {
	unsigned long rounds, execs;
	unsigned long fdmap_err, threads_err, info_err;
	unsigned long threads_noleader, info_noleader;
	int fdmap_errno, threads_errno, info_errno;
};

static void one_round(int pidfd, pid_t tgid, struct counts *c)
{
	static struct pidmap_info recs[MAX_IDS];
	__u32 ids[MAX_IDS];
	int fds[MAX_IDS];
	long n, i;
	int found;

	n = strchr(calls, 'f') ? fdmap_list(pidfd, 0, 0, fds, MAX_IDS) : 0;
	if (n < 0) {
		c->fdmap_err++;
		c->fdmap_errno = errno;
	}

	if (!strchr(calls, 't'))
		goto records;
	n = pidmap_list(PIDMAP_SCOPE_THREADS, pidfd, 0, 0, 0, ids, MAX_IDS);
	if (n < 0) {
		c->threads_err++;
		c->threads_errno = errno;
	} else {
		for (i = 0, found = 0; i < n; i++)
			found |= ids[i] == (__u32)tgid;
		if (!found)
			c->threads_noleader++;
	}

records:
	if (!strchr(calls, 'r'))
		goto out;
	n = pidmap_info_list(PIDMAP_SCOPE_THREADS, pidfd, 0, 0, 0, recs, MAX_IDS,
			     sizeof(recs[0]), PIDMAP_INFO_ID);
	if (n < 0) {
		c->info_err++;
		c->info_errno = errno;
	} else {
		for (i = 0, found = 0; i < n; i++)
			found |= recs[i].tid == (__u32)tgid && recs[i].tgid == (__u32)tgid;
		if (!found)
			c->info_noleader++;
	}
out:
	c->rounds++;
}

/* One target of @execs execs, listed through its pidfd until it is done. */
static int storm(int memfd, int execs, struct counts *c)
{
	char *const argv[] = { "exec_race", "--exec-worker", memfd_arg, NULL };
	int pidfd, status;
	pid_t pid;

	sh->execs = 0;
	sh->limit = execs;
	pid = fork();
	if (pid < 0)
		pt_die("fork");
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		execve("/proc/self/exe", argv, environ);
		_exit(3);
	}
	(void)memfd;
	pidfd = pt_pidfd(pid, 0);
	while (__atomic_load_n(&sh->execs, __ATOMIC_RELAXED) < execs) {
		one_round(pidfd, pid, c);
		/* The process must live throughout, or an error is no finding. */
		if (waitpid(pid, &status, WNOHANG) != 0) {
			pt_err("the target %d ended after %d execs (status %#x)", pid,
			       sh->execs, status);
			close(pidfd);
			return -1;
		}
	}
	/* The last exec may still be under way: list it too. */
	one_round(pidfd, pid, c);
	c->execs += (unsigned long)execs;
	kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status)) {
		pt_err("the target %d ended by itself (status %#x)", pid, status);
		close(pidfd);
		return -1;
	}
	close(pidfd);
	return 0;
}

/* One pass of @storms targets; prints its counts, returns whether it failed. */
static int pass(const char *who, int memfd, int storms, int execs)
{
	struct counts c = { 0 };
	int i, failed = 0;

	for (i = 0; i < storms; i++)
		if (storm(memfd, execs, &c))
			return 1;

	pt_info("%s: %lu rounds of \"%s\" during %lu execs from a non-leader thread%s", who,
		c.rounds, calls, c.execs, pinned ? ", the exec preempting the lister" : "");
	if (c.fdmap_err) {
		pt_err("%s: fdmap(process pidfd) failed in %lu of %lu rounds (last %s)", who,
		       c.fdmap_err, c.rounds, pt_errname(c.fdmap_errno));
		failed = 1;
	}
	if (c.threads_err || c.threads_noleader) {
		pt_err("%s: pidmap(THREADS, process pidfd) failed in %lu and missed the tgid in %lu of %lu rounds (last %s)",
		       who, c.threads_err, c.threads_noleader, c.rounds,
		       pt_errname(c.threads_errno));
		failed = 1;
	}
	if (c.info_err || c.info_noleader) {
		pt_err("%s: pidmap_info(THREADS, process pidfd) failed in %lu and missed the tgid's record in %lu of %lu rounds (last %s)",
		       who, c.info_err, c.info_noleader, c.rounds,
		       pt_errname(c.info_errno));
		failed = 1;
	}
	if (!failed)
		printf("exec_race: %s: %lu rounds, %lu execs, no error\n", who, c.rounds, c.execs);
	return failed;
}

/*
 * The pass as uid 65534, in a child: no capability is left, so the calls
 * decide by ptrace's rule; RLIMIT_RTPRIO, raised while root, keeps the
 * exec'ing thread's SCHED_FIFO.
 */
static int pass_as_nobody(int memfd, int storms, int execs)
{
	struct rlimit rtprio = { 10, 10 };
	int status;
	pid_t pid = fork();

	if (pid < 0)
		pt_die("fork");
	if (!pid) {
		if (setrlimit(RLIMIT_RTPRIO, &rtprio) || setgroups(0, NULL) ||
		    setgid(65534) || setuid(65534))
			pt_die("dropping to uid 65534: %s", strerror(errno));
		if (prctl(PR_SET_DUMPABLE, 1))
			pt_die("PR_SET_DUMPABLE");
		_exit(pass("uid 65534", memfd, storms, execs));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
		pt_err("the uid 65534 pass ended abnormally (status %#x)", status);
		return 1;
	}
	return WEXITSTATUS(status) != 0;
}

int main(int argc, char **argv)
{
	int storms, execs, memfd, failed;
	long splats0, splats;

	pt_name = "exec_race";
	pinned = sysconf(_SC_NPROCESSORS_ONLN) >= 2;
	if (argc == 3 && !strcmp(argv[1], "--exec-worker")) {
		memfd = atoi(argv[2]);
		snprintf(memfd_arg, sizeof(memfd_arg), "%d", memfd);
		map_shared(memfd);
		exec_worker();
	}
	pt_require_syscalls();
	if (getenv("PIDMAP_EXEC_RACE_CALLS"))
		calls = getenv("PIDMAP_EXEC_RACE_CALLS");
	storms = pt_env_int("PIDMAP_EXEC_RACE_STORMS", 3);
	execs = pt_env_int("PIDMAP_EXEC_RACE_EXECS", 300);
	if (storms < 1 || execs < 1)
		pt_die("PIDMAP_EXEC_RACE_STORMS and _EXECS must be positive");
	if (getuid() != 0)
		pt_die("exec_race runs as root (it drops to uid 65534 for its second pass)");
	splats0 = pt_count_splats();
	alarm(900);

	/* Without MFD_CLOEXEC: each generation finds it by number. */
	memfd = (int)syscall(SYS_memfd_create, "exec_race", 0);
	if (memfd < 0)
		pt_die("memfd_create");
	if (ftruncate(memfd, sizeof(*sh)))
		pt_die("ftruncate");
	map_shared(memfd);
	snprintf(memfd_arg, sizeof(memfd_arg), "%d", memfd);
	place(SCHED_OTHER, 0);

	failed = pass("root", memfd, storms, execs);
	failed |= pass_as_nobody(memfd, storms, execs);
	splats = pt_new_splats(splats0);
	if (splats < 0) {
		pt_err("cannot read the kernel log");
		failed = 1;
	} else if (splats) {
		pt_err("%ld kernel splats during the run", splats);
		failed = 1;
	}
	if (!failed)
		printf("exec_race: PASS: as root and as uid 65534, no error\n");
	return failed ? KSFT_FAIL : KSFT_PASS;
}
