/// What a timer wakes up.
@usableFromInline
enum TimerTarget: Sendable, Hashable {
    /// An instance's relevance, relevant contexts or reload schedule may change.
    case instance(InstanceID)
    /// A stack's stability state may change (a grace period or minimum time on top ends).
    case stack(StackID)
    /// Something every stack may show changes (a Live Activity ends or is removed).
    case everyStack
}

/// A min-heap of wake-up times. Entries are hints: a woken target recomputes its own next time, so a wake-up
/// that finds nothing changed costs only itself, never a wrong decision.
///
/// An instance has at most one pending wake-up. A woken instance schedules its next change itself
/// (`Engine.scheduleTimers`), so a wake-up later than the one pending is not needed, and one earlier replaces it: the
/// replaced entry stays in the heap, superseded, and is dropped unseen when it comes up (or when superseded entries
/// are half the heap). Before this, every timeline submitted left one more entry per instance that, woken, scheduled
/// itself again: an app that updated its timeline every second grew the heap (and each wake-up's work) without end.
/// Stacks' and Live Activities' timers each mark a moment of their own and are all kept, but a wake-up at a moment
/// its target already has one for is not added again: a stack showing a suggestion schedules the suggestion's end at
/// every decision, the same moment until the candidate is used again, and under a steady stream of donations that
/// added one entry per publish for 24 hours; every Live Activity call schedules the activities' next change, the same
/// moment for every update of one activity, and each such entry, woken, scheduled itself again (an app updating its
/// activity once a second left 3,600 entries an hour, all woken at each change). A removed instance's pending
/// wake-up is dropped with it (`cancel`): it was kept until its time, which a timeline's reload policy can put
/// years ahead.
@usableFromInline
struct TimerQueue: Sendable {
    @usableFromInline typealias Entry = (time: Int64, sequence: Int64, target: TimerTarget)

    @usableFromInline private(set) var heap: [Entry] = []
    var sequence: Int64 = 0
    /// Each instance's pending wake-up: its entry's time and sequence.
    private var pending: [InstanceID: (time: Int64, sequence: Int64)] = [:]
    /// Entries in `heap` that a wake-up scheduled earlier superseded.
    private var superseded = 0
    /// The moments each stack, and every stack (Live Activities), has a wake-up for in `heap`.
    private var moments: Set<Moment> = []

    private struct Moment: Hashable, Sendable {
        /// The stack, or nil for every stack.
        var stack: StackID?
        var time: Int64
    }

    var count: Int { heap.count }
    /// The earliest wake-up that is not superseded. Inlinable, as `Engine.nextWakeUp` is.
    @inlinable var nextTime: Int64? { heap.first?.time }

    /// A queue with these entries, as a snapshot stored them: each instance's earliest entry is its pending one, the
    /// others are superseded. A heap array is kept as it is, so a restored queue is the same array.
    init(entries: [Entry] = [], sequence: Int64 = 0) {
        self.sequence = sequence
        for entry in entries {
            if let moment = Self.moment(of: entry.target, at: entry.time) { moments.insert(moment) }
            guard case .instance(let id) = entry.target else { continue }
            if let current = pending[id], Self.less((current.time, current.sequence, entry.target), entry) { continue }
            pending[id] = (entry.time, entry.sequence)
        }
        heap = entries
        superseded = heap.reduce(0) { $0 + (isSuperseded($1) ? 1 : 0) }
        let ordered = heap.indices.dropFirst().allSatisfy { !Self.less(heap[$0], heap[($0 - 1) / 2]) }
        if !ordered { heapify() }
        dropSupersededTop()
    }

    mutating func schedule(_ target: TimerTarget, at time: Timestamp) {
        let microseconds = time.microseconds
        if case .instance(let id) = target {
            if let current = pending[id] {
                // The pending wake-up comes first, and the instance then schedules its next change itself.
                if current.time <= microseconds { return }
                superseded += 1
            }
            pending[id] = (microseconds, sequence + 1)
        }
        if let moment = Self.moment(of: target, at: microseconds) {
            guard moments.insert(moment).inserted else { return }
        }
        sequence += 1
        push((microseconds, sequence, target))
        if superseded > 1_024, superseded * 2 > heap.count { compact() }
    }

    /// Removes and returns the earliest entry due at or before `time`.
    mutating func popDue(atOrBefore time: Int64) -> (time: Int64, target: TimerTarget)? {
        guard let first = heap.first, first.time <= time else { return nil }
        removeFirst()
        switch first.target {
        case .instance(let id): pending[id] = nil
        case .stack, .everyStack:
            if let moment = Self.moment(of: first.target, at: first.time) { moments.remove(moment) }
        }
        dropSupersededTop()
        return (first.time, first.target)
    }

    /// Drops a removed instance's wake-ups, its pending one and any it superseded: none may stay in the heap, since a
    /// restored queue takes an instance's earliest entry for its pending one (`init(entries:)`).
    mutating func cancel(_ id: InstanceID) {
        pending[id] = nil
        let target = TimerTarget.instance(id)
        let before = heap.count
        heap.removeAll { $0.target == target }
        guard heap.count != before else { return }
        superseded = heap.reduce(0) { $0 + (isSuperseded($1) ? 1 : 0) }
        heapify()
        dropSupersededTop()
    }

    /// The moment a stack's or every stack's wake-up marks; nil for an instance's.
    private static func moment(of target: TimerTarget, at time: Int64) -> Moment? {
        switch target {
        case .instance: nil
        case .stack(let stack): Moment(stack: stack, time: time)
        case .everyStack: Moment(stack: nil, time: time)
        }
    }

    private func isSuperseded(_ entry: Entry) -> Bool {
        guard case .instance(let id) = entry.target else { return false }
        return pending[id]?.sequence != entry.sequence
    }

    /// Keeps a pending entry first, so `nextTime` is a wake-up that will happen.
    private mutating func dropSupersededTop() {
        while let first = heap.first, isSuperseded(first) {
            removeFirst()
            superseded -= 1
        }
    }

    /// Drops every superseded entry at once.
    private mutating func compact() {
        let pending = pending
        heap.removeAll { entry in
            guard case .instance(let id) = entry.target else { return false }
            return pending[id]?.sequence != entry.sequence
        }
        superseded = 0
        heapify()
    }

    private mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.less(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func removeFirst() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(from: 0)
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, Self.less(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count, Self.less(heap[right], heap[smallest]) { smallest = right }
            if smallest == parent { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }

    private mutating func heapify() {
        guard heap.count > 1 else { return }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(from: index) }
    }

    private static func less(_ a: Entry, _ b: Entry) -> Bool {
        a.time != b.time ? a.time < b.time : a.sequence < b.sequence
    }
}
