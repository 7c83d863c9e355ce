#!/bin/sh
# Build every prefix of the v3 series (pidmap 1-2, fdmap 1-2) with -Werror
# for x86_64, i386 and arm64; one worktree and build dir per arch.
cd /work/v3/linux-source-7.3
top=$(git rev-parse HEAD)
for arch in x86_64 i386 arm64; do
	wt=/work/v3/wt-$arch
	[ -d $wt ] || git worktree add -q --detach $wt $top
	case $arch in
	x86_64) mk="make ARCH=x86_64"; frags="/work/main/qemu/base.config /work/main/qemu/x86_64.config"; img=bzImage;;
	i386) mk="make ARCH=i386"; frags="/work/main/qemu/base.config"; img=bzImage;;
	arm64) mk="make ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-"; frags="/work/main/qemu/base.config /work/main/qemu/arm64.config"; img=Image;;
	esac
	out=/work/v3/each-$arch
	if [ ! -f $out/.config ]; then
		mkdir -p $out
		(cd $wt && $mk -s O=$out tinyconfig >/dev/null && scripts/kconfig/merge_config.sh -m -O $out $out/.config $frags >/dev/null && $mk -s O=$out olddefconfig)
	fi
	for n in 3 2 1 0; do
		c=$(git rev-parse $top~$n)
		(cd $wt && git checkout -q --detach $c)
		t0=$(date +%s)
		if (cd $wt && nice -n 5 $mk -s -j2 O=$out KCFLAGS=-Werror $img) > $out.log.$n 2>&1; then r=ok; else r=FAIL; fi
		echo "$(date +%H:%M) $arch $(git log -1 --format=%s $c | cut -c1-50): $r ($(( $(date +%s) - t0 )) s)" >> /work/v3/build-each.result
	done
done
echo DONE >> /work/v3/build-each.result
