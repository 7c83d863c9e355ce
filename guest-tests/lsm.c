// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * lsm: pidmap_info(2) and fdmap(2) withhold exactly what a real LSM makes
 * /proc withhold (security_task_read_info(), pidmap series 0001-0004).
 *
 * Our kernels boot with Smack and Landlock active, and once more with
 * SELinux and Landlock (lsm=landlock,selinux: Smack and SELinux cannot be
 * active at once), where PIDMAP_LSM=selinux: a kernel without the LSM the
 * boot asks for fails this test, it never skips.
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
 * SELinux: the same checks, with a minimal policy (cargo xtask builds it
 * from the kernel's class map with scripts/selinux/mdp and Debian's
 * checkpolicy) of two domains: base_t, which everything starts in, may do
 * everything to secret_t except read its files and search, read or open
 * its directories, which is exactly what /proc/PID of a secret_t task
 * needs. The policy is loaded and enforced here; the Secret target enters
 * secret_t through /proc/self/attr/current, the floor target and the
 * reader stay in base_t.
 *
 * Landlock: a caller that opened /proc before landlock_restrict_self() with
 * a ruleset that handles reading files and directories and allows neither:
 * opening /proc/FLOOR/stat fails, and through the kept /proc fd pidmap(2)
 * still lists ids (the kept fd may be read) while pidmap_info(2) returns no
 * record and fdmap(2) of the floor target fails with EACCES.
 */
#define _GNU_SOURCE
#include <linux/landlock.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <grp.h>

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
				     sizeof(*recs), PIDMAP_INFO_ALL_V3);
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

/* A target in SELinux @context (NULL: stays in base_t), uid 65534. */
static pid_t spawn_selinux_target(const char *context)
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
		if (context && pt_write_file("/proc/self/attr/current", context))
			pt_die("entering %s: %s", context, strerror(errno));
		become_nobody();
		if (write(ready[1], "r", 1) != 1)
			pt_die("ready");
		for (;;)
			pause();
	}
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		pt_die("target %d never got ready in %s", pid, context ? context : "base_t");
	close(ready[0]);
	return pid;
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
			     PIDMAP_INFO_ALL_V3);
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

static void landlocked2(pid_t floor, pid_t unused)
{
	(void)unused;
	landlocked(floor);
}

int main(void)
{
	const char *want = getenv("PIDMAP_LSM") ? getenv("PIDMAP_LSM") : "smack";
	bool selinux = strcmp(want, "selinux") == 0;
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
	if (err || !strstr(lsms, want) || !strstr(lsms, "landlock")) {
		printf("lsm: FAIL: %s and Landlock must be active, the kernel has \"%s\" (%s)\n",
		       want, lsms, err ? strerror(-err) : "read");
		return KSFT_FAIL;
	}
	if (selinux) {
		load_selinux_policy();
		secret = spawn_selinux_target(SELINUX_SECRET);
		floor = spawn_selinux_target(NULL);
		run_child(selinux_reader, secret, floor);
	} else {
		mkdir("/sys/fs/smackfs", 0755);
		mount("smackfs", "/sys/fs/smackfs", "smackfs", 0, NULL);
		if (pt_write_file("/sys/fs/smackfs/load2", "Reader _ rwxa") ||
		    pt_write_file("/sys/fs/smackfs/load2", "Secret _ rwxa"))
			pt_die("loading the Smack rules: %s", strerror(errno));
		secret = spawn_target("Secret");
		floor = spawn_target(NULL);
		run_child(smack_reader, secret, floor);
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
