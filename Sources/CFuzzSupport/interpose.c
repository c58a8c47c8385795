// Interposes dispatch_async (the fuzz executables export this definition, see Package.swift's fuzzLinker), so that
// what the service sends to Dispatch's global queues (EngineHost.offLoop) runs on the fuzzing thread, in order,
// instead of on a pool thread at its own pace. Without a hook set (the normal build) it is dispatch_async.
#define _GNU_SOURCE
#include "CFuzzSupport.h"
#include <dlfcn.h>
#include <stdint.h>

typedef void *dispatch_queue_t;
typedef void *dispatch_block_t;
// Looked up when a hook is set, so that targets which do not link Dispatch still link.
static dispatch_queue_t (*get_global_queue)(intptr_t identifier, uintptr_t flags);
static void *(*block_copy)(const void *block);
static void (*block_release)(const void *block);

/// The start of every block's layout (the Blocks ABI): `invoke` takes the block itself.
struct block_layout {
    void *isa;
    int flags;
    int reserved;
    void (*invoke)(void *block);
};

static void (*hook)(void (*run)(void *), void *context);
static dispatch_queue_t globals[12];

static void run_block(void *block) {
    ((struct block_layout *)block)->invoke(block);
    block_release(block);
}

void fuzz_divert_global_queues(void (*newHook)(void (*run)(void *), void *context)) {
    static const intptr_t classes[6] = {0x21, 0x19, 0x15, 0x11, 0x09, 0x00};
    get_global_queue = (dispatch_queue_t (*)(intptr_t, uintptr_t))dlsym(RTLD_DEFAULT, "dispatch_get_global_queue");
    block_copy = (void *(*)(const void *))dlsym(RTLD_DEFAULT, "_Block_copy");
    block_release = (void (*)(const void *))dlsym(RTLD_DEFAULT, "_Block_release");
    if (!get_global_queue || !block_copy || !block_release) return;
    for (int i = 0; i < 6; i++) {
        globals[2 * i] = get_global_queue(classes[i], 0);
        globals[2 * i + 1] = get_global_queue(classes[i], 2);
    }
    hook = newHook;
}

void dispatch_async(dispatch_queue_t queue, dispatch_block_t block) {
    static void (*real)(dispatch_queue_t, dispatch_block_t);
    if (hook) {
        for (int i = 0; i < 12; i++) {
            if (globals[i] == queue) {
                hook(run_block, block_copy(block));
                return;
            }
        }
    }
    if (!real) real = (void (*)(dispatch_queue_t, dispatch_block_t))dlsym(RTLD_NEXT, "dispatch_async");
    real(queue, block);
}
