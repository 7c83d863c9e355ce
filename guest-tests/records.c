// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * records: pidmap_info(2) records of the default view equal /proc, field by
 * field, as root and as uid 65534 (what the series' selftests do not
 * cover: pidmap_info_test compares every field through every hidepid=
 * procfs view, but the default view's records only as a set).
 *
 * The default view (no procfs_fd) is the caller's pid namespace
 * under ptrace's own rule: root sees every task, a user only the tasks it
 * may ptrace (PTRACE_MODE_READ).  What such a view shows, procfs shows with
 * hidepid=ptraceable, so the reference mount is /proc (hidepid=off) for
 * root and a hidepid=ptraceable procfs, mounted in a mount namespace of
 * our own, for uid 65534.
 *
 * Targets besides the system's own tasks: parked processes (a few threads,
 * one of them spinning, so CPU time and state move) as root, as 65534
 * dumpable, as 65534 not dumpable, and as root with a SCHED_IDLE spinner.
 * Each caller, in a child process of its own, lists PROCS and TASKS
 * records (every field, chunks of 37, resuming after the last tid) and:
 *
 *   - the record tids equal the reference mount's readdir (PROCS: the
 *     mount's root; TASKS: every <mount>/PID/task), read before or after
 *     (kernel workers come and go: up to 20 tries);
 *   - every record has exactly the fields asked for (PIDMAP_INFO_ALL_FIELDS);
 *   - every field equals <mount>/PID/stat (PROCS: the group's CPU time)
 *     or <mount>/PID/task/TID/stat (TASKS), status and statm, read just
 *     before and just after the call: tgid (Tgid:), ppid (4), state (3),
 *     utime_ns and stime_ns (14, 15, in clock ticks as stat divides
 *     them, between the readings), priority (18), nice (19), num_threads
 *     (20), start_time_ns (22, in clock ticks), policy (41), rss_bytes
 *     (statm's 2nd, in pages), comm (2, exactly: a kernel thread's full
 *     name, a worker's "+desc"/"-desc"), ruid and euid (Uid: 1st and
 *     2nd), task_flags (PF_KTHREAD, PF_USER_WORKER, PF_EXITING,
 *     PF_FORKNOEXEC of field 9), min_flt and maj_flt (10, 12: the group's
 *     in PROCS) and nvcsw and nivcsw (voluntary_ and
 *     nonvoluntary_ctxt_switches:), between the readings;
 *   - a record whose moving fields (state, CPU time, rss, faults, switches, threads, ppid,
 *     flags, nice) disagree with both readings is fetched again alone
 *     (last_id = tid - 1, nr 1) between two fresh readings, up to 5 times;
 *   - the targets are where the rule puts them: 65534 sees its dumpable
 *     target and not the others, root sees all four.
 *
 * The references are the procfs files: independent of the code under test.
 */
#include "pidmap_test.h"	/* first: it defines _GNU_SOURCE */
#include "parked_process.h"

#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define BASE "/tmp/records"
#define PTRACEABLE BASE "/ptraceable"
#define CHUNK 37
#define RETRIES 5
#define NOBODY 65534

#define PF_EXITING_ 0x00000004u
#define PF_FORKNOEXEC_ 0x00000040u
#define PF_USER_WORKER_ 0x00004000u
#define PF_KTHREAD_ 0x00200000u

enum { T_ROOT, T_NOBODY, T_NOBODY_NONDUMP, T_ROOT_IDLE, T_NR };
static const char *const target_names[T_NR] = {
	"root", "uid65534", "uid65534_nondumpable", "root_sched_idle",
};

static struct shared {
	pid_t target[T_NR];
	unsigned long checks, failures, records, compared, retried, vanished, calls;
} *sh;

#define check(ok, ...) pt_check(&sh->checks, &sh->failures, (ok), __VA_ARGS__)

static int release[2];

/* ------------------------------------------------------------------ */
/* Targets                                                             */
/* ------------------------------------------------------------------ */

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

static void *busy_idle(void *arg)
{
	struct sched_param param = { .sched_priority = 0 };

	if (sched_setscheduler(0, SCHED_IDLE, &param))
		pt_die("sched_setscheduler(SCHED_IDLE)");
	return busy(arg);
}

struct spec {
	uid_t uid;
	int dumpable, idle;
};

static void become_target(void *arg)
{
	const struct spec *s = arg;
	pthread_t t;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (s->uid && (setgroups(0, NULL) || setgid(s->uid) || setuid(s->uid)))
		pt_die("become %d", (int)s->uid);
	if (prctl(PR_SET_DUMPABLE, s->dumpable, 0, 0, 0))
		pt_die("PR_SET_DUMPABLE");
	if (pthread_create(&t, NULL, s->idle ? busy_idle : busy, NULL))
		pt_die("pthread_create");
}

static pid_t spawn(uid_t uid, int dumpable, int idle)
{
	struct spec s = { uid, dumpable, idle };

	return parked_process(2, release[0], release[1], become_target, &s);
}

/* ------------------------------------------------------------------ */
/* The reference: <mount>/PID/stat or PID/task/TID/stat, statm, status  */
/* ------------------------------------------------------------------ */

struct proc_task {
	char name[80];
	char state;
	int ppid, tgid, policy;
	unsigned int ruid, euid;
	unsigned long flags;
	unsigned long long utime, stime, start, min_flt, maj_flt, nvcsw, nivcsw;
	long priority, nice, num_threads, rss;
};

/* Task @tid as @mount shows it, as a process or as a task; 0 or an errno. */
static int read_task(const char *mount, int tid, int process, struct proc_task *t)
{
	char dir[128], path[160], buf[1024], line[256], *op, *cp;
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
	op = strchr(buf, '(');
	cp = strrchr(buf, ')');
	if (!op || !cp || cp - op > (long)sizeof(t->name))
		pt_die("cannot parse %s: %s", path, buf);
	memset(t->name, 0, sizeof(t->name));
	memcpy(t->name, op + 1, cp - op - 1);
	if (sscanf(cp + 1,
		   " %c %d %*d %*d %*d %*d %lu %llu %*u %llu %*u %llu %llu %*d %*d %ld %ld %ld"
		   " %*d %llu",
		   &t->state, &t->ppid, &t->flags, &t->min_flt, &t->maj_flt, &t->utime, &t->stime,
		   &t->priority, &t->nice, &t->num_threads, &t->start) != 11)
		pt_die("cannot parse %s: %s", path, buf);
	t->policy = proc_stat_buf_policy(buf);
	if (t->policy < 0)
		pt_die("no policy (field 41) in %s: %s", path, buf);
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
		got += sscanf(line, "voluntary_ctxt_switches: %llu", &t->nvcsw) == 1;
		got += sscanf(line, "nonvoluntary_ctxt_switches: %llu", &t->nivcsw) == 1;
	}
	fclose(f);
	return got == 4 ? 0 : ENOENT;
}

static __u32 task_flags_of(unsigned long pf)
{
	return ((pf & PF_KTHREAD_) ? PIDMAP_TASK_KTHREAD : 0) |
	       ((pf & PF_USER_WORKER_) ? PIDMAP_TASK_USER_WORKER : 0) |
	       ((pf & PF_EXITING_) ? PIDMAP_TASK_EXITING : 0) |
	       ((pf & PF_FORKNOEXEC_) ? PIDMAP_TASK_FORKNOEXEC : 0);
}

#define BETWEEN(v, a, b) ((a) <= (b) ? (a) <= (v) && (v) <= (b) : (b) <= (v) && (v) <= (a))
#define EITHER(v, a, b) ((v) == (a) || (v) == (b))

/*
 * The fields of @r that disagree with the readings @b (before) and @a
 * (after), as PIDMAP_INFO_* bits (bit 62: the mask, bit 61: __spare or
 * comm's termination).  @stable_only: only the fields that may not move.
 */
static __u64 mismatches(const struct pidmap_info *r, const struct proc_task *b,
			const struct proc_task *a, int stable_only)
{
	__u64 bad = 0;
	size_t i;

	if (r->mask != PIDMAP_INFO_ALL_FIELDS)
		bad |= 1ULL << 62;
	for (i = 0; i < sizeof(r->__spare); i++)
		if (r->__spare[i])
			bad |= 1ULL << 61;
	if (strnlen(r->comm, sizeof(r->comm)) == sizeof(r->comm))
		bad |= 1ULL << 61;
	if ((int)r->tgid != b->tgid || (int)r->tgid != a->tgid)
		bad |= PIDMAP_INFO_ID;
	if (pidmap_ticks(r->start_time_ns) != b->start)
		bad |= PIDMAP_INFO_START_TIME;
	if (strcmp(r->comm, b->name) && strcmp(r->comm, a->name))
		bad |= PIDMAP_INFO_COMM;
	if (r->ruid != b->ruid || r->euid != b->euid)
		bad |= PIDMAP_INFO_CREDS;
	if (stable_only)
		return bad;
	if (!EITHER(r->nice, b->nice, a->nice) ||
	    !EITHER(r->priority, b->priority, a->priority) ||
	    !EITHER(r->policy, (__u32)b->policy, (__u32)a->policy))
		bad |= PIDMAP_INFO_SCHED;
	if (!EITHER((int)r->ppid, b->ppid, a->ppid))
		bad |= PIDMAP_INFO_PPID;
	if (!EITHER(r->state, b->state, a->state))
		bad |= PIDMAP_INFO_STATE;
	if (!EITHER(r->task_flags, task_flags_of(b->flags), task_flags_of(a->flags)))
		bad |= PIDMAP_INFO_TASK_FLAGS;
	if (!BETWEEN(pidmap_ticks(r->utime_ns), b->utime, a->utime) ||
	    !BETWEEN(pidmap_ticks(r->stime_ns), b->stime, a->stime))
		bad |= PIDMAP_INFO_CPUTIME;
	if (!BETWEEN((long)pidmap_pages(r->rss_bytes), b->rss, a->rss) ||
	    r->rss_bytes % sysconf(_SC_PAGESIZE))
		bad |= PIDMAP_INFO_RSS;
	if (!BETWEEN(r->min_flt, b->min_flt, a->min_flt) ||
	    !BETWEEN(r->maj_flt, b->maj_flt, a->maj_flt))
		bad |= PIDMAP_INFO_FAULTS;
	if (!BETWEEN(r->nvcsw, b->nvcsw, a->nvcsw) || !BETWEEN(r->nivcsw, b->nivcsw, a->nivcsw))
		bad |= PIDMAP_INFO_CTXSW;
	if (!BETWEEN((long)r->num_threads, b->num_threads, a->num_threads))
		bad |= PIDMAP_INFO_NUM_THREADS;
	return bad;
}

static void log_mismatch(const char *what, const struct pidmap_info *r,
			 const struct proc_task *b, const struct proc_task *a, __u64 bad)
{
	pt_err("%s: tid %d fields %#llx differ: record tgid=%d ppid=%d state=%c task_flags=%#x "
	       "utime=%llu stime=%llu prio=%d nice=%d policy=%u threads=%u start=%llu rss=%llu "
	       "flt=%llu/%llu csw=%llu/%llu "
	       "comm=%.64s uid=%u/%u mask=%#llx; before: tgid=%d ppid=%d state=%c flags=%#lx "
	       "utime=%llu stime=%llu prio=%ld nice=%ld policy=%d threads=%ld start=%llu "
	       "rss=%ld flt=%llu/%llu csw=%llu/%llu name=%s uid=%u/%u; after: state=%c utime=%llu "
	       "stime=%llu rss=%ld flt=%llu/%llu csw=%llu/%llu",
	       what, r->tid, (unsigned long long)bad, r->tgid, r->ppid, r->state ? r->state : '0',
	       r->task_flags, pidmap_ticks(r->utime_ns), pidmap_ticks(r->stime_ns),
	       r->priority, r->nice, r->policy, r->num_threads,
	       pidmap_ticks(r->start_time_ns), pidmap_pages(r->rss_bytes),
	       (unsigned long long)r->min_flt, (unsigned long long)r->maj_flt,
	       (unsigned long long)r->nvcsw, (unsigned long long)r->nivcsw, r->comm,
	       r->ruid, r->euid, (unsigned long long)r->mask, b->tgid, b->ppid, b->state,
	       b->flags, b->utime, b->stime, b->priority, b->nice, b->policy, b->num_threads,
	       b->start, b->rss, b->min_flt, b->maj_flt, b->nvcsw, b->nivcsw, b->name, b->ruid,
	       b->euid, a->state, a->utime, a->stime, a->rss, a->min_flt, a->maj_flt, a->nvcsw,
	       a->nivcsw);
}

/* ------------------------------------------------------------------ */
/* Listings                                                            */
/* ------------------------------------------------------------------ */

struct recs {
	struct pidmap_info *v;
	size_t n, cap;
};

/* Every record of @scope in the default view, CHUNK per call; 0 or an errno. */
static int list_records(__u32 scope, struct recs *out)
{
	__u64 last = 0;

	out->n = 0;
	for (;;) {
		long n, i;

		if (out->cap - out->n < CHUNK) {
			size_t cap = out->cap ? out->cap * 2 : 1024;
			void *v = realloc(out->v, cap * sizeof(*out->v));

			if (!v)
				pt_die("realloc");
			out->v = v;
			out->cap = cap;
		}
		n = pidmap_info_list(scope, 0, 0, 0, last, out->v + out->n, CHUNK,
				     sizeof(struct pidmap_info), PIDMAP_INFO_ALL_FIELDS);
		sh->calls++;
		if (n < 0)
			return errno;
		if (n == 0)
			return 0;
		if (n > CHUNK)
			return E2BIG;
		for (i = 0; i < n; i++) {
			const struct pidmap_info *r = &out->v[out->n + i];

			if ((__u64)r->tid <= last || (i && r->tid <= r[-1].tid)) {
				pt_err("record tid %d after cursor %llu: out of order", r->tid,
				       (unsigned long long)last);
				return EDOM;
			}
		}
		out->n += n;
		last = (__u64)out->v[out->n - 1].tid;
	}
}

/* The reference set: @mount's root (PROCS) or every <mount>/PID/task (TASKS). */
static void reference(const char *mount, int tasks, struct pt_ids *out)
{
	struct pt_ids tg = { 0 };
	char path[128];
	size_t i;

	pt_ids_clear(out);
	if (pt_readdir_ids(mount, &tg))
		pt_die("readdir %s", mount);
	if (!tasks) {
		for (i = 0; i < tg.n; i++)
			pt_ids_push(out, tg.v[i]);
	} else {
		for (i = 0; i < tg.n; i++) {
			snprintf(path, sizeof(path), "%s/%d/task", mount, tg.v[i]);
			(void)pt_readdir_ids(path, out);
		}
		pt_ids_sort(out);
	}
	pt_ids_free(&tg);
}

/* One record fetched alone between two readings: 0 agrees, 1 differs, -1 gone. */
static int recheck(const char *what, __u32 scope, const char *mount, int tid, int log)
{
	struct proc_task b, a;
	struct pidmap_info r;
	__u64 bad;
	long n;

	if (read_task(mount, tid, scope == PIDMAP_SCOPE_PROCS, &b))
		return -1;
	n = pidmap_info_list(scope, 0, 0, 0, (__u64)tid - 1, &r, 1, sizeof(r),
			     PIDMAP_INFO_ALL_FIELDS);
	sh->calls++;
	if (read_task(mount, tid, scope == PIDMAP_SCOPE_PROCS, &a))
		return -1;
	if (n != 1 || (int)r.tid != tid)
		return -1;
	bad = mismatches(&r, &b, &a, 0);
	if (bad && log)
		log_mismatch(what, &r, &b, &a, bad);
	return bad != 0;
}

static void compare(const char *caller, const char *mount, __u32 scope)
{
	struct pt_ids want = { 0 }, want2 = { 0 }, got = { 0 };
	struct recs recs = { 0 };
	struct proc_task *b, *a;
	int *b_err, *a_err;
	unsigned long diff = 0, vanished = 0;
	char what[96];
	int tries, e = 0, same = 0;
	size_t i;

	snprintf(what, sizeof(what), "%s: %s records vs %s", caller, pt_scope_name(scope), mount);
	for (tries = 0; tries < 20 && !same; tries++) {
		reference(mount, scope == PIDMAP_SCOPE_TASKS, &want);
		e = list_records(scope, &recs);
		reference(mount, scope == PIDMAP_SCOPE_TASKS, &want2);
		if (e)
			break;
		pt_ids_clear(&got);
		for (i = 0; i < recs.n; i++)
			pt_ids_push(&got, recs.v[i].tid);
		same = pt_ids_equal(&got, &want) || pt_ids_equal(&got, &want2);
		if (!same)
			usleep(50000);
	}
	check(!e, "%s: listing failed: %s", what, strerror(e));
	if (e)
		goto out;
	if (!same)
		pt_ids_diff(what, &got, &want);
	check(same, "%s: the record tids differ from the mount's readdir", what);

	/*
	 * Field by field: every task of that listing read, listed again,
	 * read again; a record is judged against the readings of its tid.
	 */
	b = calloc(got.n + 1, sizeof(*b));
	a = calloc(recs.n + 1, sizeof(*a));
	b_err = calloc(got.n + 1, sizeof(int));
	a_err = calloc(recs.n + 1, sizeof(int));
	if (!b || !a || !b_err || !a_err)
		pt_die("calloc");
	for (i = 0; i < got.n; i++)
		b_err[i] = read_task(mount, got.v[i], scope == PIDMAP_SCOPE_PROCS, &b[i]);
	if (list_records(scope, &recs))
		pt_die("%s: second listing", what);
	for (i = 0; i < recs.n; i++)
		a_err[i] = read_task(mount, recs.v[i].tid, scope == PIDMAP_SCOPE_PROCS, &a[i]);
	for (i = 0; i < recs.n; i++) {
		const struct pidmap_info *r = &recs.v[i];
		const int *pos = bsearch(&r->tid, got.v, got.n, sizeof(int), pt_int_cmp);
		size_t j = pos ? (size_t)(pos - got.v) : 0;
		__u64 bad;
		int k, res = 1;

		sh->records++;
		/* A task new in the second listing has no reading before it. */
		if (!pos)
			continue;
		if (b_err[j] || a_err[i] || b[j].tgid != a[i].tgid) {
			vanished++;
			continue;
		}
		bad = mismatches(r, &b[j], &a[i], 1);
		if (bad) {
			log_mismatch(what, r, &b[j], &a[i], bad);
			diff++;
			continue;
		}
		bad = mismatches(r, &b[j], &a[i], 0);
		sh->compared++;
		if (!bad)
			continue;
		sh->retried++;
		for (k = 0; k < RETRIES && res == 1; k++)
			res = recheck(what, scope, mount, r->tid, k == RETRIES - 1);
		if (res < 0)
			vanished++;
		else if (res)
			diff++;
	}
	check(diff == 0, "%s: %lu records differ from /proc", what, diff);
	check(vanished * 10 <= recs.n + 10, "%s: %lu of %zu tasks vanished (too many to judge)",
	      what, vanished, recs.n);
	sh->vanished += vanished;
	printf("RECORDS: caller=%s scope=%s records=%zu differences=%lu vanished=%lu\n", caller,
	       pt_scope_name(scope), recs.n, diff, vanished);
	fflush(stdout);
	free(b);
	free(a);
	free(b_err);
	free(a_err);
out:
	free(recs.v);
	pt_ids_free(&want);
	pt_ids_free(&want2);
	pt_ids_free(&got);
}

/* The targets as @caller sees them: 65534 only its dumpable one, root all. */
static void targets(const char *caller, int is_root)
{
	struct recs recs = { 0 };
	struct pt_ids got = { 0 };
	size_t i;
	int t;

	check(!list_records(PIDMAP_SCOPE_PROCS, &recs), "%s: PROCS records", caller);
	for (i = 0; i < recs.n; i++)
		pt_ids_push(&got, recs.v[i].tid);
	for (t = 0; t < T_NR; t++) {
		int want = is_root || t == T_NOBODY;

		check(pt_ids_has(&got, sh->target[t]) == want, "%s: target %s (%d) %s", caller,
		      target_names[t], sh->target[t], want ? "missing" : "listed");
	}
	/* The SCHED_IDLE spinner's record says so (root only sees it). */
	if (is_root) {
		struct pidmap_info r[8];
		int fd = pt_pidfd(sh->target[T_ROOT_IDLE], 0);
		int idle = 0, k;
		long n = -1;

		/* The spinner takes SCHED_IDLE itself, once it runs. */
		for (k = 0; k < 20 && idle != 1; k++) {
			if (k)
				usleep(50000);
			n = pidmap_info_list(PIDMAP_SCOPE_THREADS, fd, 0, 0, 0, r, 8, sizeof(r[0]),
					     PIDMAP_INFO_ALL_FIELDS);
			for (idle = 0, i = 0; n > 0 && i < (size_t)n; i++)
				idle += r[i].policy == SCHED_IDLE;
		}
		check(n == 4 && idle == 1, "%s: the SCHED_IDLE target's threads: %ld records, %d "
		      "SCHED_IDLE", caller, n, idle);
		close(fd);
	}
	free(recs.v);
	pt_ids_free(&got);
}

static void run_caller(const char *caller, uid_t uid)
{
	const char *mount = uid ? PTRACEABLE : "/proc";

	if (uid) {
		gid_t g = uid;

		if (setgroups(1, &g) || setgid(uid) || setuid(uid))
			pt_die("become %d", (int)uid);
		if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
			pt_die("PR_SET_DUMPABLE");
	}
	targets(caller, uid == 0);
	compare(caller, mount, PIDMAP_SCOPE_PROCS);
	compare(caller, mount, PIDMAP_SCOPE_TASKS);
}

int main(void)
{
	static const struct { const char *name; uid_t uid; } callers[] = {
		{ "root", 0 }, { "uid65534", NOBODY },
	};
	long splats0;
	size_t c;
	int status;

	pt_name = "records";
	pt_require_syscalls();
	if (getuid() != 0) {
		pt_err("must run as root (it mounts procfs and switches uids)");
		return KSFT_FAIL;
	}
	splats0 = pt_count_splats();
	alarm(280);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		pt_die("mmap");
	if (pipe(release))
		pt_die("pipe");
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		pt_die("private mount namespace");
	mkdir(BASE, 0755);
	mkdir(PTRACEABLE, 0755);
	if (mount("proc", PTRACEABLE, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "hidepid=ptraceable"))
		pt_die("mount proc hidepid=ptraceable");
	sh->target[T_ROOT] = spawn(0, 1, 0);
	sh->target[T_NOBODY] = spawn(NOBODY, 1, 0);
	sh->target[T_NOBODY_NONDUMP] = spawn(NOBODY, 0, 0);
	sh->target[T_ROOT_IDLE] = spawn(0, 1, 1);

	for (c = 0; c < sizeof(callers) / sizeof(callers[0]); c++) {
		pid_t pid = fork();

		if (pid < 0)
			pt_die("fork");
		if (pid == 0) {
			close(release[1]);
			run_caller(callers[c].name, callers[c].uid);
			_exit(0);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
			pt_err("caller %s ended with status %#x", callers[c].name, status);
			sh->failures++;
		}
	}
	close(release[1]);
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			pt_err("a target ended with status %#x", status);
			sh->failures++;
		}
	umount2(PTRACEABLE, MNT_DETACH);

	printf("RELIABILITY: name=records calls=%lu records=%lu compared=%lu retried=%lu "
	       "vanished=%lu checks=%lu failures=%lu splats=%ld\n", sh->calls, sh->records,
	       sh->compared, sh->retried, sh->vanished, sh->checks, sh->failures,
	       pt_new_splats(splats0));
	if (sh->failures || !sh->compared || pt_new_splats(splats0) > 0) {
		printf("records: FAIL\n");
		return KSFT_FAIL;
	}
	printf("records: PASS\n");
	return KSFT_PASS;
}
