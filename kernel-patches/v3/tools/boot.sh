#!/bin/sh
# boot.sh LOG [INITRAMFS] [KERNEL]: boot a v3 kernel under TCG with a guest
# initramfs, serial console to LOG. CLOCK=icount runs it on the instruction
# clock (-icount shift=0, one vCPU, guest nanoseconds count instructions).
initrd=${2:-/work/v3/guest/initramfs.gz}
kernel=${3:-/work/v3/build-x86_64/arch/x86/boot/bzImage}
if [ "$CLOCK" = icount ]; then
	cpu="-smp 1 -icount shift=0,sleep=off -rtc base=2026-01-01T00:00:00,clock=vm"
	extra="nokaslr norandmaps"
else
	cpu="-smp 2"
	extra="panic_on_warn=1 printk.devkmsg=on"
fi
# shellcheck disable=SC2086 # $cpu is a list of options
timeout 3000 qemu-system-x86_64 -nodefaults -no-user-config -display none \
	-no-reboot -accel tcg -cpu max $cpu -m 2048 \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 oops=panic $extra" \
	-serial stdio > "$1" 2>&1
