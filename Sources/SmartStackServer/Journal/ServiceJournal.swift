public import SmartStackCore
public import SmartStackSystemd
import Synchronization

/// smartstackd's structured journal entries: lifecycle events, published decisions (order changes
/// coalesced per stack), suggestions, reloads, refused clients and the periodic summary.
///
/// It is the daemon's ``ServiceReporter``: the engine's owner calls ``published(decisions:effects:)``
/// inside its isolation, so everything here is a little bookkeeping under a lock and a non-blocking
/// ``JournalQueue/enqueue(_:)``. Held order changes are written by a timer on the queue's drain thread.
public final class ServiceJournal: ServiceReporter {
    /// What the journal saw since start (the summary reports differences between two readings).
    public struct Counters: Sendable, Hashable {
        public var decisionsPublished = 0
        /// Published decisions whose order differs from the stack's previous one (a new stack's first, a removal):
        /// the summary's `COUNT` (it counted every decision, score-only changes too).
        public var orderChanges = 0
        public var orderEntries = 0
        public var suggestionsInserted = 0
        public var suggestionsRemoved = 0
        public var reloadsRequested = 0
        public var reloadsWithheld = 0
        public var clientsRejected = 0
        public init() {}
    }

    private struct Rejections {
        var lastEntry: ContinuousClock.Instant
        var suppressed: Int
        /// The latest refusal held back, written when the window ends unless another refusal comes first (a
        /// burst's last refusals, or another reason, were otherwise never written).
        var latest: (peer: PeerCredentials, rejection: ClientRejection)?
        var flushArmed = false
    }

    private struct State {
        var coalescer: OrderChangeCoalescer
        /// Each stack's latest published decision, for the previous order and the suggestion changes.
        var lastPublished: [StackID: Decision] = [:]
        var rejections: [UInt32: Rejections] = [:]
        var counters = Counters()
        /// When the coalescing timer is set to fire.
        var flushAt: ContinuousClock.Instant?
    }

    public typealias Scheduler = @Sendable (Duration, @escaping @Sendable () -> Void) -> Void

    private let state: Mutex<State>
    /// Where entries go.
    public let queue: JournalQueue
    private let now: @Sendable () -> ContinuousClock.Instant
    private let schedule: Scheduler
    /// The shortest time between two client-rejected entries for one uid (later ones are counted).
    let rejectionInterval: Duration
    /// Set when a decision was published (the status line may have changed); read and cleared by ``takeChanged()``.
    private let changed = Atomic<Bool>(false)

    /// A journal writing to `queue`, coalescing order changes per `window`.
    ///
    /// `now` and `schedule` default to the monotonic clock and a timer on the queue's drain thread; tests
    /// pass their own and call ``flushDue()``.
    public init(
        queue: JournalQueue, window: Duration = .seconds(1), rejectionInterval: Duration = .seconds(1),
        now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }, schedule: Scheduler? = nil
    ) {
        self.state = Mutex(State(coalescer: OrderChangeCoalescer(window: window)))
        self.queue = queue
        self.now = now
        self.schedule = schedule ?? { delay, body in queue.after(delay, body) }
        self.rejectionInterval = rejectionInterval
    }

    /// Whether a decision was published since the last call.
    public func takeChanged() -> Bool {
        changed.exchange(false, ordering: .relaxed)
    }

    /// The counters since start.
    public var counters: Counters { state.withLock { $0.counters } }

    /// Entries dropped because the queue was full.
    public var droppedEntries: Int? { queue.dropped }

    // MARK: Lifecycle and free-form events

    /// Writes one entry of an event type with its fields.
    public func event(
        _ event: SmartStackEvent, _ message: String, priority: JournalPriority = .info,
        fields: [(JournalFieldName, String)] = [], file: String = #fileID, line: Int = #line,
        function: String = #function
    ) {
        var entry = JournalEntry(event, message, priority: priority)
        for (name, value) in fields { entry.append(name, value) }
        queue.enqueue(JournalQueue.Item(entry, file: file, line: line, function: function))
    }

    // MARK: ServiceReporter

    /// Stacks whose latest published decision is kept (for the previous order of the next entry).
    public var stacksFollowed: Int { state.withLock { $0.lastPublished.count } }

    public func published(decisions: [Decision], effects: [EngineEffect]) {
        guard !decisions.isEmpty || !effects.isEmpty else { return }
        let now = self.now()
        var items: [JournalQueue.Item] = []
        let timer: Duration? = state.withLock { state in
            for decision in decisions {
                if decision.removed {
                    // Written at once, not held: the stack's history ends here (analyze closes its last top). What
                    // is kept about the stack goes, so a stack configured again under the id starts afresh and what
                    // is kept is bounded by the stacks that exist, however many come and go.
                    let previous = state.lastPublished.removeValue(forKey: decision.stack)
                    if let held = state.coalescer.remove(decision.stack) {
                        state.counters.orderEntries += 1
                        items.append(Self.orderChangedEntry(held))
                    }
                    state.counters.decisionsPublished += 1
                    state.counters.orderChanges += 1
                    state.counters.orderEntries += 1
                    items.append(
                        Self.orderChangedEntry(.init(decision: decision, previousOrder: previous?.order, count: 1)))
                    continue
                }
                let previous = state.lastPublished.updateValue(decision, forKey: decision.stack)
                state.counters.decisionsPublished += 1
                if !Self.sameOrder(previous, decision) { state.counters.orderChanges += 1 }
                let (inserted, removed) = Self.suggestionChanges(decision, previous: previous)
                state.counters.suggestionsInserted += inserted.count
                state.counters.suggestionsRemoved += removed.count
                items += inserted.map { Self.suggestionEntry(.suggestionInserted, $0, decision) }
                items += removed.map { Self.suggestionEntry(.suggestionRemoved, $0, decision) }
                for change in state.coalescer.take(decision, previousOrder: previous?.order, at: now) {
                    state.counters.orderEntries += 1
                    items.append(Self.orderChangedEntry(change))
                }
            }
            for effect in effects {
                guard let item = Self.effectEntry(effect) else { continue }
                if case .reloadRequested = effect { state.counters.reloadsRequested += 1 }
                if case .reloadWithheld = effect { state.counters.reloadsWithheld += 1 }
                items.append(item)
            }
            return Self.armTimer(&state, now: now)
        }
        for item in items { queue.enqueue(item) }
        if let timer { schedule(timer) { [weak self] in self?.flushDue() } }
        if !decisions.isEmpty { changed.store(true, ordering: .relaxed) }
    }

    /// Whether `decision` orders the same entries as `previous` (compared without building either order).
    static func sameOrder(_ previous: Decision?, _ decision: Decision) -> Bool {
        guard let previous, previous.entries.count == decision.entries.count else { return false }
        return zip(previous.entries, decision.entries).allSatisfy { $0.instance == $1.instance }
    }

    /// Writes every held order change now, windows ended or not: at a graceful stop, so the journal holds each
    /// stack's last change.
    public func flushAll() {
        let items: [JournalQueue.Item] = state.withLock { state in
            state.flushAt = nil
            return state.coalescer.all().map { change in
                state.counters.orderEntries += 1
                return Self.orderChangedEntry(change)
            }
        }
        for item in items { queue.enqueue(item) }
    }

    /// Writes the held order changes whose window ended (the timer calls it; tests call it by hand).
    public func flushDue() {
        let now = self.now()
        var items: [JournalQueue.Item] = []
        let timer: Duration? = state.withLock { state in
            state.flushAt = nil
            for change in state.coalescer.due(at: now) {
                state.counters.orderEntries += 1
                items.append(Self.orderChangedEntry(change))
            }
            return Self.armTimer(&state, now: now)
        }
        for item in items { queue.enqueue(item) }
        if let timer { schedule(timer) { [weak self] in self?.flushDue() } }
    }

    /// Sets the timer for the next held change unless one is already set early enough; returns its delay.
    private static func armTimer(_ state: inout State, now: ContinuousClock.Instant) -> Duration? {
        guard let due = state.coalescer.nextDue else { return nil }
        if let flushAt = state.flushAt, flushAt <= due { return nil }
        state.flushAt = due
        return max(.zero, now.duration(to: due))
    }

    public func clientRejected(_ peer: PeerCredentials, _ rejection: ClientRejection) {
        let now = self.now()
        let interval = rejectionInterval
        var flushIn: Duration?
        let count: Int? = state.withLock { state in
            state.counters.clientsRejected += 1
            if var last = state.rejections[peer.uid], now < last.lastEntry + interval {
                last.suppressed += 1
                last.latest = (peer, rejection)
                if !last.flushArmed {
                    last.flushArmed = true
                    flushIn = last.lastEntry + interval - now
                }
                state.rejections[peer.uid] = last
                return nil
            }
            let suppressed = state.rejections[peer.uid]?.suppressed ?? 0
            state.rejections[peer.uid] = Rejections(lastEntry: now, suppressed: 0)
            if state.rejections.count > 4_096 {
                state.rejections = state.rejections.filter {
                    now < $0.value.lastEntry + interval || $0.value.suppressed > 0
                }
            }
            return suppressed + 1
        }
        if let flushIn {
            let uid = peer.uid
            schedule(flushIn) { [weak self] in self?.flushRejections(of: uid) }
        }
        guard let count else { return }
        queue.enqueue(Self.rejectionEntry(peer, rejection, count: count))
    }

    /// Writes the refusals of `uid` held back in the window that just ended, as one entry (the latest refusal,
    /// counting them all).
    func flushRejections(of uid: UInt32) {
        let now = self.now()
        let held: (PeerCredentials, ClientRejection, Int)? = state.withLock { state in
            guard var last = state.rejections[uid] else { return nil }
            last.flushArmed = false
            defer { state.rejections[uid] = last }
            guard last.suppressed > 0, let latest = last.latest else { return nil }
            let count = last.suppressed
            last.suppressed = 0
            last.latest = nil
            last.lastEntry = now
            return (latest.peer, latest.rejection, count)
        }
        guard let (peer, rejection, count) = held else { return }
        queue.enqueue(Self.rejectionEntry(peer, rejection, count: count))
    }
}
