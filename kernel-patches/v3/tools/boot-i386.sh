#!/bin/sh
# boot-i386.sh LOG [BIN] [BUSYBOX] [KERNEL]: pack an i386 guest (BUSYBOX as
# /bin/busybox, every file of BIN -- the i686 static selftests and runas --
# in /bin, init-i386 as /init, root directory 0755) and boot the i386
# kernel under TCG, 2 vCPUs, serial console to LOG. The initramfs is
# written next to LOG (LOG minus .log, plus .cpio.gz) unless INITRD is set.
# -cpu max,stepping=1: TCG's max CPU is an AMD family 6 model 6 stepping 3
# without the MP bit, which a 32-bit SMP kernel's amd_k7_smp_check() warns
# about ("This combination of AMD processors is not suitable for SMP") as
# the second CPU comes up: a panic with panic_on_warn=1. Stepping 1 is an
# "Athlon 660/661", certified MP; vendor, family, model and features stay.
set -e
here=$(cd "$(dirname "$0")" && pwd)
bin=${2:-/tmp/i386boot/bin}
busybox=${3:-/tmp/i386boot/bb/bin/busybox}
kernel=${4:-/work/v3/build-i386boot/arch/x86/boot/bzImage}
initrd=${INITRD:-${1%.log}.cpio.gz}
root=$(mktemp -d)
chmod 755 "$root"
mkdir -p "$root/bin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/etc"
cp "$busybox" "$root/bin/busybox"
cp "$bin"/* "$root/bin/"
cp "$here/init-i386" "$root/init"
chmod 755 "$root/init" "$root/bin"/*
printf 'root:x:0:0::/:/bin/sh\nnobody:x:65534:65534::/:/bin/sh\n' > "$root/etc/passwd"
(cd "$root" && find . | cpio -o -H newc -R 0:0 --quiet) | gzip -1 > "$initrd"
rm -rf "$root"
timeout 3000 qemu-system-i386 -nodefaults -no-user-config -display none \
	-no-reboot -accel tcg -cpu max,stepping=1 -smp 2 -m 2048 \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 oops=panic panic_on_warn=1" \
	-serial stdio > "$1" 2>&1
