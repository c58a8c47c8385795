import Collections
import Dispatch
public import SmartStackSystemd
import Synchronization

/// A bounded queue of journal entries drained by its own serial dispatch queue, so whoever logs — the
/// engine's owner, an event loop, a connection — never waits for journald.
///
/// journald applies back-pressure by blocking a sender that outpaces it; here only the drain blocks. When
/// `capacity` entries are already waiting, a new one is dropped and counted (``dropped``): GetStatistics
/// and the periodic summary report the count.
public final class JournalQueue: Sendable {
    /// One entry with the source location of the code that produced it (`CODE_FILE`, `CODE_LINE`, `CODE_FUNC`).
    public struct Item: Sendable {
        public var entry: JournalEntry
        public var file: String
        public var line: Int
        public var function: String

        public init(_ entry: JournalEntry, file: String = #fileID, line: Int = #line, function: String = #function) {
            self.entry = entry
            self.file = file
            self.line = line
            self.function = function
        }
    }

    /// Writes one entry, blocking as long as it takes (called on the drain queue only).
    /// Writes one entry; throws when it reached no one (it is then counted as dropped).
    public typealias Output = @Sendable (Item) throws -> Void

    private struct State {
        var pending: Deque<Item> = []
        /// A drain is scheduled or running.
        var draining = false
        var closed = false
        var written = 0
        var dropped = 0
        var capacity: Int
    }

    private let state: Mutex<State>
    private let drainQueue = DispatchQueue(label: "smartstackd.journal")
    private let output: Output
    /// The most entries waiting at once (at least 1). The daemon's queue exists before its configuration is read
    /// (reading it logs), so `journalQueue` is applied by setting this afterwards; entries already waiting beyond
    /// a smaller capacity stay queued, and new ones wait for room.
    public var capacity: Int {
        get { state.withLock { $0.capacity } }
        set { state.withLock { $0.capacity = max(1, newValue) } }
    }

    public init(capacity: Int = 4_096, output: @escaping Output) {
        self.state = Mutex(State(capacity: max(1, capacity)))
        self.output = output
    }

    /// A queue writing with `writer`; an entry the journal refuses (journald gone) is written to stderr instead.
    public static func writing(to writer: JournalWriter, capacity: Int = 4_096) -> JournalQueue {
        let fallback = JournalWriter(destination: .standardError, identifier: writer.identifier)
        return JournalQueue(capacity: capacity) { item in
            do {
                try writer.send(item.entry, file: item.file, line: item.line, function: item.function)
            } catch {
                // Under systemd stderr is a stream to the same journald: when that fails too, the entry is lost and
                // counted as dropped (it was counted as written while journald was gone).
                try fallback.send(item.entry, file: item.file, line: item.line, function: item.function)
            }
        }
    }

    /// Queues an entry; returns `false` (and counts it as dropped) when the queue is full or closed.
    @discardableResult
    public func enqueue(_ item: Item) -> Bool {
        let schedule: Bool? = state.withLock { state in
            guard !state.closed, state.pending.count < state.capacity else {
                state.dropped += 1
                return nil
            }
            state.pending.append(item)
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        guard let schedule else { return false }
        if schedule { drainQueue.async { self.drain() } }
        return true
    }

    /// Entries written and dropped since start.
    public var counts: (written: Int, dropped: Int) {
        state.withLock { ($0.written, $0.dropped) }
    }

    /// Entries dropped since start: the queue was full or closed, or neither journald nor stderr took them.
    public var dropped: Int { state.withLock { $0.dropped } }

    /// Returns once every entry queued before the call is written.
    public func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            drainQueue.async {
                self.drain()
                continuation.resume()
            }
        }
    }

    /// Writes what is queued and takes no more entries (at exit).
    public func close() async {
        await flush()
        state.withLock { $0.closed = true }
        await flush()
    }

    /// ``close()``, waiting at most `limit` for journald: `false` when it did not take the entries in time (a
    /// journald that is stalled or stopped blocks the drain), so that a stop ends well inside `TimeoutStopSec=`;
    /// what is still queued then is lost with the process, as it would be if journald were gone. Takes no more
    /// entries either way.
    public func close(within limit: Duration) async -> Bool {
        state.withLock { $0.closed = true }
        let done = OneShotSignal()
        let flushed = Atomic(false)
        Task {
            await self.flush()
            flushed.store(true, ordering: .releasing)
            done.fire()
        }
        let timer = Task {
            try? await Task.sleep(for: limit)
            done.fire()
        }
        await done.wait()
        timer.cancel()
        return flushed.load(ordering: .acquiring)
    }

    /// Runs `body` on the drain queue after `delay` (the journal's coalescing timer).
    func after(_ delay: Duration, _ body: @escaping @Sendable () -> Void) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        drainQueue.asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds)), execute: body)
    }

    private func drain() {
        while true {
            let batch: [Item] = state.withLock { state in
                guard !state.pending.isEmpty else {
                    state.draining = false
                    return []
                }
                let items = Array(state.pending)
                state.pending.removeAll(keepingCapacity: true)
                return items
            }
            guard !batch.isEmpty else { return }
            var lost = 0
            for item in batch {
                do { try output(item) } catch { lost += 1 }
            }
            state.withLock {
                $0.written += batch.count - lost
                $0.dropped += lost
            }
        }
    }
}
