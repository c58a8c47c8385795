// What the service needs of glibc that Glibc's Swift module does not export: malloc_trim(3) from <malloc.h>, the
// SCHED_IDLE policy (sched(7)) and thread names.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
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

/// Names the calling thread (what ps and perf show; at most 15 bytes).
static inline void smartstack_name_thread(const char *name) { pthread_setname_np(pthread_self(), name); }
