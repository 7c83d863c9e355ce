// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * lsm: pidmap(2), pidmap_info(2) and fdmap(2) withhold exactly what a real
 * LSM makes /proc withhold (security_task_read_info(), pidmap series
 * 0001-0004).
 *
 * Our kernels boot with Smack and Landlock active, and once more with
 * SELinux and Landlock (lsm=landlock,selinux: Smack, SELinux and AppArmor
 * cannot be active at once), where PIDMAP_LSM=selinux, and once more with
 * AppArmor and Landlock, where PIDMAP_LSM=apparmor: a kernel without the
 * LSM the boot asks for fails this test, it never skips.
 *
 * Smack: a target process labelled "Secret" and one labelled "_" (the
 * floor), both uid 65534, and a caller labelled "Reader", uid 65534, with
 * no capability (so no CAP_MAC_OVERRIDE) and rules that give Reader and
 * Secret the floor but no rule from Reader to Secret.  The reference is
 * /proc itself, read by the same caller just before the calls:
 *
 *   - opening /proc/SECRET/stat fails (EACCES), /proc/FLOOR/stat opens: the
 *     policy is in force, so a missing check cannot pass;
 *   - the records of PROCS and TASKS, through /proc as the view and in the
 *     default view, are exactly the tasks whose /proc/PID/stat the caller
 *     can open: Secret's is withheld, the floor target's comes back with
 *     its comm and ppid as stat shows them;
 *   - fdmap(2) of Secret fails with the errno of opening /proc/SECRET/fd,
 *     of the floor target it lists what /proc/FLOOR/fd lists;
 *   - the THREADS listing of Secret fails with the errno of opening
 *     /proc/SECRET/task; pidmap(2)'s PROCS ids still list Secret, as a
 *     readdir of /proc does.
 *
 * Smack, per thread (smack_per_thread()): threads carry labels of their
 * own, and every call must answer what opening the one /proc file its rule
 * names answers (docs/ABI.md, "Which /proc file decides"): a Pub leader
 * whose Secret thread forked C (CHILDREN withholds C, as
 * /proc/M/task/T2/children is EACCES), a Pub thread of a Secret leader
 * (its record and fd list withheld: /proc/P/task/T/stat is EACCES though
 * /proc/T/stat opens), a Secret thread of a Pub leader (fdmap EACCES in
 * the default view too), and TASKS withholding a group whose
 * /proc/PID/task may not be read. The procfs view is compared with /proc,
 * the default view with a hidepid=invisible mount. A children file
 * reached and denied (a Secret process of one thread, read by a label
 * that may search but not read it) leaves as many Smack audit records
 * for a CHILDREN listing as for the open (smack_audit_checks()). A group
 * whose threads share its credentials but for one with its own label
 * (smack_shared_creds()): the kernel's grant for the others is not taken
 * for that one.
 *
 * SELinux: the same checks, with a minimal policy (cargo xtask builds it
 * from the kernel's class map with scripts/selinux/mdp and Debian's
 * checkpolicy) of two domains: base_t, which everything starts in, may do
 * everything to secret_t except read its files and search, read or open
 * its directories, which is exactly what /proc/PID of a secret_t task
 * needs. The policy is loaded and enforced here; the Secret target enters
 * secret_t through /proc/self/attr/current, the floor target and the
 * reader stay in base_t.
 *
 * AppArmor (PIDMAP_LSM=apparmor, a boot with lsm=landlock,apparmor): a
 * profile compiled on the host denies opening the stat file, the fd and
 * task directories and the children file of every even-numbered task; a
 * reader confined by it must get from every call what opening those
 * files gives it, through a /proc fd opened before the profile applied,
 * one opened under it, and in the default view (apparmor_checks()).
 *
 * TOMOYO (PIDMAP_LSM=apparmor,tomoyo: TOMOYO stacks with AppArmor, in the
 * same boot): a domain enforcing "file open" whose "file read" entries
 * allow the same files of odd-numbered tasks only, written through
 * securityfs and activated by the boot's trigger; the reader enters it
 * through self_domain and must get what opening the files gives it, in
 * the same three ways (tomoyo_checks()).
 *
 * Landlock: a caller that opened /proc before landlock_restrict_self() with
 * a ruleset that handles reading files and directories and allows neither:
 * opening /proc/FLOOR/stat fails, and through the kept /proc fd pidmap(2)
 * still lists ids (the kept fd may be read) while pidmap_info(2) returns no
 * record and fdmap(2) of the floor target fails with EACCES.
 */
#define _GNU_SOURCE
#include <linux/audit.h>
#include <linux/landlock.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <grp.h>
#include <pthread.h>

#include "pidmap_test.h"

#define NREC 512

static unsigned long checks, failures;

#define CHECK(ok, ...) pt_check(&checks, &failures, (ok), __VA_ARGS__)

static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = 0;
	return 0;
}

static void set_label(const char *label)
{
	if (pt_write_file("/proc/self/attr/smack/current", label))
		pt_die("setting the Smack label %s: %s", label, strerror(errno));
}

static void become_nobody(void)
{
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		pt_die("dropping to uid 65534: %s", strerror(errno));
	/* No capability is left: CAP_MAC_OVERRIDE would bypass Smack. */
	if (prctl(PR_SET_DUMPABLE, 1))
		pt_die("PR_SET_DUMPABLE");
}

/* A target: labelled, uid 65534, waiting to be killed. */
static pid_t spawn_target(const char *label)
{
	pid_t pid = fork();

	if (pid < 0)
		pt_die("fork");
	if (pid == 0) {
		if (label)
			set_label(label);
		become_nobody();
		for (;;)
			pause();
	}
	/* Wait until it has its label and uid. */
	for (int i = 0; i < 2000; i++) {
		char path[64], buf[256];
		struct stat st;

		snprintf(path, sizeof(path), "/proc/%d/attr/smack/current", pid);
		snprintf(buf, sizeof(buf), "/proc/%d", pid);
		if (stat(buf, &st) == 0 && st.st_uid == 65534 &&
		    (!label || (read_file(path, buf, sizeof(buf)) == 0 &&
				strncmp(buf, label, strlen(label)) == 0)))
			return pid;
		usleep(1000);
	}
	pt_die("target %d never took label %s", pid, label ? label : "_");
}

static int open_errno(const char *fmt, pid_t pid, int flags)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), fmt, pid);
	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* The tids of every record of @scope, following the cursor to the end. */
static long all_records(__u32 scope, int view_fd, struct pidmap_info *recs, size_t cap)
{
	__u64 last = 0;
	long total = 0, n;

	for (;;) {
		if ((size_t)total >= cap)
			pt_die("more than %zu records", cap);
		n = pidmap_info_list(scope, 0, view_fd, 0, last, recs + total, cap - total,
				     sizeof(*recs), PIDMAP_INFO_ALL_FIELDS);
		if (n < 0)
			return -errno;
		if (n == 0)
			return total;
		total += n;
		last = recs[total - 1].tid;
	}
}

static const struct pidmap_info *find(const struct pidmap_info *recs, long n, pid_t tid)
{
	for (long i = 0; i < n; i++)
		if ((pid_t)recs[i].tid == tid)
			return &recs[i];
	return NULL;
}

/* Every record is a task whose stat the caller may open, and the reverse. */
static void records_match_proc(const char *what, __u32 scope, int view_fd, pid_t secret,
			       pid_t floor)
{
	static struct pidmap_info recs[NREC];
	long n = all_records(scope, view_fd, recs, NREC);
	const struct pidmap_info *r;

	CHECK(n > 0, "%s: pidmap_info(2): %ld", what, n);
	if (n <= 0)
		return;
	CHECK(!find(recs, n, secret), "%s: the record of Secret (%d) came back", what, secret);
	r = find(recs, n, floor);
	CHECK(r != NULL, "%s: no record of the floor target %d", what, floor);
	if (r) {
		char path[64], stat[512], comm[64] = "";
		int ppid = -1;

		snprintf(path, sizeof(path), "/proc/%d/stat", floor);
		if (read_file(path, stat, sizeof(stat)) == 0) {
			char *open = strchr(stat, '('), *close = strrchr(stat, ')');

			if (open && close) {
				snprintf(comm, sizeof(comm), "%.*s", (int)(close - open - 1), open + 1);
				sscanf(close + 2, "%*c %d", &ppid);
			}
		}
		CHECK(strcmp(r->comm, comm) == 0 && (pid_t)r->ppid == ppid && r->euid == 65534,
		      "%s: floor record comm %s ppid %d euid %u, stat says %s %d", what, r->comm,
		      r->ppid, r->euid, comm, ppid);
	}
	for (long i = 0; i < n; i++) {
		char path[64];
		int fd;

		if (scope == PIDMAP_SCOPE_TASKS)
			snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", recs[i].tgid,
				 recs[i].tid);
		else
			snprintf(path, sizeof(path), "/proc/%d/stat", recs[i].tid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			continue;
		}
		/* Only a task that ended since may be missing from /proc. */
		CHECK(errno == ENOENT || errno == ESRCH,
		      "%s: record of %d, but opening %s: %s", what, recs[i].tid, path,
		      strerror(errno));
	}
}

/* What the reader, denied Secret's /proc/PID by policy, must get. */
static void reader_checks(pid_t secret, pid_t floor)
{
	int view, pidfd, e, fds[64];
	__u32 ids[NREC];
	long n;

	e = open_errno("/proc/%d/stat", secret, O_RDONLY);
	CHECK(e == EACCES, "opening Secret's stat: %s, not EACCES: the policy is not in force",
	      pt_errname(e));
	e = open_errno("/proc/%d/stat", floor, O_RDONLY);
	CHECK(e == 0, "opening the floor target's stat: %s", pt_errname(e));

	view = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (view < 0)
		pt_die("open /proc");
	records_match_proc("PROCS, /proc view", PIDMAP_SCOPE_PROCS, view, secret, floor);
	records_match_proc("TASKS, /proc view", PIDMAP_SCOPE_TASKS, view, secret, floor);
	records_match_proc("PROCS, default view", PIDMAP_SCOPE_PROCS, -1, secret, floor);

	/* pidmap(2) lists what readdir lists: Secret included. */
	n = pidmap_list(PIDMAP_SCOPE_PROCS, 0, view, 0, 0, ids, NREC);
	CHECK(n > 0, "pidmap(2): %ld (%s)", n, strerror(errno));
	int listed = 0;

	for (long i = 0; i < n; i++)
		listed |= (pid_t)ids[i] == secret;
	CHECK(listed, "pidmap(2) through /proc does not list Secret, which ls /proc shows");

	pidfd = pt_pidfd(secret, 0);
	e = open_errno("/proc/%d/fd", secret, O_RDONLY | O_DIRECTORY);
	CHECK(e == EACCES, "opening Secret's fd directory: %s", pt_errname(e));
	n = fdmap_list(pidfd, view, 0, fds, 64);
	CHECK(n < 0 && errno == e, "fdmap(2) of Secret: %ld (%s), /proc says %s", n,
	      n < 0 ? pt_errname(errno) : "listed", pt_errname(e));
	e = open_errno("/proc/%d/task", secret, O_RDONLY | O_DIRECTORY);
	n = pidmap_list(PIDMAP_SCOPE_THREADS, pidfd, view, 0, 0, ids, NREC);
	CHECK(e != 0 && n < 0 && errno == e, "threads of Secret: %ld (%s), /proc/PID/task says %s",
	      n, n < 0 ? pt_errname(errno) : "listed", pt_errname(e));
	close(pidfd);

	pidfd = pt_pidfd(floor, 0);
	n = fdmap_list(pidfd, view, 0, fds, 64);
	struct pt_ids want = { 0 };
	char dir[64];

	snprintf(dir, sizeof(dir), "/proc/%d/fd", floor);
	CHECK(pt_readdir_ids(dir, &want) == 0, "readdir %s", dir);
	CHECK(n >= 0 && n == (long)want.n, "fdmap(2) of the floor target: %ld fds, /proc %zu", n,
	      want.n);
	pt_ids_free(&want);
	close(pidfd);
	close(view);
}

static void smack_reader(pid_t secret, pid_t floor)
{
	set_label("Reader");
	become_nobody();
	pt_name = "lsm(smack)";
	reader_checks(secret, floor);
}

static void selinux_reader(pid_t secret, pid_t floor)
{
	become_nobody();
	pt_name = "lsm(selinux)";
	reader_checks(secret, floor);
}

/* The policy cargo xtask built, loaded and enforced. */
#define SELINUX_POLICY "/etc/pidmap-selinux.policy"
#define SELINUX_SECRET "user_u:base_r:secret_t"

static void load_selinux_policy(void)
{
	char enforce[8] = "";
	struct stat st;
	char *policy;
	int fd, out;

	mkdir("/sys/fs/selinux", 0755);
	if (mount("selinuxfs", "/sys/fs/selinux", "selinuxfs", 0, NULL) && errno != EBUSY)
		pt_die("mounting selinuxfs: %s", strerror(errno));
	fd = open(SELINUX_POLICY, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		pt_die("%s: %s", SELINUX_POLICY, strerror(errno));
	policy = malloc(st.st_size);
	if (!policy || read(fd, policy, st.st_size) != st.st_size)
		pt_die("reading %s", SELINUX_POLICY);
	close(fd);
	out = open("/sys/fs/selinux/load", O_WRONLY | O_CLOEXEC);
	if (out < 0 || write(out, policy, st.st_size) != st.st_size)
		pt_die("loading the SELinux policy: %s", strerror(errno));
	close(out);
	free(policy);
	if (pt_write_file("/sys/fs/selinux/enforce", "1") ||
	    read_file("/sys/fs/selinux/enforce", enforce, sizeof(enforce)) || enforce[0] != '1')
		pt_die("SELinux does not enforce (enforce: \"%s\")", enforce);
}

/*
 * A child that runs @prepare(@arg), says it is ready and waits to be
 * killed; returned once it is ready. @what names it if it never is.
 */
static pid_t spawn_prepared(void (*prepare)(const char *), const char *arg, const char *what)
{
	int ready[2];
	pid_t pid;
	char c;

	if (pipe2(ready, O_CLOEXEC))
		pt_die("pipe2");
	pid = fork();
	if (pid < 0)
		pt_die("fork");
	if (pid == 0) {
		close(ready[0]);
		prepare(arg);
		if (write(ready[1], "r", 1) != 1)
			pt_die("ready");
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		pt_die("%s %d never got ready", what, pid);
	close(ready[0]);
	return pid;
}

static void enter_selinux_context(const char *context)
{
	if (context && pt_write_file("/proc/self/attr/current", context))
		pt_die("entering %s: %s", context, strerror(errno));
	become_nobody();
}

/* A target in SELinux @context (NULL: stays in base_t), uid 65534. */
static pid_t spawn_selinux_target(const char *context)
{
	return spawn_prepared(enter_selinux_context, context,
			      context ? context : "a base_t target");
}

static void landlocked(pid_t floor)
{
	struct landlock_ruleset_attr attr = {
		.handled_access_fs = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR,
	};
	static struct pidmap_info recs[NREC];
	int view, ruleset, pidfd, e, fds[64];
	__u32 ids[NREC];
	long n;

	become_nobody();
	pt_name = "lsm(landlock)";
	view = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	pidfd = pt_pidfd(floor, 0);
	if (view < 0)
		pt_die("open /proc");
	ruleset = syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset < 0)
		pt_die("landlock_create_ruleset: %s: Landlock must be active", strerror(errno));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_landlock_restrict_self, ruleset, 0))
		pt_die("landlock_restrict_self: %s", strerror(errno));

	e = open_errno("/proc/%d/stat", floor, O_RDONLY);
	CHECK(e == EACCES, "a Landlocked open of /proc/%d/stat: %s", floor, pt_errname(e));
	n = pidmap_list(PIDMAP_SCOPE_PROCS, 0, view, 0, 0, ids, NREC);
	CHECK(n > 0, "pidmap(2) through the kept /proc fd: %ld (%s)", n, strerror(errno));
	n = pidmap_info_list(PIDMAP_SCOPE_PROCS, 0, view, 0, 0, recs, NREC, sizeof(*recs),
			     PIDMAP_INFO_ALL_FIELDS);
	CHECK(n == 0, "pidmap_info(2) through the kept /proc fd: %ld records, /proc opens none", n);
	n = fdmap_list(pidfd, view, 0, fds, 64);
	CHECK(n < 0 && errno == EACCES, "fdmap(2) through the kept /proc fd: %ld (%s)", n,
	      n < 0 ? pt_errname(errno) : "listed");
}

static void run_child(void (*fn)(pid_t, pid_t), pid_t a, pid_t b)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		pt_die("fork");
	if (pid == 0) {
		fn(a, b);
		printf("%s: checks=%lu failures=%lu\n", pt_name, checks, failures);
		_exit(failures ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		failures++;
	checks++;
}

/* ------------------------------------------------------------------ */
/* Smack, per thread: every object decided by its own /proc file       */
/* ------------------------------------------------------------------ */

/*
 * Two thread groups whose threads carry labels of their own (Smack labels
 * are per thread: /proc/thread-self/attr/smack/current):
 *
 *   M: leader "Pub", thread T2 "Secret"; T2 forked C (so C is "Secret"),
 *      the leader forked D ("Pub");
 *   P: leader "Secret", thread T "Pub".
 *
 * With "Reader Pub rx" and no rule from Reader to Secret, /proc gives the
 * reader: /proc/M/task/M/children [D], /proc/M/task/T2/children EACCES,
 * /proc/C/stat EACCES; /proc/P/task/T/stat EACCES (the walk searches
 * /proc/P, labelled after P) while /proc/T/stat opens; /proc/M/task/T2/fd
 * EACCES. Each call must give what opening the file its rule names gives
 * (docs/ABI.md, "Which /proc file decides"), in the procfs view against
 * /proc, and in the default view against a hidepid=invisible mount (the
 * rule the default view applies; ENOENT there is the calls' ESRCH).
 */
struct tgroup {
	pid_t tgid, tid;	/* the leader and its other thread */
	pid_t tid_child;	/* forked by the thread, or 0 */
	pid_t leader_child;	/* forked by the leader, or 0 */
};

struct tg_thread_arg {
	const char *label;
	bool fork_child;
	int ready[2];
	pid_t tid, child;
};

static void set_thread_label(const char *label)
{
	if (pt_write_file("/proc/thread-self/attr/smack/current", label))
		pt_die("setting the thread's Smack label %s: %s", label, strerror(errno));
}

/* A child that becomes uid 65534 and waits to be killed. */
static pid_t fork_sleeper(void)
{
	pid_t pid = fork();

	if (pid < 0)
		pt_die("fork");
	if (pid == 0) {
		become_nobody();
		for (;;)
			pause();
	}
	return pid;
}

static void *tg_thread(void *p)
{
	struct tg_thread_arg *a = p;

	if (a->label)
		set_thread_label(a->label);
	a->tid = pt_gettid();
	if (a->fork_child)
		a->child = fork_sleeper();
	if (write(a->ready[1], "r", 1) != 1)
		pt_die("thread ready");
	for (;;)
		pause();
	return NULL;
}

/*
 * A process labelled @leader_label with one more thread labelled
 * @thread_label, both uid 65534; with @children, the thread and the leader
 * each fork a child. Returns its ids once all are in place.
 */
static struct tgroup spawn_group(const char *leader_label, const char *thread_label,
				 bool children)
{
	struct tgroup g = { 0 };
	int report[2];
	pid_t pid;

	if (pipe2(report, O_CLOEXEC))
		pt_die("pipe2");
	pid = fork();
	if (pid < 0)
		pt_die("fork");
	if (pid == 0) {
		struct tg_thread_arg a = { .label = thread_label, .fork_child = children };
		pthread_t th;
		char c;

		close(report[0]);
		if (leader_label)
			set_label(leader_label);
		if (pipe2(a.ready, O_CLOEXEC) || pthread_create(&th, NULL, tg_thread, &a))
			pt_die("pthread_create");
		if (read(a.ready[0], &c, 1) != 1)
			pt_die("thread never got ready");
		g.tgid = getpid();
		g.tid = a.tid;
		g.tid_child = a.child;
		if (children)
			g.leader_child = fork_sleeper();
		/* Labels are set: now drop root, in every thread (setxid). */
		become_nobody();
		if (write(report[1], &g, sizeof(g)) != sizeof(g))
			pt_die("report");
		for (;;)
			pause();
	}
	close(report[1]);
	if (read(report[0], &g, sizeof(g)) != sizeof(g))
		pt_die("group %d never reported", pid);
	close(report[0]);
	/* The children become uid 65534 on their own: wait until they have. */
	for (int i = 0; i < 2000; i++) {
		char path[64];
		struct stat st1 = { 0 }, st2 = { 0 };

		snprintf(path, sizeof(path), "/proc/%d", g.tid_child);
		if (g.tid_child && (stat(path, &st1) || st1.st_uid != 65534)) {
			usleep(1000);
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%d", g.leader_child);
		if (g.leader_child && (stat(path, &st2) || st2.st_uid != 65534)) {
			usleep(1000);
			continue;
		}
		return g;
	}
	pt_die("the children of %d never became uid 65534", g.tgid);
}

/* The hidepid=invisible mount that stands for the default view's rule. */
#define PROC_INVISIBLE "/tmp/pidmap-lsm-proc-invisible"

/*
 * errno of opening @ref/@rel (0 if it opens). ENOENT, a hidden or gone
 * task, is what the calls report as ESRCH.
 */
static int ref_errno(const char *ref, const char *rel, int flags)
{
	char path[256];
	int fd, e;

	snprintf(path, sizeof(path), "%s/%s", ref, rel);
	fd = open(path, flags | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	e = errno;
	return e == ENOENT ? ESRCH : e;
}

/* errno of looking up @ref/@tgid/task, which searches @ref/@tgid. */
static int ref_search_errno(const char *ref, pid_t tgid)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%d/task", ref, tgid);
	if (stat(path, &st) == 0)
		return 0;
	return errno == ENOENT ? ESRCH : errno;
}

/* The ids a readdir of @ref/@rel lists; its errno as ref_errno()'s. */
static int ref_readdir(const char *ref, const char *rel, struct pt_ids *out)
{
	char path[256];
	int e;

	snprintf(path, sizeof(path), "%s/%s", ref, rel);
	e = pt_readdir_ids(path, out);
	return e == ENOENT ? ESRCH : e;
}

/* The pids a children file lists; its errno as ref_errno()'s. */
static int ref_children(const char *ref, pid_t tgid, pid_t tid, struct pt_ids *out)
{
	char path[256], buf[512], *p, *end;
	int e;

	snprintf(path, sizeof(path), "%s/%d/task/%d/children", ref, tgid, tid);
	e = read_file(path, buf, sizeof(buf));
	if (e)
		return -e == ENOENT ? ESRCH : -e;
	for (p = buf;; p = end) {
		long v = strtol(p, &end, 10);

		if (end == p)
			break;
		pt_ids_push(out, (int)v);
	}
	pt_ids_sort(out);
	return 0;
}

static void ids_from(struct pt_ids *out, const __u32 *ids, long n)
{
	for (long i = 0; i < n; i++)
		pt_ids_push(out, (int)ids[i]);
	pt_ids_sort(out);
}

/* A listing (or the error) against the reference's. */
static void check_ids(const char *what, long n, int err, const struct pt_ids *got, int want_err,
		      const struct pt_ids *want)
{
	if (want_err) {
		CHECK(n < 0 && err == want_err, "%s: %ld (%s), /proc says %s", what, n,
		      n < 0 ? pt_errname(err) : "listed", pt_errname(want_err));
		return;
	}
	CHECK(n >= 0, "%s: %s, /proc lists %zu", what, pt_errname(err), want->n);
	if (n >= 0 && !pt_ids_equal(got, want)) {
		pt_ids_diff(what, got, want);
		CHECK(0, "%s: not what /proc lists", what);
	}
}

/* pidmap(2) of @scope and @pidfd, every id, as a set; its errno. */
static long list_ids(__u32 scope, int pidfd, int view, struct pt_ids *out, int *err)
{
	__u32 ids[NREC];
	long n = pidmap_list(scope, pidfd, view, 0, 0, ids, NREC);

	*err = n < 0 ? errno : 0;
	if (n >= NREC)
		pt_die("more than %d ids", NREC);
	if (n > 0)
		ids_from(out, ids, n);
	return n;
}

/* pidmap_info(2) of @scope and @pidfd: the tids with a record; its errno. */
static long list_records(__u32 scope, int pidfd, int view, struct pt_ids *out, int *err)
{
	static struct pidmap_info recs[NREC];
	long n = pidmap_info_list(scope, pidfd, view, 0, 0, recs, NREC, sizeof(*recs),
				  PIDMAP_INFO_ALL_FIELDS);

	*err = n < 0 ? errno : 0;
	if (n >= NREC)
		pt_die("more than %d records", NREC);
	for (long i = 0; i < n; i++)
		pt_ids_push(out, (int)recs[i].tid);
	pt_ids_sort(out);
	return n;
}

/* Every check of one group in one view (@view: a /proc fd, or -1). */
static void thread_group_checks(const char *vname, int view, const char *ref,
				const struct tgroup *g)
{
	pid_t tids[2] = { g->tgid, g->tid };
	struct pt_ids got = { 0 }, want = { 0 }, all = { 0 };
	char what[160], rel[96];
	int pidfd, tpidfd, err, want_err, fds[64];
	long n;

	pidfd = pt_pidfd(g->tgid, 0);
	tpidfd = pt_pidfd(g->tid, PIDFD_THREAD);

	/* THREADS: reading /proc/TGID/task. */
	snprintf(rel, sizeof(rel), "%d/task", g->tgid);
	want_err = ref_readdir(ref, rel, &want);
	n = list_ids(PIDMAP_SCOPE_THREADS, pidfd, view, &got, &err);
	snprintf(what, sizeof(what), "%s: THREADS of %d", vname, g->tgid);
	check_ids(what, n, err, &got, want_err, &want);

	/* THREADS records: each thread's /proc/TGID/task/TID/stat. */
	pt_ids_clear(&got);
	n = list_records(PIDMAP_SCOPE_THREADS, pidfd, view, &got, &err);
	if (!want_err) {
		pt_ids_clear(&want);
		for (int i = 0; i < 2; i++) {
			snprintf(rel, sizeof(rel), "%d/task/%d/stat", g->tgid, tids[i]);
			if (!ref_errno(ref, rel, O_RDONLY))
				pt_ids_push(&want, tids[i]);
		}
		pt_ids_sort(&want);
	}
	snprintf(what, sizeof(what), "%s: THREADS records of %d", vname, g->tgid);
	check_ids(what, n, err, &got, want_err, &want);

	/* TASKS ids and records: the group's part of them. */
	pt_ids_clear(&all);
	n = list_ids(PIDMAP_SCOPE_TASKS, 0, view, &all, &err);
	CHECK(n > 0, "%s: TASKS: %ld (%s)", vname, n, pt_errname(err));
	pt_ids_clear(&got);
	pt_ids_clear(&want);
	for (int i = 0; i < 2; i++)
		if (pt_ids_has(&all, tids[i]))
			pt_ids_push(&got, tids[i]);
	snprintf(rel, sizeof(rel), "%d/task", g->tgid);
	if (ref_readdir(ref, rel, &want))
		pt_ids_clear(&want);
	snprintf(what, sizeof(what), "%s: TASKS, the threads of %d", vname, g->tgid);
	check_ids(what, 0, 0, &got, 0, &want);

	pt_ids_clear(&all);
	n = list_records(PIDMAP_SCOPE_TASKS, 0, view, &all, &err);
	CHECK(n > 0, "%s: TASKS records: %ld (%s)", vname, n, pt_errname(err));
	pt_ids_clear(&got);
	for (int i = 0; i < 2; i++)
		if (pt_ids_has(&all, tids[i]))
			pt_ids_push(&got, tids[i]);
	{
		struct pt_ids listed = { 0 };

		snprintf(rel, sizeof(rel), "%d/task", g->tgid);
		pt_ids_clear(&want);
		if (!ref_readdir(ref, rel, &listed))
			for (int i = 0; i < 2; i++) {
				snprintf(rel, sizeof(rel), "%d/task/%d/stat", g->tgid, tids[i]);
				if (pt_ids_has(&listed, tids[i]) && !ref_errno(ref, rel, O_RDONLY))
					pt_ids_push(&want, tids[i]);
			}
		pt_ids_sort(&want);
		pt_ids_free(&listed);
	}
	snprintf(what, sizeof(what), "%s: TASKS records of %d's threads", vname, g->tgid);
	check_ids(what, 0, 0, &got, 0, &want);

	/* PROCS records: /proc/TGID/stat. */
	pt_ids_clear(&all);
	n = list_records(PIDMAP_SCOPE_PROCS, 0, view, &all, &err);
	snprintf(rel, sizeof(rel), "%d/stat", g->tgid);
	CHECK(pt_ids_has(&all, g->tgid) == !ref_errno(ref, rel, O_RDONLY),
	      "%s: PROCS record of %d: %s, opening its stat: %s", vname, g->tgid,
	      pt_ids_has(&all, g->tgid) ? "returned" : "withheld",
	      pt_errname(ref_errno(ref, rel, O_RDONLY)));

	/* CHILDREN: /proc/TGID searched, then each thread's children file. */
	pt_ids_clear(&want);
	want_err = ref_search_errno(ref, g->tgid);
	if (!want_err)
		for (int i = 0; i < 2; i++)
			ref_children(ref, g->tgid, tids[i], &want);
	pt_ids_sort(&want);
	pt_ids_clear(&got);
	n = list_ids(PIDMAP_SCOPE_CHILDREN, pidfd, view, &got, &err);
	snprintf(what, sizeof(what), "%s: CHILDREN of %d", vname, g->tgid);
	check_ids(what, n, err, &got, want_err, &want);

	/* CHILDREN records: those listed whose /proc/PID/stat opens. */
	if (!want_err) {
		struct pt_ids listed = want;

		want = (struct pt_ids){ 0 };
		for (size_t i = 0; i < listed.n; i++) {
			snprintf(rel, sizeof(rel), "%d/stat", listed.v[i]);
			if (!ref_errno(ref, rel, O_RDONLY))
				pt_ids_push(&want, listed.v[i]);
		}
		pt_ids_free(&listed);
	}
	pt_ids_clear(&got);
	n = list_records(PIDMAP_SCOPE_CHILDREN, pidfd, view, &got, &err);
	snprintf(what, sizeof(what), "%s: CHILDREN records of %d", vname, g->tgid);
	check_ids(what, n, err, &got, want_err, &want);

	/* fdmap: /proc/TGID/fd of the process, /proc/TGID/task/TID/fd of a thread. */
	for (int t = 0; t < 2; t++) {
		int fd = t ? tpidfd : pidfd;

		if (t)
			snprintf(rel, sizeof(rel), "%d/task/%d/fd", g->tgid, g->tid);
		else
			snprintf(rel, sizeof(rel), "%d/fd", g->tgid);
		pt_ids_clear(&want);
		want_err = ref_readdir(ref, rel, &want);
		pt_ids_clear(&got);
		n = fdmap_list(fd, view, 0, fds, 64);
		err = n < 0 ? errno : 0;
		for (long i = 0; i < n; i++)
			pt_ids_push(&got, fds[i]);
		pt_ids_sort(&got);
		snprintf(what, sizeof(what), "%s: fdmap of %s %d (%s)", vname,
			 t ? "thread" : "process", t ? g->tid : g->tgid, rel);
		check_ids(what, n, err, &got, want_err, &want);
	}
	close(tpidfd);
	close(pidfd);
	pt_ids_free(&got);
	pt_ids_free(&want);
	pt_ids_free(&all);
}

/* The reader: the policy is the one intended, then every check, both views. */
static struct tgroup lsm_groups[2];

static void smack_thread_reader(pid_t unused1, pid_t unused2)
{
	const struct tgroup *m = &lsm_groups[0], *p = &lsm_groups[1];
	struct pt_ids want = { 0 };
	char rel[96];
	int view, e;

	(void)unused1;
	(void)unused2;
	set_label("Reader");
	become_nobody();
	pt_name = "lsm(smack, per thread)";

	/* The scenario is in force, or the checks below prove nothing. */
	e = ref_children("/proc", m->tgid, m->tid, &want);
	CHECK(e == EACCES, "/proc/%d/task/%d/children (Secret thread): %s, not EACCES", m->tgid,
	      m->tid, pt_errname(e));
	pt_ids_clear(&want);
	e = ref_children("/proc", m->tgid, m->tgid, &want);
	CHECK(e == 0 && want.n == 1 && want.v[0] == m->leader_child,
	      "/proc/%d/task/%d/children: %s, %zu ids, not [%d]", m->tgid, m->tgid, pt_errname(e),
	      want.n, m->leader_child);
	snprintf(rel, sizeof(rel), "%d/stat", m->tid_child);
	e = ref_errno("/proc", rel, O_RDONLY);
	CHECK(e == EACCES, "/proc/%d/stat (C, Secret): %s, not EACCES", m->tid_child, pt_errname(e));
	snprintf(rel, sizeof(rel), "%d/task/%d/stat", p->tgid, p->tid);
	e = ref_errno("/proc", rel, O_RDONLY);
	CHECK(e == EACCES, "/proc/%s (Pub thread of a Secret leader): %s, not EACCES", rel,
	      pt_errname(e));
	snprintf(rel, sizeof(rel), "%d/stat", p->tid);
	e = ref_errno("/proc", rel, O_RDONLY);
	CHECK(e == 0, "/proc/%s (the same thread by its own id): %s", rel, pt_errname(e));
	snprintf(rel, sizeof(rel), "%d/task/%d/fd", m->tgid, m->tid);
	e = ref_errno("/proc", rel, O_RDONLY | O_DIRECTORY);
	CHECK(e == EACCES, "/proc/%s (Secret thread of a Pub leader): %s, not EACCES", rel,
	      pt_errname(e));
	snprintf(rel, sizeof(rel), "%d/task/%d/fd", m->tgid, m->tid);
	e = ref_errno(PROC_INVISIBLE, rel, O_RDONLY | O_DIRECTORY);
	CHECK(e == EACCES, "%s/%s (hidepid=invisible): %s, not EACCES", PROC_INVISIBLE, rel,
	      pt_errname(e));
	pt_ids_free(&want);

	view = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (view < 0)
		pt_die("open /proc");
	for (int i = 0; i < 2; i++) {
		thread_group_checks("procfs view", view, "/proc", &lsm_groups[i]);
		thread_group_checks("default view", -1, PROC_INVISIBLE, &lsm_groups[i]);
	}
	close(view);
}

/* Sets the groups up (as root), runs the reader, kills them. */
static void smack_per_thread(void)
{
	if (pt_write_file("/sys/fs/smackfs/load2", "Reader Pub rx"))
		pt_die("loading the Smack rules: %s", strerror(errno));
	mkdir(PROC_INVISIBLE, 0755);
	if (mount("proc", PROC_INVISIBLE, "proc", 0, "hidepid=invisible"))
		pt_die("mounting a hidepid=invisible /proc: %s", strerror(errno));
	lsm_groups[0] = spawn_group("Pub", "Secret", true);
	lsm_groups[1] = spawn_group("Secret", "Pub", false);
	run_child(smack_thread_reader, 0, 0);
	kill(lsm_groups[0].tid_child, SIGKILL);
	kill(lsm_groups[0].leader_child, SIGKILL);
	kill(lsm_groups[0].tgid, SIGKILL);
	kill(lsm_groups[1].tgid, SIGKILL);
	umount(PROC_INVISIBLE);
}

/* ------------------------------------------------------------------ */
/* Smack: a grant taken for threads that share their group's creds    */
/* ------------------------------------------------------------------ */

/*
 * A group whose threads share its credentials, as pthread_create() leaves
 * them, but one: leader L "Pub", then T2 (L's credentials), T3 (its own
 * label "Secret", so its own credentials), T4 (L's credentials again),
 * created in that order, so that a listing meets them as L, T2, T3, T4.
 * The kernel takes a grant of the LSMs for the next threads with the same
 * credentials: T2 and T4 come after L's grant, T3 between them, and must
 * be asked about and withheld. The group stays root (a setxid() would give
 * every thread credentials of its own); the reader, uid 65534 with label
 * Reader ("Reader Pub rx"), reads it through the procfs view, where
 * hidepid= is off and Smack alone decides.
 */
#define SHARED_THREADS 4

struct shared_group {
	pid_t tid[SHARED_THREADS];	/* [0] is the leader */
};

struct shared_thread_arg {
	const char *label;	/* its own, or NULL for the group's credentials */
	int ready[2];
};

static void *shared_thread(void *p)
{
	struct shared_thread_arg *a = p;
	pid_t tid;

	if (a->label)
		set_thread_label(a->label);
	tid = pt_gettid();
	if (write(a->ready[1], &tid, sizeof(tid)) != sizeof(tid))
		pt_die("thread ready");
	for (;;)
		pause();
	return NULL;
}

static struct shared_group spawn_shared_group(void)
{
	static const char *labels[SHARED_THREADS] = { NULL, NULL, "Secret", NULL };
	struct shared_group g = { 0 };
	int report[2];
	pid_t pid;

	if (pipe2(report, O_CLOEXEC))
		pt_die("pipe2");
	pid = fork();
	if (pid < 0)
		pt_die("fork");
	if (pid == 0) {
		static struct shared_thread_arg args[SHARED_THREADS];
		pthread_t th;

		close(report[0]);
		set_label("Pub");
		g.tid[0] = getpid();
		/* One at a time, so that the tids ascend in this order. */
		for (int i = 1; i < SHARED_THREADS; i++) {
			args[i].label = labels[i];
			if (pipe2(args[i].ready, O_CLOEXEC) ||
			    pthread_create(&th, NULL, shared_thread, &args[i]))
				pt_die("pthread_create");
			if (read(args[i].ready[0], &g.tid[i], sizeof(pid_t)) != sizeof(pid_t))
				pt_die("thread %d never got ready", i);
		}
		if (write(report[1], &g, sizeof(g)) != sizeof(g))
			pt_die("report");
		for (;;)
			pause();
	}
	close(report[1]);
	if (read(report[0], &g, sizeof(g)) != sizeof(g))
		pt_die("group %d never reported", pid);
	close(report[0]);
	return g;
}

static struct shared_group shared_group;

/* The threads whose records @scope gives (THREADS of the group, or TASKS). */
static void shared_records(const char *what, __u32 scope, int view)
{
	const struct shared_group *g = &shared_group;
	struct pt_ids got = { 0 }, want = { 0 }, all = { 0 };
	int pidfd = scope == PIDMAP_SCOPE_THREADS ? pt_pidfd(g->tid[0], 0) : 0;
	char rel[96];
	int err;
	long n;

	n = list_records(scope, pidfd, view, &all, &err);
	CHECK(n > 0, "%s: %ld (%s)", what, n, pt_errname(err));
	for (int i = 0; i < SHARED_THREADS; i++) {
		if (pt_ids_has(&all, g->tid[i]))
			pt_ids_push(&got, g->tid[i]);
		snprintf(rel, sizeof(rel), "%d/task/%d/stat", g->tid[0], g->tid[i]);
		if (!ref_errno("/proc", rel, O_RDONLY))
			pt_ids_push(&want, g->tid[i]);
	}
	pt_ids_sort(&got);
	pt_ids_sort(&want);
	check_ids(what, 0, 0, &got, 0, &want);
	if (pidfd > 0)
		close(pidfd);
	pt_ids_free(&got);
	pt_ids_free(&want);
	pt_ids_free(&all);
}

static void smack_shared_reader(pid_t unused1, pid_t unused2)
{
	const struct shared_group *g = &shared_group;
	char rel[96], what[96];
	int view, e;

	(void)unused1;
	(void)unused2;
	set_label("Reader");
	become_nobody();
	pt_name = "lsm(smack, shared credentials)";

	/* The scenario is in force: T3 alone is denied. */
	for (int i = 0; i < SHARED_THREADS; i++) {
		snprintf(rel, sizeof(rel), "%d/task/%d/stat", g->tid[0], g->tid[i]);
		e = ref_errno("/proc", rel, O_RDONLY);
		CHECK(e == (i == 2 ? EACCES : 0), "/proc/%s: %s", rel, pt_errname(e));
	}
	view = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (view < 0)
		pt_die("open /proc");
	/* Several times: a grant kept from one call must not leak into another. */
	for (int round = 0; round < 3; round++) {
		snprintf(what, sizeof(what), "THREADS records of %d, round %d", g->tid[0], round);
		shared_records(what, PIDMAP_SCOPE_THREADS, view);
		snprintf(what, sizeof(what), "TASKS records, %d's threads, round %d", g->tid[0],
			 round);
		shared_records(what, PIDMAP_SCOPE_TASKS, view);
	}
	close(view);
}

/* The group's threads share one set of credentials but T3: Smack's grant reused. */
static void smack_shared_creds(void)
{
	shared_group = spawn_shared_group();
	run_child(smack_shared_reader, 0, 0);
	kill(shared_group.tid[0], SIGKILL);
}

/* ------------------------------------------------------------------ */
/* SELinux: no AVC record where the calls check without auditing        */
/* ------------------------------------------------------------------ */

/* This process as the audit daemon: AVC records come to @fd. */
static int audit_become_daemon(pid_t pid)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct {
		struct nlmsghdr h;
		struct audit_status s;
	} req;
	static int fd = -1;

	if (fd < 0)
		fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	if (fd < 0)
		pt_die("the audit netlink socket: %s (CONFIG_AUDIT?)", strerror(errno));
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = AUDIT_SET;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.s.mask = AUDIT_STATUS_PID;
	req.s.pid = pid;
	if (sendto(fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		pt_die("AUDIT_SET pid %d: %s", pid, strerror(errno));
	return fd;
}

/*
 * The AVC records that reach @fd until none came for half a second (the
 * kernel's audit thread sends them on its own time).
 */
static long audit_count_avc(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char buf[8192];
	long avc = 0;

	while (poll(&pfd, 1, 500) > 0) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (n <= 0)
			break;
		for (; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n))
			if (h->nlmsg_type == AUDIT_AVC)
				avc++;
	}
	return avc;
}

/* The reader's default-view listings, which must not audit. */
static void selinux_quiet_listings(pid_t secret, pid_t floor)
{
	static struct pidmap_info recs[NREC];
	__u32 ids[NREC];
	long n;

	(void)floor;
	become_nobody();
	pt_name = "lsm(selinux, audit)";
	n = pidmap_list(PIDMAP_SCOPE_PROCS, 0, -1, 0, 0, ids, NREC);
	CHECK(n > 0, "pidmap(2), default view: %ld (%s)", n, strerror(errno));
	for (long i = 0; i < n; i++)
		CHECK((pid_t)ids[i] != secret, "the default view lists Secret (%d)", secret);
	n = pidmap_list(PIDMAP_SCOPE_TASKS, 0, -1, 0, 0, ids, NREC);
	CHECK(n > 0, "pidmap(2) TASKS, default view: %ld (%s)", n, strerror(errno));
	n = pidmap_info_list(PIDMAP_SCOPE_PROCS, 0, -1, 0, 0, recs, NREC, sizeof(*recs),
			     PIDMAP_INFO_ALL_FIELDS);
	CHECK(n > 0, "pidmap_info(2), default view: %ld (%s)", n, strerror(errno));
}

/* A denied open of Secret's stat: audited, as it always was. */
static void selinux_denied_open(pid_t secret, pid_t floor)
{
	(void)floor;
	become_nobody();
	pt_name = "lsm(selinux, audit)";
	CHECK(open_errno("/proc/%d/stat", secret, O_RDONLY) == EACCES,
	      "opening Secret's stat is not EACCES");
}

/*
 * The default view checks each task with PTRACE_MODE_NOAUDIT: no AVC
 * record for a task hidden from an unprivileged listing (the SELinux prep
 * patch makes selinux_ptrace_access_check() honour the flag). The denied
 * open beside it shows that the records are counted at all.
 */
static void selinux_audit_checks(pid_t secret, pid_t floor)
{
	int fd = audit_become_daemon(getpid());
	long quiet, loud;

	pt_name = "lsm(selinux, audit)";
	audit_count_avc(fd);
	run_child(selinux_quiet_listings, secret, floor);
	quiet = audit_count_avc(fd);
	run_child(selinux_denied_open, secret, floor);
	loud = audit_count_avc(fd);
	audit_become_daemon(0);
	printf("lsm(selinux, audit): AVC records: %ld for 3 unprivileged default-view listings "
	       "with a hidden secret_t task, %ld for one denied open of its stat\n",
	       quiet, loud);
	CHECK(quiet == 0, "%ld AVC records for default-view listings that check with "
	      "PTRACE_MODE_NOAUDIT", quiet);
	CHECK(loud >= 1, "no AVC record for a denied open of /proc/%d/stat: the count proves "
	      "nothing", secret);
}

/* ------------------------------------------------------------------ */
/* Smack: a denial audited as the open's                                */
/* ------------------------------------------------------------------ */

/*
 * A Secret process of one thread (its leader and its thread share the
 * label) with a child, and a reader labelled Peek, which may search
 * Secret's directories ("Peek Secret x") but not read its files. The
 * children file of the thread, /proc/S/task/S/children, is then reached
 * and denied: the one check Smack makes for a thread labelled as its
 * leader fails, unaudited, and is made again step by step.
 */
static void parent_of_one(const char *label)
{
	set_label(label);
	become_nobody();
	/* Its own process group: both are killed by one kill(). */
	setpgid(0, 0);
	if (fork() == 0) {
		for (;;)
			pause();
	}
}

static pid_t spawn_parent_of_one(const char *label)
{
	return spawn_prepared(parent_of_one, label, "the parent of one");
}

static void peek_children_call(pid_t parent, pid_t unused)
{
	__u32 ids[NREC];
	int pidfd, view;
	long n;

	(void)unused;
	pidfd = pt_pidfd(parent, 0);
	set_label("Peek");
	become_nobody();
	pt_name = "lsm(smack, audit)";
	view = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (view < 0)
		pt_die("open /proc as Peek: %s", strerror(errno));
	n = pidmap_list(PIDMAP_SCOPE_CHILDREN, pidfd, view, 0, 0, ids, NREC);
	CHECK(n == 0, "CHILDREN of Secret as Peek: %ld (%s), not none", n,
	      n < 0 ? pt_errname(errno) : "listed");
}

static void peek_children_open(pid_t parent, pid_t unused)
{
	char rel[64];
	int e;

	(void)unused;
	set_label("Peek");
	become_nobody();
	pt_name = "lsm(smack, audit)";
	snprintf(rel, sizeof(rel), "%d/task/%d/children", parent, parent);
	e = ref_errno("/proc", rel, O_RDONLY);
	CHECK(e == EACCES, "/proc/%s as Peek: %s, not EACCES", rel, pt_errname(e));
}

static void smack_audit_checks(void)
{
	pid_t parent;
	long call, opened;
	int fd;

	if (pt_write_file("/sys/fs/smackfs/load2", "Peek _ rwxa") ||
	    pt_write_file("/sys/fs/smackfs/load2", "Peek Secret x"))
		pt_die("loading the Smack rules: %s", strerror(errno));
	parent = spawn_parent_of_one("Secret");
	fd = audit_become_daemon(getpid());
	pt_name = "lsm(smack, audit)";
	audit_count_avc(fd);
	run_child(peek_children_call, parent, 0);
	call = audit_count_avc(fd);
	run_child(peek_children_open, parent, 0);
	opened = audit_count_avc(fd);
	audit_become_daemon(0);
	kill(-parent, SIGKILL);
	kill(parent, SIGKILL);
	printf("lsm(smack, audit): Smack records: %ld for a CHILDREN listing denied the "
	       "children file, %ld for the denied open of that file\n", call, opened);
	CHECK(opened >= 1, "no Smack record for a denied open: the count proves nothing");
	CHECK(call == opened, "%ld Smack records for the listing, %ld for the open", call,
	      opened);
}

/* ------------------------------------------------------------------ */
/* AppArmor: a profile's file rules, by path                            */
/* ------------------------------------------------------------------ */

/*
 * Groups of two threads, each thread with a child, until the leaders and
 * the other threads include both even and odd ids: the AppArmor profile
 * and the TOMOYO domain tell them apart by parity.
 */
#define PARITY_GROUPS 4

static struct tgroup parity_groups[PARITY_GROUPS];

static void kill_parity_groups(void)
{
	for (int i = 0; i < PARITY_GROUPS; i++) {
		kill(parity_groups[i].tid_child, SIGKILL);
		kill(parity_groups[i].leader_child, SIGKILL);
		kill(parity_groups[i].tgid, SIGKILL);
	}
}

static void spawn_parity_groups(void)
{
	int tries = 0;

	for (;;) {
		int even_l = 0, even_t = 0;

		for (int i = 0; i < PARITY_GROUPS; i++) {
			/*
			 * Pids come in order, four a group: burn ids until
			 * the next is of the parity wanted, so the leaders
			 * (and the threads after them) alternate.
			 */
			for (int burn = 0; burn < 4; burn++) {
				pid_t dummy = fork();

				if (dummy < 0)
					pt_die("fork");
				if (dummy == 0)
					_exit(0);
				waitpid(dummy, NULL, 0);
				if ((dummy + 1) % 2 == i % 2)
					break;
			}
			parity_groups[i] = spawn_group(NULL, NULL, true);
		}
		for (int i = 0; i < PARITY_GROUPS; i++) {
			even_l += parity_groups[i].tgid % 2 == 0;
			even_t += parity_groups[i].tid % 2 == 0;
		}
		if (even_l && even_l < PARITY_GROUPS && even_t && even_t < PARITY_GROUPS)
			return;
		kill_parity_groups();
		if (++tries == 20) {
			errno = 0;
			pt_die("no mix of even and odd ids in 20 tries");
		}
	}
}

/*
 * Outcomes of opening one kind of file over every group: both must occur,
 * a denial with the LSM's @denied errno.
 */
static void both_outcomes(const char *what, const char *fmt, bool thread, int denied_errno)
{
	int allowed = 0, denied = 0;

	for (int i = 0; i < PARITY_GROUPS; i++) {
		char rel[96];
		int e;

		if (thread)
			snprintf(rel, sizeof(rel), fmt, parity_groups[i].tgid, parity_groups[i].tid);
		else
			snprintf(rel, sizeof(rel), fmt, parity_groups[i].tgid);
		e = ref_errno("/proc", rel, O_RDONLY);
		allowed += e == 0;
		denied += e == denied_errno;
	}
	CHECK(allowed && denied, "%s: %d groups may open it, %d get %s: the policy is not "
	      "in force as written", what, allowed, denied, pt_errname(denied_errno));
}

/* Opening each denied kind of file gives both outcomes over the groups. */
static void parity_policy_in_force(int denied_errno)
{
	both_outcomes("/proc/PID/stat", "%d/stat", false, denied_errno);
	both_outcomes("/proc/PID/fd", "%d/fd", false, denied_errno);
	both_outcomes("/proc/PID/task", "%d/task", false, denied_errno);
	both_outcomes("/proc/PID/task/TID/stat", "%d/task/%d/stat", true, denied_errno);
	both_outcomes("/proc/PID/task/TID/children", "%d/task/%d/children", true,
		      denied_errno);
}

/*
 * Every check of every group through a /proc fd opened before the policy
 * applied (@kept), one opened under it (@fresh) and in the default view.
 */
static void parity_group_checks(int kept, int fresh)
{
	for (int i = 0; i < PARITY_GROUPS; i++) {
		thread_group_checks("/proc fd kept from before the policy", kept, "/proc",
				    &parity_groups[i]);
		thread_group_checks("/proc fd opened under the policy", fresh, "/proc",
				    &parity_groups[i]);
		thread_group_checks("default view", -1, "/proc", &parity_groups[i]);
	}
}

/*
 * cargo xtask compiles this profile with Debian's apparmor_parser (AppArmor
 * 3.0's feature ABI) and puts the binary policy here; lsm loads it through
 * securityfs. pidmap_reader may do everything but open the stat file,
 * the fd and task directories and the children file of a task whose id is
 * even, as /proc/PID/... or /proc/PID/task/TID/... (xtask/src/guest/selinux.rs,
 * APPARMOR_PROFILE, has the rules), so every call's answer for a task can be told from its neighbour's, and
 * must be what opening the file gives the confined caller: through a /proc
 * fd opened before the profile applied, through one opened after, and in
 * the default view (whose paths the hook builds below /proc).
 */
#define APPARMOR_POLICY "/etc/pidmap-apparmor.policy"
#define APPARMOR_PROFILE "pidmap_reader"

static void load_apparmor_policy(void)
{
	struct stat st;
	char *policy;
	int fd, out;

	fd = open(APPARMOR_POLICY, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		pt_die("%s: %s", APPARMOR_POLICY, strerror(errno));
	policy = malloc(st.st_size);
	if (!policy || read(fd, policy, st.st_size) != st.st_size)
		pt_die("reading %s", APPARMOR_POLICY);
	close(fd);
	out = open("/sys/kernel/security/apparmor/.load", O_WRONLY | O_CLOEXEC);
	if (out < 0 || write(out, policy, st.st_size) != st.st_size)
		pt_die("loading the AppArmor policy: %s", strerror(errno));
	close(out);
	free(policy);
}

static void apparmor_reader(pid_t unused1, pid_t unused2)
{
	int kept, fresh;

	(void)unused1;
	(void)unused2;
	pt_name = "lsm(apparmor)";
	kept = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (kept < 0)
		pt_die("open /proc");
	become_nobody();
	if (pt_write_file("/proc/self/attr/apparmor/current",
			  "changeprofile " APPARMOR_PROFILE))
		pt_die("changing to profile %s: %s", APPARMOR_PROFILE, strerror(errno));
	fresh = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fresh < 0)
		pt_die("open /proc under the profile: %s", strerror(errno));

	parity_policy_in_force(EACCES);
	parity_group_checks(kept, fresh);
	close(fresh);
	close(kept);
}

static void apparmor_checks(void)
{
	load_apparmor_policy();
	spawn_parity_groups();
	run_child(apparmor_reader, 0, 0);
	kill_parity_groups();
}

/* ------------------------------------------------------------------ */
/* TOMOYO: a domain's "file read" entries, by name                      */
/* ------------------------------------------------------------------ */

/*
 * The boot (xtask/src/guest/tomoyo.rs) names a loader that does nothing
 * and TOMOYO_TRIGGER as the activation trigger: lsm writes the policy
 * through securityfs while TOMOYO is not yet active (anyone root may),
 * then runs the trigger, whose exec makes TOMOYO check the profiles and
 * enforce them. Every domain uses profile 0, which enables nothing, but
 * TOMOYO_DOMAIN: profile 1 enforces "file open", and the domain's
 * entries allow reading /proc, and the stat file, the fd and task
 * directories and the children file of a task whose id is odd, as
 * /proc/PID/... or /proc/PID/task/TID/...: the same files the AppArmor
 * profile denies for even ids, with TOMOYO's EPERM. The reader enters the
 * domain through self_domain, which lsm's own domain may do.
 */
#define TOMOYO_DIR "/sys/kernel/security/tomoyo/"
#define TOMOYO_TRIGGER "/tmp/pidmap-tomoyo-activate"
#define TOMOYO_DOMAIN "<kernel> /pidmap_reader"

static void tomoyo_write(const char *file, const char *text)
{
	char path[128];

	snprintf(path, sizeof(path), TOMOYO_DIR "%s", file);
	if (pt_write_file(path, text))
		pt_die("writing the TOMOYO %s: %s", file, strerror(errno));
}

static void load_tomoyo_policy(void)
{
	static const char *const odd_files[] = {
		"proc:/\\*%c/stat", "proc:/\\*%c/fd/", "proc:/\\*%c/task/",
		"proc:/\\$/task/\\*%c/stat", "proc:/\\$/task/\\*%c/fd/",
		"proc:/\\$/task/\\*%c/children",
	};
	char self[512] = "", policy[4096], *p = policy, *end = policy + sizeof(policy);
	int status, err;
	pid_t pid;

	tomoyo_write("profile", "PROFILE_VERSION=20150505\n"
		     "0-CONFIG={ mode=disabled }\n"
		     "1-CONFIG={ mode=disabled }\n"
		     "1-CONFIG::file::open={ mode=enforcing grant_log=no reject_log=yes }\n");
	/* lsm's own domain may enter the reader's. */
	err = read_file(TOMOYO_DIR "self_domain", self, sizeof(self));
	self[strcspn(self, "\n")] = 0;
	if (err || strncmp(self, "<kernel>", 8))
		pt_die("reading the TOMOYO self_domain: %s \"%s\"", strerror(-err), self);
	/*
	 * Besides the files, the reader opens /proc, pidfds (O_RDWR) and
	 * self_domain, to see that it is in the domain.
	 */
	p += snprintf(p, end - p, "%s\ntask manual_domain_transition " TOMOYO_DOMAIN "\n\n"
		      TOMOYO_DOMAIN "\nuse_profile 1\nfile read proc:/\n"
		      "file read anon_inode:[pidfd]\nfile write anon_inode:[pidfd]\n"
		      "file read securityfs:/tomoyo/self_domain\n", self);
	for (const char *d = "13579"; *d; d++)
		for (size_t i = 0; i < sizeof(odd_files) / sizeof(odd_files[0]); i++) {
			p += snprintf(p, end - p, "file read ");
			p += snprintf(p, end - p, odd_files[i], *d);
			p += snprintf(p, end - p, "\n");
		}
	if (p >= end)
		pt_die("the TOMOYO policy is longer than %zu bytes", sizeof(policy));
	tomoyo_write("domain_policy", policy);

	/* The trigger: TOMOYO runs the loader, checks the profiles, enforces. */
	if (symlink("/bin/true", TOMOYO_TRIGGER) && errno != EEXIST)
		pt_die("symlink %s: %s", TOMOYO_TRIGGER, strerror(errno));
	pid = fork();
	if (pid < 0)
		pt_die("fork");
	if (pid == 0) {
		execl(TOMOYO_TRIGGER, "true", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		pt_die("the TOMOYO trigger %s failed (%#x)", TOMOYO_TRIGGER, status);
}

static void tomoyo_reader(pid_t unused1, pid_t unused2)
{
	char domain[256] = "";
	int kept, fresh, err;

	(void)unused1;
	(void)unused2;
	pt_name = "lsm(tomoyo)";
	kept = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (kept < 0)
		pt_die("open /proc");
	become_nobody();
	if (pt_write_file(TOMOYO_DIR "self_domain", TOMOYO_DOMAIN))
		pt_die("entering the TOMOYO domain %s: %s", TOMOYO_DOMAIN, strerror(errno));
	err = read_file(TOMOYO_DIR "self_domain", domain, sizeof(domain));
	domain[strcspn(domain, "\n")] = 0;
	CHECK(!err && !strcmp(domain, TOMOYO_DOMAIN), "TOMOYO domain: \"%s\" (%s), not %s",
	      domain, strerror(-err), TOMOYO_DOMAIN);
	fresh = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fresh < 0)
		pt_die("open /proc in the TOMOYO domain: %s", strerror(errno));

	parity_policy_in_force(EPERM);
	parity_group_checks(kept, fresh);
	close(fresh);
	close(kept);
}

static void tomoyo_checks(void)
{
	load_tomoyo_policy();
	spawn_parity_groups();
	run_child(tomoyo_reader, 0, 0);
	kill_parity_groups();
}

static void landlocked2(pid_t floor, pid_t unused)
{
	(void)unused;
	landlocked(floor);
}

int main(void)
{
	const char *want = getenv("PIDMAP_LSM") ? getenv("PIDMAP_LSM") : "smack";
	bool selinux = strcmp(want, "selinux") == 0;
	bool apparmor = strncmp(want, "apparmor", 8) == 0;
	bool tomoyo = strcmp(want, "apparmor,tomoyo") == 0;
	char lsms[256] = "";
	long splats0 = pt_count_splats();
	pid_t secret, floor;
	int err;

	pt_name = "lsm";
	pt_require_syscalls();
	mkdir("/sys/kernel/security", 0755);
	if (mount("securityfs", "/sys/kernel/security", "securityfs", 0, NULL) &&
	    errno != EBUSY) {
		printf("lsm: FAIL: mounting securityfs: %s (CONFIG_SECURITYFS?)\n",
		       strerror(errno));
		return KSFT_FAIL;
	}
	err = read_file("/sys/kernel/security/lsm", lsms, sizeof(lsms));
	if (err || !strstr(lsms, apparmor ? "apparmor" : want) || !strstr(lsms, "landlock") ||
	    (tomoyo && !strstr(lsms, "tomoyo"))) {
		printf("lsm: FAIL: %s and Landlock must be active, the kernel has \"%s\" (%s)\n",
		       want, lsms, err ? strerror(-err) : "read");
		return KSFT_FAIL;
	}
	if (apparmor) {
		secret = spawn_target(NULL);
		floor = spawn_target(NULL);
		apparmor_checks();
		if (tomoyo)
			tomoyo_checks();
	} else if (selinux) {
		load_selinux_policy();
		secret = spawn_selinux_target(SELINUX_SECRET);
		floor = spawn_selinux_target(NULL);
		run_child(selinux_reader, secret, floor);
		selinux_audit_checks(secret, floor);
	} else {
		mkdir("/sys/fs/smackfs", 0755);
		mount("smackfs", "/sys/fs/smackfs", "smackfs", 0, NULL);
		if (pt_write_file("/sys/fs/smackfs/load2", "Reader _ rwxa") ||
		    pt_write_file("/sys/fs/smackfs/load2", "Secret _ rwxa"))
			pt_die("loading the Smack rules: %s", strerror(errno));
		secret = spawn_target("Secret");
		floor = spawn_target(NULL);
		run_child(smack_reader, secret, floor);
		smack_per_thread();
		smack_shared_creds();
		smack_audit_checks();
	}
	run_child(landlocked2, floor, 0);
	kill(secret, SIGKILL);
	kill(floor, SIGKILL);
	while (wait(NULL) > 0)
		;

	printf("RELIABILITY: name=lsm checks=%lu failures=%lu splats=%ld\n", checks, failures,
	       pt_new_splats(splats0));
	if (failures || pt_new_splats(splats0) > 0) {
		printf("lsm: FAIL\n");
		return KSFT_FAIL;
	}
	printf("lsm: PASS\n");
	return KSFT_PASS;
}
