/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * thread_holder.h: fork a process that holds up to N idle threads, cheaply
 * enough that 100,000 of them fit in a 3 GiB guest.
 *
 * pthreads would cost a 16 KiB+ stack and a TLS block each.  Here each
 * thread is a raw clone(CLONE_THREAD) that loops on pause() in raw
 * syscalls on its own 4 KiB stack, never touching libc or TLS.  The holder
 * blocks every signal before cloning, so no signal frame is ever pushed on
 * those stacks; SIGKILL still ends the group.  What remains per thread is
 * the kernel's: a task_struct and a kernel stack.
 *
 * Used by guest-tests/scale.c and bench/pidmap-bench/; the bench includes
 * it by relative path so it still builds alone with one gcc command.
 */
#ifndef THREAD_HOLDER_H
#define THREAD_HOLDER_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proc_field.h"

#define TH_STACK_BYTES 4096

struct thread_holder {
	pid_t pid;		/* the holder, leader of the thread group */
	long threads;		/* threads besides the leader */
	double seconds;		/* to create them */
};

static inline double th_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* MemAvailable from /proc/meminfo in KiB, or -1. */
static inline long th_mem_available_kib(void)
{
	return proc_field("/proc/meminfo", "MemAvailable");
}

/*
 * clone() a thread that runs pause() forever on @stack_top.  The child
 * never returns from the asm: it has no valid libc state to return into.
 */
static inline long th_clone_idle_thread(void *stack_top)
{
#if defined(__x86_64__)
	register long r10 asm("r10") = 0;	/* child_tid */
	register long r8 asm("r8") = 0;		/* tls */
	long ret;

	asm volatile("syscall\n\t"
		     "test %%rax, %%rax\n\t"
		     "jnz 2f\n\t"
		     "1:\n\t"
		     "mov %[nr_pause], %%eax\n\t"
		     "syscall\n\t"
		     "jmp 1b\n\t"
		     "2:\n\t"
		     : "=a"(ret)
		     : "0"((long)SYS_clone),
		       "D"((long)(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
				  CLONE_THREAD | CLONE_SYSVSEM)),
		       "S"(stack_top), "d"(0L), "r"(r10), "r"(r8),
		       [nr_pause] "i"(SYS_pause)
		     : "rcx", "r11", "memory", "cc");
	return ret;
#elif defined(__aarch64__)
	/* arm64 has no pause(): the child sleeps in ppoll(NULL, 0, NULL, NULL). */
	register long x0 asm("x0") = CLONE_VM | CLONE_FS | CLONE_FILES |
				     CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
	register long x1 asm("x1") = (long)stack_top;
	register long x2 asm("x2") = 0;		/* parent_tid */
	register long x3 asm("x3") = 0;		/* tls */
	register long x4 asm("x4") = 0;		/* child_tid */
	register long x8 asm("x8") = SYS_clone;

	asm volatile("svc #0\n\t"
		     "cbnz x0, 2f\n\t"
		     "1:\n\t"
		     "mov x0, xzr\n\t"
		     "mov x1, xzr\n\t"
		     "mov x2, xzr\n\t"
		     "mov x3, xzr\n\t"
		     "mov x8, %[nr_ppoll]\n\t"
		     "svc #0\n\t"
		     "b 1b\n\t"
		     "2:\n\t"
		     : "+r"(x0)
		     : "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x8),
		       [nr_ppoll] "i"(SYS_ppoll)
		     : "memory", "cc");
	return x0;
#else
#error "thread_holder.h: no raw clone for this architecture"
#endif
}

/*
 * The holder's body: clone up to @want threads, stopping early when clone()
 * fails with EAGAIN/ENOMEM, when MemAvailable drops under @mem_floor_kib,
 * or after @budget_s seconds; report the count on @report_fd and block.
 */
static inline void __attribute__((noreturn))
th_holder_main(long want, long mem_floor_kib, double budget_s, int report_fd)
{
	double t0 = th_now();
	sigset_t all;
	char *stacks;
	long i;

	sigfillset(&all);
	if (sigprocmask(SIG_BLOCK, &all, NULL))
		_exit(4);
	stacks = mmap(NULL, (size_t)want * TH_STACK_BYTES, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (stacks == MAP_FAILED)
		_exit(4);
	for (i = 0; i < want; i++) {
		long r;

		if (i % 1024 == 0) {
			long avail = th_mem_available_kib();

			if (avail >= 0 && avail < mem_floor_kib)
				break;
			if (th_now() - t0 > budget_s)
				break;
		}
		/* Stacks grow down: thread i's top is the end of slot i. */
		r = th_clone_idle_thread(stacks + (size_t)(i + 1) * TH_STACK_BYTES);
		if (r < 0) {
			if (r == -EAGAIN || r == -ENOMEM)
				break;
			_exit(6);
		}
	}
	if (write(report_fd, &i, sizeof(i)) != sizeof(i))
		_exit(5);
	for (;;)
		pause();
}

/*
 * Fork the holder and wait until its threads exist.  It dies with its
 * parent (PR_SET_PDEATHSIG), so a crashed test leaves nothing behind.
 * Returns 0, or -1 with errno set.
 */
static inline int thread_holder_start(struct thread_holder *h, long want,
				      long mem_floor_kib, double budget_s)
{
	pid_t parent = getpid();
	double t0 = th_now();
	int pfd[2], status;
	ssize_t r;
	long n;

	if (pipe2(pfd, O_CLOEXEC))
		return -1;
	h->pid = fork();
	if (h->pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (h->pid == 0) {
		close(pfd[0]);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(3);
		th_holder_main(want, mem_floor_kib, budget_s, pfd[1]);
	}
	close(pfd[1]);
	do
		r = read(pfd[0], &n, sizeof(n));
	while (r < 0 && errno == EINTR);
	close(pfd[0]);
	if (r != sizeof(n)) {
		/* It died before reporting: reap it, say why in errno. */
		kill(h->pid, SIGKILL);
		waitpid(h->pid, &status, 0);
		errno = ECHILD;
		return -1;
	}
	h->threads = n;
	h->seconds = th_now() - t0;
	return 0;
}

/* SIGKILL the holder and reap it.  Returns 0, or -1 with errno set. */
static inline int thread_holder_stop(struct thread_holder *h)
{
	if (kill(h->pid, SIGKILL))
		return -1;
	while (waitpid(h->pid, NULL, 0) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

#endif /* THREAD_HOLDER_H */
