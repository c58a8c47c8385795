// What the service needs of glibc that Glibc's Swift module does not export: malloc_trim(3) from <malloc.h>, the
// SCHED_IDLE policy (sched(7)), sched_setattr(2)'s time slice (glibc 2.36 has no wrapper) and thread names.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

/// Puts the calling thread under SCHED_IDLE: it gets a CPU only when little else wants it (a weight of 3
/// against a normal thread's 1024), and a normal thread waking up preempts it at once (nice 19 still takes a time slice from the event loop). A thread
/// may always lower itself to it. Returns 0, or -1 with errno set.
static inline int smartstack_sched_idle(void) {
    struct sched_param parameters = { .sched_priority = 0 };
    return sched_setscheduler(0, SCHED_IDLE, &parameters);
}

/// The SCHED_IDLE policy's number, for pthread_attr_setschedpolicy(3).
static inline int smartstack_sched_idle_policy(void) { return SCHED_IDLE; }

/// sched_setattr(2)'s argument (the kernel's `struct sched_attr`, first version's 48 bytes).
struct smartstack_sched_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
};

/// Asks the scheduler for a time slice of `nanoseconds` for the calling thread, keeping its policy and nice
/// value. Under EEVDF (Linux 6.12 and later) a SCHED_OTHER thread's `sched_runtime` is its requested slice
/// (0.1 to 100 ms): a shorter one gives it an earlier deadline, so when it wakes it preempts a thread of the same
/// weight that is running a long slice on its CPU. Earlier kernels accept and ignore it. Returns the slice the
/// kernel reports afterwards (0 when it keeps none), or -1 with errno set.
static inline int64_t smartstack_request_slice(uint64_t nanoseconds) {
    struct smartstack_sched_attr attributes = { 0 };
    if (syscall(SYS_sched_getattr, 0, &attributes, sizeof attributes, 0) != 0) return -1;
    if (attributes.sched_policy != SCHED_OTHER) return 0;
    attributes.size = sizeof attributes;
    attributes.sched_runtime = nanoseconds;
    if (syscall(SYS_sched_setattr, 0, &attributes, 0) != 0) return -1;
    struct smartstack_sched_attr after = { 0 };
    if (syscall(SYS_sched_getattr, 0, &after, sizeof after, 0) != 0) return -1;
    return (int64_t)after.sched_runtime;
}

/// Names the calling thread (what ps and perf show; at most 15 bytes).
static inline void smartstack_name_thread(const char *name) { pthread_setname_np(pthread_self(), name); }
