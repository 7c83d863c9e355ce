// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * pidmap-bench: the results, their table and JSON, and the untimed passes
 * that check a listing case's two sides against each other.
 */
#include "common.h"

static struct result results[16];
static int nresults;

struct result *add_result(const char *name, double target, bool lower)
{
	struct result *r;

	if (nresults == ARRAY_SIZE(results))
		die("too many results");
	r = &results[nresults++];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->target = target;
	r->lower_better = lower;
	r->new_ns = r->ratio = -1;
	r->agree = true;
	return r;
}

static bool met(const struct result *r)
{
	if (r->ratio < 0)
		return false;
	return r->lower_better ? r->ratio <= r->target : r->ratio >= r->target;
}

void print_table(void)
{
	int i;

	note("\n%-32s %14s %14s %9s %8s %5s %8s %9s %9s %10s %10s\n",
	     "case", "baseline_ns", "new_ns", "ratio", "target", "met",
	     "entries", "sys_base", "sys_new", "bytes_base", "bytes_new");
	for (i = 0; i < nresults; i++) {
		const struct result *r = &results[i];
		char nw[32] = "n/a", ra[32] = "n/a", sn[32] = "n/a", bn[32] = "n/a";
		char tg[32] = "-";

		if (r->new_ns >= 0) {
			snprintf(nw, sizeof(nw), "%.0f", r->new_ns);
			snprintf(ra, sizeof(ra), "%.2f", r->ratio);
			snprintf(sn, sizeof(sn), "%ld", r->new_sys);
			snprintf(bn, sizeof(bn), "%ld", r->new_bytes);
		}
		if (r->target >= 0)
			snprintf(tg, sizeof(tg), "%s%g", r->lower_better ? "<=" : ">=", r->target);
		note("%-32s %14.0f %14s %9s %8s %5s %8ld %9ld %9s %10ld %10s\n",
		     r->name, r->base_ns, nw, ra, tg,
		     r->ratio < 0 || r->target < 0 ? "n/a" : met(r) ? "yes" : "NO",
		     r->entries, r->base_sys, sn, r->base_bytes, bn);
	}
}

void print_json(void)
{
	int i;

	printf("%s\n{\n", JSON_BEGIN);
	for (i = 0; i < nresults; i++) {
		const struct result *r = &results[i];

		printf("  \"%s\": {\"baseline_ns\": %.1f, ", r->name, r->base_ns);
		if (r->new_ns >= 0)
			printf("\"new_ns\": %.1f, \"ratio\": %.3f, ", r->new_ns, r->ratio);
		else
			printf("\"new_ns\": null, \"ratio\": null, ");
		if (r->target < 0)	/* no target: reported, not judged */
			printf("\"target\": null, \"better\": \"%s\", \"met\": null, ",
			       r->lower_better ? "lower" : "higher");
		else
			printf("\"target\": %g, \"better\": \"%s\", \"met\": %s, ",
			       r->target, r->lower_better ? "lower" : "higher",
			       r->ratio < 0 ? "null" : met(r) ? "true" : "false");
		printf("\"entries\": %ld, \"baseline_syscalls\": %ld, \"baseline_bytes\": %ld, ",
		       r->entries, r->base_sys, r->base_bytes);
		if (r->new_ns >= 0)
			printf("\"syscalls\": %ld, \"bytes\": %ld, ", r->new_sys, r->new_bytes);
		else
			printf("\"syscalls\": null, \"bytes\": null, ");
		if (!r->agree)
			printf("\"agree\": false, \"new_entries\": %ld, ", r->new_entries);
		printf("\"baseline_iters\": %ld, \"new_iters\": %ld, \"rounds\": %d%s}%s\n",
		       r->base_iters, r->new_iters, opt.rounds, r->extra,
		       i + 1 < nresults ? "," : "");
	}
	printf("}\n%s\n", JSON_END);
	fflush(stdout);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/*
 * Whether the /proc side's ids @p and the new side's @q are the same set;
 * if not, report up to 16 ids that only one side has (for a task, its
 * Tgid).  Sorts both.
 */
static bool same_ids(const char *name, enum listing what, struct idlist *p,
		     struct idlist *q)
{
	long i = 0, j = 0, diff = 0;

	qsort(p->v, p->n, sizeof(*p->v), cmp_int);
	qsort(q->v, q->n, sizeof(*q->v), cmp_int);
	while (i < p->n || j < q->n) {
		bool only_p = j >= q->n || (i < p->n && p->v[i] < q->v[j]);
		bool only_q = !only_p && (i >= p->n || q->v[j] < p->v[i]);
		int id = only_p ? p->v[i] : q->v[j];

		if (!only_p && !only_q) {
			i++;
			j++;
			continue;
		}
		if (diff++ < 16) {
			fflush(stdout);
			fprintf(stderr, "  %s: %d only %s", name, id,
				only_p ? "in /proc" : "from the call");
			if (what != LIST_FDS)
				fprintf(stderr, " (Tgid %d)", proc_tgid_of(id));
			fputc('\n', stderr);
		}
		i += only_p;
		j += only_q;
	}
	if (diff) {
		fflush(stdout);
		fprintf(stderr, "pidmap-bench: %s: /proc listed %ld ids, the call %ld; %ld differ\n",
			name, p->n, q->n, diff);
	}
	return !diff;
}

int failures;

/*
 * A timed enumeration must have listed about as many ids as the untimed
 * pass, else the benchmark timed different work.  Background tasks may
 * come and go (kernel workers) between the two, hence a small slack.
 */
bool check_count(const char *name, const char *side, long pass, long timed)
{
	long slack = 4 + pass / 100;

	if (labs(pass - timed) <= slack)
		return true;
	fflush(stdout);
	fprintf(stderr,
		"pidmap-bench: %s: the untimed pass saw %ld ids, the timed %s %ld (slack %ld)\n",
		name, pass, side, timed, slack);
	return false;
}

int base_id_store[IDLIST_CAP];
static int new_id_store[IDLIST_CAP];

/*
 * The untimed pass of each side, back to back, into @cb/@cn: the same ids,
 * or up to 3 attempts (kernel workers come and go).  @new_pass NULL: the
 * /proc side alone.  Returns whether an attempt agreed.
 */
bool run_passes(const char *name, enum listing what, pass_fn base_pass,
		       struct cost *cb, pass_fn new_pass, struct cost *cn,
		       long *eb, long *en)
{
	struct idlist bl = { base_id_store, 0, IDLIST_CAP };
	struct idlist nl = { new_id_store, 0, IDLIST_CAP };
	int attempt;

	for (attempt = 1; attempt <= 3; attempt++) {
		memset(cb, 0, sizeof(*cb));
		memset(cn, 0, sizeof(*cn));
		bl.n = nl.n = 0;
		*eb = base_pass(cb, &bl);
		if (!new_pass)
			return true;
		*en = new_pass(cn, &nl);
		if (same_ids(name, what, &bl, &nl)) {
			note("  %s: cross-check: /proc and the call list the same %ld ids (attempt %d)\n",
			     name, *eb, attempt);
			return true;
		}
	}
	return false;
}

/*
 * Time one case: @base vs @new (NULL when the call is missing), then the
 * untimed passes, which must list the same ids; a disagreement is
 * reported, the run goes on, and the exit status is 1.
 */
struct result *bench_case(const char *name, double target, enum listing what,
				 enum_fn base, pass_fn base_pass, enum_fn new, pass_fn new_pass)
{
	struct side sb = { .fn = base }, sn = { .fn = new };
	struct cost cb, cn;
	struct result *r = add_result(name, target, false);
	long eb = 0, en = 0;

	note("%s: timing ...\n", name);
	run_pair(&sb, new ? &sn : NULL, &r->base_ns, &r->new_ns);
	r->base_iters = sb.iters;
	r->agree = run_passes(name, what, base_pass, &cb, new ? new_pass : NULL, &cn, &eb, &en);
	r->agree &= check_count(name, "/proc walk", eb, sb.entries);
	r->entries = eb;
	r->base_sys = cb.syscalls;
	r->base_bytes = cb.bytes;
	if (new) {
		r->agree &= check_count(name, "call", eb, sn.entries);
		r->new_entries = en;
		r->new_iters = sn.iters;
		r->new_sys = cn.syscalls;
		r->new_bytes = cn.bytes;
		r->ratio = r->base_ns / r->new_ns;
	}
	if (!r->agree) {
		fprintf(stderr, "pidmap-bench: ERROR: %s: the listings disagree\n", name);
		failures++;
	}
	note("%s: baseline %.0f ns, new %s, %ld entries\n", name, r->base_ns,
	     new ? "measured" : "n/a (no syscall)", r->entries);
	return r;
}
