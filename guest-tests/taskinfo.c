// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * taskinfo: PIDMAP_INFO records equal /proc, field by field, for every
 * task (issue 15 §2, docs/ABI.md "Task records").
 *
 * procfs is mounted again at /tmp/ti/<name> with hidepid=off, noaccess,
 * invisible, ptraceable and invisible,gid=G.  Three callers -- uid 65534,
 * uid 65534 in group G, and root -- list, through each mount's view and
 * through the default view, every task (PIDMAP_ALL_TASKS) and every
 * process (PIDMAP_PROC) as records in chunks, and:
 *
 *   - the set of record tids equals the ids plain pidmap lists in the
 *     same view (a listing taken before or after, kernel threads come and
 *     go), and TASKS/CHILDREN of a few targets give the same ids or the
 *     same errno with and without PIDMAP_INFO;
 *   - a record has every field exactly when the caller may open
 *     <mount>/TID/stat, else only its tid; every field but nice when the
 *     task's policy (stat field 41) is not SCHED_NORMAL or SCHED_BATCH,
 *     as ps shows "-" for it, and then nice is 0;
 *   - every field equals what /proc shows read just before and just after
 *     the call -- <mount>/PID/stat for a process's record (PIDMAP_PROC),
 *     <mount>/TID/task/TID/stat for a task's (PIDMAP_ALL_TASKS), status,
 *     and statm: tid, tgid (Tgid:), ppid (4), state (3), flags (9), utime
 *     and stime (14, 15: in clock ticks, between the two readings; a
 *     process's are its whole group's, exited threads included), nice
 *     (19), num_threads (20), start_time (22, in ticks), rss (statm's
 *     2nd: the exact resident set, where stat's 24 is approximate), comm
 *     (2; a kernel thread's stat shows its full name and a workqueue
 *     worker's its "-desc", of which comm is the start), ruid and euid
 *     (Uid: 1st and 2nd).
 *
 * The references are the procfs files: independent of the code under test.
 * Fields that change while a task runs (state, flags, CPU time, rss,
 * num_threads, ppid) may legitimately differ from both readings of a
 * busy task; such a record is compared again with a one-record call
 * between two fresh readings, up to 5 times.  Every other field must
 * match in the bulk listing.  A task that exits between the listing and
 * the reading is counted as vanished, and too many fail the test.
 * 0 differences are required.
 */
#include "pidmap_test.h"	/* first: it defines _GNU_SOURCE */
#include "hidepid_views.h"
#include "parked_process.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>

#define BASE "/tmp/ti"
#define CHUNK 37	/* records per call: several calls, odd boundaries */
#define RETRIES 5

#define PF_KTHREAD_ 0x00200000u
#define PF_WQ_WORKER_ 0x00000020u

enum target_kind {
	T_INIT, T_KTHREADD, T_ROOT, T_OTHER, T_OWN, T_OWN_NONDUMP, T_ZOMBIE, T_SPLIT_UID, T_NR
};
static const char *const target_names[T_NR] = {
	"init", "kthreadd", "root_busy", "other_user", "own_process", "own_nondumpable",
	"zombie_parent", "ruid_other_euid_own",
};

static struct shared {
	pid_t target[T_NR];
	unsigned long listings, records, full, tid_only, compared, retried, vanished;
	unsigned long differences, calls, checks;
	unsigned long split_uid;	/* compared records with ruid != euid */
	unsigned long no_nice;	/* compared records of tasks without nice */
} *sh;

static int release[2];

/* ------------------------------------------------------------------ */
/* Targets                                                             */
/* ------------------------------------------------------------------ */

/* Runs (and so changes its CPU time, state and maybe flags) until released. */
static void *busy(void *arg)
{
	struct timespec ts;

	(void)arg;
	for (;;) {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		sched_yield();
	}
	return NULL;
}

/* The same, under SCHED_IDLE: a policy without a nice value. */
static void *busy_idle(void *arg)
{
	struct sched_param param = { .sched_priority = 0 };

	if (sched_setscheduler(0, SCHED_IDLE, &param))
		pt_die("sched_setscheduler(SCHED_IDLE)");
	return busy(arg);
}

struct target_spec {
	uid_t ruid, uid;
	int spinners, dumpable, zombie_child, idle_spinners;
};

/* A parked process's setup: become @arg's uids, start its busy threads. */
static void become_busy_target(void *arg)
{
	const struct target_spec *spec = arg;
	pthread_t t;
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	hidepid_become_target(spec->ruid, spec->uid, spec->dumpable);
	if (spec->zombie_child) {
		pid_t z = fork();

		if (z == 0)
			_exit(0);
	}
	for (i = 0; i < spec->spinners; i++)
		if (pthread_create(&t, NULL, i < spec->idle_spinners ? busy_idle : busy, NULL))
			pt_die("pthread_create");
}

/*
 * A process as @uid (with real uid @ruid) with @threads parked threads and
 * @spinners busy ones (the first @idle_spinners of them under SCHED_IDLE),
 * dumpable or not; with @zombie_child, a child that exits and is never
 * reaped while the process lives.
 */
static pid_t spawn_policy(uid_t ruid, uid_t uid, int threads, int spinners, int dumpable,
			  int zombie_child, int idle_spinners)
{
	struct target_spec spec = { ruid, uid, spinners, dumpable, zombie_child,
				    idle_spinners };

	return parked_process(threads, release[0], release[1], become_busy_target, &spec);
}

static pid_t spawn_as(uid_t ruid, uid_t uid, int threads, int spinners, int dumpable,
		      int zombie_child)
{
	return spawn_policy(ruid, uid, threads, spinners, dumpable, zombie_child, 0);
}

static pid_t spawn(uid_t uid, int threads, int spinners, int dumpable, int zombie_child)
{
	return spawn_as(uid, uid, threads, spinners, dumpable, zombie_child);
}

/* ------------------------------------------------------------------ */
/* The reference: <mount>/PID/stat or TID/task/TID/stat, statm, status  */
/* ------------------------------------------------------------------ */

struct proc_task {
	char name[80];
	char state;
	int ppid, tgid;
	unsigned int ruid, euid;
	unsigned long flags;
	unsigned long long utime, stime, start;
	long nice, num_threads, rss;
	int policy;
};

static unsigned long long ns_per_tick;

static unsigned long long ticks(__u64 ns)
{
	return ns / ns_per_tick;
}

/*
 * Reads the task @tid as @mount shows it: with @process, as a process
 * (<mount>/TID/stat, the group's CPU time), else as a task
 * (<mount>/TID/task/TID/stat, its own); 0, or the errno of the open.
 */
static int read_task(const char *mount, int tid, int process, struct proc_task *t)
{
	char dir[128], path[160], buf[1024], line[256], *open_paren, *close_paren;
	int got = 0;
	FILE *f;

	if (process)
		snprintf(dir, sizeof(dir), "%s/%d", mount, tid);
	else
		snprintf(dir, sizeof(dir), "%s/%d/task/%d", mount, tid, tid);
	snprintf(path, sizeof(path), "%s/stat", dir);
	errno = 0;
	if (proc_read_file(path, buf, sizeof(buf)) < 0)
		return errno ? errno : EIO;
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren - open_paren > (long)sizeof(t->name))
		pt_die("cannot parse %s: %s", path, buf);
	memset(t->name, 0, sizeof(t->name));
	memcpy(t->name, open_paren + 1, close_paren - open_paren - 1);
	if (sscanf(close_paren + 1,
		   " %c %d %*d %*d %*d %*d %lu %*u %*u %*u %*u %llu %llu %*d %*d %*d %ld %ld"
		   " %*d %llu",
		   &t->state, &t->ppid, &t->flags, &t->utime, &t->stime, &t->nice,
		   &t->num_threads, &t->start) != 8)
		pt_die("cannot parse %s: %s", path, buf);
	t->policy = proc_stat_buf_policy(buf);
	if (t->policy < 0)
		pt_die("no policy (field 41) in %s: %s", path, buf);

	/* The exact resident set: statm's 2nd field, status VmRSS in pages. */
	snprintf(path, sizeof(path), "%s/statm", dir);
	errno = 0;
	if (proc_read_file(path, buf, sizeof(buf)) < 0)
		return errno ? errno : EIO;
	if (sscanf(buf, "%*u %ld", &t->rss) != 1)
		pt_die("cannot parse %s: %s", path, buf);

	snprintf(path, sizeof(path), "%s/status", dir);
	f = fopen(path, "re");
	if (!f)
		return errno;
	while (fgets(line, sizeof(line), f)) {
		got += sscanf(line, "Tgid: %d", &t->tgid) == 1;
		got += sscanf(line, "Uid: %u %u", &t->ruid, &t->euid) == 2;
	}
	fclose(f);
	return got == 2 ? 0 : ENOENT;
}

/* Whether task @tid exists (kill() says EPERM for another user's task). */
static int alive(int tid)
{
	return kill(tid, 0) == 0 || errno == EPERM;
}

/* Whether the caller may open <mount>/TID/stat: 0 or the errno. */
static int stat_opens(const char *mount, int tid)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%d/stat", mount, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* comm is task->comm; stat shows a kernel thread's full name, a worker's "-desc". */
static int comm_matches(const struct pidmap_info *r, const char *name)
{
	size_t len = strnlen(r->comm, sizeof(r->comm));

	if (len == sizeof(r->comm))
		return 0;	/* not NUL-terminated */
	if (!strcmp(r->comm, name))
		return 1;
	if (strncmp(r->comm, name, len))
		return 0;
	/* A worker's "-desc" suffix. */
	if ((r->flags & PF_WQ_WORKER_) && name[len] == '-')
		return 1;
	/* A kernel thread's full name (a rescuer's too), truncated to 15 bytes in comm. */
	return (r->flags & PF_KTHREAD_) && len == sizeof(r->comm) - 1;
}

#define BETWEEN(v, a, b) ((a) <= (b) ? (a) <= (v) && (v) <= (b) : (b) <= (v) && (v) <= (a))

/*
 * Which fields of @r disagree with the readings @b (before) and @a
 * (after): a bit per field, PIDMAP_INFO_* style.  @stable_only: check
 * only the fields that must match in the bulk listing.
 */
static __u64 mismatches(const struct pidmap_info *r, const struct proc_task *b,
			const struct proc_task *a, int stable_only)
{
	__u64 bad = 0;

	if (r->tgid != b->tgid || r->tgid != a->tgid)
		bad |= PIDMAP_INFO_TGID;
	if (ticks(r->start_time_ns) != b->start)
		bad |= PIDMAP_INFO_START_TIME;
	if (!comm_matches(r, b->name) && !comm_matches(r, a->name))
		bad |= PIDMAP_INFO_COMM;
	if (r->ruid != b->ruid || r->euid != b->euid)
		bad |= PIDMAP_INFO_UID;
	/*
	 * nice, and its bit, exactly under a policy with a nice value: the
	 * policy read before or after.
	 */
	if (r->mask != pt_full_mask(b->policy) && r->mask != pt_full_mask(a->policy))
		bad |= PIDMAP_INFO_NICE;
	else if (!(r->mask & PIDMAP_INFO_NICE) ? r->nice != 0
					       : r->nice != b->nice && r->nice != a->nice)
		bad |= PIDMAP_INFO_NICE;
	if (r->__reserved[0] || memcmp(r->__reserved, r->__reserved + 1, 6))
		bad |= 1ULL << 63;
	if (stable_only)
		return bad;
	if (r->ppid != b->ppid && r->ppid != a->ppid)
		bad |= PIDMAP_INFO_PPID;
	if (r->state != b->state && r->state != a->state)
		bad |= PIDMAP_INFO_STATE;
	if (r->flags != b->flags && r->flags != a->flags)
		bad |= PIDMAP_INFO_FLAGS;
	if (!BETWEEN(ticks(r->utime_ns), b->utime, a->utime) ||
	    !BETWEEN(ticks(r->stime_ns), b->stime, a->stime))
		bad |= PIDMAP_INFO_CPUTIME;
	if (!BETWEEN((long)r->rss_pages, b->rss, a->rss))
		bad |= PIDMAP_INFO_RSS;
	if (!BETWEEN((long)r->num_threads, b->num_threads, a->num_threads))
		bad |= PIDMAP_INFO_NUM_THREADS;
	return bad;
}

static void log_mismatch(const char *what, const struct pidmap_info *r,
			 const struct proc_task *b, const struct proc_task *a, __u64 bad)
{
	pt_err("%s: tid %d fields %#llx differ: record tgid=%d ppid=%d state=%c flags=%#x "
	       "utime=%llu stime=%llu nice=%d threads=%u start=%llu rss=%llu comm=%.16s "
	       "uid=%u/%u mask=%#llx; stat before: tgid=%d ppid=%d state=%c flags=%#lx "
	       "utime=%llu stime=%llu nice=%ld threads=%ld start=%llu rss=%ld name=%s "
	       "uid=%u/%u policy=%d; after: state=%c utime=%llu stime=%llu rss=%ld policy=%d",
	       what, r->tid, (unsigned long long)bad, r->tgid, r->ppid, r->state ? r->state : '0',
	       r->flags, ticks(r->utime_ns), ticks(r->stime_ns), r->nice, r->num_threads,
	       ticks(r->start_time_ns), (unsigned long long)r->rss_pages, r->comm, r->ruid,
	       r->euid, (unsigned long long)r->mask, b->tgid, b->ppid, b->state, b->flags,
	       b->utime, b->stime, b->nice, b->num_threads, b->start, b->rss, b->name, b->ruid,
	       b->euid, b->policy, a->state, a->utime, a->stime, a->rss, a->policy);
}

/* ------------------------------------------------------------------ */
/* Listings                                                            */
/* ------------------------------------------------------------------ */

struct recs {
	struct pidmap_info *v;
	size_t n, cap;
};

/*
 * Every record of @flags (a mode and modifiers) from 0, @chunk per call,
 * resuming at the last tid + 1; checks that each call's tids ascend from
 * its start.  Returns 0 or the errno of the first call that failed.
 */
static int list_records(int procfs_fd, int target, unsigned int flags, unsigned int chunk,
			struct recs *out)
{
	int start = 0;

	out->n = 0;
	for (;;) {
		long n, i;

		if (out->cap - out->n < chunk) {
			size_t cap = out->cap ? out->cap * 2 : 1024;
			void *v = realloc(out->v, cap * sizeof(*out->v));

			if (!v)
				pt_die("realloc");
			out->v = v;
			out->cap = cap;
		}
		n = pidmap_info_view(procfs_fd, target, start, out->v + out->n, chunk, flags,
				     sizeof(struct pidmap_info), PIDMAP_INFO_ALL_V2);
		sh->calls++;
		if (n < 0)
			return errno;
		if (n == 0)
			return 0;
		if ((unsigned long)n > chunk) {
			pt_err("a call returned %ld records for count %u", n, chunk);
			return E2BIG;
		}
		for (i = 0; i < n; i++) {
			const struct pidmap_info *r = &out->v[out->n + i];

			if (r->tid < start || (i && r->tid <= r[-1].tid)) {
				pt_err("record tids out of order: %d after start %d", r->tid,
				       start);
				return EDOM;
			}
		}
		out->n += n;
		start = out->v[out->n - 1].tid + 1;
	}
}

static void tids_of(const struct recs *r, struct pt_ids *out)
{
	size_t i;

	pt_ids_clear(out);
	for (i = 0; i < r->n; i++)
		pt_ids_push(out, r->v[i].tid);
}

static void report(const char *caller, const char *view, const char *what, unsigned long diff)
{
	sh->checks++;
	if (diff)
		sh->differences += diff;
	printf("TASKINFO: caller=%s view=%s case=%s differences=%lu\n", caller, view, what,
	       diff);
	fflush(stdout);
}

/*
 * One record compared again with a one-record call between two fresh
 * readings. Returns 0 when it agrees, 1 when it still differs, -1 when the
 * task is gone.
 */
static int recheck(const char *what, int procfs_fd, unsigned int flags, const char *mount,
		   int tid, int log)
{
	struct proc_task b, a;
	struct pidmap_info r;
	__u64 bad;
	long n;

	int process = (flags & PIDMAP_MODE_MASK) == PIDMAP_PROC;

	if (read_task(mount, tid, process, &b))
		return -1;
	n = pidmap_info_view(procfs_fd, 0, tid, &r, 1, flags, sizeof(r), PIDMAP_INFO_ALL_V2);
	sh->calls++;
	if (read_task(mount, tid, process, &a))
		return -1;
	if (n != 1 || r.tid != tid)
		return -1;
	if (r.mask != PIDMAP_INFO_ALL_V2 && r.mask != (PIDMAP_INFO_ALL_V2 & ~PIDMAP_INFO_NICE))
		return 1;
	bad = mismatches(&r, &b, &a, 0);
	if (bad && log)
		log_mismatch(what, &r, &b, &a, bad);
	return bad != 0;
}

/*
 * PROC or ALL_TASKS records through @procfs_fd (-1: the default view)
 * against @mount, the mount that shows what that view shows.
 */
static void compare_records(const char *caller, const char *view, int procfs_fd,
			    const char *mount, int all_tasks)
{
	unsigned int flags = all_tasks ? PIDMAP_ALL_TASKS : PIDMAP_PROC;
	struct pt_ids before = { 0 }, after = { 0 }, got = { 0 };
	struct pt_enum_stats st = { 0 };
	struct recs recs = { 0 };
	struct proc_task *b, *a;
	int *b_err, *a_err;
	unsigned long diff = 0, vanished = 0;
	char what[96];
	int tries, e = 0, same = 0;
	size_t i;

	if (procfs_fd >= 0)
		flags |= PIDMAP_PROCFS;
	snprintf(what, sizeof(what), "%s_records_vs_%s", all_tasks ? "ALL_TASKS" : "PROC",
		 mount);

	/* The set of records is the set of ids, in a listing before or after. */
	for (tries = 0; tries < 20 && !same; tries++) {
		e = pt_enumerate_view(0, procfs_fd, 0, flags, 61, &before, &st);
		if (!e)
			e = list_records(procfs_fd, 0, flags, CHUNK, &recs);
		if (!e)
			e = pt_enumerate_view(0, procfs_fd, 0, flags, 61, &after, &st);
		if (e)
			break;
		tids_of(&recs, &got);
		same = pt_ids_equal(&got, &before) || pt_ids_equal(&got, &after);
	}
	sh->calls += st.calls;
	sh->listings++;
	if (e || !same || st.dups || st.order || st.overrun) {
		if (e)
			pt_err("%s/%s %s: %s", caller, view, what, strerror(e));
		else
			pt_ids_diff(what, &got, &after);
		report(caller, view, what, 1);
		goto out;
	}

	/* Readings before and after one more listing, compared field by field. */
	b = calloc(recs.n + 1, sizeof(*b));
	a = calloc(recs.n + 1, sizeof(*a));
	b_err = calloc(recs.n + 1, sizeof(*b_err));
	a_err = calloc(recs.n + 1, sizeof(*a_err));
	if (!b || !a || !b_err || !a_err)
		pt_die("calloc");
	for (i = 0; i < recs.n; i++)
		b_err[i] = read_task(mount, recs.v[i].tid, !all_tasks, &b[i]);
	{
		struct recs again = { 0 };

		e = list_records(procfs_fd, 0, flags, CHUNK, &again);
		if (e) {
			pt_err("%s/%s %s: second listing: %s", caller, view, what, strerror(e));
			diff++;
		}
		/* Keep the second listing's records of the tasks read before. */
		for (i = 0; i < recs.n; i++) {
			size_t j;

			for (j = 0; j < again.n && again.v[j].tid != recs.v[i].tid; j++)
				;
			if (j < again.n)
				recs.v[i] = again.v[j];
			else
				b_err[i] = ESRCH;	/* gone from the listing */
		}
		free(again.v);
	}
	for (i = 0; i < recs.n; i++)
		a_err[i] = read_task(mount, recs.v[i].tid, !all_tasks, &a[i]);

	for (i = 0; i < recs.n; i++) {
		const struct pidmap_info *r = &recs.v[i];
		int opens = stat_opens(mount, r->tid);
		__u64 bad;
		int k, res = 1;

		sh->records++;
		if (r->mask == 0) {
			struct pidmap_info only = { .tid = r->tid };

			sh->tid_only++;
			if (memcmp(r, &only, sizeof(only))) {
				pt_err("%s/%s %s: tid %d: mask 0 but fields set", caller, view,
				       what, r->tid);
				diff++;
			}
			/* The caller may not open its stat (or the task is gone). */
			if (opens == 0 && alive(r->tid)) {
				pt_err("%s/%s %s: tid %d: no fields, but %s/%d/stat opens",
				       caller, view, what, r->tid, mount, r->tid);
				diff++;
			}
			continue;
		}
		sh->full++;
		/* Every field, or all but nice: mismatches() checks which. */
		if (r->mask != PIDMAP_INFO_ALL_V2 &&
		    r->mask != (PIDMAP_INFO_ALL_V2 & ~PIDMAP_INFO_NICE)) {
			pt_err("%s/%s %s: tid %d: mask %#llx", caller, view, what, r->tid,
			       (unsigned long long)r->mask);
			diff++;
			continue;
		}
		if (b_err[i] || a_err[i]) {
			/* Fields given, stat not readable: gone, or a leak. */
			if (opens && opens != ENOENT && opens != ESRCH && alive(r->tid)) {
				pt_err("%s/%s %s: tid %d: fields given but its stat says %s",
				       caller, view, what, r->tid, pt_errname(opens));
				diff++;
			} else {
				vanished++;
			}
			continue;
		}
		sh->compared++;
		sh->split_uid += r->ruid != r->euid;
		sh->no_nice += !proc_policy_has_nice(b[i].policy);
		bad = mismatches(r, &b[i], &a[i], 1);
		if (bad) {
			log_mismatch(what, r, &b[i], &a[i], bad);
			diff++;
			continue;
		}
		if (!mismatches(r, &b[i], &a[i], 0))
			continue;
		/* A busy task: compare again between two closer readings. */
		sh->retried++;
		for (k = 0; k < RETRIES && res == 1; k++)
			res = recheck(what, procfs_fd, flags, mount, r->tid, k == RETRIES - 1);
		if (res < 0)
			vanished++;
		else if (res > 0)
			diff++;
	}
	/* Every view shows the caller its own process, with every field. */
	for (i = 0; i < recs.n && recs.v[i].tid != getpid(); i++)
		;
	if (i == recs.n || recs.v[i].mask != PIDMAP_INFO_ALL_V2) {
		pt_err("%s/%s %s: no record of the caller's own process with fields", caller,
		       view, what);
		diff++;
	}
	sh->vanished += vanished;
	if (vanished > 5 + recs.n / 20) {
		pt_err("%s/%s %s: %lu of %zu tasks vanished", caller, view, what, vanished,
		       recs.n);
		diff++;
	}
	free(b);
	free(a);
	free(b_err);
	free(a_err);
	report(caller, view, what, diff);
out:
	pt_ids_free(&before);
	pt_ids_free(&after);
	pt_ids_free(&got);
	free(recs.v);
}

/* TASKS and CHILDREN of every target: the same ids, or the same errno. */
static void compare_targets(const char *caller, const char *view, int procfs_fd)
{
	int k, children;

	for (k = 0; k < T_NR; k++) {
		for (children = 0; children < 2; children++) {
			unsigned int flags = children ? PIDMAP_CHILDREN : PIDMAP_TASKS;
			struct pt_ids ids = { 0 }, got = { 0 };
			struct pt_enum_stats st = { 0 };
			struct recs recs = { 0 };
			pid_t t = sh->target[k];
			int tries, e = 0, ie = 0, diff = 1;
			char what[96];
			size_t i;

			if (procfs_fd >= 0)
				flags |= PIDMAP_PROCFS;
			for (tries = 0; tries < 20 && diff; tries++) {
				e = pt_enumerate_view(0, procfs_fd, t, flags, 5, &ids, &st);
				ie = list_records(procfs_fd, t, flags, 3, &recs);
				tids_of(&recs, &got);
				diff = e != ie || (!e && !pt_ids_equal(&ids, &got));
			}
			sh->calls += st.calls;
			/* Records of processes the view shows in full carry their ids. */
			for (i = 0; !diff && i < recs.n; i++)
				if (recs.v[i].mask &&
				    (!pt_full_mask_ok(recs.v[i].mask, procfs_fd, flags,
						      recs.v[i].tid) ||
				     (children ? recs.v[i].tgid != recs.v[i].tid
					       : recs.v[i].tgid != t)))
					diff = 1;
			snprintf(what, sizeof(what), "%s(%s)+INFO_vs_ids",
				 children ? "CHILDREN" : "TASKS", target_names[k]);
			if (diff)
				pt_err("%s/%s %s: ids %s (%zu), records %s (%zu)", caller, view,
				       what, pt_errname(e), ids.n, pt_errname(ie), recs.n);
			report(caller, view, what, diff);
			pt_ids_free(&ids);
			pt_ids_free(&got);
			free(recs.v);
		}
	}
}

/* Every check one caller makes through one view. */
static void check_view(const char *caller, const char *view, int procfs_fd, const char *mount)
{
	compare_records(caller, view, procfs_fd, mount, 1);
	compare_records(caller, view, procfs_fd, mount, 0);
	compare_targets(caller, view, procfs_fd);
}

int main(void)
{
	long splats0, splats;
	int i, failed;

	if (hidepid_test_start("taskinfo"))
		return KSFT_FAIL;
	ns_per_tick = 1000000000ull / sysconf(_SC_CLK_TCK);
	splats0 = pt_count_splats();
	sh = hidepid_shared_alloc(sizeof(*sh));

	/* A kernel without PIDMAP_INFO fails here, not later. */
	{
		struct pidmap_info r;

		if (pidmap_info_view(0, 0, 0, &r, 1, PIDMAP_TASKS, sizeof(r),
				     PIDMAP_INFO_ALL_V2) != 1 ||
		    r.tid != getpid() || r.mask != PIDMAP_INFO_ALL_V2) {
			pt_err("PIDMAP_INFO of the caller: %s", strerror(errno));
			return KSFT_FAIL;
		}
	}

	hidepid_mount_views(BASE);

	if (pipe(release))
		pt_die("pipe");
	sh->target[T_INIT] = 1;
	sh->target[T_KTHREADD] = pt_kthreadd();
	if (sh->target[T_KTHREADD] <= 0)
		pt_die("no kthreadd in /proc");
	/* Two spinners, one under SCHED_IDLE: a user task without nice. */
	sh->target[T_ROOT] = spawn_policy(0, 0, 2, 2, 1, 0, 1);
	sh->target[T_OTHER] = spawn(HIDEPID_OTHER, 1, 0, 1, 0);
	sh->target[T_OWN] = spawn(HIDEPID_NOBODY, 2, 1, 1, 0);
	sh->target[T_OWN_NONDUMP] = spawn(HIDEPID_NOBODY, 0, 0, 0, 0);
	sh->target[T_ZOMBIE] = spawn(0, 1, 0, 1, 1);
	sh->target[T_SPLIT_UID] = spawn_as(HIDEPID_OTHER, HIDEPID_NOBODY, 1, 0, 1, 0);
	for (i = 0; i < T_NR; i++)
		printf("taskinfo: target %s = %d\n", target_names[i], sh->target[i]);

	sh->differences += hidepid_run_callers(BASE, release[1], check_view);
	failed = release_parked_and_reap(release[1]);
	hidepid_unmount_views(BASE);

	splats = pt_new_splats(splats0);
	printf("RELIABILITY: name=taskinfo ops=%lu listings=%lu records=%lu full=%lu "
	       "tid_only=%lu compared=%lu retried=%lu vanished=%lu checks=%lu "
	       "split_uid=%lu no_nice=%lu differences=%lu splats=%ld\n",
	       sh->calls, sh->listings, sh->records, sh->full, sh->tid_only, sh->compared,
	       sh->retried, sh->vanished, sh->checks, sh->split_uid, sh->no_nice,
	       sh->differences, splats);
	/*
	 * 3 callers x 6 views x (2 listings + 8 targets x 2 modes); uid 65534
	 * sees records without fields under noaccess; every listing holds
	 * the caller's own process with fields, and root's hold every task,
	 * the SCHED_IDLE spinner among them.
	 */
	if (failed || sh->differences || splats > 0 || sh->checks < 3 * 6 * 18 ||
	    sh->listings != 3 * 6 * 2 || sh->compared < 500 || sh->tid_only == 0 ||
	    sh->split_uid == 0 || sh->no_nice == 0) {
		printf("taskinfo: FAIL\n");
		return KSFT_FAIL;
	}
	printf("taskinfo: PASS\n");
	return KSFT_PASS;
}
