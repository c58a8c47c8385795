/// What a timer wakes up.
enum TimerTarget: Sendable, Hashable {
    /// An instance's relevance, relevant contexts or reload schedule may change.
    case instance(InstanceID)
    /// A stack's stability state may change (a grace period or minimum time on top ends).
    case stack(StackID)
    /// Something every stack may show changes (a Live Activity ends or is removed).
    case everyStack
}

/// A min-heap of wake-up times. Entries are hints: a woken target recomputes its own next time, so stale or
/// duplicate entries cost a wasted wake-up, never a wrong decision.
struct TimerQueue: Sendable {
    var heap: [(time: Int64, sequence: Int64, target: TimerTarget)] = []
    var sequence: Int64 = 0

    var count: Int { heap.count }
    var nextTime: Int64? { heap.first?.time }

    mutating func schedule(_ target: TimerTarget, at time: Timestamp) {
        sequence += 1
        heap.append((time.microseconds, sequence, target))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.less(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry due at or before `time`.
    mutating func popDue(atOrBefore time: Int64) -> (time: Int64, target: TimerTarget)? {
        guard let first = heap.first, first.time <= time else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < heap.count, Self.less(heap[left], heap[smallest]) { smallest = left }
                if right < heap.count, Self.less(heap[right], heap[smallest]) { smallest = right }
                if smallest == parent { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return (first.time, first.target)
    }

    private static func less(
        _ a: (time: Int64, sequence: Int64, target: TimerTarget), _ b: (time: Int64, sequence: Int64, target: TimerTarget)
    ) -> Bool {
        a.time != b.time ? a.time < b.time : a.sequence < b.sequence
    }
}
