// What the service needs of glibc that Glibc's Swift module does not export: malloc_trim(3) from <malloc.h>, and
// the calling thread's id (gettid(2)) for per-thread priorities.
#include <malloc.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline int smartstack_gettid(void) { return (int)syscall(SYS_gettid); }
