// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * visibility: pidmap never shows what /proc hides (issue 11 §1).
 *
 * procfs is mounted again at /tmp/vis/<name> with every hidepid= value
 * (off, noaccess, invisible, ptraceable) and with hidepid=invisible,gid=G.
 * Then three callers -- uid 65534, uid 65534 in group G, and root -- each
 * compare, for every mount, what pidmap lists through that mount's view
 * (PIDMAP_PROCFS) with what the same caller reads from the mount itself:
 *
 *   PROC       == readdir(<mount>)
 *   ALL_TASKS  == the union of readdir(<mount>/PID/task) that it may read
 *   TASKS(T)   == readdir(<mount>/T/task); ESRCH where <mount>/T is
 *                 ENOENT (hidden), EPERM where <mount>/T/task is EPERM
 *                 (hidepid=noaccess)
 *   CHILDREN(T) == the union of <mount>/T/task/<tid>/children, same errors
 *
 * for targets T: init, kthreadd, a root process with threads, another
 * user's process, the caller's own process with threads and its own
 * non-dumpable process.  And without a view (no PIDMAP_PROCFS), the
 * default must equal the hidepid=invisible mount without the gid= group
 * for uid 65534 (fail closed), and the hidepid=off mount for root
 * (CAP_SYS_PTRACE).  Every comparison must have 0 differences.
 *
 * The references are readdirs of procfs mounts: with patch 3 they walk the
 * same leader marks for PROC, but the question here is visibility, which
 * has_pid_permissions() decides for both; the marks are checked against
 * an independent reference in the kselftests (Tgid of every task).
 */
#include "pidmap_test.h"	/* first: it defines _GNU_SOURCE */
#include "hidepid_views.h"
#include "parked_process.h"

#include <signal.h>

#define BASE "/tmp/vis"

enum target_kind { T_INIT, T_KTHREADD, T_ROOT, T_OTHER, T_OWN, T_OWN_NONDUMP, T_NR };
static const char *const target_names[T_NR] = {
	"init", "kthreadd", "root_process", "other_user", "own_process", "own_nondumpable",
};

static struct shared {
	pid_t target[T_NR];
	unsigned long comparisons, differences, calls;
} *sh;

static int release[2];

struct identity {
	uid_t uid;
	int dumpable;
};

/* A parked process's setup: become @arg's uid, dumpable or not. */
static void become(void *arg)
{
	const struct identity *who = arg;

	hidepid_become_target(who->uid, who->uid, who->dumpable);
}

/* A process with @threads extra threads, as @uid, dumpable or not. */
static pid_t spawn_idler(uid_t uid, int threads, int dumpable)
{
	struct identity who = { uid, dumpable };

	return parked_process(threads, release[0], release[1], become, &who);
}

/* The union of the readable <root>/PID/task directories. */
static void tasks_of_mount(const char *root, struct pt_ids *out)
{
	struct pt_ids tg = { 0 };
	char path[128];
	size_t i;

	pt_ids_clear(out);
	if (pt_readdir_ids(root, &tg))
		pt_die("readdir %s", root);
	for (i = 0; i < tg.n; i++) {
		snprintf(path, sizeof(path), "%s/%d/task", root, tg.v[i]);
		(void)pt_readdir_ids(path, out);	/* EPERM/ENOENT: not readable */
	}
	pt_ids_sort(out);
	pt_ids_free(&tg);
}

static void snapshot(const char *root, int all_tasks, struct pt_ids *out)
{
	if (all_tasks) {
		tasks_of_mount(root, out);
	} else {
		pt_ids_clear(out);
		if (pt_readdir_ids(root, out))
			pt_die("readdir %s", root);
	}
}

static void report(const char *caller, const char *view, const char *what, int diff)
{
	sh->comparisons++;
	if (diff)
		sh->differences++;
	printf("VISIBILITY: caller=%s view=%s case=%s differences=%d\n", caller, view, what,
	       diff);
	fflush(stdout);
}

/*
 * PROC or ALL_TASKS through @procfs_fd (-1: the default view) against the
 * mount at @ref.  Kernel threads may come and go at any time: the listing
 * must equal a snapshot taken before or after it, within 20 tries.
 */
static void compare_listing(const char *caller, const char *view, int procfs_fd,
			    const char *ref, int all_tasks)
{
	unsigned int flags = all_tasks ? PIDMAP_ALL_TASKS : PIDMAP_PROC;
	struct pt_ids got = { 0 }, before = { 0 }, after = { 0 };
	struct pt_enum_stats st = { 0 };
	char what[64];
	int t, e = 0, ok = 0;

	if (procfs_fd >= 0)
		flags |= PIDMAP_PROCFS;
	for (t = 0; t < 20 && !ok; t++) {
		snapshot(ref, all_tasks, &before);
		e = pt_enumerate_view(0, procfs_fd, 0, flags, 61, &got, &st);
		snapshot(ref, all_tasks, &after);
		ok = !e && !st.dups && !st.order && !st.overrun &&
		     (pt_ids_equal(&got, &before) || pt_ids_equal(&got, &after));
	}
	sh->calls += st.calls;
	snprintf(what, sizeof(what), "%s_vs_%s", all_tasks ? "ALL_TASKS" : "PROC", ref);
	if (!ok) {
		if (e)
			pt_err("%s/%s %s: %s", caller, view, what, strerror(e));
		else
			pt_ids_diff(what, &got, &after);
	}
	report(caller, view, what, !ok);
	pt_ids_free(&got);
	pt_ids_free(&before);
	pt_ids_free(&after);
}

/* What <ref>/T shows: 0 and the ids, or the errno pidmap must give. */
static int expected_target(const char *ref, pid_t t, int children, struct pt_ids *out)
{
	struct pt_ids tids = { 0 };
	char path[160];
	struct stat sb;
	size_t i;
	int e;

	pt_ids_clear(out);
	snprintf(path, sizeof(path), "%s/%d", ref, t);
	if (stat(path, &sb))
		return errno == ENOENT ? ESRCH : errno;
	snprintf(path, sizeof(path), "%s/%d/task", ref, t);
	e = pt_readdir_ids(path, &tids);
	if (e)
		return e;	/* EPERM under hidepid=noaccess */
	if (!children) {
		for (i = 0; i < tids.n; i++)
			pt_ids_push(out, tids.v[i]);
	} else {
		for (i = 0; i < tids.n; i++) {
			char buf[4096], *p, *end;

			snprintf(path, sizeof(path), "%s/%d/task/%d/children", ref, t, tids.v[i]);
			if (proc_read_file(path, buf, sizeof(buf)) < 0)
				continue;	/* empty (or the thread is gone) */
			for (p = buf;; p = end) {
				long v = strtol(p, &end, 10);

				if (end == p)
					break;
				pt_ids_push(out, (int)v);
			}
		}
	}
	pt_ids_sort(out);
	pt_ids_free(&tids);
	return 0;
}

static void compare_targets(const char *caller, const char *view, int procfs_fd,
			    const char *ref)
{
	int k, children;

	for (k = 0; k < T_NR; k++) {
		for (children = 0; children < 2; children++) {
			unsigned int flags = children ? PIDMAP_CHILDREN : PIDMAP_TASKS;
			struct pt_ids got = { 0 }, want = { 0 };
			struct pt_enum_stats st = { 0 };
			pid_t t = sh->target[k];
			char what[96];
			int e, we, diff;

			int tries;

			if (procfs_fd >= 0)
				flags |= PIDMAP_PROCFS;
			/* kthreadd's and init's children come and go: retry. */
			for (tries = 0; tries < 20; tries++) {
				we = expected_target(ref, t, children, &want);
				e = pt_enumerate_view(0, procfs_fd, t, flags, 3, &got, &st);
				sh->calls += st.calls;
				diff = e != we || (!e && !pt_ids_equal(&got, &want)) || st.dups ||
				       st.order || st.overrun;
				if (!diff)
					break;
			}
			snprintf(what, sizeof(what), "%s(%s)_vs_%s", children ? "CHILDREN" : "TASKS",
				 target_names[k], ref);
			if (diff) {
				pt_err("%s/%s %s: pidmap %s, %s says %s", caller, view, what,
				       pt_errname(e), ref, pt_errname(we));
				if (!e && !we)
					pt_ids_diff(what, &got, &want);
			}
			report(caller, view, what, diff);
			pt_ids_free(&got);
			pt_ids_free(&want);
		}
	}
}

/* Every comparison one caller makes through one view. */
static void check_view(const char *caller, const char *view, int procfs_fd, const char *mount)
{
	compare_listing(caller, view, procfs_fd, mount, 0);
	compare_listing(caller, view, procfs_fd, mount, 1);
	compare_targets(caller, view, procfs_fd, mount);
}

int main(void)
{
	long splats0, splats;
	int i, failed;

	if (hidepid_test_start("visibility"))
		return KSFT_FAIL;
	splats0 = pt_count_splats();
	sh = hidepid_shared_alloc(sizeof(*sh));
	hidepid_mount_views(BASE);

	if (pipe(release))
		pt_die("pipe");
	sh->target[T_INIT] = 1;
	sh->target[T_KTHREADD] = pt_kthreadd();
	if (sh->target[T_KTHREADD] <= 0)
		pt_die("no kthreadd in /proc");
	sh->target[T_ROOT] = spawn_idler(0, 2, 1);
	sh->target[T_OTHER] = spawn_idler(HIDEPID_OTHER, 1, 1);
	sh->target[T_OWN] = spawn_idler(HIDEPID_NOBODY, 2, 1);
	sh->target[T_OWN_NONDUMP] = spawn_idler(HIDEPID_NOBODY, 0, 0);
	for (i = 0; i < T_NR; i++)
		printf("visibility: target %s = %d\n", target_names[i], sh->target[i]);

	sh->differences += hidepid_run_callers(BASE, release[1], check_view);
	failed = release_parked_and_reap(release[1]);
	hidepid_unmount_views(BASE);

	splats = pt_new_splats(splats0);
	printf("RELIABILITY: name=visibility ops=%lu inputs=%lu differences=%lu splats=%ld\n",
	       sh->calls, sh->comparisons, sh->differences, splats);
	/* 3 callers x 6 views x (2 listings + 6 targets x 2 modes) */
	if (failed || sh->differences || splats > 0 || sh->comparisons < 3 * 6 * 14) {
		printf("visibility: FAIL\n");
		return KSFT_FAIL;
	}
	printf("visibility: PASS\n");
	return KSFT_PASS;
}
