# Inside the namespaces (see outer.sh): private filesystems, the staged files put in place, then systemd as PID 1
# on the staged units only (no generators). What STAGE may hold:
#
#     etc/*        bound over /etc's file of the same name (copies of the user database, with sysusers' additions)
#     units/       the system units: /etc/systemd/system, the only unit path
#     user-units/  the user managers' units: /etc/systemd/user
#     bin/*        installed in /usr/local/bin
#     run/         copied into /run
#
# A private /run comes first (the staging folder is bound under it), then /tmp, /var/tmp and the rest; only then
# is systemd exec'd, so its boot empties and writes nothing of the machine's.
set -eu
mount -t tmpfs tmpfs /run
mkdir -p /run/smartstack-test && mount --bind "$1" /run/smartstack-test
dir=/run/smartstack-test
for d in /tmp /var/tmp /var/lib /var/log/journal /etc/systemd/system /etc/systemd/user /usr/local/bin /root; do
    mkdir -p "$d" 2>/dev/null || true
    mount -t tmpfs tmpfs "$d"
done
for f in "$dir"/etc/*; do mount --bind "$f" "/etc/${f##*/}"; done
: > "$dir/console" && mount --bind "$dir/console" /dev/console
umount -R /sys/fs/cgroup
mount -t cgroup2 cgroup2 /sys/fs/cgroup
cp -a "$dir/units/." /etc/systemd/system/
if [ -d "$dir/user-units" ]; then cp -a "$dir/user-units/." /etc/systemd/user/; fi
for f in "$dir"/bin/*; do install -m 755 "$f" "/usr/local/bin/${f##*/}"; done
if [ -d "$dir/run" ]; then cp -a "$dir/run/." /run/; fi
mkdir -p "$dir/empty"
exec env -i container=smartstack-test SYSTEMD_UNIT_PATH=/etc/systemd/system \
    SYSTEMD_GENERATOR_PATH="$dir/empty" SYSTEMD_ENVIRONMENT_GENERATOR_PATH="$dir/empty" \
    PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    /lib/systemd/systemd --system --log-target=journal --show-status=no < /dev/null > "$dir/pid1.log" 2>&1
