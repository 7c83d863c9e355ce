/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * hidepid_views.h: the harness of the guest tests that compare what pidmap
 * shows through a procfs view with what that procfs mount shows itself
 * (visibility.c, taskinfo.c).
 *
 * procfs is mounted again at <base>/<view> with every hidepid= value and
 * with hidepid=invisible,gid=HIDEPID_GROUP, in a mount namespace of the
 * test's own.  Three callers -- uid HIDEPID_NOBODY, the same uid in group
 * HIDEPID_GROUP, and root -- each run the test's check of every view in a
 * child process of their own: once per mount (with an O_PATH fd of it) and
 * once for the default view (fd -1), against the mount that shows what the
 * default view must show (fail closed: invisible without the gid= group
 * for a user, everything for root).
 *
 * Results go to memory shared with the callers (hidepid_shared_alloc());
 * the targets the callers look at are usually parked processes
 * (parked_process.h), ended with release_parked_and_reap().
 */
#ifndef HIDEPID_VIEWS_H
#define HIDEPID_VIEWS_H

#include "pidmap_test.h"

#include <grp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define HIDEPID_NOBODY 65534	/* the unprivileged caller */
#define HIDEPID_OTHER 65533	/* another user, owner of some targets */
#define HIDEPID_GROUP 65500	/* the gid= group of the "gid" view */
#define HIDEPID_STR_(x) #x
#define HIDEPID_STR(x) HIDEPID_STR_(x)

static const struct hidepid_view {
	const char *name, *opts;
} hidepid_views[] = {
	{ "off", "hidepid=off" },
	{ "noaccess", "hidepid=noaccess" },
	{ "invisible", "hidepid=invisible" },
	{ "ptraceable", "hidepid=ptraceable" },
	{ "gid", "hidepid=invisible,gid=" HIDEPID_STR(HIDEPID_GROUP) },
};
#define HIDEPID_NVIEWS (int)(sizeof(hidepid_views) / sizeof(hidepid_views[0]))

/* <base>/<view>: where the procfs of @view is mounted. */
static inline void hidepid_view_path(char *buf, size_t size, const char *base, const char *view)
{
	snprintf(buf, size, "%s/%s", base, view);
}

/* Every view mounted below @base, in a private mount namespace. */
static inline void hidepid_mount_views(const char *base)
{
	char path[64];
	int i;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		pt_die("private mount namespace");
	mkdir(base, 0755);
	for (i = 0; i < HIDEPID_NVIEWS; i++) {
		hidepid_view_path(path, sizeof(path), base, hidepid_views[i].name);
		mkdir(path, 0755);
		if (mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  hidepid_views[i].opts))
			pt_die("mount proc %s at %s", hidepid_views[i].opts, path);
	}
}

static inline void hidepid_unmount_views(const char *base)
{
	char path[64];
	int i;

	for (i = 0; i < HIDEPID_NVIEWS; i++) {
		hidepid_view_path(path, sizeof(path), base, hidepid_views[i].name);
		umount2(path, MNT_DETACH);
	}
}

/*
 * Names the test @name, requires the syscalls and root (mounting procfs
 * and switching uids need it) and arms a watchdog.  0, or KSFT_FAIL.
 */
static inline int hidepid_test_start(const char *name)
{
	pt_name = name;
	pt_require_syscalls();
	if (getuid() != 0) {
		pt_err("must run as root (it mounts procfs and switches uids)");
		return KSFT_FAIL;
	}
	alarm(280);
	return 0;
}

/* Zeroed memory that the callers' child processes write and main reads. */
static inline void *hidepid_shared_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		pt_die("mmap");
	return p;
}

/*
 * One view's check: what pidmap shows through @procfs_fd (-1: the default
 * view) against the procfs mounted at @mount.
 */
typedef void (*hidepid_view_check)(const char *caller, const char *view, int procfs_fd,
				   const char *mount);

/* @check of every mounted view, then of the default view. */
static inline void hidepid_check_every_view(const char *base, const char *caller,
					    hidepid_view_check check)
{
	char path[64];
	int i, fd;

	for (i = 0; i < HIDEPID_NVIEWS; i++) {
		hidepid_view_path(path, sizeof(path), base, hidepid_views[i].name);
		fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			pt_die("open %s", path);
		check(caller, hidepid_views[i].name, fd, path);
		close(fd);
	}
	/*
	 * No view: hidepid=invisible of our pid namespace, no gid= exemption
	 * (the group member gets none either); root sees everything.
	 */
	hidepid_view_path(path, sizeof(path), base, getuid() ? "invisible" : "off");
	check(caller, "default", -1, path);
}

/*
 * In a target process: becomes real uid @ruid and effective uid @euid,
 * without supplementary groups (unless @euid is ours already), dumpable
 * or not.
 */
static inline void hidepid_become_target(uid_t ruid, uid_t euid, int dumpable)
{
	if (euid != getuid()) {
		if (setgroups(0, NULL) || setgid(euid) || setresuid(ruid, euid, euid))
			pt_die("become %d/%d", (int)ruid, (int)euid);
	}
	if (prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0))
		pt_die("PR_SET_DUMPABLE");
}

struct hidepid_caller {
	const char *name;
	uid_t uid;
	int in_group;	/* a member of HIDEPID_GROUP */
};

static const struct hidepid_caller hidepid_callers[] = {
	{ "uid65534", HIDEPID_NOBODY, 0 },
	{ "uid65534+gid", HIDEPID_NOBODY, 1 },
	{ "root", 0, 0 },
};
#define HIDEPID_NCALLERS (int)(sizeof(hidepid_callers) / sizeof(hidepid_callers[0]))

/* In a child: drops the release pipe's write end, becomes @who (dumpable). */
static inline void hidepid_become_caller(const struct hidepid_caller *who, int release_wr)
{
	gid_t g = HIDEPID_GROUP;

	if (release_wr >= 0)
		close(release_wr);
	if (!who->uid)
		return;
	if (setgroups(who->in_group ? 1 : 0, &g) || setgid(who->uid) || setuid(who->uid))
		pt_die("become %d", (int)who->uid);
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		pt_die("PR_SET_DUMPABLE");
}

/* Runs hidepid_check_every_view() as @who in a child; 0, or 1 if it failed. */
static inline int hidepid_run_caller(const struct hidepid_caller *who, const char *base,
				     int release_wr, hidepid_view_check check)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		pt_die("fork");
	if (pid == 0) {
		hidepid_become_caller(who, release_wr);
		hidepid_check_every_view(base, who->name, check);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		pt_die("waitpid");
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return 0;
	pt_err("caller %s ended with status %#x", who->name, status);
	return 1;
}

/* Every caller, one after the other; how many of them failed. */
static inline int hidepid_run_callers(const char *base, int release_wr,
				      hidepid_view_check check)
{
	int i, failed = 0;

	for (i = 0; i < HIDEPID_NCALLERS; i++)
		failed += hidepid_run_caller(&hidepid_callers[i], base, release_wr, check);
	return failed;
}

/*
 * Closes our write end of the release pipe (the parked processes exit)
 * and reaps every child; whether any of them failed.
 */
static inline int release_parked_and_reap(int release_wr)
{
	int status, failed = 0;

	close(release_wr);
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed = 1;
	return failed;
}

#endif /* HIDEPID_VIEWS_H */
