// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * bpf-tasks: the BPF side of the "why not a BPF iterator" comparison:
 * loads task_record.bpf.c and checks what it gives against
 * /proc, the reference ps(1) reads.
 *
 *   bpf-tasks check [--syscall]
 *       Spawns processes and threads with known names, nice values and
 *       credentials, reads every task through the iter/task program (and
 *       the BPF_PROG_TYPE_SYSCALL one with --syscall) and checks that it
 *       lists each spawned task with the values of its
 *       /proc/PID/task/TID/stat and status for every field BPF can give
 *       exactly. Exit 0 only if all match. Needs bpf() permitted (root).
 *   bpf-tasks fidelity [--json] [--spawn PROCS THREADS]
 *       Every task (after spawning PROCS sleeping processes of THREADS
 *       tasks each, when asked): each record source (iter/task, the SYSCALL program
 *       where it loads, pidmap_info(2) where the kernel has it) against
 *       /proc, field by field: how many tasks differ per field, and the tid
 *       sets. Reports; fails only if a source cannot be read.
 *   bpf-tasks privilege
 *       Runs callers with other credentials (uid 65534; CAP_BPF alone;
 *       CAP_BPF + CAP_PERFMON; root of a new user namespace; CAP_BPF +
 *       CAP_PERFMON under a hidepid=invisible /proc) and asserts what each
 *       gets from iter/task and, where the kernel has it, pidmap_info(2).
 *   bpf-tasks dump
 *       Prints the iterator's records, one task a line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <grp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/capability.h>

#include "../../guest-tests/include/pidmap_syscalls.h"
#include "task_bpf.h"
#include "proc_task.h"

/*
 * The records are pidmap_info(2)'s, byte for byte: a struct task_record is
 * a struct pidmap_info here, and the BPF side's is the same header's
 * (task_record.h).
 */

#define MAX_TASKS 65536

static struct task_record bpf_recs[MAX_TASKS];
static long page_kib;

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("bpf-tasks: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* ---- The fields, by name, for the comparisons ---- */

enum field {
	F_TGID, F_PPID, F_RUID, F_EUID, F_NICE, F_PRIORITY, F_POLICY, F_NUM_THREADS,
	F_TASK_FLAGS, F_UTIME, F_STIME, F_START_TIME, F_RSS, F_STATE, F_COMM, F_PIDFS_ID,
	F_MIN_FLT, F_MAJ_FLT, F_NVCSW, F_NIVCSW,
	NR_FIELDS
};

static const char *const field_names[NR_FIELDS] = {
	"tgid", "ppid", "ruid", "euid", "nice", "priority", "policy", "num_threads",
	"task_flags", "utime", "stime", "start_time", "rss", "state", "comm", "pidfs_id",
	"min_flt", "maj_flt", "nvcsw", "nivcsw",
};

/* Times compare in stat's clock ticks, as /proc shows them. */
static unsigned long long ticks(__u64 ns)
{
	return ns / NSEC_PER_USER_TICK;
}

static bool field_differs(enum field f, const struct task_record *a, const struct task_record *b)
{
	switch (f) {
	case F_TGID: return a->tgid != b->tgid;
	case F_PPID: return a->ppid != b->ppid;
	case F_RUID: return a->ruid != b->ruid;
	case F_EUID: return a->euid != b->euid;
	case F_NICE: return a->nice != b->nice;
	case F_PRIORITY: return a->priority != b->priority;
	case F_POLICY: return a->policy != b->policy;
	case F_NUM_THREADS: return a->num_threads != b->num_threads;
	case F_TASK_FLAGS: return a->task_flags != b->task_flags;
	case F_UTIME: return ticks(a->utime_ns) != ticks(b->utime_ns);
	case F_STIME: return ticks(a->stime_ns) != ticks(b->stime_ns);
	case F_START_TIME: return ticks(a->start_time_ns) != ticks(b->start_time_ns);
	case F_RSS: return a->rss_bytes != b->rss_bytes;
	case F_STATE: return a->state != b->state;
	case F_COMM: return strncmp(a->comm, b->comm, sizeof(a->comm)) != 0;
	case F_PIDFS_ID: return a->pidfs_id != b->pidfs_id;
	case F_MIN_FLT: return a->min_flt != b->min_flt;
	case F_MAJ_FLT: return a->maj_flt != b->maj_flt;
	case F_NVCSW: return a->nvcsw != b->nvcsw;
	case F_NIVCSW: return a->nivcsw != b->nivcsw;
	default: return true;
	}
}

static void print_record(FILE *out, const char *who, const struct task_record *r)
{
	fprintf(out,
		"%s: tid %d tgid %d ppid %d uid %u/%u nice %d prio %d policy %u threads %u "
		"flags %#x utime %llu stime %llu start %llu ticks rss %llu bytes state %c "
		"comm '%.64s' pidfs %llu faults %llu/%llu switches %llu/%llu\n",
		who, r->tid, r->tgid, r->ppid, r->ruid, r->euid, r->nice, r->priority, r->policy,
		r->num_threads, r->task_flags, ticks(r->utime_ns), ticks(r->stime_ns),
		ticks(r->start_time_ns), (unsigned long long)r->rss_bytes, r->state ? r->state : '?',
		r->comm, (unsigned long long)r->pidfs_id, (unsigned long long)r->min_flt,
		(unsigned long long)r->maj_flt, (unsigned long long)r->nvcsw,
		(unsigned long long)r->nivcsw);
}

static const struct task_record *find_tid(const struct task_record *recs, long n, int tid)
{
	for (long i = 0; i < n; i++)
		if (recs[i].tid == tid)
			return &recs[i];
	return NULL;
}

/* ---- The tasks the check spawns ---- */

#define CHECK_PROCS 4
#define CHECK_THREADS 3 /* besides the leader */

struct spawned {
	pid_t pid;
	pid_t tids[CHECK_THREADS + 1];
};

static void *sleeping_thread(void *arg)
{
	int index = (int)(long)arg;
	char name[16];

	snprintf(name, sizeof(name), "bpft-thr-%d", index);
	prctl(PR_SET_NAME, name);
	/* A nice value of its own: the field is per thread. */
	setpriority(PRIO_PROCESS, (id_t)gettid(), index + 1);
	for (;;)
		pause();
	return NULL;
}

/*
 * Process @index: named, with CHECK_THREADS threads, some CPU time, some
 * memory, and (odd indexes) a real uid 1000 and an effective uid 65534.
 * Writes its tids to @pipe_fd, then sleeps until killed.
 */
static void spawned_main(int index, int pipe_fd)
{
	pid_t tids[CHECK_THREADS + 1];
	char name[16];
	volatile unsigned long spin = 0;
	char *mem;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	snprintf(name, sizeof(name), "bpft-proc-%d", index);
	prctl(PR_SET_NAME, name);
	mem = malloc(8 << 20);
	if (mem)
		memset(mem, index + 1, 8 << 20);
	for (unsigned long i = 0; i < 20000000UL * (unsigned long)(index + 1); i++)
		spin += i;
	tids[0] = getpid();
	for (int t = 0; t < CHECK_THREADS; t++) {
		pthread_t th;

		if (pthread_create(&th, NULL, sleeping_thread, (void *)(long)t))
			_exit(2);
	}
	/* The threads' tids: from /proc/self/task, once all are there. */
	for (;;) {
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;
		int n = 0;

		if (!d)
			_exit(3);
		while ((e = readdir(d)) && n <= CHECK_THREADS)
			if (e->d_name[0] != '.' && atoi(e->d_name) != tids[0])
				tids[1 + n++] = atoi(e->d_name);
		closedir(d);
		if (n == CHECK_THREADS)
			break;
		usleep(1000);
	}
	/* Let the threads name themselves and set their nice values. */
	usleep(50000);
	if (index % 2 && setresuid(1000, 65534, 0))
		_exit(4);
	if (write(pipe_fd, tids, sizeof(tids)) != sizeof(tids))
		_exit(5);
	close(pipe_fd);
	for (;;)
		pause();
}

static void spawn_all(struct spawned *s, int n)
{
	for (int i = 0; i < n; i++) {
		int p[2];

		if (pipe(p))
			die("pipe: %m");
		s[i].pid = fork();
		if (s[i].pid < 0)
			die("fork: %m");
		if (!s[i].pid) {
			close(p[0]);
			spawned_main(i, p[1]);
		}
		close(p[1]);
		if (read(p[0], s[i].tids, sizeof(s[i].tids)) != sizeof(s[i].tids))
			die("spawned process %d did not report its threads", s[i].pid);
		close(p[0]);
	}
	/* Everyone asleep in pause(): state S for all. */
	usleep(100000);
}

static void kill_all(struct spawned *s, int n)
{
	for (int i = 0; i < n; i++) {
		kill(s[i].pid, SIGKILL);
		waitpid(s[i].pid, NULL, 0);
	}
}

/* The fields a BPF record must give exactly as /proc does for these tasks. */
static const enum field exact_fields[] = {
	F_TGID, F_PPID, F_RUID, F_EUID, F_NICE, F_PRIORITY, F_POLICY, F_NUM_THREADS,
	F_TASK_FLAGS, F_START_TIME, F_STATE, F_COMM, F_PIDFS_ID,
};

/* Compare @source's records of the spawned tasks with /proc: failures. */
static int check_source(const char *source, const struct task_record *recs, long n,
			const struct spawned *s, int nproc)
{
	int failures = 0, checked = 0;
	long cpu_diff = 0, rss_diff = 0;

	for (int i = 0; i < nproc; i++) {
		for (int t = 0; t <= CHECK_THREADS; t++) {
			int tid = s[i].tids[t];
			const struct task_record *b = find_tid(recs, n, tid);
			struct task_record p;

			if (proc_task_read(s[i].pid, tid, page_kib, &p, NULL))
				die("/proc/%d/task/%d: %m", s[i].pid, tid);
			if (!b) {
				printf("FAIL %s: spawned task %d is not listed\n", source, tid);
				failures++;
				continue;
			}
			checked++;
			if (b->mask != TASK_RECORD_MASK) {
				printf("FAIL %s: task %d mask %#llx\n", source, tid,
				       (unsigned long long)b->mask);
				failures++;
			}
			for (size_t k = 0; k < sizeof(exact_fields) / sizeof(exact_fields[0]); k++) {
				enum field f = exact_fields[k];

				if (field_differs(f, b, &p)) {
					printf("FAIL %s: task %d: %s differs\n", source, tid,
					       field_names[f]);
					print_record(stdout, "  bpf  ", b);
					print_record(stdout, "  /proc", &p);
					failures++;
				}
			}
			cpu_diff += field_differs(F_UTIME, b, &p) || field_differs(F_STIME, b, &p);
			rss_diff += field_differs(F_RSS, b, &p);
		}
	}
	printf("%s: %d spawned tasks checked, %d failures; not compared exactly: "
	       "CPU time differs for %ld (raw ticks vs cputime_adjust()), rss for %ld "
	       "(percpu_counter approximation vs VmRSS)\n",
	       source, checked, failures, cpu_diff, rss_diff);
	return failures;
}

static int cmd_check(bool syscall_too)
{
	struct spawned s[CHECK_PROCS];
	struct task_bpf tb;
	int failures = 0;
	long n;

	spawn_all(s, CHECK_PROCS);
	if (task_bpf_open(&tb, true, syscall_too))
		die("cannot set up the BPF programs: %s: %s", tb.failed_step, strerror(tb.err));
	printf("setup: open %.1f ms, load+verify %.1f ms, attach %.1f ms\n", tb.open_ns / 1e6,
	       tb.load_ns / 1e6, tb.attach_ns / 1e6);
	n = task_bpf_iter_read(&tb, bpf_recs, MAX_TASKS);
	if (n < 0)
		die("reading the iterator: %s", strerror((int)-n));
	printf("iter/task: %ld records in %ld reads\n", n, tb.reads);
	failures += check_source("iter/task", bpf_recs, n, s, CHECK_PROCS);
	if (syscall_too) {
		const struct task_record *recs;

		n = task_bpf_syscall_run(&tb, &recs);
		if (n < 0)
			die("running the SYSCALL program: %s", strerror((int)-n));
		printf("syscall bpf_iter_task: %ld records\n", n);
		failures += check_source("syscall bpf_iter_task", recs, n, s, CHECK_PROCS);
	}
	task_bpf_close(&tb);
	kill_all(s, CHECK_PROCS);
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}

static int cmd_dump(void)
{
	struct task_bpf tb;
	long n;

	if (task_bpf_open(&tb, true, false))
		die("cannot set up the iterator: %s: %s", tb.failed_step, strerror(tb.err));
	n = task_bpf_iter_read(&tb, bpf_recs, MAX_TASKS);
	if (n < 0)
		die("reading the iterator: %s", strerror((int)-n));
	for (long i = 0; i < n; i++)
		print_record(stdout, "task", &bpf_recs[i]);
	task_bpf_close(&tb);
	return 0;
}

/* ---- /proc's listing: every task the caller's /proc shows ---- */

static bool is_id(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/*
 * The tasks /proc lists (readdir /proc, then each /proc/PID/task), into
 * @out with their values when @with_values (else tid and tgid only).
 * Tasks that exit meanwhile are left out. The count, or -1 if /proc
 * cannot be read.
 */
static unsigned long long proc_stat_rss[MAX_TASKS];

static long proc_list(struct task_record *out, long cap, bool with_values)
{
	DIR *root = opendir("/proc");
	struct dirent *e;
	long n = 0;

	if (!root)
		return -1;
	while ((e = readdir(root))) {
		char path[300];
		struct dirent *t;
		DIR *task;

		if (!is_id(e->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", e->d_name);
		task = opendir(path);
		if (!task)
			continue; /* gone */
		while ((t = readdir(task))) {
			int pid = atoi(e->d_name), tid;

			if (!is_id(t->d_name))
				continue;
			if (n == cap)
				die("more than %ld tasks in /proc", cap);
			tid = atoi(t->d_name);
			if (with_values) {
				if (proc_task_read(pid, tid, page_kib, &out[n], &proc_stat_rss[n]))
					continue; /* gone */
			} else {
				memset(&out[n], 0, sizeof(out[n]));
				out[n].tid = tid;
				out[n].tgid = pid;
			}
			n++;
		}
		closedir(task);
	}
	closedir(root);
	return n;
}

/* ---- pidmap_info(2), where the kernel has it ---- */

/*
 * Every task's record in PIDMAP_SCOPE_TASKS, through the view of our /proc
 * (@procfs_view) or the default one. The count, or -errno (-ENOSYS on a
 * kernel without the series).
 */
static long info_list(struct task_record *out, long cap, bool procfs_view)
{
	int view = -1;
	__u64 last = 0;
	long n = 0;

	if (procfs_view) {
		view = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (view < 0)
			return -errno;
	}
	for (;;) {
		long r = pidmap_info_list(PIDMAP_SCOPE_TASKS, 0, procfs_view ? view : 0, 0, last,
					  out + n, (size_t)(cap - n > 512 ? 512 : cap - n),
					  PIDMAP_INFO_SIZE_VER0, PIDMAP_INFO_ALL_FIELDS);

		if (r < 0) {
			int err = errno;

			if (view >= 0)
				close(view);
			return -err;
		}
		if (r == 0)
			break;
		n += r;
		last = (__u64)out[n - 1].tid;
		if (n == cap)
			die("more than %ld records", cap);
	}
	if (view >= 0)
		close(view);
	return n;
}

/* ---- fidelity ---- */

static struct task_record proc_recs[MAX_TASKS], info_recs[MAX_TASKS];

struct fidelity {
	const char *source;
	long listed, only_source, only_proc, compared;
	long differ[NR_FIELDS];
	long rss_differs_from_stat;	/* rss in pages against stat's field 24 */
	/* up to 3 examples of differing comm, for the report */
	char comm_examples[3][2][64];
	int nexamples;
};

static void compare_all(struct fidelity *fd, const struct task_record *recs, long n,
			const struct task_record *proc, long np)
{
	fd->listed = n;
	for (long i = 0; i < n; i++) {
		const struct task_record *p = find_tid(proc, np, recs[i].tid);

		if (!p) {
			fd->only_source++;
			continue;
		}
		fd->compared++;
		fd->rss_differs_from_stat +=
			recs[i].rss_bytes / (__u64)sysconf(_SC_PAGESIZE) != proc_stat_rss[p - proc];
		for (int f = 0; f < NR_FIELDS; f++) {
			if (!field_differs((enum field)f, &recs[i], p))
				continue;
			fd->differ[f]++;
			if (f == F_COMM && fd->nexamples < 3) {
				snprintf(fd->comm_examples[fd->nexamples][0], 64, "%.63s", recs[i].comm);
				snprintf(fd->comm_examples[fd->nexamples][1], 64, "%.63s", p->comm);
				fd->nexamples++;
			}
		}
	}
	for (long i = 0; i < np; i++)
		if (!find_tid(recs, n, proc[i].tid))
			fd->only_proc++;
}

static void print_fidelity_json(const struct fidelity *v, int nv, long np)
{
	printf("{\n  \"proc_tasks\": %ld,\n  \"sources\": {\n", np);
	for (int s = 0; s < nv; s++) {
		printf("    \"%s\": {\"listed\": %ld, \"only_source\": %ld, \"only_proc\": %ld, "
		       "\"compared\": %ld, \"differ\": {",
		       v[s].source, v[s].listed, v[s].only_source, v[s].only_proc, v[s].compared);
		for (int f = 0; f < NR_FIELDS; f++)
			printf("%s\"%s\": %ld", f ? ", " : "", field_names[f], v[s].differ[f]);
		printf("}, \"rss_differs_from_stat\": %ld}%s\n", v[s].rss_differs_from_stat,
		       s + 1 < nv ? "," : "");
	}
	printf("  }\n}\n");
}

static void print_fidelity_table(const struct fidelity *v, int nv, long np)
{
	printf("/proc lists %ld tasks (stat + status of each, read after the sources)\n\n", np);
	printf("| field |");
	for (int s = 0; s < nv; s++)
		printf(" %s |", v[s].source);
	printf("\n|---|");
	for (int s = 0; s < nv; s++)
		printf("--:|");
	printf("\n| tasks listed |");
	for (int s = 0; s < nv; s++)
		printf(" %ld |", v[s].listed);
	printf("\n| listed, not in /proc |");
	for (int s = 0; s < nv; s++)
		printf(" %ld |", v[s].only_source);
	printf("\n| in /proc, not listed |");
	for (int s = 0; s < nv; s++)
		printf(" %ld |", v[s].only_proc);
	for (int f = 0; f < NR_FIELDS; f++) {
		printf("\n| %s differs%s |", field_names[f],
		       f == F_RSS ? " (from status VmRSS)" : "");
		for (int s = 0; s < nv; s++)
			printf(" %ld |", v[s].differ[f]);
	}
	printf("\n| rss differs from stat's field 24 |");
	for (int s = 0; s < nv; s++)
		printf(" %ld |", v[s].rss_differs_from_stat);
	printf("\n\n");
	for (int s = 0; s < nv; s++)
		for (int i = 0; i < v[s].nexamples; i++)
			printf("%s comm '%s', /proc '%s'\n", v[s].source, v[s].comm_examples[i][0],
			       v[s].comm_examples[i][1]);
}

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* @procs processes of @threads tasks each, asleep; their pids in @pids. */
static void spawn_population(pid_t *pids, long procs, long threads)
{
	for (long i = 0; i < procs; i++) {
		int p[2];
		char ok;

		if (pipe(p))
			die("pipe: %m");
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork: %m");
		if (!pids[i]) {
			pthread_attr_t attr;

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			pthread_attr_init(&attr);
			pthread_attr_setstacksize(&attr, 64 * 1024);
			for (long t = 1; t < threads; t++) {
				pthread_t th;

				if (pthread_create(&th, &attr, idle_thread, NULL))
					_exit(2);
			}
			if (write(p[1], "x", 1) != 1)
				_exit(3);
			for (;;)
				pause();
		}
		close(p[1]);
		if (read(p[0], &ok, 1) != 1)
			die("spawned process %d did not start its threads", pids[i]);
		close(p[0]);
	}
}

static void kill_population(pid_t *pids, long procs)
{
	for (long i = 0; i < procs; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
}

static int cmd_fidelity(bool json)
{
	struct fidelity v[3];
	const struct task_record *sys_recs = NULL;
	long n_iter, n_sys = -1, n_info, np;
	struct task_bpf tb;
	int nv = 0;

	memset(v, 0, sizeof(v));
	if (task_bpf_open(&tb, true, true)) {
		task_bpf_close(&tb);
		fprintf(stderr, "the SYSCALL program does not load (%s: %s): iter/task alone\n",
			tb.failed_step, strerror(tb.err));
		if (task_bpf_open(&tb, true, false))
			die("cannot set up the iterator: %s: %s", tb.failed_step,
			    strerror(tb.err));
	}
	/* Every source, then /proc: the sources see the same moment. */
	n_iter = task_bpf_iter_read(&tb, bpf_recs, MAX_TASKS);
	if (n_iter < 0)
		die("reading the iterator: %s", strerror((int)-n_iter));
	if (tb.syscall) {
		n_sys = task_bpf_syscall_run(&tb, &sys_recs);
		if (n_sys < 0)
			die("running the SYSCALL program: %s", strerror((int)-n_sys));
	}
	n_info = info_list(info_recs, MAX_TASKS, true);
	if (n_info < 0 && n_info != -ENOSYS)
		die("pidmap_info: %s", strerror((int)-n_info));
	np = proc_list(proc_recs, MAX_TASKS, true);
	if (np < 0)
		die("cannot read /proc: %m");

	v[nv].source = "iter/task";
	compare_all(&v[nv++], bpf_recs, n_iter, proc_recs, np);
	if (n_sys >= 0) {
		v[nv].source = "syscall bpf_iter_task";
		compare_all(&v[nv++], sys_recs, n_sys, proc_recs, np);
	}
	if (n_info >= 0) {
		v[nv].source = "pidmap_info";
		compare_all(&v[nv++], info_recs, n_info, proc_recs, np);
	}
	if (json)
		print_fidelity_json(v, nv, np);
	else
		print_fidelity_table(v, nv, np);
	task_bpf_close(&tb);
	return 0;
}

/* ---- privilege and visibility ---- */

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* What one caller got. */
struct outcome {
	/* iter/task: 0, or the errno of failed_step */
	int bpf_err;
	char bpf_step[16];
	long bpf_tasks;		/* tasks the iterator listed */
	long bpf_hidden;	/* of those, tasks the caller's /proc does not show */
	long proc_tasks;	/* tasks the caller's /proc lists */
	/* pidmap_info(2), procfs view and default view: count or -errno */
	long info_procfs, info_default;
	long info_not_in_proc;	/* procfs view: records for tasks /proc does not list */
	long proc_not_in_info;	/* and tasks /proc lists without a record */
	int setup_err;		/* the credentials could not be set up: errno */
	char setup_what[48];
};

static int set_caps(__u64 caps)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	data[0].effective = data[0].permitted = (__u32)caps;
	data[1].effective = data[1].permitted = (__u32)(caps >> 32);
	return (int)syscall(SYS_capset, &hdr, data);
}

/* uid and gid 65534, keeping only @caps (effective and permitted). */
static int become_nobody(__u64 caps)
{
	if (prctl(PR_SET_KEEPCAPS, 1) || setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return -1;
	return set_caps(caps);
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* A private mount namespace with a new /proc mounted with @options. */
static int remount_proc(const char *options)
{
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -1;
	return mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, options);
}

/* What the caller, as it now is, gets from each source. */
static void probe(struct outcome *o)
{
	static struct task_record mine[MAX_TASKS];
	struct task_bpf tb;
	long np, n;

	np = proc_list(proc_recs, MAX_TASKS, false);
	o->proc_tasks = np;
	if (task_bpf_open(&tb, true, false)) {
		o->bpf_err = tb.err;
		snprintf(o->bpf_step, sizeof(o->bpf_step), "%s", tb.failed_step);
	} else {
		n = task_bpf_iter_read(&tb, bpf_recs, MAX_TASKS);
		if (n < 0) {
			o->bpf_err = (int)-n;
			snprintf(o->bpf_step, sizeof(o->bpf_step), "read");
		} else {
			o->bpf_tasks = n;
			for (long i = 0; i < n; i++)
				o->bpf_hidden += !find_tid(proc_recs, np, bpf_recs[i].tid);
		}
	}
	task_bpf_close(&tb);
	o->info_default = info_list(mine, MAX_TASKS, false);
	/*
	 * The procfs view against a fresh listing of /proc: a kernel worker
	 * may come or go in between, so up to 3 attempts until they agree.
	 */
	for (int attempt = 0; attempt < 3; attempt++) {
		np = proc_list(proc_recs, MAX_TASKS, false);
		o->info_procfs = n = info_list(mine, MAX_TASKS, true);
		o->info_not_in_proc = o->proc_not_in_info = 0;
		if (n < 0)
			break;
		for (long i = 0; i < n; i++)
			o->info_not_in_proc += !find_tid(proc_recs, np, mine[i].tid);
		for (long i = 0; i < np; i++)
			o->proc_not_in_info += !find_tid(mine, n, proc_recs[i].tid);
		if (!o->info_not_in_proc && !o->proc_not_in_info)
			break;
	}
}

enum caller { ROOT, NOBODY, CAP_BPF_ONLY, BPF_PERFMON, USERNS_ROOT, HIDEPID_BPF_PERFMON, NR_CALLERS };

static const char *const caller_names[NR_CALLERS] = {
	"root (control)",
	"uid 65534, no capabilities",
	"uid 65534, CAP_BPF",
	"uid 65534, CAP_BPF + CAP_PERFMON",
	"root of a new user and pid namespace",
	"uid 65534, CAP_BPF + CAP_PERFMON, hidepid=invisible /proc",
};

static void setup_failed(struct outcome *o, const char *what)
{
	o->setup_err = errno ? errno : EINVAL;
	snprintf(o->setup_what, sizeof(o->setup_what), "%s", what);
}

/* In a child: become @who, probe, and write the outcome to @out_fd. */
static void caller_main(enum caller who, int out_fd)
{
	const __u64 bpf_perfmon = (1ULL << CAP_BPF) | (1ULL << CAP_PERFMON);
	struct outcome o;
	char map[32];

	memset(&o, 0, sizeof(o));
	errno = 0;
	switch (who) {
	case ROOT:
		break;
	case NOBODY:
		if (become_nobody(0))
			setup_failed(&o, "setresuid 65534");
		break;
	case CAP_BPF_ONLY:
		if (become_nobody(1ULL << CAP_BPF))
			setup_failed(&o, "capset CAP_BPF");
		break;
	case BPF_PERFMON:
		if (become_nobody(bpf_perfmon))
			setup_failed(&o, "capset CAP_BPF CAP_PERFMON");
		break;
	case USERNS_ROOT: {
		pid_t child;
		int status;

		/* Dumpable again after setresuid(), so it may write its uid_map. */
		if (become_nobody(0) || prctl(PR_SET_DUMPABLE, 1) ||
		    unshare(CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS)) {
			setup_failed(&o, "unshare user+pid+mount ns");
			break;
		}
		snprintf(map, sizeof(map), "0 65534 1\n");
		if (write_file("/proc/self/uid_map", map)) {
			setup_failed(&o, "uid_map");
			break;
		}
		/* pid 1 of the new namespace, with its own /proc: a container. */
		child = fork();
		if (child < 0) {
			setup_failed(&o, "fork");
			break;
		}
		if (child) {
			waitpid(child, &status, 0);
			_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
		}
		if (setresuid(0, 0, 0) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
			setup_failed(&o, "mount /proc in the container");
		break;
	}
	case HIDEPID_BPF_PERFMON:
		if (remount_proc("hidepid=invisible"))
			setup_failed(&o, "mount /proc hidepid=invisible");
		else if (become_nobody(bpf_perfmon))
			setup_failed(&o, "capset CAP_BPF CAP_PERFMON");
		break;
	default:
		break;
	}
	if (!o.setup_err)
		probe(&o);
	if (write(out_fd, &o, sizeof(o)) != sizeof(o))
		_exit(2);
	_exit(0);
}

static int run_caller(enum caller who, struct outcome *o)
{
	int p[2], status;
	pid_t pid;

	if (pipe(p))
		die("pipe: %m");
	pid = fork();
	if (pid < 0)
		die("fork: %m");
	if (!pid) {
		close(p[0]);
		caller_main(who, p[1]);
	}
	close(p[1]);
	if (read(p[0], o, sizeof(*o)) != sizeof(*o))
		die("caller '%s' reported nothing", caller_names[who]);
	close(p[0]);
	waitpid(pid, &status, 0);
	return 0;
}

static int privilege_failures;

static void expect(bool ok, enum caller who, const char *what)
{
	printf("  %s: %s\n", ok ? "ok  " : "FAIL", what);
	if (!ok) {
		privilege_failures++;
		fprintf(stderr, "FAIL: %s: %s\n", caller_names[who], what);
	}
}

static void describe_info(const char *view, long v)
{
	if (v >= 0)
		printf(", pidmap_info %s view %ld", view, v);
	else
		printf(", pidmap_info %s view %s", view, strerror((int)-v));
}

static int cmd_privilege(void)
{
	struct outcome o[NR_CALLERS];
	bool have_info;

	printf("kernel.unprivileged_bpf_disabled = ");
	fflush(stdout);
	if (system("cat /proc/sys/kernel/unprivileged_bpf_disabled"))
		printf("?\n");
	for (int c = 0; c < NR_CALLERS; c++)
		run_caller((enum caller)c, &o[c]);
	have_info = o[ROOT].info_procfs != -ENOSYS;

	for (int c = 0; c < NR_CALLERS; c++) {
		const struct outcome *r = &o[c];

		printf("%s:", caller_names[c]);
		if (r->setup_err) {
			printf(" cannot set up (%s: %s)\n", r->setup_what, strerror(r->setup_err));
			expect(false, (enum caller)c, "the caller's credentials");
			continue;
		}
		if (r->bpf_err)
			printf(" iter/task fails at %s with %s", r->bpf_step,
			       strerrorname_np(r->bpf_err) ?: strerror(r->bpf_err));
		else
			printf(" iter/task lists %ld tasks (%ld hidden from its /proc)",
			       r->bpf_tasks, r->bpf_hidden);
		printf(", its /proc lists %ld", r->proc_tasks);
		if (have_info) {
			describe_info("procfs", r->info_procfs);
			describe_info("default", r->info_default);
		}
		printf("\n");

		switch (c) {
		case ROOT:
			expect(!r->bpf_err && r->bpf_tasks > 0, c, "root loads and reads the iterator");
			break;
		case NOBODY:
		case CAP_BPF_ONLY:
		case USERNS_ROOT:
			expect(r->bpf_err == EPERM && !strcmp(r->bpf_step, "load"), c,
			       "the load fails with EPERM");
			break;
		case BPF_PERFMON:
			expect(!r->bpf_err && r->bpf_tasks > 0, c,
			       "CAP_BPF + CAP_PERFMON load and read the iterator");
			break;
		case HIDEPID_BPF_PERFMON:
			expect(!r->bpf_err && r->bpf_hidden > 0, c,
			       "the iterator lists tasks its hidepid=invisible /proc hides");
			expect(r->proc_tasks < o[ROOT].proc_tasks, c,
			       "its /proc shows fewer tasks than root's");
			break;
		default:
			break;
		}
		if (have_info) {
			/* pidmap_info never shows more than the caller's /proc shows. */
			expect(r->info_procfs >= 0 && r->info_not_in_proc == 0 &&
				       r->proc_not_in_info == 0,
			       c, "pidmap_info's procfs view lists exactly what its /proc lists");
			expect(r->info_default >= 0 && r->info_default <= r->info_procfs, c,
			       "pidmap_info's default view lists no more than the procfs view");
		}
	}
	fflush(stdout);
	printf("%s\n", privilege_failures ? "FAILED" : "ok");
	return privilege_failures ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: bpf-tasks check [--syscall] | fidelity [--json] [--spawn PROCS THREADS] "
		"| privilege | dump\n");
	exit(2);
}

int main(int argc, char **argv)
{
	page_kib = sysconf(_SC_PAGESIZE) / 1024;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "check") && argc <= 3) {
		if (argc == 3 && strcmp(argv[2], "--syscall"))
			usage();
		return cmd_check(argc == 3);
	}
	if (!strcmp(argv[1], "fidelity")) {
		long procs = 0, threads = 0;
		bool json = false;
		static pid_t pids[MAX_TASKS];
		int rc;

		for (int i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--json")) {
				json = true;
			} else if (!strcmp(argv[i], "--spawn") && i + 2 < argc) {
				procs = atol(argv[i + 1]);
				threads = atol(argv[i + 2]);
				i += 2;
				if (procs < 1 || threads < 1 || procs * threads > MAX_TASKS / 2)
					usage();
			} else {
				usage();
			}
		}
		spawn_population(pids, procs, threads);
		rc = cmd_fidelity(json);
		kill_population(pids, procs);
		return rc;
	}
	if (!strcmp(argv[1], "privilege") && argc == 2)
		return cmd_privilege();
	if (!strcmp(argv[1], "dump") && argc == 2)
		return cmd_dump();
	usage();
}
