# Boots a staged systemd as PID 1 in namespaces of its own (mount, pid, cgroup, UTS, IPC, network), inside a
# cgroup of its own that is removed again afterwards. Used by Tests/SmartStackSystemdTests/SystemdPID1Tests.swift
# and Tests/e2e/desktop_machine.py, which copy this file and inner.sh into their staging folder.
#
#     sh outer.sh STAGE CGROUP2-MOUNT NAME SECONDS
#
# The namespace's `timeout` (its pid in STAGE/timeout.pid) kills it after SECONDS whatever happens to the test;
# killing its `unshare` ends systemd and with it every process inside. Exits 0 once the cgroup is gone.
set -u
dir=$1 cgroot=$2 name=$3 seconds=$4
cg=$cgroot/$name-$$
mkdir "$cg" && echo $$ > "$cg/cgroup.procs" || exit 2
timeout -s KILL "$seconds" unshare --mount --pid --fork --kill-child --cgroup --uts --ipc --net --mount-proc \
    --propagation private sh "$dir/inner.sh" "$dir" &
echo $! > "$dir/timeout.pid"
wait $!
echo $$ > "$cgroot/cgroup.procs"
for i in 1 2 3 4 5 6 7 8 9 10; do
    find "$cg" -depth -type d -exec rmdir {} \; 2>/dev/null
    [ -e "$cg" ] || exit 0
    sleep 0.5
done
exit 1
