import CLinux

/// Gives the memory freed after a burst of allocations (start-up's replay, a rebuild) back to the system: glibc
/// keeps freed heap pages of each thread's arena otherwise, so resident memory would stay at the burst's peak.
enum FreedMemory {
    static func release() { _ = malloc_trim(0) }
}
