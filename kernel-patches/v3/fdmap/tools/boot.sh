#!/bin/sh
# Boot the x86_64 kernel under TCG with the guest initramfs; log to $1.
timeout 900 qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot \
	-accel tcg -cpu max -smp 2 -m 1024 \
	-kernel "${2:-/work/k-fdmap/build-x86_64/arch/x86/boot/bzImage}" \
	-initrd /work/k-fdmap/guest/initramfs.gz \
	-append "console=ttyS0 panic=-1 oops=panic panic_on_warn=1 printk.devkmsg=on" \
	-serial stdio > "$1" 2>&1
