/// Which look contexts may have outcomes: per hash bucket, how many entries of `UsageModel.lookOutcomes` have
/// a context in that bucket.
///
/// A query meets four look contexts and most have no outcomes (the specific ones are rare), so it asks here
/// first and skips a context's per-widget lookups when its bucket is empty. A bucket is never empty while one
/// of its contexts has an entry, so skipping never changes a feature; a shared bucket only costs lookups.
/// Two bytes per slot of the outcome table it follows (it is rebuilt when that table changes size); a bucket
/// that reaches the top of its range stays there, which keeps that promise.
struct LookContextFilter: Sendable {
    var counts: [UInt16] = []

    /// Buckets (the capacity of the table it follows).
    var capacity: Int { counts.count }

    /// Whether some entry may have `context`: false only when none has.
    @inline(__always)
    func mayHaveOutcomes(_ context: LookContext) -> Bool {
        guard !counts.isEmpty else { return false }
        return counts[bucket(context)] > 0
    }

    /// Notes a new entry with `context`.
    mutating func insert(_ context: LookContext) {
        let bucket = bucket(context)
        if counts[bucket] < .max { counts[bucket] += 1 }
    }

    /// Notes that an entry with `context` was dropped.
    mutating func remove(_ context: LookContext) {
        let bucket = bucket(context)
        if counts[bucket] < .max, counts[bucket] > 0 { counts[bucket] -= 1 }
    }

    /// Recounts from every entry's context, with `capacity` buckets (a power of two, or 0).
    mutating func rebuild(capacity: Int, contexts: some Sequence<LookContext>) {
        counts = Array(repeating: 0, count: capacity)
        guard capacity > 0 else { return }
        for context in contexts { insert(context) }
    }

    @inline(__always)
    private func bucket(_ context: LookContext) -> Int {
        Int(truncatingIfNeeded: context.hashBits) & (counts.count - 1)
    }
}
