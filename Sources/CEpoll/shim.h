// epoll(7) for smartstack-load: Glibc's Swift module does not export <sys/epoll.h>.
#include <sys/epoll.h>
