// malloc_trim(3) for the service: Glibc's Swift module does not export <malloc.h>.
#include <malloc.h>
