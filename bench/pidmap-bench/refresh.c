// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * pidmap-bench: the refresh cases (refresh_250, refresh_10k and, built
 * with PIDMAP_BENCH_BPF, refresh_10k_1000x10): their variants, timed in
 * interleaved rounds, cross-checked, and their results.
 */
#include "refresh.h"

/* ---- The variants, their cross-check and their results ---- */

enum {
	V_WALK, V_WALK_STATUS, V_PIDMAP, V_GROUPED, V_RECORDS, V_RECORDS_DEFAULT,
	V_RECORDS_CALL, V_PIDFD,
#ifdef PIDMAP_BENCH_BPF
	V_BPF_ITER, V_BPF_SYSCALL,
#endif
	NVARIANTS
};

struct variant {
	const char *name;	/* in messages */
	const char *key;	/* JSON: <key>_ns, <key>_ratio (the walk's ns / this) */
	enum_fn timed;
	enum_fn check;		/* its cross-check pass; NULL: timed */
	bool group_cputime, ids_only, exact_rss;	/* of its records */
	bool raw_cputime;
};

static const struct variant variants[NVARIANTS] = {
	[V_WALK] = { "walk", "baseline", refresh_walk, NULL, false, false, false },
	[V_WALK_STATUS] = { "walk_status", "walk_status", refresh_walk_status, NULL,
			    false, false, true },
	[V_PIDMAP] = { "pidmap", "pidmap", refresh_pidmap, NULL, true, false, false },
	[V_GROUPED] = { "pidmap_grouped", "pidmap_grouped", refresh_pidmap_grouped, NULL,
			false, false, false },
	[V_RECORDS] = { "records", "new", refresh_bulk, NULL, false, false, true },
	[V_RECORDS_DEFAULT] = { "records_default", "bulk_default", refresh_bulk_default,
				NULL, false, false, true },
	[V_RECORDS_CALL] = { "records_call", "bulk_call", refresh_bulk_call, refresh_bulk,
			     false, true, false },
	[V_PIDFD] = { "pidfd_info", "pidfd_info", refresh_pidfd_info, NULL,
		      false, true, false },
#ifdef PIDMAP_BENCH_BPF
	[V_BPF_ITER] = { "bpf_iter", "bpf_iter", refresh_bpf_iter, NULL,
			 false, false, false, true },
	[V_BPF_SYSCALL] = { "bpf_syscall", "bpf_syscall", refresh_bpf_syscall, NULL,
			    false, false, false, true },
#endif
};

static bool variant_available(int k)
{
	switch (k) {
	case V_PIDMAP:
	case V_GROUPED:
		return have_pidmap;
	case V_RECORDS:
	case V_RECORDS_DEFAULT:
	case V_RECORDS_CALL:
		return have_info;
	case V_PIDFD:
		return have_pidfd_info;
#ifdef PIDMAP_BENCH_BPF
	case V_BPF_ITER:
		return have_bpf_iter;
	case V_BPF_SYSCALL:
		return have_bpf_syscall;
#endif
	default:
		return true;
	}
}

static struct task_rec recs[NVARIANTS][REC_CAP];

/* One refresh case's state: each variant's records and samples. */
struct refresh_run {
	struct refresh rf[NVARIANTS];
	struct side side[NVARIANTS];
	struct side *timed[NVARIANTS];	/* NULL: not available */
	double ns[NVARIANTS];		/* medians; < 0: not available */
};

static void refresh_run_init(struct refresh_run *run)
{
	int k;

	memset(run, 0, sizeof(*run));
	for (k = 0; k < NVARIANTS; k++) {
		const struct variant *v = &variants[k];

		run->rf[k] = (struct refresh){
			.name = v->name, .recs = recs[k], .group_cputime = v->group_cputime,
			.ids_only = v->ids_only, .exact_rss = v->exact_rss,
			.raw_cputime = v->raw_cputime,
		};
		run->side[k] = (struct side){ .fn = v->timed, .arg = &run->rf[k] };
		run->timed[k] = variant_available(k) ? &run->side[k] : NULL;
		run->ns[k] = -1;
	}
}

/*
 * One untimed pass of every variant, back to back, then compare each with
 * the walk: the same tids, and the fields each variant has.  Tasks outside
 * the workload may come and go (kernel workers): the pass is repeated up
 * to 3 times; the case fails unless one is clean.
 */
static bool refresh_check(const char *name, struct refresh_run *run, const struct pop *work)
{
	int attempt, k;

	for (attempt = 1; attempt <= 3; attempt++) {
		uint64_t t0 = now_ns();
		unsigned long long slack;
		long bad = 0;

		for (k = 0; k < NVARIANTS; k++)
			if (run->timed[k])
				(variants[k].check ? variants[k].check : variants[k].timed)(&run->rf[k]);
		slack = (now_ns() - t0) / ns_per_tick + 2;
		group_sums(&run->rf[V_WALK]);
		for (k = 0; k < NVARIANTS; k++)
			if (run->timed[k])
				qsort(run->rf[k].recs, run->rf[k].n, sizeof(struct task_rec),
				      cmp_rec_tid);
		for (k = V_WALK + 1; k < NVARIANTS; k++)
			run->rf[k].cputime_differs = 0;
		for (k = V_WALK + 1; k < NVARIANTS; k++)
			if (run->timed[k])
				bad += compare_refresh(name, &run->rf[V_WALK], &run->rf[k],
						       work, slack);
		if (!bad) {
			note("  %s: cross-check: %ld records agree field by field in every variant (attempt %d, cputime slack %llu ticks)\n",
			     name, run->rf[V_WALK].n, attempt, slack);
			return true;
		}
		fflush(stdout);
		fprintf(stderr, "pidmap-bench: %s: cross-check attempt %d: %ld difference(s)\n",
			name, attempt, bad);
	}
	fprintf(stderr, "pidmap-bench: ERROR: %s: the variants' records disagree\n", name);
	failures++;
	return false;
}

/*
 * The syscalls of one refresh by variant @k: its calls, three per file
 * read (or per task asked), and for the variants that list by readdir
 * the walk's listing, @walk_listing.
 */
static long variant_syscalls(const struct refresh_run *run, int k, long walk_listing)
{
	const struct refresh *rf = &run->rf[k];
	bool by_readdir = k == V_WALK || k == V_WALK_STATUS || (k == V_PIDFD && !have_pidmap);

	return rf->calls + (by_readdir ? walk_listing : 0) + 3 * rf->stat_reads;
}

/*
 * The JSON members of the variants besides the walk and the records
 * (theirs are the result's baseline and new): "<key>_ns", "<key>_ratio"
 * (the walk's ns / this), "<key>_syscalls", null when not available.
 */
static void variants_json(char *buf, size_t size, const struct refresh_run *run,
			  long walk_listing)
{
	int k;

	for (k = V_WALK + 1; k < NVARIANTS; k++) {
		const char *key = variants[k].key;

		if (k == V_RECORDS)
			continue;
		if (run->ns[k] < 0) {
			append(buf, size, ", \"%s_ns\": null, \"%s_ratio\": null", key, key);
			continue;
		}
		append(buf, size, ", \"%s_ns\": %.1f, \"%s_ratio\": %.3f, \"%s_syscalls\": %ld",
		       key, run->ns[k], key, run->ns[V_WALK] / run->ns[k], key,
		       variant_syscalls(run, k, walk_listing));
	}
	if (run->ns[V_RECORDS] >= 0 && run->ns[V_WALK_STATUS] >= 0)
		append(buf, size, ", \"new_vs_walk_status_ratio\": %.3f",
		       run->ns[V_WALK_STATUS] / run->ns[V_RECORDS]);
}

/* The per-task route's extra members: where its ids came from, or why it is absent. */
static void pidfd_json(char *buf, size_t size, const struct refresh_run *run,
		       long walk_listing)
{
	const struct refresh *rf = &run->rf[V_PIDFD];

	if (run->ns[V_PIDFD] >= 0)
		append(buf, size,
		       ", \"pidfd_info_ids\": \"%s\", \"pidfd_info_gone\": %ld, "
		       "\"pidfd_info_cgroupid\": %s",
		       have_pidmap ? "pidmap" : "proc", pidfd_gone,
		       pidfd_cgroupid == rf->n ? "true" : "false");
	else
		append(buf, size, ", \"pidfd_info_state\": \"absent: %s\"",
		       pidfd_info_errno == ENOSYS ? "no pidfd_open (ENOSYS)" :
		       pidfd_info_errno == EINVAL ? "no PIDFD_THREAD (EINVAL)" :
		       pidfd_info_errno == ENOTTY ? "no PIDFD_GET_INFO (ENOTTY)" :
		       "PIDFD_GET_INFO refused (EINVAL)");
	(void)walk_listing;
}

/* refresh_250's medians and task count, for the cost per record above it. */
static double small_ns[NVARIANTS];
static long small_n;

/*
 * "<key>_ns_per_record": (this case's ns - refresh_250's) / the tasks in
 * between, so a refresh's fixed cost drops out.
 */
static void per_record_json(char *buf, size_t size, const struct refresh_run *run, long n)
{
	int k;

	if (!small_n || n <= small_n)
		return;
	for (k = 0; k < NVARIANTS; k++)
		if (run->ns[k] >= 0 && small_ns[k] >= 0)
			append(buf, size, ", \"%s_ns_per_record\": %.2f", variants[k].key,
			       (run->ns[k] - small_ns[k]) / (double)(n - small_n));
}

static const char *records_state(void)
{
	if (!have_pidmap)
		return "absent: no pidmap (ENOSYS)";
	if (!have_info)
		return "absent: no pidmap_info (ENOSYS)";
	return "present";
}

/* One line per variant: its median and its ratio to the walk. */
static void refresh_note(const char *name, const struct refresh_run *run)
{
	int k;

	note("%s: %ld tasks:", name, run->rf[V_WALK].n);
	for (k = 0; k < NVARIANTS; k++) {
		if (run->ns[k] < 0)
			note(" %s n/a;", variants[k].name);
		else
			note(" %s %.0f ns (%.2fx);", variants[k].name, run->ns[k],
			     run->ns[V_WALK] / run->ns[k]);
	}
	note("\n");
	if (run->ns[V_PIDFD] >= 0)
		note("  %s: pidfd_info: pid, tgid, ppid, creds, cgroup id only (a lower bound), ids from %s, %ld task(s) gone meanwhile in the check pass\n",
		     name, have_pidmap ? "pidmap" : "the /proc readdirs", pidfd_gone);
}

#ifdef PIDMAP_BENCH_BPF
/* The BPF members of a refresh result. */
static void bpf_json(char *buf, size_t size, const struct refresh_run *run)
{
	append(buf, size, ", \"bpf\": \"%s\"", bpf_state);
	if (!have_bpf_iter)
		return;
	append(buf, size,
	       ", \"bpf_open_ns\": %.1f, \"bpf_load_ns\": %.1f, \"bpf_attach_ns\": %.1f"
	       ", \"bpf_iter_cputime_differs\": %ld",
	       bpf.open_ns, bpf.load_ns, bpf.attach_ns, run->rf[V_BPF_ITER].cputime_differs);
	if (have_bpf_syscall)
		append(buf, size, ", \"bpf_syscall_cputime_differs\": %ld",
		       run->rf[V_BPF_SYSCALL].cputime_differs);
}
#endif

static struct refresh_run refresh_runs;

static void refresh_case(const char *name, double target, const struct pop *work,
			 bool small)
{
	struct refresh_run *run = &refresh_runs;
	struct result *r = add_result(name, target, false);
	struct cost cw = { 0 };
	int k;

	refresh_run_init(run);
	note("%s: timing", name);
	for (k = 0; k < NVARIANTS; k++)
		if (run->timed[k])
			note(" %s", variants[k].name);
	note(" ...\n");
	run_sides(run->timed, NVARIANTS);
	for (k = 0; k < NVARIANTS; k++)
		if (run->timed[k])
			run->ns[k] = median(run->side[k].samples, opt.rounds);
	r->agree = refresh_check(name, run, work);
	r->base_ns = run->ns[V_WALK];
	r->base_iters = run->side[V_WALK].iters;
	r->entries = run->rf[V_WALK].n;
	pass_proc_tasks(&cw, &(struct idlist){ base_id_store, 0, IDLIST_CAP });
	r->base_sys = variant_syscalls(run, V_WALK, cw.syscalls);
	r->base_bytes = cw.bytes + run->rf[V_WALK].stat_bytes;
	if (run->timed[V_RECORDS]) {
		r->new_ns = run->ns[V_RECORDS];
		r->ratio = r->base_ns / r->new_ns;
		r->new_iters = run->side[V_RECORDS].iters;
		r->new_entries = run->rf[V_RECORDS].n;
		r->new_sys = run->rf[V_RECORDS].calls;
		r->new_bytes = run->rf[V_RECORDS].n * (long)sizeof(struct pidmap_info);
	}
	variants_json(r->extra, sizeof(r->extra), run, cw.syscalls);
	pidfd_json(r->extra, sizeof(r->extra), run, cw.syscalls);
	append(r->extra, sizeof(r->extra),
	       ", \"bulk\": \"%s\", \"info_chunk\": %ld, \"processes\": %ld, \"stat_reads\": %ld",
	       records_state(), opt.info_chunk, walk_proc_root(NULL),
	       run->rf[V_WALK].stat_reads);
#ifdef PIDMAP_BENCH_BPF
	bpf_json(r->extra, sizeof(r->extra), run);
#endif
	if (small) {
		small_n = run->rf[V_WALK].n;
		memcpy(small_ns, run->ns, sizeof(small_ns));
	} else {
		per_record_json(r->extra, sizeof(r->extra), run, run->rf[V_WALK].n);
	}
	refresh_note(name, run);
}

void case_refresh(void)
{
	struct pop p = { 0 };

	if (want_case("refresh_250")) {
		spawn_about(&p, 250, 130);
		refresh_case("refresh_250", 20, &p, true);
		pop_kill(&p);
	}
	if (want_case("refresh_10k")) {
		long nprocs = opt.procs / 100;

		make_room(opt.procs);
		spawn_procs(&p, nprocs, 100);
		note("  system: %ld processes, %ld tasks\n", walk_proc_root(NULL),
		     walk_proc_tasks(NULL));
		refresh_case("refresh_10k", 20, &p, false);
		pop_kill(&p);
	}
#ifdef PIDMAP_BENCH_BPF
	/* The BPF comparison's third shape: 1,000 processes of 10 threads. */
	if (want_case("refresh_10k_1000x10")) {
		long nprocs = opt.procs / 10;

		make_room(opt.procs);
		spawn_procs(&p, nprocs, 10);
		note("  system: %ld processes, %ld tasks\n", walk_proc_root(NULL),
		     walk_proc_tasks(NULL));
		refresh_case("refresh_10k_1000x10", 20, &p, false);
		pop_kill(&p);
	}
#endif
}
