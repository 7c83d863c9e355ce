// SPDX-License-Identifier: MIT
/*
 * forkcost: what marking thread-group leaders in the pid IDR costs fork and
 * exit. Times a fork()+exit()+waitpid() loop and a pthread_create()+join()
 * loop, interleaved round by round, and prints the median ns per iteration
 * of each. `cargo xtask forkcost` runs it on the patched and on the
 * unpatched kernel, alternating boots, and compares; by default the guest
 * clock counts instructions (QEMU -icount), so a "ns" here is then one
 * instruction and boots repeat their counts.
 *
 * The mark is set inside the existing pidmap_lock section of alloc_pid()
 * and cleared in free_pid(), so any cost shows up in these two loops.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 15
#define FORKS_PER_ROUND 200
#define THREADS_PER_ROUND 400

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

static long long fork_round(void)
{
	long long start = now_ns();

	for (int i = 0; i < FORKS_PER_ROUND; i++) {
		pid_t pid = fork();
		int status;

		if (pid < 0) {
			perror("fork");
			exit(1);
		}
		if (pid == 0)
			_exit(0);
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
			fprintf(stderr, "forkcost: waitpid failed\n");
			exit(1);
		}
	}
	return (now_ns() - start) / FORKS_PER_ROUND;
}

static void *idle_thread(void *arg)
{
	return arg;
}

static long long thread_round(void)
{
	long long start = now_ns();

	for (int i = 0; i < THREADS_PER_ROUND; i++) {
		pthread_t t;
		int err = pthread_create(&t, NULL, idle_thread, NULL);

		if (err) {
			fprintf(stderr, "forkcost: pthread_create: %s\n", strerror(err));
			exit(1);
		}
		pthread_join(t, NULL);
	}
	return (now_ns() - start) / THREADS_PER_ROUND;
}

int main(void)
{
	long long forks[ROUNDS], threads[ROUNDS];

	/* Warm up the page cache, the slab caches and the pid IDR. */
	fork_round();
	thread_round();
	for (int r = 0; r < ROUNDS; r++) {
		/* Alternate the order so host drift hits both loops alike. */
		if (r % 2) {
			threads[r] = thread_round();
			forks[r] = fork_round();
		} else {
			forks[r] = fork_round();
			threads[r] = thread_round();
		}
	}
	qsort(forks, ROUNDS, sizeof(forks[0]), cmp_ll);
	qsort(threads, ROUNDS, sizeof(threads[0]), cmp_ll);
	printf("FORKCOST fork_exit_ns=%lld fork_exit_min_ns=%lld pthread_create_join_ns=%lld pthread_create_join_min_ns=%lld rounds=%d\n",
	       forks[ROUNDS / 2], forks[0], threads[ROUNDS / 2], threads[0], ROUNDS);
	return 0;
}
