import Collections

/// The reads of the stored history running (at most `maxHistoryReads`: `ListDonations` pages, rebuilds for questions
/// about a past time), and those waiting for a place. The waiting reads queue per caller uid, each uid's in call
/// order, and the uids take turns as places free: a caller sending many past questions at once delays another's read
/// by one read, not by all of its own (16 connections of past `GetStack` held an app's `ListDonations` 10–13 s).
///
/// Generic over what a waiting read is (the host's continuations; the tests' values).
struct HistoryReads<Waiter> {
    var running = 0 {
        didSet { mostRunning = max(mostRunning, running) }
    }
    /// The most that ran at once since start.
    private(set) var mostRunning = 0
    /// Waiting reads by caller uid, in call order.
    private var waiting: [UInt32: Deque<Waiter>] = [:]
    /// The uids with reads waiting, in the order of their turns.
    private var turns: Deque<UInt32> = []

    /// How many reads wait.
    var waitingCount: Int { waiting.values.reduce(0) { $0 + $1.count } }

    /// Queues a read of `uid`.
    mutating func wait(_ waiter: Waiter, uid: UInt32) {
        if waiting[uid] == nil { turns.append(uid) }
        waiting[uid, default: []].append(waiter)
    }

    /// The read whose turn it is: the longest waiting of the uid whose turn it is (that uid's next read then comes
    /// after every other uid's).
    mutating func next() -> Waiter? {
        guard let uid = turns.popFirst(), let first = waiting[uid]?.popFirst() else { return nil }
        // In place: a copy of the uid's queue taken out and put back was a copy of every read it has waiting.
        if waiting[uid]?.isEmpty ?? true {
            waiting[uid] = nil
        } else {
            turns.append(uid)
        }
        return first
    }

    /// Every waiting read, taken out (the host stopped).
    mutating func removeAll() -> [Waiter] {
        var all: [Waiter] = []
        while let waiter = next() { all.append(waiter) }
        return all
    }
}

/// The host's places for reads of the history: its waiting reads are continuations, told whether they got a place
/// (false: the host stopped).
typealias HistoryPlaces = HistoryReads<CheckedContinuation<Bool, Never>>
