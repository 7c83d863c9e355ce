// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * pidmap-bench: lsof_NNNx16, an lsof-style listing of every fd of every
 * process with its target, end to end: fdmap(2) with the per-fd read it
 * still needs against the /proc walk lsof does.
 *
 * Population: --procs / 10 processes (1,000 by default) beside the
 * system's own, each holding LSOF_FDS_PER_PROC fds of mixed kinds:
 * stdin, stdout and stderr (the console), two regular files (one shared by
 * every process, one of its own), a directory, /dev/null, two pipes, two
 * AF_UNIX socket pairs and an eventfd.
 *
 * The variants, timed in interleaved rounds (ns per full listing):
 *
 *  - "proc" (the baseline, what lsof does for the names): readdir /proc,
 *    for each process readdir /proc/PID/fd, and readlink(2)
 *    /proc/PID/fd/N, a full path as lsof builds it, for every fd;
 *  - "fdmap" (JSON "new"): the processes from pidmap(PIDMAP_SCOPE_PROCS)
 *    through our /proc's view (as the crate lists them), per process
 *    pidfd_open + fdmap(2) for the fd numbers + readlink(2) of
 *    /proc/PID/fd/N for each + close;
 *  - "proc_ids": the proc walk without the readlinks: the fd numbers alone;
 *  - "fdmap_ids": the fdmap side without the readlinks.
 *
 * The directories are read with the calls glibc's opendir/readdir/closedir
 * make (openat, fstat, getdents64 into 32 KiB until it returns 0, close),
 * issued directly so that each listing's syscalls and bytes are counted
 * exactly, in the timed listings themselves.
 *
 * The cross-check: an untimed pass of every variant, then the same
 * (pid, fd, link target) from "proc" and "fdmap", and the same (pid, fd)
 * from all four.  A difference is forgiven only for a process that is
 * gone (reaped, or a zombie, whose table is empty) and for this process,
 * whose table holds each variant's own directory fds or pidfd; every
 * spawned process must show its LSOF_FDS_PER_PROC fds.
 */
#include "common.h"
#include <limits.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#define LSOF_DIR "/tmp/pidmap-bench-lsof"
#define LSOF_SHARED_FILE LSOF_DIR "/shared"
#define LSOF_FDS_PER_PROC 16

/* ---- The population ---- */

static void open_or_exit(const char *path, int flags)
{
	if (open(path, flags | O_CLOEXEC, 0600) < 0)
		_exit(6);
}

/*
 * In a spawned child: keep stdin, stdout, stderr and the report pipe
 * (@report_fd, closed after the report), close what else the parent had
 * open (its /proc fd, outside the guest its caller's), and open the 13
 * other fds.
 */
static void hold_mixed_fds(long index, int report_fd)
{
	char own[64];
	int pfd[2], sv[2], k;

	if (report_fd > 3 && close_range(3, report_fd - 1, 0))
		_exit(6);
	if (close_range(report_fd + 1, ~0U, 0))
		_exit(6);
	snprintf(own, sizeof(own), LSOF_DIR "/proc-%ld", index);
	open_or_exit(LSOF_SHARED_FILE, O_RDONLY);
	open_or_exit(own, O_RDWR | O_CREAT);
	open_or_exit(LSOF_DIR, O_RDONLY | O_DIRECTORY);
	open_or_exit("/dev/null", O_RDWR);
	for (k = 0; k < 2; k++) {
		if (pipe2(pfd, O_CLOEXEC))
			_exit(6);
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
			_exit(6);
	}
	if (eventfd(0, EFD_CLOEXEC) < 0)
		_exit(6);
}

static void make_lsof_files(void)
{
	int fd;

	if (mkdir(LSOF_DIR, 0700) && errno != EEXIST)
		die("mkdir %s: %m", LSOF_DIR);
	fd = open(LSOF_SHARED_FILE, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		die("open %s: %m", LSOF_SHARED_FILE);
	close(fd);
}

static void remove_lsof_files(long nprocs)
{
	char own[64];
	long i;

	for (i = 0; i < nprocs; i++) {
		snprintf(own, sizeof(own), LSOF_DIR "/proc-%ld", i);
		unlink(own);
	}
	unlink(LSOF_SHARED_FILE);
	rmdir(LSOF_DIR);
}

/* ---- What a listing saw ---- */

/* One fd: target_len < 0 when the variant reads no targets. */
struct fd_rec {
	int pid, fd;
	long target_off;
	int target_len;
};

#define FD_REC_CAP (1 << 18)
#define TARGET_ARENA (32 << 20)

/* Every fd one check pass saw, with the link targets in one arena. */
struct fd_list {
	struct fd_rec v[FD_REC_CAP];
	long n;
	char arena[TARGET_ARENA];
	long used;
};

static void fd_list_add(struct fd_list *l, int pid, int fd, const char *target, int len)
{
	struct fd_rec *r;

	if (l->n == FD_REC_CAP)
		die("lsof: more than %d fds in one listing", FD_REC_CAP);
	if (len > 0 && l->used + len > TARGET_ARENA)
		die("lsof: more than %d bytes of link targets", TARGET_ARENA);
	r = &l->v[l->n++];
	*r = (struct fd_rec){ .pid = pid, .fd = fd, .target_off = l->used, .target_len = len };
	if (len > 0) {
		memcpy(l->arena + l->used, target, len);
		l->used += len;
	}
}

/* One listing: what it reads, what it counted, and (check pass) what it saw. */
struct lsof_walk {
	bool targets;		/* readlink(2) every fd */
	struct fd_list *out;	/* NULL in the timed listings */
	struct cost cost;
	long fds;
};

/*
 * readlink /proc/@pid/fd/@fd as lsof does; a closed fd or a gone process
 * is skipped.  One we may not read (EACCES, outside the guest, where a
 * readdir of /proc/PID/fd may still work) is listed as lsof lists it,
 * with the error as its target.
 */
static void visit_fd(struct lsof_walk *w, int pid, int fd)
{
	char path[48], target[PATH_MAX];
	ssize_t len = -1;

	if (w->targets) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
		len = readlink(path, target, sizeof(target));
		w->cost.syscalls++;
		if (len < 0 && errno == EACCES)
			len = snprintf(target, sizeof(target), "(readlink: %m)");
		if (len < 0) {
			if (errno == ENOENT)
				return;
			die("readlink %s: %m", path);
		}
		w->cost.bytes += len;
		sink += len;
	}
	w->fds++;
	if (w->out)
		fd_list_add(w->out, pid, fd, target, (int)len);
}

#define DENTS_BUF 32768

/*
 * The numeric names of directory @path, as opendir/readdir/closedir read
 * them, each passed to @fn(@w, @pid, the number).  @buf: DENTS_BUF bytes.
 * Returns false if the directory is gone (ENOENT: its process exited) or
 * we may not read it (EACCES: a process of another user outside the guest).
 */
static bool list_numeric(struct lsof_walk *w, const char *path, char *buf, int pid,
			 void (*fn)(struct lsof_walk *w, int pid, int id))
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_DIRECTORY);
	bool listed = true;

	w->cost.syscalls++;
	if (fd < 0) {
		if (errno == ENOENT || errno == EACCES)
			return false;
		die("open %s: %m", path);
	}
	if (fstat(fd, &st))
		die("fstat %s: %m", path);
	w->cost.syscalls++;
	for (;;) {
		long len = syscall(SYS_getdents64, fd, buf, DENTS_BUF);
		long off;

		w->cost.syscalls++;
		if (len < 0 && errno == ENOENT) {
			listed = false;	/* the process exited while we read */
			break;
		}
		if (len < 0)
			die("getdents64 %s: %m", path);
		if (len == 0)
			break;
		w->cost.bytes += len;
		for (off = 0; off < len;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			int id = parse_id(d->d_name);

			if (id >= 0)
				fn(w, pid, id);
			off += d->d_reclen;
		}
	}
	close(fd);
	w->cost.syscalls++;
	return listed;
}

static char root_dents[DENTS_BUF], fd_dents[DENTS_BUF];

static void proc_visit_process(struct lsof_walk *w, int unused, int pid)
{
	char path[32];

	(void)unused;
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	list_numeric(w, path, fd_dents, pid, visit_fd);
}

/* The /proc side: readdir /proc, then every /proc/PID/fd. */
static long proc_walk(struct lsof_walk *w)
{
	list_numeric(w, "/proc", root_dents, 0, proc_visit_process);
	return w->fds;
}

static int lsof_fdbuf[IDBUF_CAP];

/* The series' side: pidmap for the processes, per process pidfd + fdmap. */
static long fdmap_walk(struct lsof_walk *w)
{
	long nproc = pidmap_all(PIDMAP_SCOPE_PROCS, 0, idbuf, &w->cost);
	long i, k;

	for (i = 0; i < nproc; i++) {
		int pid = (int)idbuf[i];
		int pidfd = sys_pidfd_open(pid, 0);
		long nfds;

		w->cost.syscalls++;
		if (pidfd < 0) {
			if (errno == ESRCH)
				continue;	/* exited meanwhile */
			die("pidfd_open(%d): %m", pid);
		}
		nfds = fdmap_all(pidfd, lsof_fdbuf, &w->cost);
		if (nfds < 0)
			nfds = 0;	/* EACCES: as the /proc walk, skip it */
		for (k = 0; k < nfds; k++)
			visit_fd(w, pid, lsof_fdbuf[k]);
		close(pidfd);
		w->cost.syscalls++;
	}
	return w->fds;
}

/* ---- The variants ---- */

enum { L_PROC, L_FDMAP, L_PROC_IDS, L_FDMAP_IDS, NLSOF };

struct lsof_variant {
	const char *key;	/* JSON: <key>_ns, <key>_ratio, ... */
	long (*walk)(struct lsof_walk *w);
	bool targets;
	bool needs_series;
};

static const struct lsof_variant lsof_variants[NLSOF] = {
	[L_PROC] = { "baseline", proc_walk, true, false },
	[L_FDMAP] = { "new", fdmap_walk, true, true },
	[L_PROC_IDS] = { "proc_ids", proc_walk, false, false },
	[L_FDMAP_IDS] = { "fdmap_ids", fdmap_walk, false, true },
};

/* The timed side of variant @arg: one listing; its cost is of the last one. */
struct lsof_side {
	const struct lsof_variant *v;
	struct cost cost;
};

static long lsof_timed(void *arg)
{
	struct lsof_side *s = arg;
	struct lsof_walk w = { .targets = s->v->targets };
	long n = s->v->walk(&w);

	s->cost = w.cost;
	return n;
}

static bool lsof_available(const struct lsof_variant *v)
{
	return !v->needs_series || (have_pidmap && have_fdmap);
}

/* ---- The cross-check ---- */

static int cmp_fd_rec(const void *a, const void *b)
{
	const struct fd_rec *x = a, *y = b;

	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	return (x->fd > y->fd) - (x->fd < y->fd);
}

/* Whether @pid has exited: reaped, or a zombie (whose fd table is empty). */
static bool process_gone(int pid)
{
	char path[32], buf[512], *state;

	if (kill(pid, 0) && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (proc_read_file(path, buf, sizeof(buf)) < 0)
		return errno == ENOENT || errno == ESRCH;
	state = strrchr(buf, ')');
	return state && (state[2] == 'Z' || state[2] == 'X');
}

static bool same_target(const struct fd_list *a, const struct fd_rec *x,
			const struct fd_list *b, const struct fd_rec *y)
{
	if (x->target_len < 0 || y->target_len < 0)
		return true;	/* a variant without targets */
	return x->target_len == y->target_len &&
	       !memcmp(a->arena + x->target_off, b->arena + y->target_off, x->target_len);
}

static void report_difference(const char *name, const char *what, const struct fd_list *l,
			      const struct fd_rec *r, long diff)
{
	if (diff > 16)
		return;
	fflush(stdout);
	fprintf(stderr, "  %s: pid %d fd %d %s", name, r->pid, r->fd, what);
	if (r->target_len >= 0)
		fprintf(stderr, " (-> %.*s)", r->target_len, l->arena + r->target_off);
	fputc('\n', stderr);
}

/*
 * The fds of @b against those of the baseline @a, both sorted: the same
 * (pid, fd), and the same target where both read it.  Returns the
 * differences that count: not in this process, not in a gone one.
 */
static long compare_fd_lists(const char *name, const char *variant, const struct fd_list *a,
			     const struct fd_list *b)
{
	pid_t self = getpid();
	long i = 0, j = 0, diff = 0;

	while (i < a->n || j < b->n) {
		const struct fd_rec *x = i < a->n ? &a->v[i] : NULL;
		const struct fd_rec *y = j < b->n ? &b->v[j] : NULL;
		int c = !x ? 1 : !y ? -1 : cmp_fd_rec(x, y);
		const struct fd_rec *r = c <= 0 ? x : y;

		i += c <= 0;
		j += c >= 0;
		if (c == 0 && same_target(a, x, b, y))
			continue;
		if (r->pid == self || process_gone(r->pid))
			continue;
		diff++;
		if (c < 0)
			report_difference(name, "only in /proc", a, x, diff);
		else if (c > 0)
			report_difference(name, variant, b, y, diff);
		else
			report_difference(name, "has another target in /proc", a, x, diff);
	}
	if (diff) {
		fflush(stdout);
		fprintf(stderr, "pidmap-bench: %s: %s: %ld fd(s) differ from /proc's\n", name,
			variant, diff);
	}
	return diff;
}

/* The spawned processes without their LSOF_FDS_PER_PROC fds in @l (sorted). */
static long spawned_missing_fds(const char *name, const struct fd_list *l, const struct pop *p)
{
	long i, bad = 0;

	for (i = 0; i < p->n; i++) {
		struct fd_rec key = { .pid = p->pids[i], .fd = -1 };
		long lo = 0, hi = l->n, n = 0;

		while (lo < hi) {	/* the first record of the pid */
			long mid = lo + (hi - lo) / 2;

			if (cmp_fd_rec(&l->v[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		while (lo + n < l->n && l->v[lo + n].pid == key.pid)
			n++;
		if (n != LSOF_FDS_PER_PROC && bad++ < 16) {
			fflush(stdout);
			fprintf(stderr, "  %s: spawned pid %d shows %ld fds in /proc, not %d\n",
				name, key.pid, n, LSOF_FDS_PER_PROC);
		}
	}
	return bad;
}

static struct fd_list check_lists[NLSOF];

static const char *const lsof_check_names[NLSOF] = {
	[L_FDMAP] = "pidmap + fdmap + readlink",
	[L_PROC_IDS] = "the /proc readdirs alone",
	[L_FDMAP_IDS] = "pidmap + fdmap alone",
};

/*
 * One untimed pass of every available variant, back to back, compared
 * with the /proc walk's; up to 3 attempts (kernel workers come and go).
 * @fds: what the /proc walk listed.
 */
static bool lsof_check(const char *name, const struct pop *p, long *fds)
{
	int attempt, k;

	for (attempt = 1; attempt <= 3; attempt++) {
		long bad = 0;

		for (k = 0; k < NLSOF; k++) {
			struct lsof_walk w = { .targets = lsof_variants[k].targets,
					       .out = &check_lists[k] };

			check_lists[k].n = check_lists[k].used = 0;
			if (lsof_available(&lsof_variants[k]))
				lsof_variants[k].walk(&w);
			qsort(check_lists[k].v, check_lists[k].n, sizeof(struct fd_rec), cmp_fd_rec);
		}
		*fds = check_lists[L_PROC].n;
		bad += spawned_missing_fds(name, &check_lists[L_PROC], p);
		for (k = L_PROC + 1; k < NLSOF; k++)
			if (lsof_available(&lsof_variants[k]))
				bad += compare_fd_lists(name, lsof_check_names[k],
							&check_lists[L_PROC], &check_lists[k]);
		if (!bad) {
			note("  %s: cross-check: every variant lists the same %ld fds%s (attempt %d)\n",
			     name, *fds, have_fdmap ? ", fdmap + readlink the same targets" : "",
			     attempt);
			return true;
		}
		fflush(stdout);
		fprintf(stderr, "pidmap-bench: %s: cross-check attempt %d: %ld difference(s)\n",
			name, attempt, bad);
	}
	fprintf(stderr, "pidmap-bench: ERROR: %s: the listings disagree\n", name);
	failures++;
	return false;
}

/* ---- The case ---- */

struct lsof_run {
	struct lsof_side sides[NLSOF];
	struct side timing[NLSOF];
	struct side *timed[NLSOF];	/* NULL: not available */
	double ns[NLSOF];		/* medians; < 0: not available */
};

static void lsof_time(struct lsof_run *run)
{
	int k;

	for (k = 0; k < NLSOF; k++) {
		run->sides[k] = (struct lsof_side){ .v = &lsof_variants[k] };
		run->timing[k] = (struct side){ .fn = lsof_timed, .arg = &run->sides[k] };
		run->timed[k] = lsof_available(&lsof_variants[k]) ? &run->timing[k] : NULL;
		run->ns[k] = -1;
	}
	run_sides(run->timed, NLSOF);
	for (k = 0; k < NLSOF; k++)
		if (run->timed[k])
			run->ns[k] = median(run->timing[k].samples, opt.rounds);
}

/* The variants' JSON members beside baseline and new: "<key>_ns" and friends. */
static void lsof_json(struct result *r, const struct lsof_run *run, long nprocs)
{
	int k;

	for (k = L_PROC_IDS; k < NLSOF; k++) {
		const char *key = lsof_variants[k].key;
		const struct cost *c = &run->sides[k].cost;

		if (run->ns[k] < 0) {
			append(r->extra, sizeof(r->extra), ", \"%s_ns\": null, \"%s_ratio\": null",
			       key, key);
			continue;
		}
		append(r->extra, sizeof(r->extra),
		       ", \"%s_ns\": %.1f, \"%s_ratio\": %.3f, \"%s_syscalls\": %ld, \"%s_bytes\": %ld",
		       key, run->ns[k], key, run->ns[L_PROC] / run->ns[k], key, c->syscalls,
		       key, c->bytes);
	}
	if (run->ns[L_FDMAP_IDS] >= 0)
		append(r->extra, sizeof(r->extra), ", \"ids_ratio\": %.3f",
		       run->ns[L_PROC_IDS] / run->ns[L_FDMAP_IDS]);
	append(r->extra, sizeof(r->extra),
	       ", \"readlink_share\": %.3f, \"processes\": %ld, \"spawned_processes\": %ld, "
	       "\"fds_per_process\": %d",
	       1 - run->ns[L_PROC_IDS] / run->ns[L_PROC], walk_proc_root(NULL), nprocs,
	       LSOF_FDS_PER_PROC);
}

static void lsof_note(const char *name, const struct lsof_run *run)
{
	int k;

	note("%s:", name);
	for (k = 0; k < NLSOF; k++) {
		if (run->ns[k] < 0)
			note(" %s n/a;", lsof_variants[k].key);
		else
			note(" %s %.0f ns (%.2fx);", lsof_variants[k].key, run->ns[k],
			     run->ns[L_PROC] / run->ns[k]);
	}
	note("\n");
}

static struct lsof_run lsof_run;

void case_lsof(void)
{
	long nprocs = opt.procs / 10, fds = 0;
	struct lsof_run *run = &lsof_run;
	struct pop p = { 0 };
	struct result *r;
	static char name[32];
	int k;

	/* lsof_1000x16 by default; --procs 100000 gives lsof_10000x16. */
	snprintf(name, sizeof(name), "lsof_%ldx%d", nprocs, LSOF_FDS_PER_PROC);
	if (!want_case(name))
		return;
	make_room(nprocs);
	make_lsof_files();
	spawn_procs_with(&p, nprocs, 1, hold_mixed_fds);
	note("%s: timing ...\n", name);
	lsof_time(run);
	r = add_result(name, NO_TARGET, false);
	r->agree = lsof_check(name, &p, &fds);
	r->entries = fds;
	r->base_ns = run->ns[L_PROC];
	r->base_iters = run->timing[L_PROC].iters;
	r->base_sys = run->sides[L_PROC].cost.syscalls;
	r->base_bytes = run->sides[L_PROC].cost.bytes;
	for (k = 0; k < NLSOF; k++)
		if (run->timed[k])
			r->agree &= check_count(name, lsof_variants[k].key, fds,
						run->timing[k].entries);
	if (run->timed[L_FDMAP]) {
		r->new_ns = run->ns[L_FDMAP];
		r->ratio = r->base_ns / r->new_ns;
		r->new_iters = run->timing[L_FDMAP].iters;
		r->new_entries = check_lists[L_FDMAP].n;
		r->new_sys = run->sides[L_FDMAP].cost.syscalls;
		r->new_bytes = run->sides[L_FDMAP].cost.bytes;
	}
	lsof_json(r, run, nprocs);
	lsof_note(name, run);
	pop_kill(&p);
	remove_lsof_files(nprocs);
}
