// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * permissions: who may fdmap whom, compared case by case with what the
 * same credentials get from opendir(/proc/PID/fd).
 *
 * Processes (all forked from this root process):
 *   R      root, dumpable;          Rnd  root, PR_SET_DUMPABLE 0;
 *   O      uid/gid 65533, dumpable;
 *   U      uid/gid 65534, the tester; it forks
 *   U2     uid/gid 65534, its own process, whose dumpable flag U toggles.
 * As U: fdmap of R, Rnd, O and pid 1 must be refused with EPERM; fdmap
 * of itself (pid 0 and its pid) and of U2 must work and match /proc; after
 * U2 sets PR_SET_DUMPABLE 0 it is refused, and works again after 1; a
 * non-dumpable U still reads its own table (same thread group); an unused
 * pid is ESRCH (ENOENT from /proc).  pidmap through the view of our
 * hidepid=off /proc (PIDMAP_PROCFS) needs no privilege: as U, every mode
 * lists what that /proc lists (visibility.c covers the other hidepid=
 * values and the fail-closed default view).  As root, everything is
 * allowed (CAP_SYS_PTRACE), including the non-dumpable processes.
 *
 * setuid() makes a process non-dumpable (suid_dumpable is 0), so every
 * process that changes uid sets PR_SET_DUMPABLE 1 again: a refusal must
 * then come from the uid mismatch, not from a side effect.
 */
#include "pidmap_test.h"	/* first: it defines _GNU_SOURCE */

#include <grp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

enum outcome { OK, DENIED, GONE, OTHER };
static const char *const outcome_names[] = { "ok", "denied", "gone", "other" };

static struct {
	unsigned long cases, agree, mismatch, unexpected, list_mismatch, calls, dups;
} *res;

static int release[2];
static int proc_fd = -1;	/* O_PATH fd of our hidepid=off /proc */

/*
 * fdmap refuses with EPERM, as kcmp(2) and pidfd_getfd(2) do (EACCES was
 * v1's answer and counts as "other"); opendir(/proc/PID/fd) refuses with
 * EACCES.
 */
static enum outcome classify(int e, int is_proc)
{
	if (e == 0)
		return OK;
	if (e == (is_proc ? EACCES : EPERM))
		return DENIED;
	if (e == ESRCH || e == ENOENT)
		return GONE;
	return OTHER;
}

/* Full fdmap enumeration; 0 or errno. */
static int fdmap_all(pid_t pid, struct pt_ids *out)
{
	struct pt_enum_stats st = { 0 };
	int e = pt_enumerate(1, pid, 0, 7, out, &st);

	res->calls += st.calls;
	res->dups += st.dups + st.order;
	if (!e && (st.dups || st.order || st.overrun))
		e = EIO;	/* reported as "other" */
	return e;
}

/*
 * One case: fdmap(pid) and opendir(/proc/<procpid>/fd) with the caller's
 * credentials.  They must agree with each other and with `want`; when both
 * work, the fd lists must be equal (the targets are idle).
 */
static void fd_case(const char *name, pid_t pid, pid_t procpid, enum outcome want)
{
	struct pt_ids got = { 0 }, ref = { 0 };
	char path[64];
	enum outcome f, p;
	int fe, pe, agree;

	fe = fdmap_all(pid, &got);
	snprintf(path, sizeof(path), "/proc/%d/fd", procpid);
	pe = pt_readdir_ids(path, &ref);
	f = classify(fe, 0);
	p = classify(pe, 1);
	agree = f == p;

	res->cases++;
	if (agree)
		res->agree++;
	else
		res->mismatch++;
	if (f != want)
		res->unexpected++;
	printf("PERM: uid=%d case=%s pid=%d fdmap=%s(%s) proc=%s(%s) agree=%s want=%s%s\n",
	       (int)getuid(), name, pid, outcome_names[f], fe ? pt_errname(fe) : "0",
	       outcome_names[p], pe ? pt_errname(pe) : "0", agree ? "yes" : "NO",
	       outcome_names[want], f == want ? "" : " UNEXPECTED");
	if (f == OK && p == OK) {
		/*
		 * readdir's own fd shows up when the target is ourselves:
		 * drop fds that fdmap (called first) did not have and that
		 * are closed now.
		 */
		size_t i;
		struct pt_ids clean = { 0 };

		for (i = 0; i < ref.n; i++)
			if (pt_ids_has(&got, ref.v[i]) || procpid != getpid() ||
			    fcntl(ref.v[i], F_GETFD) != -1)
				pt_ids_push(&clean, ref.v[i]);
		if (!pt_ids_equal(&got, &clean)) {
			res->list_mismatch++;
			pt_ids_diff(name, &got, &clean);
		}
		pt_ids_free(&clean);
	}
	fflush(stdout);
	pt_ids_free(&got);
	pt_ids_free(&ref);
}

static void become(uid_t uid)
{
	/* Groups first: after setuid() they could no longer be dropped. */
	if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
		pt_die("drop privileges to %d", (int)uid);
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		pt_die("PR_SET_DUMPABLE 1");
}

/* A process that idles until `release` closes, as `uid`, maybe non-dumpable. */
static pid_t idler(uid_t uid, int dumpable)
{
	pid_t pid = fork();

	if (pid < 0)
		pt_die("fork");
	if (pid == 0) {
		char c;

		close(release[1]);
		if (uid)
			become(uid);
		if (!dumpable && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
			pt_die("PR_SET_DUMPABLE 0");
		while (read(release[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	return pid;
}

/* U2: obeys one-byte commands from U ('0'/'1' = dumpable, 'q' = quit). */
static void u2_main(int cmd, int ack)
{
	char c;

	while (read(cmd, &c, 1) == 1 && c != 'q') {
		if (prctl(PR_SET_DUMPABLE, c == '1', 0, 0, 0))
			pt_die("U2: PR_SET_DUMPABLE");
		if (write(ack, &c, 1) != 1)
			pt_die("U2: write");
	}
	_exit(0);
}

static void u2_set(int cmd, int ack, char c)
{
	if (write(cmd, &c, 1) != 1 || read(ack, &c, 1) != 1)
		pt_die("U2 did not answer");
}

/* pidmap as an unprivileged uid, through /proc's view: what /proc lists. */
static void listing_cases(pid_t r, pid_t o, pid_t parent)
{
	static const unsigned int modes[] = { PIDMAP_PROC, PIDMAP_ALL_TASKS };
	struct pt_ids got = { 0 }, ref = { 0 }, ref2 = { 0 };
	struct pt_enum_stats st = { 0 };
	const pid_t targets[] = { r, o, parent };
	char path[64];
	size_t i;
	int t, e;

	for (i = 0; i < 2; i++) {
		int ok = 0;

		/* Other processes (kernel threads) may come and go: retry. */
		for (t = 0; t < 20 && !ok; t++) {
			e = i ? pt_proc_all_tasks(&ref) : pt_proc_tgids(&ref);
			if (e)
				pt_die("readdir /proc");
			e = pt_enumerate_view(0, proc_fd, 0, modes[i] | PIDMAP_PROCFS, 7, &got,
					      &st);
			if (i ? pt_proc_all_tasks(&ref2) : pt_proc_tgids(&ref2))
				pt_die("readdir /proc");
			ok = !e && (pt_ids_equal(&got, &ref) || pt_ids_equal(&got, &ref2));
		}
		res->cases++;
		printf("PERM: uid=%d case=pidmap_%s listed=%zu proc=%zu agree=%s\n", (int)getuid(),
		       i ? "all_tasks" : "proc", got.n, ref.n, ok ? "yes" : "NO");
		if (ok) {
			res->agree++;
		} else {
			res->list_mismatch++;
			if (e)
				pt_err("pidmap mode %#x as uid %d: %s", modes[i], (int)getuid(),
				       strerror(e));
			else
				pt_ids_diff(i ? "ALL_TASKS as uid 65534" : "PROC as uid 65534", &got, &ref);
		}
	}
	/* TASKS of other users' processes: /proc/PID/task is world-readable. */
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "/proc/%d/task", targets[i]);
		pt_ids_clear(&ref);
		if (pt_readdir_ids(path, &ref))
			pt_die("readdir %s", path);
		e = pt_enumerate_view(0, proc_fd, targets[i], PIDMAP_TASKS | PIDMAP_PROCFS, 7,
				      &got, &st);
		res->cases++;
		if (!e && pt_ids_equal(&got, &ref)) {
			res->agree++;
		} else {
			res->list_mismatch++;
			pt_err("TASKS(%d) as uid %d: %s", targets[i], (int)getuid(),
			       e ? strerror(e) : "differs from /proc");
		}
	}
	/* CHILDREN of the root parent: R, Rnd, O and ourselves at least. */
	e = pt_enumerate_view(0, proc_fd, parent, PIDMAP_CHILDREN | PIDMAP_PROCFS, 7, &got, &st);
	res->cases++;
	if (!e && pt_ids_has(&got, r) && pt_ids_has(&got, o) && pt_ids_has(&got, getpid()) &&
	    got.n == 4) {
		res->agree++;
	} else {
		res->list_mismatch++;
		pt_err("CHILDREN(%d) as uid %d: %s, %zu listed, want 4", parent, (int)getuid(),
		       e ? strerror(e) : "wrong set", got.n);
	}
	res->calls += st.calls;
	res->dups += st.dups + st.order;
	if (st.dups || st.order || st.overrun) {
		res->list_mismatch++;
		pt_err("listing: %lu dups, %lu out of order, %lu overruns", st.dups, st.order,
		       st.overrun);
	}
	pt_ids_free(&got);
	pt_ids_free(&ref);
	pt_ids_free(&ref2);
}

static void tester(pid_t r, pid_t rnd, pid_t o)
{
	int cmd[2], ack[2];
	pid_t parent = getppid(), u2, unused;

	close(release[1]);
	become(65534);
	if (pipe(cmd) || pipe(ack))
		pt_die("pipe");
	u2 = fork();
	if (u2 < 0)
		pt_die("fork");
	if (u2 == 0) {
		close(cmd[1]);
		close(ack[0]);
		u2_main(cmd[0], ack[1]);
	}
	close(cmd[0]);
	close(ack[1]);
	/* An unused pid: a child that is reaped at once. */
	unused = fork();
	if (unused < 0)
		pt_die("fork");
	if (unused == 0)
		_exit(0);
	if (waitpid(unused, NULL, 0) != unused)
		pt_die("waitpid");

	fd_case("root_process", r, r, DENIED);
	fd_case("root_nondumpable", rnd, rnd, DENIED);
	fd_case("other_user_65533", o, o, DENIED);
	fd_case("init", 1, 1, DENIED);
	fd_case("root_parent", parent, parent, DENIED);
	fd_case("self_pid0", 0, getpid(), OK);
	fd_case("self_pid", getpid(), getpid(), OK);
	fd_case("own_child", u2, u2, OK);
	u2_set(cmd[1], ack[0], '0');
	fd_case("own_child_nondumpable", u2, u2, DENIED);
	u2_set(cmd[1], ack[0], '1');
	fd_case("own_child_dumpable_again", u2, u2, OK);
	fd_case("reaped_pid", unused, unused, GONE);

	listing_cases(r, o, parent);

	/* Last: non-dumpable ourselves, our own table stays readable. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		pt_die("PR_SET_DUMPABLE 0");
	fd_case("self_nondumpable_pid0", 0, getpid(), OK);
	fd_case("self_nondumpable_pid", getpid(), getpid(), OK);

	/* 'q' gets no answer: U2 just exits. */
	if (write(cmd[1], "q", 1) != 1)
		pt_die("write");
	if (waitpid(u2, NULL, 0) != u2)
		pt_die("waitpid U2");
	_exit(0);
}

int main(void)
{
	pid_t r, rnd, o, u;
	int status, failed = 0;
	long splats0, splats;

	pt_name = "permissions";
	pt_require_syscalls();
	if (getuid() != 0) {
		/* The uid switches need root; the runner is root. */
		if (getenv("PIDMAP_REQUIRE_SYSCALL")) {
			pt_err("must run as root");
			return KSFT_FAIL;
		}
		printf("permissions: SKIP: not root\n");
		return KSFT_SKIP;
	}
	splats0 = pt_count_splats();
	alarm(200);
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		pt_die("mmap");
	if (pipe(release))
		pt_die("pipe");
	proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (proc_fd < 0)
		pt_die("open /proc");

	r = idler(0, 1);
	rnd = idler(0, 0);
	o = idler(65533, 1);
	/* Let them drop privileges and dumpability before anyone looks. */
	usleep(200000);

	/* Root may read everything, non-dumpable or not (CAP_SYS_PTRACE). */
	fd_case("root:other_user_65533", o, o, OK);
	fd_case("root:root_nondumpable", rnd, rnd, OK);
	fd_case("root:root_process", r, r, OK);

	u = fork();
	if (u < 0)
		pt_die("fork");
	if (u == 0)
		tester(r, rnd, o);
	if (waitpid(u, &status, 0) != u)
		pt_die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		pt_err("tester ended with status %#x", status);
		failed = 1;
	}
	close(release[1]);
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			pt_err("an idler ended with status %#x", status);
			failed = 1;
		}

	splats = pt_new_splats(splats0);
	printf("RELIABILITY: name=permissions ops=%lu faults=0 inputs=%lu agree=%lu "
	       "mismatches=%lu unexpected=%lu list_mismatches=%lu dups=%lu misses=%lu splats=%ld\n",
	       res->calls, res->cases, res->agree, res->mismatch, res->unexpected,
	       res->list_mismatch, res->dups, res->list_mismatch, splats);
	if (failed || res->mismatch || res->unexpected || res->list_mismatch || splats > 0 ||
	    res->cases < 20) {
		printf("permissions: FAIL\n");
		return KSFT_FAIL;
	}
	printf("permissions: PASS\n");
	return KSFT_PASS;
}
