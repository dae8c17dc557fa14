# Helpers shared by tests/podman.sh and tests/dockerd.sh (sourced, not run): the registry-free
# busybox image both runtimes import (podman-import(1), docker import), and the clean-up of mounts a
# runtime leaves below its private directory.

# busybox_tar DIR: build DIR/rootfs from busybox-static and write DIR/bb.tar. 0 or 1.
busybox_tar() {
    command -v busybox >/dev/null 2>&1 || return 1
    mkdir -p "$1/rootfs" &&
        (
            cd "$1/rootfs" && mkdir -p bin tmp proc sys dev etc &&
                cp "$(command -v busybox)" bin/busybox &&
                for t in sh sleep ls cat echo ps true; do ln -sf busybox "bin/$t"; done &&
                tar -cf "$1/bb.tar" .
        )
}

# umount_below DIR: unmount whatever is mounted below DIR (a container's /dev/shm tmpfs, say),
# deepest first, so that removing DIR cannot fail half-way. Never touches anything outside DIR.
umount_below() {
    awk -v d="$1/" 'index($2, d) == 1 { print $2 }' /proc/mounts 2>/dev/null |
        sort -r | while read -r _m; do umount "$_m" 2>/dev/null; done
}
