// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * workload: the fixed process table of the procps identity tests
 * (identity.sh), and a seccomp wrapper for them.
 *
 *   workload fixed
 *	forks the fixture below, prints "ready PID PID,PID..." (the member of
 *	uid 65534, then every member) once every member is in its final
 *	state, then waits for SIGTERM and SIGKILLs the members.
 *	- processes named with spaces, parentheses, a newline, a tab, UTF-8,
 *	  a leading dash, and a name longer than comm's 15 bytes, each
 *	  re-executed with an argv of the same kind (so cmdline is odd too);
 *	- a process of 8 threads with odd thread names;
 *	- a zombie (a child whose parent never waits for it);
 *	- a stopped process (SIGSTOP);
 *	- a process of uid/gid 65534 with 2 threads, and one more that is not
 *	  dumpable (so its /proc directory is root's);
 *	- a process whose leader called pthread_exit() while its threads live;
 *	- a session leader, a nice 10 and a nice -5 process, a SCHED_BATCH one.
 *	Every member then sleeps, so what ps shows of them stays the same.
 *
 *   workload seccomp kill|eperm NR[,NR...] PROGRAM [ARG...]
 *	runs PROGRAM under a seccomp filter that kills the process on the
 *	system call numbers NR (kill) or fails them with EPERM (eperm).
 *
 *   workload time PROGRAM [ARG...]
 *	runs PROGRAM with its output to /dev/null and prints the ns of
 *	CLOCK_MONOTONIC from the fork to the end of the wait (on the
 *	instruction clock, the guest's instructions); fails if PROGRAM does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_MEMBERS 64

static pid_t members[MAX_MEMBERS];
static int nmembers;
static int ready_fd = -1;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void tell_ready(void)
{
	if (write(ready_fd, "r", 1) != 1)
		die("write ready");
}

static void *park(void *arg)
{
	const char *name = arg;

	if (name)
		pthread_setname_np(pthread_self(), name);
	for (;;)
		pause();
	return NULL;
}

static void start_threads(const char *const *names, int n)
{
	for (int i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, park, (void *)names[i]))
			die("pthread_create");
	}
}

static void set_name(const char *name)
{
	if (prctl(PR_SET_NAME, name, 0, 0, 0))
		die("PR_SET_NAME");
}

/* What a member does after its exec: `workload member KIND NAME FD`. */
static int member(const char *kind, const char *name)
{
	static const char *const workers[] = {
		"worker 1", "w(2)", "w) (3", "w\n4", "", "w6", "w7 ", NULL,
	};
	static const char *const nobody_threads[] = { "nobody t1", "nobody t2" };
	static const char *const leader_threads[] = { "left 1", "left 2" };

	set_name(name);
	if (!strcmp(kind, "sleep")) {
		tell_ready();
	} else if (!strcmp(kind, "session")) {
		if (setsid() < 0)
			die("setsid");
		tell_ready();
	} else if (!strcmp(kind, "nice10")) {
		if (setpriority(PRIO_PROCESS, 0, 10))
			die("setpriority 10");
		tell_ready();
	} else if (!strcmp(kind, "nice-5")) {
		if (setpriority(PRIO_PROCESS, 0, -5))
			die("setpriority -5");
		tell_ready();
	} else if (!strcmp(kind, "batch")) {
		struct sched_param sp = { 0 };

		if (sched_setscheduler(0, SCHED_BATCH, &sp))
			die("SCHED_BATCH");
		tell_ready();
	} else if (!strcmp(kind, "threads")) {
		start_threads(workers, 7);
		tell_ready();
	} else if (!strcmp(kind, "nobody") || !strcmp(kind, "nodump")) {
		gid_t g = 65534;

		if (setgroups(1, &g) || setgid(65534) || setuid(65534))
			die("become 65534");
		/* The uid change left it undumpable: /proc shows it as root's,
		 * and hidepid=invisible hides it from uid 65534 itself. */
		if (!strcmp(kind, "nobody") && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
			die("PR_SET_DUMPABLE");
		start_threads(nobody_threads, 2);
		tell_ready();
	} else if (!strcmp(kind, "zombie-parent")) {
		siginfo_t si;
		pid_t kid = fork();

		if (kid < 0)
			die("fork");
		if (kid == 0) {
			set_name("zombie kid");
			_exit(0);
		}
		/* It is a zombie once waitid() without reaping sees it. */
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, kid, &si, WEXITED | WNOWAIT))
			die("waitid");
		tell_ready();
	} else if (!strcmp(kind, "stopped")) {
		tell_ready();
		raise(SIGSTOP);
	} else if (!strcmp(kind, "leader-exit")) {
		start_threads(leader_threads, 2);
		tell_ready();
		close(ready_fd);
		pthread_exit(NULL);
	} else {
		fprintf(stderr, "workload: unknown member kind %s\n", kind);
		return 2;
	}
	close(ready_fd);
	for (;;)
		pause();
}

static void spawn(const char *kind, const char *name, const char *argv0)
{
	char fd[16];
	pid_t pid;

	if (nmembers == MAX_MEMBERS) {
		fprintf(stderr, "workload: too many members\n");
		exit(1);
	}
	snprintf(fd, sizeof(fd), "%d", ready_fd);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		char *const argv[] = {
			(char *)argv0, "member", (char *)kind, (char *)name, fd,
			"an arg with spaces", "a (paren) arg", "new\nline arg", NULL,
		};

		execv("/proc/self/exe", argv);
		die("execv");
	}
	members[nmembers++] = pid;
}

static void stop(int sig)
{
	(void)sig;
	for (int i = 0; i < nmembers; i++)
		kill(members[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	_exit(0);
}

static int fixed(void)
{
	static const char *const odd[][2] = {
		{ "plain", "plain" },
		{ "two words", "/bin/two words" },
		{ "(paren", "(paren" },
		{ "paren)", "paren) x" },
		{ "a) (b", "a) (b" },
		{ "new\nline", "new\nline" },
		{ "tab\there", "tab\there" },
		{ ")", ")" },
		{ "x y (z) w", "x y (z) w" },
		{ "\xc3\xbcnic\xc3\xb6" "de", "\xc3\xbcnic\xc3\xb6" "de" },
		{ "-dash", "-dash" },
		{ " lead", " lead" },
		{ "abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz" },
	};
	int pipefd[2], expected = 0, nobody;
	char c;

	if (pipe(pipefd))
		die("pipe");
	ready_fd = pipefd[1];
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++, expected++)
		spawn("sleep", odd[i][0], odd[i][1]);
	spawn("session", "session lead", "session lead");
	spawn("nice10", "nice ten", "nice ten");
	spawn("nice-5", "nice minus5", "nice minus5");
	spawn("batch", "batch one", "batch one");
	spawn("threads", "threaded", "threaded 8");
	nobody = nmembers;
	spawn("nobody", "nobody's (proc)", "nobody proc");
	spawn("nodump", "nodump 65534", "nodump proc");
	spawn("zombie-parent", "zombie parent", "zombie parent");
	spawn("stopped", "stopped one", "stopped one");
	spawn("leader-exit", "gone leader", "gone leader");
	expected += 10;
	close(pipefd[1]);
	for (int got = 0; got < expected; got++) {
		if (read(pipefd[0], &c, 1) != 1) {
			fprintf(stderr, "workload: %d of %d members ready\n", got, expected);
			stop(0);
		}
	}
	/* The stopped member said ready just before raise(SIGSTOP). */
	for (;;) {
		int stopped = 0;

		for (int i = 0; i < nmembers; i++) {
			siginfo_t si;

			memset(&si, 0, sizeof(si));
			if (!waitid(P_PID, members[i], &si, WSTOPPED | WNOHANG | WNOWAIT) &&
			    si.si_pid == members[i])
				stopped++;
		}
		if (stopped == 1)
			break;
		usleep(10000);
	}
	signal(SIGTERM, stop);
	signal(SIGINT, stop);
	set_name("workload");
	/* ready, the pid of the member of uid 65534, and every member's */
	printf("ready %d ", (int)members[nobody]);
	for (int i = 0; i < nmembers; i++)
		printf("%s%d", i ? "," : "", (int)members[i]);
	printf("\n");
	fflush(stdout);
	for (;;)
		pause();
	return 0;
}

static int seccomp_run(const char *action, char *nrs, char **argv)
{
	struct sock_filter f[64];
	unsigned int n = 0, ret;
	struct sock_fprog prog;
	char *save = NULL;

	if (!strcmp(action, "kill"))
		ret = SECCOMP_RET_KILL_PROCESS;
	else if (!strcmp(action, "eperm"))
		ret = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
	else {
		fprintf(stderr, "workload seccomp: kill or eperm, not %s\n", action);
		return 2;
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	for (char *tok = strtok_r(nrs, ",", &save); tok && n < 60;
	     tok = strtok_r(NULL, ",", &save)) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      (unsigned int)atoi(tok), 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ret);
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog.len = (unsigned short)n;
	prog.filter = f;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		die("PR_SET_NO_NEW_PRIVS");
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		die("seccomp");
	execv(argv[0], argv);
	die("execv");
	return 1;
}

static int time_run(char **argv)
{
	struct timespec t0, t1;
	int status;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
			die("/dev/null");
		execv(argv[0], argv);
		die("execv");
	}
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "workload time: %s failed (status %#x)\n", argv[0], status);
		return 1;
	}
	printf("%lld\n", (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL +
				(t1.tv_nsec - t0.tv_nsec));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 6 && !strcmp(argv[1], "member")) {
		ready_fd = atoi(argv[4]);
		return member(argv[2], argv[3]);
	}
	if (argc == 2 && !strcmp(argv[1], "fixed"))
		return fixed();
	if (argc >= 5 && !strcmp(argv[1], "seccomp"))
		return seccomp_run(argv[2], argv[3], argv + 4);
	if (argc >= 3 && !strcmp(argv[1], "time"))
		return time_run(argv + 2);
	fprintf(stderr, "usage: workload fixed\n"
			"       workload seccomp kill|eperm NR[,NR...] PROGRAM [ARG...]\n"
			"       workload time PROGRAM [ARG...]\n");
	return 2;
}
