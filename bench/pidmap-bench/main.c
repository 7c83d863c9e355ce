// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * pidmap-bench: pidmap(2), pidmap_info(2) and fdmap(2) (kernel-patches/)
 * against the /proc walks they replace.
 *
 * Every case times a baseline (the /proc way, with opendir/readdir as
 * htop/ps do it) and the new way (a few pidmap/fdmap calls) in the same
 * process, interleaved round by round, and reports the median ns per full
 * enumeration of each side and their ratio.  A separate, untimed pass per
 * side counts the syscalls and the bytes copied to user space for one full
 * enumeration (for readdir: what glibc does, openat + fstat + getdents64
 * until 0 + close; bytes are getdents64's return values).
 *
 * Every call lists through the view of this process's /proc (struct
 * pidmap_req.procfs_fd, and fdmap_req's),
 * as the crate does, so each side sees what the walk sees; the refresh
 * cases also time the records in the default view.  An enumeration calls
 * until the call returns 0, as the man pages say, with the cursor of the
 * last id (pidmap's exclusive last_id, fdmap's inclusive first_fd).
 *
 * The program creates the task populations itself (fork()ed children that
 * start pthreads and block, or one process with many raw clone() threads)
 * and tears them down after each case.
 *
 * On a kernel without the calls (ENOSYS) it runs the /proc baselines
 * only, reports the new side as unavailable, and exits 0.  The refresh
 * cases (a top-style refresh: every task's stat fields) also report their
 * records as unavailable on a kernel with pidmap(2) but without
 * pidmap_info(2), and time the variants that kernel has; their per-task
 * PIDFD_GET_INFO variant (pidfd_open + ioctl + close per task, a lower
 * bound: it has no comm, state, CPU time, rss or start time) runs on any
 * kernel that has PIDFD_GET_INFO (6.13 on), so also on one without
 * pidmap, where its ids come from the /proc readdirs.
 *
 * Usage: pidmap-bench [--quick] [--json] [--rounds N] [--case NAME]...
 *                     [--threads N] [--procs N] [--info-chunk N]
 *                     [--min-sample-us N] [--list]
 * Environment: PIDMAP_BENCH_THREADS=N  threads of the tgid_scale case.
 *
 * Exit status: 0 ok (a missed target is not an error); 1 on an unexpected
 * error: a failed syscall (at once), or a listing that disagrees with /proc
 * (reported with the ids that differ; the other cases still run), or
 * refresh records that disagree between the variants; 2 usage.
 *
 * Build: cd bench/pidmap-bench && gcc -static -O2 -Wall -Wextra -pthread \
 *	-o pidmap-bench *.c
 */
#include "common.h"
#include "refresh.h"

/* ---------------------------------------------------------------------- */

/*
 * pidmap(2) and fdmap(2) with nr 0: 0 on a kernel with the series, ENOSYS
 * without.  Anything else is a broken kernel or sandbox: stop.
 */
static void probe(void)
{
	struct pidmap_req req = pidmap_req(PIDMAP_SCOPE_PROCS, 0, true);
	long r = sys_pidmap(&req, NULL, 0, 0);

	if (r == 0)
		have_pidmap = true;
	else if (errno != ENOSYS)
		die("pidmap probe: expected 0 or ENOSYS, got %ld (%m)", r);
	r = fdmap_list(PIDFD_SELF_THREAD_GROUP, proc_fd, 0, NULL, 0);
	if (r == 0)
		have_fdmap = true;
	else if (errno != ENOSYS)
		die("fdmap probe: expected 0 or ENOSYS, got %ld (%m)", r);
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: pidmap-bench [--quick] [--json] [--rounds N] [--case NAME]...\n"
		"                    [--threads N] [--procs N] [--info-chunk N]\n"
		"                    [--min-sample-us N] [--list]\n"
		"  --quick         short smoke run: 3 rounds, 1000 processes, 10000 threads\n"
		"  --json          print the results as JSON between " JSON_BEGIN " and " JSON_END "\n"
		"  --case NAME     run only cases whose name starts with NAME (repeatable)\n"
		"  --threads N     threads of tgid_scale_100k_threads (default 100000;\n"
		"                  also PIDMAP_BENCH_THREADS)\n"
		"  --procs N       processes of procs_only_10k, tasks of tasks_all_10k\n"
		"                  (N/10 processes x 10 threads), tasks_all_100x100 and\n"
		"                  refresh_10k (N/100 processes x 100 threads; default 10000);\n"
		"                  lsof_1000x16 spawns N/10 processes of 16 fds each\n"
		"  --info-chunk N  records per pidmap_info(2) call (default 512, the crate's;\n"
		"                  at most %d)\n"
		"The refresh cases (refresh_250, refresh_10k) time a top-style refresh\n"
		"of every task: the /proc walk (readdir, then each task's stat), the walk\n"
		"reading stat and status (the exact rss), pidmap ids + /proc/TID/stat,\n"
		"pidmap grouped (PROCS, then per process pidfd_open + THREADS + close)\n"
		"+ task stat, the pidmap_info(2) records in our /proc's view and in the\n"
		"default view, the records' calls alone, and pidfd_info: the ids from\n"
		"pidmap (without pidmap: the walk's readdirs), then per task\n"
		"pidfd_open(tid, PIDFD_THREAD), PIDFD_GET_INFO, close.  PIDFD_GET_INFO\n"
		"has pid, tgid, ppid, creds and the cgroup id but no comm, state, CPU\n"
		"time, rss or start time, so that route still needs /proc for those: its\n"
		"figure is a lower bound of the per-task cost.  An untimed pass of every\n"
		"variant must give the walk's tids (and the fields each one has).\n"
		"lsof_1000x16 lists every fd of every process with its target, as lsof\n"
		"does: readdir /proc and each /proc/PID/fd, readlink of each\n"
		"/proc/PID/fd/N, against pidmap + per process pidfd_open + fdmap +\n"
		"the same readlinks + close; and both without the readlinks.  Both\n"
		"must give the same (pid, fd, target).\n",
		INFO_CHUNK_MAX);
	exit(status);
}

static long parse_num(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0)
		usage(2);
	return v;
}

int main(int argc, char **argv)
{
	static const char *cases[] = {
		"fds_4", "fds_1000", "tasks_all_250", "tasks_grouped_250",
		"procs_only_10k", "tasks_all_10k", "tasks_all_100x100",
		"refresh_250", "refresh_10k", "lsof_1000x16",
#ifdef PIDMAP_BENCH_BPF
		"refresh_10k_1000x10",
#endif
		"tgid_scale_100k_threads",
	};
	long threads = -1, procs = -1, min_us = -1;
	const char *env;
	struct rlimit rl;
	struct utsname u;
	int i;

	opt.rounds = -1;
	opt.info_chunk = 512;	/* the crate's */
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--quick")) {
			opt.quick = true;
		} else if (!strcmp(a, "--json")) {
			opt.json = true;
		} else if (!strcmp(a, "--list")) {
			for (size_t k = 0; k < ARRAY_SIZE(cases); k++)
				puts(cases[k]);
			return 0;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(0);
		} else if (i + 1 < argc && !strcmp(a, "--rounds")) {
			opt.rounds = (int)parse_num(argv[++i]);
		} else if (i + 1 < argc && !strcmp(a, "--threads")) {
			threads = parse_num(argv[++i]);
		} else if (i + 1 < argc && !strcmp(a, "--procs")) {
			procs = parse_num(argv[++i]);
		} else if (i + 1 < argc && !strcmp(a, "--info-chunk")) {
			opt.info_chunk = parse_num(argv[++i]);
			if (opt.info_chunk < 1 || opt.info_chunk > INFO_CHUNK_MAX)
				usage(2);
		} else if (i + 1 < argc && !strcmp(a, "--min-sample-us")) {
			min_us = parse_num(argv[++i]);
		} else if (i + 1 < argc && !strcmp(a, "--case")) {
			if (opt.nonly == ARRAY_SIZE(opt.only))
				usage(2);
			opt.only[opt.nonly++] = argv[++i];
		} else {
			usage(2);
		}
	}
	env = getenv("PIDMAP_BENCH_THREADS");
	if (threads < 0 && env && *env)
		threads = parse_num(env);
	if (opt.rounds < 0)
		opt.rounds = opt.quick ? 3 : 9;
	if (opt.rounds < 1 || opt.rounds > 63)
		usage(2);
	opt.threads = threads >= 0 ? threads : opt.quick ? 10000 : 100000;
	opt.procs = procs >= 0 ? procs : opt.quick ? 1000 : 10000;
	if (opt.procs < 10)
		opt.procs = 10;
	opt.min_sample_ns = (min_us >= 0 ? min_us : opt.quick ? 1000 : 2000) * 1000;

	/* Children and threads beyond the defaults: as root these succeed. */
	rl.rlim_cur = rl.rlim_max = RLIM_INFINITY;
	if (setrlimit(RLIMIT_NPROC, &rl) && getrlimit(RLIMIT_NPROC, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NPROC, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 4096) {
		rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	atexit(restore_sysctls);

	/* The view of every call must be open for reading (O_PATH is EBADF). */
	proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (proc_fd < 0)
		die("open /proc: %m");
	probe();
	probe_info();
	probe_pidfd_info();
#ifdef PIDMAP_BENCH_BPF
	probe_bpf();
	note("pidmap-bench: BPF %s; load+verify %.1f ms, attach %.3f ms\n", bpf_state,
	     bpf.load_ns / 1e6, bpf.attach_ns / 1e6);
#endif
	ns_per_tick = 1000000000ull / (unsigned long long)sysconf(_SC_CLK_TCK);
	page_kib = sysconf(_SC_PAGESIZE) / 1024;
	if (uname(&u))
		die("uname: %m");
	note("pidmap-bench: kernel %s, pidmap %s, pidmap_info %s, fdmap %s, PIDFD_GET_INFO %s, %d rounds, min sample %ld us, %ld records a call%s\n",
	     u.release, have_pidmap ? "present" : "absent (ENOSYS)",
	     have_info ? "present" : "absent (ENOSYS)",
	     have_fdmap ? "present" : "absent (ENOSYS)",
	     have_pidfd_info ? "present" : "absent", opt.rounds,
	     opt.min_sample_ns / 1000, opt.info_chunk, opt.quick ? ", quick" : "");

	case_fds("fds_4", 4, 30);
	case_fds("fds_1000", 1000, 20);
	case_250();
	case_procs_only();
	case_tasks_many("tasks_all_10k", 10, 20);
	case_tasks_many("tasks_all_100x100", 100, 20);
	case_refresh();
	case_lsof();
	case_tgid_scale();

	print_table();
	if (opt.json)
		print_json();
	if (failures)
		fprintf(stderr, "pidmap-bench: %d listing(s) disagreed with /proc\n",
			failures);
	return failures ? 1 : 0;
}
