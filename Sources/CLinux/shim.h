// What the service needs of glibc that Glibc's Swift module does not export: malloc_trim(3) and mallopt(3) from <malloc.h>, the
// SCHED_IDLE policy (sched(7)), sched_setattr(2)'s time slice (glibc 2.36 has no wrapper), thread names and the
// pacing of idle-priority work.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <malloc.h>
#include <sys/prctl.h>
#include <time.h>
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

/// Pacing of idle-priority work (`IdleThread`). SCHED_IDLE alone does not keep such a thread off a busy event
/// loop's CPU: under EEVDF (Linux 6.6 and later) it is still picked, now and then, over a loop that is runnable but
/// has used more than its share for the moment, and then runs a whole time slice (up to the next tick, 4 ms at
/// HZ=250) while the loop's calls wait (the soak's probe: 23 of 60 calls over 1 ms waited so). A paced thread
/// sleeps `SMARTSTACK_PACE_NAP_NANOSECONDS` after every `SMARTSTACK_PACE_NANOSECONDS` of work: a sleeping thread is
/// off the run queue, so a runnable loop runs at once, and an idle thread waking up never preempts it. `sched_yield`
/// would not do: under EEVDF it keeps the thread queued, and a loop that is not eligible still is not picked. The
/// nap is 20 us because shorter ones often do not sleep at all (the timer expires before the thread is switched
/// out): on this project's machines, after 0.5 ms of work, 100-140 of 200 naps of 10 us switched out and 200 of 200
/// of 20 us; naps of 1 and 5 us back to back, 0 and 3 of 1,000. A nap costs about 50 us in all, so pacing costs
/// up to 10 % of the work's speed when nothing else wants the CPU.
#define SMARTSTACK_PACE_NANOSECONDS 500000ull
#define SMARTSTACK_PACE_NAP_NANOSECONDS 20000l

// One per thread in the whole process: weak definitions, so every module that includes this header shares them
// (a `static` one would be a copy per Swift file in a build without whole-module optimization).
__attribute__((weak)) __thread int smartstack_pacing = 0;
__attribute__((weak)) __thread uint64_t smartstack_pace_since = 0;

static inline uint64_t smartstack_monotonic_nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

/// Paces the calling thread from now on (`smartstack_pace` does nothing on other threads). Its naps are short only
/// with a short timer slack (the default 50 us would make each a 60 us pause).
static inline void smartstack_start_pacing(void) {
    prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
    smartstack_pacing = 1;
    smartstack_pace_since = smartstack_monotonic_nanoseconds();
}

/// A point where a paced thread may give the CPU back: cheap enough to call per row or event (a read of the vDSO
/// clock, about 20 ns; a replayed publish mark alone can take half a millisecond, so every call looks). Returns 1
/// when it slept.
static inline int smartstack_pace(void) {
    if (!smartstack_pacing) return 0;
    uint64_t now = smartstack_monotonic_nanoseconds();
    if (now - smartstack_pace_since < SMARTSTACK_PACE_NANOSECONDS) return 0;
    struct timespec nap = { .tv_sec = 0, .tv_nsec = SMARTSTACK_PACE_NAP_NANOSECONDS };
    nanosleep(&nap, NULL);
    smartstack_pace_since = smartstack_monotonic_nanoseconds();
    return 1;
}
