// SPDX-License-Identifier: MIT
/*
 * guest-exit: end the QEMU guest with a status the host can trust.
 *
 * QEMU's isa-debug-exit device (iobase 0xf4) exits QEMU with
 * (value << 1) | 1 when the guest writes value to it. The host decodes
 * that, so a pass or fail never has to be guessed from console text.
 * A kernel panic with panic=-1 -no-reboot exits QEMU with 0 instead,
 * which the host reads as "the guest died without reporting".
 *
 * QEMU exits the moment the port is written, dropping whatever console
 * output the guest's tty layer or the emulated UART still holds; under
 * host load that was the last test's result line. So the console is
 * drained first.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/io.h>
#include <termios.h>
#include <unistd.h>

#define DEBUG_EXIT_PORT 0xf4

int main(int argc, char **argv)
{
	int code = argc > 1 ? atoi(argv[1]) : 1;

	if (code < 0 || code > 127)
		code = 127;
	fflush(NULL);
	/* Waits until the tty buffer is empty and the UART says TEMT. */
	for (const char *tty = "/dev/ttyS0"; tty; tty = NULL) {
		int fd = open(tty, O_WRONLY | O_NOCTTY | O_CLOEXEC);

		if (fd >= 0) {
			tcdrain(fd);
			close(fd);
		}
	}
	if (ioperm(DEBUG_EXIT_PORT, 4, 1)) {
		perror("guest-exit: ioperm");
		return 1;
	}
	outb(code, DEBUG_EXIT_PORT);
	/* Not reached: QEMU has exited. */
	fprintf(stderr, "guest-exit: no isa-debug-exit device\n");
	return 1;
}
