// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * namespaces: pidmap in nested pid namespaces, 3 levels below the caller's.
 *
 * Level 0 is the test process's own namespace.  Each level k's process
 * forks two sleepers (one with three extra threads), then
 * unshare(CLONE_NEWPID) + fork(): the child is pid 1 of level k+1.  That
 * child first checks, before any /proc of its own exists, that pidmap sees
 * only itself (its children see only their namespace), then takes a
 * private mount namespace (unshare(CLONE_NEWNS), make / rprivate) and
 * mounts a fresh proc on /proc.
 *
 * Once the whole tree is up, each level compares its PIDMAP_SCOPE_PROCS and
 * PIDMAP_SCOPE_TASKS listings (with and without PIDMAP_FILTER_NO_KTHREADS,
 * in chunks of 1 and 7 and in one call) with a readdir of its own /proc
 * and /proc/PID/task, checks that they start at 1, that THREADS and
 * CHILDREN (of a pidfd, and of PIDFD_SELF_THREAD_GROUP) match /proc, and
 * that pidfds of processes outside it (every outer level's init, inherited
 * across the forks) give ESRCH for THREADS, CHILDREN and fdmap.
 * The level that unshared is still in its old namespace, so its listings,
 * taken after the unshare, must still be those of its own level.
 * Finally level 0 maps every task to its pid at every level (NSpid in
 * /proc/PID/task/TID/status) and checks that each level's listing is
 * exactly the ids of the tasks inside that level: no pid from outside,
 * by identity rather than by number; and that the same listings through
 * each level's procfs mount as the view (procfs_fd on
 * /proc/<its init>/root/proc) are that level's ids too.
 */
#include "pidmap_test.h"	/* first: it defines _GNU_SOURCE */
#include "parked_process.h"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define LEVELS 3
#define MAXIDS 128

struct level {
	int nproc, ntask;
	int proc[MAXIDS], task[MAXIDS];	/* this level's PROC / ALL_TASKS */
	pid_t pid_in_parent;		/* its init, as the level above sees it */
	unsigned long ns_ino;		/* its pid namespace's inode */
};

/* Shared by the whole tree (MAP_SHARED before the first fork). */
static struct shared {
	struct level lv[LEVELS + 1];
	pid_t outer_pid;		/* the level-0 test process */
	unsigned long checks, failures, calls, dups, misses;
} *sh;

static int release_rd, release_wr;	/* EOF on release_rd: tear down */
/* pidfds of the inits of the levels above, inherited by the levels below. */
static int outer_fd[LEVELS + 1];

#define check(ok, ...) pt_check(&sh->checks, &sh->failures, (ok), __VA_ARGS__)

/* A sleeper process with @threads extra threads, up once this returns. */
static pid_t sleeper(int threads)
{
	return parked_process(threads, release_rd, release_wr, NULL, NULL);
}

/* pidmap(2) of @scope (@pidfd: the target, 0 for PROCS and TASKS) through @view_fd. */
static void list_view(int view_fd, __u32 scope, int pidfd, __u32 filter, unsigned int chunk,
		      struct pt_ids *out, const char *what, int level)
{
	struct pt_enum_stats st = { 0 };
	int e = pt_enumerate_view(PT_PIDMAP, view_fd, scope, pidfd, filter, chunk, out, &st);

	__atomic_fetch_add(&sh->calls, st.calls, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sh->dups, st.dups + st.order, __ATOMIC_RELAXED);
	check(e == 0, "level %d: %s (%s, pidfd %d, filter %#x, chunk %u): %s", level, what,
	      pt_scope_name(scope), pidfd, filter, chunk, strerror(e));
	check(st.dups + st.order + st.overrun == 0,
	      "level %d: %s: %lu dups, %lu out of order, %lu overruns", level, what,
	      st.dups, st.order, st.overrun);
}

/* The same in the default view. */
static void list(__u32 scope, int pidfd, __u32 filter, unsigned int chunk, struct pt_ids *out,
		 const char *what, int level)
{
	list_view(0, scope, pidfd, filter, chunk, out, what, level);
}

static void expect_equal(const struct pt_ids *got, const struct pt_ids *want,
			 const char *what, int level)
{
	size_t i;
	int ok = pt_ids_equal(got, want);
	char buf[128];

	check(ok, "level %d: %s differs from the reference", level, what);
	if (!ok) {
		snprintf(buf, sizeof(buf), "level %d: %s", level, what);
		pt_ids_diff(buf, got, want);
		for (i = 0; i < want->n; i++)
			if (!pt_ids_has(got, want->v[i]))
				__atomic_fetch_add(&sh->misses, 1, __ATOMIC_RELAXED);
	}
}

/*
 * Listings at one level against its own /proc.  Level 0 shares its
 * namespace with kernel threads and the runner, which may come and go,
 * so it retries until a snapshot agrees; the nested levels are quiescent
 * and must agree on the first try.
 */
static void level_checks(int level, const pid_t *kids, int nkids, pid_t threaded)
{
	struct pt_ids proc = { 0 }, tasks = { 0 }, a = { 0 }, b = { 0 }, ref = { 0 };
	static const __u32 mods[] = { 0, PIDMAP_FILTER_NO_KTHREADS };
	int tries = level ? 1 : 20, t, m, ok = 0;
	pid_t me = getpid();
	int fd_threaded, fd_me;
	char path[64];
	size_t i;

	for (t = 0; t < tries && !ok; t++) {
		struct pt_ids p2 = { 0 }, t2 = { 0 };

		if (pt_proc_tgids(&proc) || pt_proc_all_tasks(&tasks))
			pt_die("level %d: readdir /proc", level);
		list(PIDMAP_SCOPE_PROCS, 0, 0, 7, &a, "PROCS", level);
		list(PIDMAP_SCOPE_TASKS, 0, 0, 7, &b, "TASKS", level);
		if (pt_proc_tgids(&p2) || pt_proc_all_tasks(&t2))
			pt_die("level %d: readdir /proc", level);
		/* Agree with a /proc snapshot taken before or after. */
		ok = (pt_ids_equal(&a, &proc) || pt_ids_equal(&a, &p2)) &&
		     (pt_ids_equal(&b, &tasks) || pt_ids_equal(&b, &t2));
		pt_ids_free(&p2);
		pt_ids_free(&t2);
		if (!ok && t + 1 < tries)
			usleep(50000);
	}
	if (!ok) {
		expect_equal(&a, &proc, "SCOPE_PROCS vs readdir(/proc)", level);
		expect_equal(&b, &tasks, "SCOPE_TASKS vs readdir(/proc/*/task)", level);
	} else {
		check(1, "listings agree");
	}

	if (level > 0) {
		/* Nested: quiescent, no kernel threads, numbering from 1. */
		/* Chunks of 1 and 7, and everything in one call. */
		static const unsigned int chunks[] = { 1, 7, 256 };

		for (m = 0; m < 2; m++) {
			size_t c;

			for (c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
				list(PIDMAP_SCOPE_PROCS, 0, mods[m], chunks[c], &a, "PROCS", level);
				expect_equal(&a, &proc, m ? "PROCS|NO_KTHREADS" : "PROCS", level);
				list(PIDMAP_SCOPE_TASKS, 0, mods[m], chunks[c], &a, "TASKS", level);
				expect_equal(&a, &tasks, m ? "TASKS|NO_KTHREADS" : "TASKS", level);
			}
		}
		check(proc.n && proc.v[0] == 1, "level %d: PROC does not start at 1 (first %d)",
		      level, proc.n ? proc.v[0] : -1);
		check(tasks.n && tasks.v[0] == 1, "level %d: TASKS does not start at 1", level);
		check(me == 1, "level %d: init is pid %d, not 1", level, me);
		/* Stored for level 0's identity check. */
		check(proc.n <= MAXIDS && tasks.n <= MAXIDS, "level %d: too many ids", level);
		sh->lv[level].nproc = (int)(proc.n < MAXIDS ? proc.n : MAXIDS);
		sh->lv[level].ntask = (int)(tasks.n < MAXIDS ? tasks.n : MAXIDS);
		memcpy(sh->lv[level].proc, proc.v, (size_t)sh->lv[level].nproc * sizeof(int));
		memcpy(sh->lv[level].task, tasks.v, (size_t)sh->lv[level].ntask * sizeof(int));
	} else {
		/* The init namespace: our own processes. */
		for (i = 0; i < (size_t)nkids; i++)
			check(pt_ids_has(&a, kids[i]), "level 0: child %d missing from PROCS", kids[i]);
	}

	/* THREADS of the threaded sleeper, and of ourselves. */
	fd_threaded = pt_pidfd(threaded, 0);
	fd_me = pt_pidfd(me, 0);
	list(PIDMAP_SCOPE_THREADS, fd_threaded, 0, 7, &a, "THREADS(sleeper)", level);
	snprintf(path, sizeof(path), "/proc/%d/task", threaded);
	pt_ids_clear(&ref);
	if (pt_readdir_ids(path, &ref))
		pt_die("readdir %s", path);
	expect_equal(&a, &ref, "THREADS(threaded sleeper)", level);
	check(a.n == 4, "level %d: threaded sleeper has %zu tasks, want 4", level, a.n);
	list(PIDMAP_SCOPE_THREADS, PIDFD_SELF_THREAD_GROUP, 0, 7, &a, "THREADS(self)", level);
	check(a.n == 1 && a.v[0] == me, "level %d: THREADS(self) is not just %d", level, me);
	list(PIDMAP_SCOPE_THREADS, fd_me, 0, 7, &a, "THREADS(pidfd of self)", level);
	check(a.n == 1 && a.v[0] == me, "level %d: THREADS(pidfd of self) is not just %d", level,
	      me);

	/* CHILDREN: exactly the sleepers and the next level's init. */
	pt_ids_clear(&ref);
	for (i = 0; i < (size_t)nkids; i++)
		pt_ids_push(&ref, kids[i]);
	pt_ids_sort(&ref);
	list(PIDMAP_SCOPE_CHILDREN, fd_me, 0, 7, &a, "CHILDREN(pidfd of self)", level);
	expect_equal(&a, &ref, "CHILDREN(pidfd of self)", level);
	list(PIDMAP_SCOPE_CHILDREN, PIDFD_SELF_THREAD_GROUP, 0, 7, &a, "CHILDREN(self)", level);
	expect_equal(&a, &ref, "CHILDREN(self)", level);
	close(fd_threaded);
	close(fd_me);

	/* The inits of the levels above, by pidfd: not in this namespace, ESRCH. */
	if (level > 0) {
		int j, one[1];
		__u32 ids[1];

		for (j = 0; j < level; j++) {
			long r;

			errno = 0;
			r = pidmap_list(PIDMAP_SCOPE_THREADS, outer_fd[j], 0, 0, 0, ids, 1);
			check(r == -1 && errno == ESRCH,
			      "level %d: THREADS(pidfd of level %d) = %ld (%s), want ESRCH", level,
			      j, r, pt_errname(errno));
			errno = 0;
			r = pidmap_list(PIDMAP_SCOPE_CHILDREN, outer_fd[j], 0, 0, 0, ids, 1);
			check(r == -1 && errno == ESRCH,
			      "level %d: CHILDREN(pidfd of level %d) = %ld (%s), want ESRCH", level,
			      j, r, pt_errname(errno));
			errno = 0;
			r = fdmap_list(outer_fd[j], 0, 0, one, 1);
			check(r == -1 && errno == ESRCH,
			      "level %d: fdmap(pidfd of level %d) = %ld (%s), want ESRCH", level,
			      j, r, pt_errname(errno));
		}
	}
	pt_ids_free(&proc);
	pt_ids_free(&tasks);
	pt_ids_free(&a);
	pt_ids_free(&b);
	pt_ids_free(&ref);
}

static void level_main(int level, int ready_wr);

/* Fork the sleepers and the next level, run the checks, report ready. */
static void build_level(int level, int ready_wr)
{
	pid_t kids[3];
	int nkids = 0, status, i;
	pid_t threaded;

	kids[nkids++] = sleeper(0);
	threaded = kids[nkids++] = sleeper(3);
	if (level < LEVELS) {
		int p[2];
		char c;
		pid_t child;

		if (pipe(p))
			pt_die("pipe");
		/* Our pidfd, for the levels below to find outside their namespace. */
		outer_fd[level] = pt_pidfd(getpid(), 0);
		/* We stay in our namespace; our next child is pid 1 of a new one. */
		if (unshare(CLONE_NEWPID))
			pt_die("unshare(CLONE_NEWPID)");
		child = fork();
		if (child < 0)
			pt_die("fork");
		if (child == 0) {
			close(p[0]);
			level_main(level + 1, p[1]);
		}
		close(p[1]);
		sh->lv[level + 1].pid_in_parent = child;
		kids[nkids++] = child;
		if (read(p[0], &c, 1) != 1)
			pt_die("level %d did not come up", level + 1);
		close(p[0]);
	}

	level_checks(level, kids, nkids, threaded);

	if (ready_wr >= 0) {
		char c = 1;

		if (write(ready_wr, &c, 1) != 1)
			pt_die("write");
		close(ready_wr);
		parked_wait_release(release_rd);
		for (i = 0; i < nkids; i++)
			if (waitpid(kids[i], &status, 0) != kids[i])
				pt_die("waitpid");
		_exit(0);
	}
}

static void level_main(int level, int ready_wr)
{
	struct pt_ids ids = { 0 };

	close(release_wr);	/* only level 0 may end the tree */
	release_wr = -1;
	/*
	 * Before anything else exists here and before a /proc of our own:
	 * pidmap answers from the caller's namespace, not from a mount.
	 */
	{
		struct stat s;

		if (stat("/proc/self/ns/pid", &s))
			pt_die("stat /proc/self/ns/pid");
		sh->lv[level].ns_ino = (unsigned long)s.st_ino;
	}
	list(PIDMAP_SCOPE_PROCS, 0, 0, 7, &ids, "PROCS (fresh namespace)", level);
	check(ids.n == 1 && ids.v[0] == 1,
	      "level %d: a fresh namespace lists %zu processes (first %d), want just 1",
	      level, ids.n, ids.n ? ids.v[0] : -1);
	list(PIDMAP_SCOPE_TASKS, 0, 0, 7, &ids, "TASKS (fresh namespace)", level);
	check(ids.n == 1 && ids.v[0] == 1, "level %d: fresh TASKS is not {1}", level);
	pt_ids_free(&ids);

	if (unshare(CLONE_NEWNS))
		pt_die("unshare(CLONE_NEWNS)");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		pt_die("mount --make-rprivate /");
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		pt_die("mount proc");
	build_level(level, ready_wr);
	_exit(0);	/* not reached: build_level exits for level > 0 */
}

/* The level (1..LEVELS) of our tree whose namespace holds this task, or 0. */
static int our_level(int pid, int tid)
{
	char path[96];
	struct stat s;
	int k;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/ns/pid", pid, tid);
	if (stat(path, &s))
		return 0;
	for (k = 1; k <= LEVELS; k++)
		if (sh->lv[k].ns_ino == (unsigned long)s.st_ino)
			return k;
	return 0;
}

/* NSpid of /proc/PID/task/TID/status: the task's id at each level. */
static int nspid(int pid, int tid, int *ids, int max)
{
	char path[96], buf[4096], *p;
	int k = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	if (proc_read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	p = strstr(buf, "\nNSpid:");
	if (!p)
		return -1;
	p += 7;
	while (k < max && *p && *p != '\n') {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		ids[k++] = (int)v;
		p = end;
	}
	return k;
}

/*
 * From the outermost view, every task's id at every level: the expected
 * listing of level k is the level-k ids of the tasks that have one.
 */
static void identity_check(void)
{
	struct pt_ids tg = { 0 }, tids = { 0 };
	struct pt_ids want_proc[LEVELS + 1], want_task[LEVELS + 1];
	pid_t init0[LEVELS + 1] = { 0 };	/* each level's init, in level 0 */
	size_t i, j;
	int k;

	memset(want_proc, 0, sizeof(want_proc));
	memset(want_task, 0, sizeof(want_task));
	if (pt_proc_tgids(&tg))
		pt_die("readdir /proc");
	for (i = 0; i < tg.n; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/task", tg.v[i]);
		pt_ids_clear(&tids);
		if (pt_readdir_ids(path, &tids))
			continue;	/* exited meanwhile: not ours */
		for (j = 0; j < tids.n; j++) {
			int ids[8], n, depth = our_level(tg.v[i], tids.v[j]);

			/* Other pid namespaces on the machine are not ours to check. */
			if (!depth)
				continue;
			n = nspid(tg.v[i], tids.v[j], ids, 8);
			check(n == depth + 1, "task %d: NSpid has %d levels, want %d",
			      tids.v[j], n, depth + 1);
			if (n == depth + 1 && ids[depth] == 1 && tids.v[j] == tg.v[i])
				init0[depth] = tg.v[i];
			for (k = 1; k < n && k <= depth; k++) {
				pt_ids_push(&want_task[k], ids[k]);
				if (tids.v[j] == tg.v[i])
					pt_ids_push(&want_proc[k], ids[k]);
			}
		}
	}
	for (k = 1; k <= LEVELS; k++) {
		struct pt_ids got = { 0 };
		char what[96];
		int x;

		pt_ids_sort(&want_proc[k]);
		pt_ids_sort(&want_task[k]);
		for (x = 0; x < sh->lv[k].nproc; x++)
			pt_ids_push(&got, sh->lv[k].proc[x]);
		snprintf(what, sizeof(what), "PROCS vs the level-%d ids of the tasks inside it", k);
		expect_equal(&got, &want_proc[k], what, 0);
		pt_ids_clear(&got);
		for (x = 0; x < sh->lv[k].ntask; x++)
			pt_ids_push(&got, sh->lv[k].task[x]);
		snprintf(what, sizeof(what), "TASKS vs the level-%d ids of the tasks inside it", k);
		expect_equal(&got, &want_task[k], what, 0);
		/* From level 0, through level k's own procfs mount as the view. */
		check(init0[k] > 0, "no init of level %d found by NSpid", k);
		if (init0[k] > 0) {
			char path[64];
			int vfd;

			snprintf(path, sizeof(path), "/proc/%d/root/proc", init0[k]);
			vfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			check(vfd >= 0, "open %s: %s", path, strerror(errno));
			if (vfd >= 0) {
				list_view(vfd, PIDMAP_SCOPE_PROCS, 0, 0, 7, &got, "PROCS(view)", 0);
				snprintf(what, sizeof(what), "PROCS through %s vs level %d's ids",
					 path, k);
				expect_equal(&got, &want_proc[k], what, 0);
				list_view(vfd, PIDMAP_SCOPE_TASKS, 0, 0, 7, &got, "TASKS(view)", 0);
				snprintf(what, sizeof(what), "TASKS through %s vs level %d's ids",
					 path, k);
				expect_equal(&got, &want_task[k], what, 0);
				close(vfd);
			}
		}
		/* Each deeper level holds 2 sleepers (5 tasks) + its init. */
		check(want_proc[k].n == (size_t)(3 * (LEVELS - k + 1)),
		      "level %d holds %zu processes, want %d", k, want_proc[k].n,
		      3 * (LEVELS - k + 1));
		pt_ids_free(&got);
		pt_ids_free(&want_proc[k]);
		pt_ids_free(&want_task[k]);
	}
	pt_ids_free(&tg);
	pt_ids_free(&tids);
}

int main(void)
{
	int rel[2], status;
	long splats0, splats;

	pt_name = "namespaces";
	pt_require_syscalls();
	splats0 = pt_count_splats();
	alarm(240);

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		pt_die("mmap");
	if (pipe(rel))
		pt_die("pipe");
	release_rd = rel[0];
	release_wr = rel[1];
	sh->outer_pid = getpid();

	/*
	 * Level 0 unshares too (its next child starts level 1), and needs no
	 * new mount namespace: it reads the /proc it was given.
	 */
	build_level(0, -1);
	identity_check();

	/* Tear the tree down: EOF on the release pipe, then reap. */
	close(release_wr);
	while (wait(&status) > 0) {
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			pt_err("a child ended with status %#x", status);
			sh->failures++;
		}
	}

	splats = pt_new_splats(splats0);
	printf("RELIABILITY: name=namespaces levels=%d ops=%lu faults=0 inputs=%lu dups=%lu "
	       "misses=%lu failures=%lu splats=%ld\n",
	       LEVELS, sh->calls, sh->checks, sh->dups, sh->misses, sh->failures, splats);
	if (sh->failures || splats > 0) {
		printf("namespaces: FAIL\n");
		return KSFT_FAIL;
	}
	printf("namespaces: PASS\n");
	return KSFT_PASS;
}
