// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * pidmap-bench: the refresh's cross-check: every variant's records against
 * the walk's, field by field, with the slack a running system needs.
 */
#include "refresh.h"

int cmp_rec_tid(const void *a, const void *b)
{
	const struct task_rec *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static bool in_pop(const struct pop *p, int tgid)
{
	long i;

	for (i = 0; i < p->n; i++)
		if (p->pids[i] == tgid)
			return true;
	return false;
}

/*
 * Group sums of the baseline's per-thread cputime: the walk lists each
 * group's threads together, so sum every run of one tgid.
 */
void group_sums(struct refresh *rf)
{
	long i = 0, j, k;

	while (i < rf->n) {
		unsigned long long u = 0, s = 0;

		for (j = i; j < rf->n && rf->recs[j].tgid == rf->recs[i].tgid; j++) {
			u += rf->recs[j].utime;
			s += rf->recs[j].stime;
		}
		for (k = i; k < j; k++) {
			rf->recs[k].gutime = u;
			rf->recs[k].gstime = s;
			rf->recs[k].gthreads = j - i;
		}
		i = j;
	}
}

/*
 * Kernel threads only: stat and the records show a kernel thread's full
 * name where task->comm keeps its first 15 bytes (e.g.
 * "rcu_exp_gp_kthread_worker"), and a workqueue worker as "comm-desc" or
 * "comm+desc", the description changing as the worker moves between
 * queues between two reads.  So compare 15 bytes of a longer name, and a
 * kworker's name before its suffix.
 */
static bool comm_matches(const struct task_rec *a, const struct task_rec *b)
{
	const size_t comm_max = 15;	/* TASK_COMM_LEN - 1 */
	size_t la, lb;

	if (!strcmp(a->comm, b->comm))
		return true;
	if (a->ppid != 2 && a->tid != 2)
		return false;
	la = strlen(a->comm);
	lb = strlen(b->comm);
	if (((la == comm_max && lb > la) || (lb == comm_max && la > lb)) &&
	    !strncmp(a->comm, b->comm, comm_max))
		return true;
	if (strncmp(a->comm, "kworker/", 8) || strncmp(b->comm, "kworker/", 8))
		return false;
	la = strcspn(a->comm, "-+");
	lb = strcspn(b->comm, "-+");
	return la == lb && !strncmp(a->comm, b->comm, la);
}

#define MAX_REPORTED 12

static int check_report(const char *name, const char *variant, int *shown,
			const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int check_report(const char *name, const char *variant, int *shown,
			const char *fmt, ...)
{
	va_list ap;

	if ((*shown)++ >= MAX_REPORTED)
		return 1;
	fflush(stdout);
	fprintf(stderr, "  %s: %s: ", name, variant);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/* statm's 2nd field of task @tid: its exact resident set in pages; -1 if gone. */
static long statm_rss(int tid)
{
	char path[32], buf[256];
	long size, rss;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%d/statm", tid);
	fd = openat(proc_fd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return sscanf(buf, "%ld %ld", &size, &rss) == 2 ? rss : -1;
}

/*
 * Compare @b with the baseline @a (both sorted by tid).  Fields of the
 * workload (the case's sleeping tasks) must match exactly.  Elsewhere a
 * running task's state may change and its cputime grow: by at most the
 * @slack ticks that passed during the check (per thread for group sums);
 * the checking process's own rss and state are not compared.  Returns the
 * number of differences.
 */
long compare_refresh(const char *name, const struct refresh *a,
			    struct refresh *b, const struct pop *work,
			    unsigned long long slack)
{
	pid_t self = getpid();
	long i = 0, j = 0, bad = 0;
	int shown = 0;

	if (b->missing_fields)
		bad += check_report(name, b->name, &shown,
				    "%ld records lack a requested field", b->missing_fields);
	while (i < a->n || j < b->n) {
		const struct task_rec *x = i < a->n ? &a->recs[i] : NULL;
		const struct task_rec *y = j < b->n ? &b->recs[j] : NULL;
		unsigned long long xu, lim;
		bool exact, own;

		if (!y || (x && x->tid < y->tid)) {
			bad += check_report(name, b->name, &shown,
					    "tid %d (%s, tgid %d) only in the walk",
					    x->tid, x->comm, x->tgid);
			i++;
			continue;
		}
		if (!x || y->tid < x->tid) {
			bad += check_report(name, b->name, &shown,
					    "tid %d (%s) only in this variant",
					    y->tid, y->comm);
			j++;
			continue;
		}
		i++;
		j++;
		own = x->tgid == self;
		exact = in_pop(work, x->tgid);
		if (y->tgid != 0 && y->tgid != x->tgid)
			bad += check_report(name, b->name, &shown, "tid %d: tgid %d, walk %d",
					    x->tid, y->tgid, x->tgid);
		if (y->ppid != x->ppid)
			bad += check_report(name, b->name, &shown, "tid %d: ppid %d, walk %d",
					    x->tid, y->ppid, x->ppid);
		if (b->ids_only)
			continue;
		if (!comm_matches(x, y))
			bad += check_report(name, b->name, &shown, "tid %d: comm \"%s\", walk \"%s\"",
					    x->tid, y->comm, x->comm);
		if (y->start_time != x->start_time)
			bad += check_report(name, b->name, &shown,
					    "tid %d: start_time %llu, walk %llu",
					    x->tid, y->start_time, x->start_time);
		if (exact && (x->state != 'S' || y->state != 'S'))
			bad += check_report(name, b->name, &shown,
					    "tid %d: a sleeping workload task in state %c, walk %c",
					    x->tid, y->state, x->state);
		else if (!own && y->state != x->state && x->state != 'R' && y->state != 'R')
			bad += check_report(name, b->name, &shown, "tid %d (%s): state %c, walk %c",
					    x->tid, x->comm, y->state, x->state);
		/*
		 * The walk's rss is stat's approximate one; an exact rss is
		 * compared with statm, read now (a task gone since is skipped).
		 */
		if (!own && !b->exact_rss && y->rss != x->rss)
			bad += check_report(name, b->name, &shown, "tid %d (%s): rss %ld, walk %ld",
					    x->tid, x->comm, y->rss, x->rss);
		if (!own && b->exact_rss) {
			long m = statm_rss(x->tid);

			if (m >= 0 && y->rss != m)
				bad += check_report(name, b->name, &shown,
						    "tid %d (%s): rss %ld, statm %ld (walk's stat %ld)",
						    x->tid, x->comm, y->rss, m, x->rss);
		}
		if (own)
			continue;
		if (b->raw_cputime) {
			b->cputime_differs += y->utime != x->utime || y->stime != x->stime;
			continue;
		}
		if (b->group_cputime) {
			/*
			 * The group's utime + stime is the sum of its threads'
			 * (each adjusted total is its runtime), but the split
			 * between the two is scaled on the group's totals, and
			 * every value is truncated to ticks on its own: compare
			 * the totals, within 2 ticks per thread.
			 */
			xu = x->gutime + x->gstime;
			lim = (unsigned long long)x->gthreads * (exact ? 2 : slack + 2);
			if ((y->utime + y->stime > xu ? y->utime + y->stime - xu :
			     xu - y->utime - y->stime) > lim)
				bad += check_report(name, b->name, &shown,
						    "tid %d (%s): group utime+stime %llu, walk's sum over %ld threads %llu (allowed difference %llu)",
						    x->tid, x->comm, y->utime + y->stime,
						    x->gthreads, xu, lim);
			continue;
		}
		lim = exact ? 0 : slack;
		if ((y->utime > x->utime ? y->utime - x->utime : x->utime - y->utime) > lim ||
		    (y->stime > x->stime ? y->stime - x->stime : x->stime - y->stime) > lim)
			bad += check_report(name, b->name, &shown,
					    "tid %d (%s): utime/stime %llu/%llu, walk %llu/%llu (allowed difference %llu)",
					    x->tid, x->comm, y->utime, y->stime,
					    x->utime, x->stime, lim);
	}
	return bad;
}
