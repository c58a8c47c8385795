import Testing

@testable import SmartStackServer

/// The daemon fixes glibc's mmap threshold at start (resident memory after loading a large state: BENCHMARKS.md,
/// thirty-seventh session), unless the operator tuned the allocator with `GLIBC_TUNABLES`.
@Suite("Allocator tuning")
struct AllocatorTuningTests {
    @Test("the threshold is set, 4 MiB; an operator's GLIBC_TUNABLES threshold is left to glibc")
    func threshold() {
        #expect(AllocatorTuning.mmapThreshold == 4 << 20)
        #expect(AllocatorTuning.apply(environment: ["GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=65536"]) == false)
        #expect(AllocatorTuning.apply(environment: ["GLIBC_TUNABLES": "glibc.malloc.arena_max=2"]))
        #expect(AllocatorTuning.apply(environment: [:]))
    }
}
