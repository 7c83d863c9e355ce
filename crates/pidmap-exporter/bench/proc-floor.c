// SPDX-License-Identifier: MIT
/*
 * proc-floor: what the kernel alone costs to produce /proc files, per
 * file, for the threads of the processes given: each file opened once
 * and kept, then ROUNDS rounds of one pread(2) from offset 0 per file,
 * nothing parsed; and, for comparison, open + read + close per file.
 * CPU time of this process (getrusage: user + system), per file read.
 *
 *   gcc -O2 -o proc-floor crates/pidmap-exporter/bench/proc-floor.c
 *   ./proc-floor ROUNDS KIND[,KIND...] TGID...     e.g. stat,schedstat
 *
 * Prints one line per kind and the sum over the kinds: the least CPU a
 * scrape that reads those files of those threads can take.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static double cpu_seconds(void)
{
	struct rusage r;

	getrusage(RUSAGE_SELF, &r);
	return r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 +
	       r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: proc-floor ROUNDS KIND[,KIND...] TGID...\n");
		return 2;
	}
	int rounds = atoi(argv[1]);
	char *kinds = strdup(argv[2]);
	size_t cap = 1024, n = 0;
	char (*dirs)[72] = malloc(cap * sizeof(*dirs));
	char buf[16384];
	double sum_kept = 0, sum_open = 0;

	for (int a = 3; a < argc; a++) {
		char d[40];
		snprintf(d, sizeof(d), "/proc/%.16s/task", argv[a]);
		DIR *dir = opendir(d);
		if (!dir)
			continue;
		for (struct dirent *e; (e = readdir(dir));) {
			if (e->d_name[0] == '.')
				continue;
			if (n == cap)
				dirs = realloc(dirs, (cap *= 2) * sizeof(*dirs));
			snprintf(dirs[n++], sizeof(dirs[0]), "%s/%.16s", d, e->d_name);
		}
		closedir(dir);
	}
	int *fds = malloc(n * sizeof(int));
	printf("%zu threads, %d rounds\n", n, rounds);
	for (char *kind = strtok(kinds, ","); kind; kind = strtok(NULL, ",")) {
		char path[96];
		size_t kept = 0;
		for (size_t i = 0; i < n; i++) {
			snprintf(path, sizeof(path), "%s/%s", dirs[i], kind);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0)
				fds[kept++] = fd;
		}
		double t0 = cpu_seconds();
		for (int r = 0; r < rounds; r++)
			for (size_t i = 0; i < kept; i++)
				if (pread(fds[i], buf, sizeof(buf), 0) < 0)
					perror("pread");
		double t1 = cpu_seconds();
		for (size_t i = 0; i < kept; i++)
			close(fds[i]);
		double t2 = cpu_seconds();
		for (int r = 0; r < rounds; r++)
			for (size_t i = 0; i < n; i++) {
				snprintf(path, sizeof(path), "%s/%s", dirs[i], kind);
				int fd = open(path, O_RDONLY | O_CLOEXEC);
				if (fd < 0)
					continue;
				if (read(fd, buf, sizeof(buf)) < 0)
					perror("read");
				close(fd);
			}
		double t3 = cpu_seconds();
		double per_kept = (t1 - t0) / rounds / (kept ? kept : 1);
		double per_open = (t3 - t2) / rounds / (n ? n : 1);
		sum_kept += per_kept * kept;
		sum_open += per_open * n;
		printf("%-14s %zu kept: pread %.2f us/file; open+read+close %.2f us/file\n",
		       kind, kept, per_kept * 1e6, per_open * 1e6);
	}
	printf("all kinds, all threads: %.1f ms kept, %.1f ms opened each time\n",
	       sum_kept * 1e3, sum_open * 1e3);
	return 0;
}
