/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * parked_process.h: fork a process with a few threads that all wait on a
 * release pipe, return once every thread exists, and let the process exit
 * later: closing every copy of the pipe's write end gives each reader EOF
 * at once.
 *
 * For targets that must hold still while a test lists them (visibility.c,
 * namespaces.c, taskinfo.c).  The threads are ordinary pthreads; for
 * 100,000 cheap ones, see thread_holder.h.
 */
#ifndef PARKED_PROCESS_H
#define PARKED_PROCESS_H

#include "pidmap_test.h"

#include <pthread.h>
#include <stdint.h>

/* Block until every write end of the release pipe is closed. */
static inline void parked_wait_release(int release_rd)
{
	char c;

	while (read(release_rd, &c, 1) < 0 && errno == EINTR)
		;
}

static inline void *parked_thread(void *release_rd)
{
	parked_wait_release((int)(intptr_t)release_rd);
	return NULL;
}

/*
 * Fork a process that closes @release_wr (unless it is -1: holding the
 * write end would keep the release from ever coming), runs @setup(@arg)
 * if @setup is not NULL, starts @threads parked threads, parks itself too,
 * and exits 0 once released.  Returns its pid when all its threads exist:
 * checks must not start before.  Dies (pt_die) on a setup error.
 */
static inline pid_t parked_process(int threads, int release_rd, int release_wr,
				   void (*setup)(void *arg), void *arg)
{
	int p[2];
	pid_t pid;
	char c = 0;

	if (pipe(p))
		pt_die("pipe");
	pid = fork();
	if (pid < 0)
		pt_die("fork");
	if (pid == 0) {
		int i;

		if (release_wr >= 0)
			close(release_wr);
		if (setup)
			setup(arg);
		for (i = 0; i < threads; i++) {
			pthread_t t;

			if (pthread_create(&t, NULL, parked_thread, (void *)(intptr_t)release_rd))
				pt_die("pthread_create");
		}
		if (write(p[1], &c, 1) != 1)
			pt_die("write");
		parked_wait_release(release_rd);
		_exit(0);
	}
	if (read(p[0], &c, 1) != 1)
		pt_die("parked process %d did not start", pid);
	close(p[0]);
	close(p[1]);
	return pid;
}

#endif /* PARKED_PROCESS_H */
