/* fdmap vs readdir of /proc/PID/fd for a child with 1000 fds (median of 5 runs). */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/fdmap.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	static int fds[4096];
	double tm[5], tp[5];
	char path[64];
	int p[2], i, r, pidfd, iters = 200;
	pid_t pid;

	if (pipe(p))
		return 1;
	pid = fork();
	if (pid == 0) {
		int fd = open("/", O_RDONLY);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (i = 10; i < 1010; i++)
			dup2(fd, i);
		write(p[1], "x", 1);
		for (;;)
			pause();
	}
	read(p[0], path, 1);
	pidfd = syscall(__NR_pidfd_open, pid, 0);
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	for (r = 0; r < 5; r++) {
		struct fdmap_req req = { .size = sizeof(req), .pidfd = pidfd };
		double t0 = now();
		long n = 0;

		for (i = 0; i < iters; i++)
			n = syscall(475, &req, fds, 4096, 0);
		tm[r] = (now() - t0) / iters;
		t0 = now();
		for (i = 0; i < iters; i++) {
			DIR *d = opendir(path);
			struct dirent *e;
			int k = 0;

			while ((e = readdir(d)))
				if (e->d_name[0] != '.')
					fds[k++] = atoi(e->d_name);
			closedir(d);
		}
		tp[r] = (now() - t0) / iters;
		if (n < 1000)
			return 2;
	}
	qsort(tm, 5, sizeof(double), cmp);
	qsort(tp, 5, sizeof(double), cmp);
	printf("FDMAP-BENCH 1003 fds: fdmap %.0f ns, /proc readdir %.0f ns, ratio %.1fx (median of 5 x %d)\n",
	       tm[2], tp[2], tp[2] / tm[2], iters);
	kill(pid, SIGKILL);
	return 0;
}
