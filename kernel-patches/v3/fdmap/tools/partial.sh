#!/bin/sh
# -Werror compile of fdmap and the syscall tables for i386 and arm64 (objects only, not full builds).
cd /work/k-fdmap/linux-source-7.3 || exit 1
echo "i386 start $(date -u +%T)"
nice -n 10 make ARCH=i386 O=../build-i386 CC="ccache gcc" KCFLAGS="-Werror -fstack-usage" -j2 \
	fs/proc/fdmap.o kernel/sys_ni.o arch/x86/entry/syscall_32.o
echo "i386 rc=$? $(date -u +%T)"
cat ../build-i386/fs/proc/fdmap.su
nice -n 10 make ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- O=../build-arm64 CC="ccache aarch64-linux-gnu-gcc" KCFLAGS="-Werror -fstack-usage" -j2 \
	fs/proc/fdmap.o kernel/sys_ni.o arch/arm64/kernel/sys.o arch/arm64/kernel/sys32.o
echo "arm64 rc=$? $(date -u +%T)"
cat ../build-arm64/fs/proc/fdmap.su
