public import SmartStackCore

/// Decides which order changes become journal entries: at most one per stack per `window`, bursts folded
/// into one entry with their count. A state machine with no I/O and no clock of its own.
///
/// The first change of a quiet stack is written at once and opens a window. Changes inside the window are
/// held: the latest order is kept, the order before the first of them, and how many there were. When the
/// window ends (``due(at:)``) the held changes become one entry, which opens the next window; a window
/// that ends with nothing held closes, and the stack is quiet again.
///
/// The window is in engine time as well as on the service's clock: a change decided for a time at least a
/// window after the last written entry's (`Decision.time`: a replay's decisions are for the log's times, many
/// per second of the service's clock) is written at once, with what was held before it as one entry. So the
/// journal keeps at most one entry per stack per second of *engine* time, and a report over engine time
/// (`smartstackctl analyze`) sees every change a second or more apart, as the engine decided it.
public struct OrderChangeCoalescer: Sendable {
    /// One entry to write: the latest decision, the order before the burst, and how many changes it stands for.
    public struct Change: Sendable, Hashable {
        public var decision: Decision
        /// The order the previous entry showed; `nil` for a stack's first decision.
        public var previousOrder: [String]?
        public var count: Int
    }

    private struct Slot {
        var windowEnd: ContinuousClock.Instant
        var held: Change?
        /// The engine time of the last entry written for the stack.
        var lastWritten: Timestamp
    }

    /// The shortest time between two entries of one stack.
    public let window: Duration
    private var slots: [StackID: Slot] = [:]

    public init(window: Duration = .seconds(1)) {
        self.window = window
    }

    /// Takes a published decision; returns the entry to write now, or `nil` when it is held (the last of
    /// ``take(_:previousOrder:at:)``'s entries).
    public mutating func record(
        _ decision: Decision, previousOrder: [String]?, at now: ContinuousClock.Instant
    ) -> Change? {
        take(decision, previousOrder: previousOrder, at: now).last
    }

    /// Takes a published decision; returns the entries to write now, in order: none when it is held; one; or,
    /// when it is decided for a window or more after the last entry while changes are held, the held ones as one
    /// entry (at their own engine time) and then it.
    public mutating func take(
        _ decision: Decision, previousOrder: [String]?, at now: ContinuousClock.Instant
    ) -> [Change] {
        let engineWindow = Double(window.components.seconds) + Double(window.components.attoseconds) / 1e18
        if var slot = slots[decision.stack] {
            // Decided for a time a window or more after the last entry: written now (with what was held).
            if decision.time.seconds(since: slot.lastWritten) >= engineWindow {
                slots[decision.stack] = Slot(windowEnd: now + window, held: nil, lastWritten: decision.time)
                let change = Change(
                    decision: decision, previousOrder: slot.held?.decision.order ?? previousOrder, count: 1)
                return (slot.held.map { [$0] } ?? []) + [change]
            }
            if now < slot.windowEnd {
                if var held = slot.held {
                    held.decision = decision
                    held.count += 1
                    slot.held = held
                } else {
                    slot.held = Change(decision: decision, previousOrder: previousOrder, count: 1)
                }
                slots[decision.stack] = slot
                return []
            }
            // The window ended before anyone asked for what it held: write both as one entry.
            if var held = slot.held {
                held.decision = decision
                held.count += 1
                slots[decision.stack] = Slot(windowEnd: now + window, held: nil, lastWritten: decision.time)
                return [held]
            }
        }
        slots[decision.stack] = Slot(windowEnd: now + window, held: nil, lastWritten: decision.time)
        return [Change(decision: decision, previousOrder: previousOrder, count: 1)]
    }

    /// The held changes whose window ended by `now`, by stack id; each opens a new window.
    public mutating func due(at now: ContinuousClock.Instant) -> [Change] {
        var changes: [Change] = []
        for (stack, slot) in slots where slot.windowEnd <= now {
            if let held = slot.held {
                changes.append(held)
                slots[stack] = Slot(windowEnd: now + window, held: nil, lastWritten: held.decision.time)
            } else {
                slots.removeValue(forKey: stack)
            }
        }
        return changes.sorted { $0.decision.stack.rawValue < $1.decision.stack.rawValue }
    }

    /// Every held change, windows ended or not (a graceful stop writes them), by stack id; every stack is quiet after.
    public mutating func all() -> [Change] {
        let changes = slots.values.compactMap(\.held)
        slots.removeAll()
        return changes.sorted { $0.decision.stack.rawValue < $1.decision.stack.rawValue }
    }

    /// Forgets a removed stack: returns its held change, to be written now (the stack's last order before it went),
    /// so a stack made again under its id starts quiet, with nothing of the old one's.
    public mutating func remove(_ stack: StackID) -> Change? {
        slots.removeValue(forKey: stack)?.held
    }

    /// When the earliest held change is due; `nil` when nothing is held.
    public var nextDue: ContinuousClock.Instant? {
        slots.values.compactMap { $0.held == nil ? nil : $0.windowEnd }.min()
    }

    /// Changes held now, over all stacks.
    public var heldCount: Int {
        slots.values.reduce(0) { $0 + ($1.held?.count ?? 0) }
    }
}
