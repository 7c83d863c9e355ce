// SPDX-License-Identifier: MIT
/*
 * park-threads: fork N processes with T threads each (the leader counted),
 * all parked in pause(), for the exporter benchmark
 * (exporter-vs-process-exporter.sh). Prints "ready" once every process has
 * all its threads, then waits for SIGTERM/SIGINT and kills the family.
 *
 *   gcc -O2 -pthread -o park-threads bench/park-threads.c
 *   ./park-threads 100 100
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void *park(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: park-threads PROCESSES THREADS\n");
		return 2;
	}
	int procs = atoi(argv[1]), threads = atoi(argv[2]);
	if (procs < 1 || threads < 1) {
		fprintf(stderr, "park-threads: PROCESSES and THREADS must be positive\n");
		return 2;
	}
	int ready[2];
	if (pipe(ready)) {
		perror("pipe");
		return 1;
	}
	pid_t *kids = calloc(procs, sizeof(*kids));
	for (int i = 0; i < procs; i++) {
		kids[i] = fork();
		if (kids[i] < 0) {
			perror("fork");
			return 1;
		}
		if (kids[i] == 0) {
			close(ready[0]);
			for (int t = 1; t < threads; t++) {
				pthread_t th;
				if (pthread_create(&th, NULL, park, NULL)) {
					fprintf(stderr, "park-threads: pthread_create failed\n");
					_exit(1);
				}
			}
			if (write(ready[1], "x", 1) != 1)
				_exit(1);
			park(NULL);
		}
	}
	close(ready[1]);
	char c;
	for (int i = 0; i < procs; i++) {
		if (read(ready[0], &c, 1) != 1) {
			fprintf(stderr, "park-threads: a child failed\n");
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	int sig;
	sigwait(&set, &sig);
	for (int i = 0; i < procs; i++)
		kill(kids[i], SIGKILL);
	for (int i = 0; i < procs; i++)
		waitpid(kids[i], NULL, 0);
	return 0;
}
