#!/bin/sh
# boot.sh LOG [KERNEL]: the v3 kernel under TCG with the guest initramfs
timeout 3000 qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot \
	-accel tcg -cpu max -smp 2 -m 2048 \
	-kernel "${2:-/work/v3/build-debug/arch/x86/boot/bzImage}" \
	-initrd /work/v3/guest/initramfs-debug.gz \
	-append "console=ttyS0 panic=-1 oops=panic panic_on_warn=1 printk.devkmsg=on" \
	-serial stdio > "$1" 2>&1
