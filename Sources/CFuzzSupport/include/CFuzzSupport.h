// fuzz-dispatch's hold on Dispatch's global queues (docs/fuzzing.md, "One thread"): see interpose.c.
#include <stddef.h>

/// Once set, a block submitted with dispatch_async to a global queue is handed to `hook` instead, as `run` and a
/// context: calling run(context) runs the block once and releases it. Other queues are not affected.
void fuzz_divert_global_queues(void (*hook)(void (*run)(void *), void *context));
