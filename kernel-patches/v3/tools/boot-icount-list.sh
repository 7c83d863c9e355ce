#!/bin/sh
# boot-icount.sh LOG [KERNEL]: the bench on the instruction clock (1 ns = 1 insn)
timeout 2400 qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot \
	-accel tcg -cpu max -smp 1 -icount shift=0,sleep=off \
	-rtc base=2026-01-01T00:00:00,clock=vm -m 2048 \
	-kernel "${2:-/work/v3/build-x86_64/arch/x86/boot/bzImage}" \
	-initrd /work/v3/guest/initramfs-list.gz \
	-append "console=ttyS0 panic=-1 oops=panic nokaslr norandmaps" \
	-serial stdio > "$1" 2>&1
