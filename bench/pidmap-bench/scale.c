// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * pidmap-bench: tgid_scale_100k_threads: listing the thread-group ids with
 * one process holding 100k threads, against the same listing idle.
 */
#include "common.h"

#define MEM_FLOOR_KIB (160 * 1024)	/* stop adding threads below this */
#define SPAWN_BUDGET_S 240.0

/*
 * A fixed reference workload: 64 getppid() calls.  The tgid_scale case
 * cannot interleave idle and loaded (100k threads take minutes to create),
 * so it times this alongside both phases to see how much the machine's
 * speed drifted between them (other guests and builds share the host).
 */
static long ref_syscalls(void *unused)
{
	int i;

	(void)unused;
	for (i = 0; i < 64; i++)
		sink = syscall(SYS_getppid);
	return 0;
}

/* The JSON fields both tgid_scale results carry: the load and the drift. */
static void scale_extra(struct result *r, const struct thread_holder *h,
			struct side *ref_idle, struct side *ref_loaded, double drift)
{
	snprintf(r->extra, sizeof(r->extra),
		 ", \"threads\": %ld, \"threads_wanted\": %ld, \"spawn_s\": %.1f, "
		 "\"ref_idle_ns\": %.1f, \"ref_loaded_ns\": %.1f, \"ref_drift\": %.3f, "
		 "\"ratio_drift_corrected\": %.3f",
		 h->threads + 1, opt.threads, h->seconds,
		 median(ref_idle->samples, opt.rounds),
		 median(ref_loaded->samples, opt.rounds), drift, r->ratio / drift);
}

/*
 * tgid_scale: idle cost of listing thread-group ids, then the cost with one
 * process holding N idle threads.  baseline = idle, new = loaded,
 * ratio = loaded / idle (smaller is better).
 */
void case_tgid_scale(void)
{
	struct side idle_r = { .fn = walk_proc_root }, load_r = idle_r;
	struct side idle_p = { .fn = new_procs }, load_p = idle_p;
	struct side ref_i = { .fn = ref_syscalls }, ref_l = ref_i;
	struct side *idle[3] = { &idle_r, have_pidmap ? &idle_p : NULL, &ref_i };
	struct side *load[3] = { &load_r, have_pidmap ? &load_p : NULL, &ref_l };
	struct result *rr, *rp = NULL;
	double drift;
	struct cost ci = { 0 }, cl, pl;
	struct thread_holder holder;
	long procs, el = 0, ep = 0;
	bool agree;
	uint64_t t0;

	if (!want_case("tgid_scale_100k_threads"))
		return;
	note("tgid_scale_100k_threads: idle ...\n");
	run_sides(idle, 3);
	procs = pass_proc_root(&ci, &(struct idlist){ base_id_store, 0, IDLIST_CAP });

	make_room(opt.threads);
	note("tgid_scale_100k_threads: spawning %ld threads ...\n", opt.threads);
	if (thread_holder_start(&holder, opt.threads, MEM_FLOOR_KIB, SPAWN_BUDGET_S))
		die("thread holder: %m");
	note("  holder %d: %ld threads (+1) in %.1f s; MemAvailable %ld KiB\n",
	     holder.pid, holder.threads, holder.seconds, th_mem_available_kib());
	if (holder.threads < opt.threads)
		note("  note: stopped at %ld of %ld threads (memory, limits or time budget)\n",
		     holder.threads, opt.threads);

	note("tgid_scale_100k_threads: loaded ...\n");
	run_sides(load, 3);
	drift = median(ref_l.samples, opt.rounds) / median(ref_i.samples, opt.rounds);
	/* Loaded: the idle processes and the holder, in /proc and from pidmap. */
	agree = run_passes("tgid_scale", LIST_PROCS, pass_proc_root, &cl,
			   have_pidmap ? pass_new_procs : NULL, &pl, &el, &ep);
	agree &= check_count("tgid_scale", "loaded readdir", el, load_r.entries);
	agree &= check_count("tgid_scale", "idle readdir", procs, idle_r.entries);
	if (have_pidmap) {
		agree &= check_count("tgid_scale", "loaded pidmap", ep, load_p.entries);
		agree &= check_count("tgid_scale", "idle pidmap", procs, idle_p.entries);
	}
	if (!agree) {
		fprintf(stderr, "pidmap-bench: ERROR: tgid_scale: the listings disagree\n");
		failures++;
	}

	rr = add_result("tgid_scale_100k_threads_readdir", 1.2, true);
	rr->base_ns = median(idle_r.samples, opt.rounds);
	rr->new_ns = median(load_r.samples, opt.rounds);
	rr->ratio = rr->new_ns / rr->base_ns;
	rr->entries = load_r.entries;
	rr->agree = agree;
	rr->base_sys = ci.syscalls;
	rr->base_bytes = ci.bytes;
	rr->new_sys = cl.syscalls;
	rr->new_bytes = cl.bytes;
	rr->base_iters = idle_r.iters;
	rr->new_iters = load_r.iters;
	if (have_pidmap) {
		struct cost pi = { 0 };

		rp = add_result("tgid_scale_100k_threads_pidmap", 1.2, true);
		rp->base_ns = median(idle_p.samples, opt.rounds);
		rp->new_ns = median(load_p.samples, opt.rounds);
		rp->ratio = rp->new_ns / rp->base_ns;
		rp->entries = load_p.entries;
		rp->agree = agree;
		/* Idle cost per enumeration: the calls of loaded, by design. */
		pi.syscalls = pl.syscalls;
		pi.bytes = idle_p.entries * (long)sizeof(int);
		rp->base_sys = pi.syscalls;
		rp->base_bytes = pi.bytes;
		rp->new_sys = pl.syscalls;
		rp->new_bytes = pl.bytes;
		rp->base_iters = idle_p.iters;
		rp->new_iters = load_p.iters;
	}
	scale_extra(rr, &holder, &ref_i, &ref_l, drift);
	note("  reference workload: loaded/idle %.3f (host speed drift); "
	     "readdir %.3f -> %.3f drift-corrected\n", drift, rr->ratio,
	     rr->ratio / drift);
	if (rp) {
		scale_extra(rp, &holder, &ref_i, &ref_l, drift);
		note("  pidmap %.3f -> %.3f drift-corrected\n", rp->ratio,
		     rp->ratio / drift);
	}

	t0 = now_ns();
	if (thread_holder_stop(&holder))
		die("stopping the thread holder: %m");
	note("  holder reaped in %.1f s\n", (double)(now_ns() - t0) / 1e9);
}
