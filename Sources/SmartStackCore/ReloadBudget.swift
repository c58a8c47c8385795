/// A widget instance's reload budget as callers see it (`GetBudget`, explanations).
public struct BudgetState: Hashable, Sendable {
    /// Reloads allowed in any rolling 24 hours.
    public var capacity: Int
    /// Budget-consuming reloads granted in the last 24 hours.
    public var used: Int
    /// Reloads that can still be granted now.
    public var left: Int
    /// When the next reload can be granted: the time asked about when `left > 0`, otherwise when the oldest
    /// counted reload leaves the window.
    public var nextAvailable: Timestamp

    /// A state with every field given.
    public init(capacity: Int, used: Int, left: Int, nextAvailable: Timestamp) {
        self.capacity = capacity
        self.used = used
        self.left = left
        self.nextAvailable = nextAvailable
    }
}

/// A rolling 24-hour reload budget for one widget instance.
///
/// It keeps the times of the last `capacity` grants and no more: a grant at `g` counts against the budget for
/// times `t` with `g <= t < g + window`, and a new grant is allowed only while fewer than `capacity` grants count,
/// so no 24-hour window ever holds more than `capacity` grants.
///
/// Times are expected not to go backwards. A grant asked for earlier than the latest grant is recorded at the
/// latest grant's time, which keeps the stored times sorted and the invariant intact.
public struct ReloadBudget: Hashable, Sendable {
    /// The length of the rolling window in seconds (24 hours).
    public static let window = 86_400.0
    /// Reloads per window when the configuration does not say (DESIGN: "default 70").
    public static let defaultCapacity = 70
    /// Capacities the configuration may set: down to 40, up to one reload a minute.
    public static let allowedCapacity = 40...1_440

    /// Reloads allowed in any window.
    public internal(set) var capacity: Int
    /// Grant times, oldest first; at most `capacity` of them, none older than a window before the latest.
    var grants: [Timestamp] = []

    /// A budget of `capacity` reloads per window (negative values count as 0); validate configured values with
    /// ``validatedCapacity(_:)`` first.
    public init(capacity: Int = defaultCapacity) {
        self.capacity = max(0, capacity)
    }

    /// Checks a configured capacity: default 70, configurable down to 40 (and up to 1440, one a minute).
    @discardableResult
    public static func validatedCapacity(_ n: Int) throws(CoreError) -> Int {
        guard allowedCapacity.contains(n) else {
            throw .invalidParameter(
                parameter: "reloadBudget",
                reason: "must be between \(allowedCapacity.lowerBound) and \(allowedCapacity.upperBound) "
                    + "(default \(defaultCapacity)); got \(n)")
        }
        return n
    }

    /// Changes the capacity, keeping the newest grants.
    ///
    /// Dropping the oldest extra grants when shrinking loses nothing: the budget stays full until the oldest
    /// kept grant leaves the window, exactly as it would with all of them.
    public mutating func setCapacity(_ capacity: Int) {
        self.capacity = max(0, capacity)
        if grants.count > self.capacity { grants.removeFirst(grants.count - self.capacity) }
    }

    /// Grants a reload at `t` if the budget allows, recording it; returns whether it was granted.
    public mutating func consume(at t: Timestamp) -> Bool {
        let expired = firstCounted(at: t)
        if expired > 0 { grants.removeFirst(expired) }
        guard grants.count < capacity else { return false }
        grants.append(grants.last.map { max($0, t) } ?? t)
        return true
    }

    /// Used, left and the next possible grant time at `t`: the grants in the 24 hours up to `t` (none after it, so a
    /// question about an earlier time does not count the reloads granted since: it reported a budget spent before
    /// any reload).
    public func state(at t: Timestamp) -> BudgetState {
        let first = firstCounted(at: t)
        let used = grantedThrough(t) - first
        return BudgetState(
            capacity: capacity, used: used, left: max(0, capacity - used),
            nextAvailable: nextFree(first: first, used: used, at: t))
    }

    /// When a grant is next possible: `t` when budget is left, otherwise when enough counted grants have left
    /// the window to free one slot. Every grant kept counts, those dated after `t` too (`consume` counts them: a
    /// time it reported free would then fail again), unlike `state(at:)`, which answers what was so at `t`.
    public func nextAvailable(at t: Timestamp) -> Timestamp {
        let first = firstCounted(at: t)
        return nextFree(first: first, used: grants.count - first, at: t)
    }

    /// When a slot is free with `used` grants counted from index `first` on: `t` below the capacity, else when the
    /// (used - capacity + 1)-th oldest of them leaves the window.
    private func nextFree(first: Int, used: Int, at t: Timestamp) -> Timestamp {
        guard used >= capacity else { return t }
        guard capacity > 0 else {
            // A zero budget never frees up; the far future says so without an optional.
            return Timestamp(microseconds: Int64.max, utcOffsetSeconds: t.utcOffsetSeconds)
        }
        // With `used` grants counted, one slot frees when the (used - capacity + 1)-th oldest of them leaves.
        return grants[first + used - capacity].adding(seconds: Self.window)
    }

    /// How many grants were made at or before `t` (the index of the first one after it).
    private func grantedThrough(_ t: Timestamp) -> Int {
        var low = 0
        var high = grants.count
        while low < high {
            let middle = low + (high - low) / 2
            if grants[middle] <= t { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The index of the oldest grant still in the window at `t` (grants before it have left: `g + window <= t`).
    private func firstCounted(at t: Timestamp) -> Int {
        var low = 0
        var high = grants.count
        while low < high {
            let middle = low + (high - low) / 2
            if grants[middle].adding(seconds: Self.window) <= t { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
