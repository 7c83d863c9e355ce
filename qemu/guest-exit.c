// SPDX-License-Identifier: MIT
/*
 * guest-exit: end the QEMU guest with a status the host can trust.
 *
 * x86_64: QEMU's isa-debug-exit device (iobase 0xf4) exits QEMU with
 * (value << 1) | 1 when the guest writes value to it.
 * arm64: there is no such device on -M virt; semihosting's SYS_EXIT, which
 * QEMU allows from user space with -semihosting-config userspace=on, exits
 * QEMU with the code it is given, and it is given the same (value << 1) | 1.
 *
 * The host decodes that, so a pass or fail never has to be guessed from
 * console text. A kernel panic with panic=-1 -no-reboot exits QEMU with 0
 * instead (on arm64 through PSCI), which the host reads as "the guest died
 * without reporting".
 *
 * QEMU exits the moment the port is written, dropping whatever console
 * output the guest's tty layer or the emulated UART still holds; under
 * host load that was the last test's result line. So the console is
 * drained first.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <termios.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <sys/io.h>

#define CONSOLE "/dev/ttyS0"
#define DEBUG_EXIT_PORT 0xf4

static int exit_qemu(int code)
{
	if (ioperm(DEBUG_EXIT_PORT, 4, 1)) {
		perror("guest-exit: ioperm");
		return 1;
	}
	outb(code, DEBUG_EXIT_PORT);
	/* Not reached: QEMU has exited. */
	fprintf(stderr, "guest-exit: no isa-debug-exit device\n");
	return 1;
}
#elif defined(__aarch64__)
#define CONSOLE "/dev/ttyAMA0"
#define SYS_EXIT 0x18
#define ADP_STOPPED_APPLICATION_EXIT 0x20026

static int exit_qemu(int code)
{
	/* AArch64 SYS_EXIT takes a pointer to { reason, exit code }. */
	uint64_t block[2] = { ADP_STOPPED_APPLICATION_EXIT,
			      ((uint64_t)code << 1) | 1 };
	register uint64_t op asm("x0") = SYS_EXIT;
	register uint64_t arg asm("x1") = (uint64_t)(uintptr_t)block;

	/*
	 * Without semihosting this HLT is an undefined instruction and the
	 * kernel kills us with SIGILL; init then powers off, which the host
	 * reads as no report.
	 */
	asm volatile("hlt #0xf000" : "+r"(op) : "r"(arg) : "memory");
	fprintf(stderr, "guest-exit: semihosting SYS_EXIT returned\n");
	return 1;
}
#else
#error "guest-exit: no exit device for this architecture"
#endif

int main(int argc, char **argv)
{
	int code = argc > 1 ? atoi(argv[1]) : 1;

	if (code < 0 || code > 127)
		code = 127;
	fflush(NULL);
	/* Waits until the tty buffer is empty and the UART says TEMT. */
	for (const char *tty = CONSOLE; tty; tty = NULL) {
		int fd = open(tty, O_WRONLY | O_NOCTTY | O_CLOEXEC);

		if (fd >= 0) {
			tcdrain(fd);
			close(fd);
		}
	}
	return exit_qemu(code);
}
