public import SmartStackCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The baselines of docs/usage-log.md, computed in the same run as the engine.
public enum Baselines {
    /// `mru`, `mfu`, `frecency`, `hour-mfu` and `markov`, in that order.
    public static let baselines: [RankerFactory] = [
        RankerFactory(name: "mru") { stack in MRURanker(stack: stack) },
        RankerFactory(name: "mfu") { stack in MFURanker(stack: stack) },
        RankerFactory(name: "frecency") { stack in FrecencyRanker(stack: stack) },
        RankerFactory(name: "hour-mfu") { stack in HourMFURanker(stack: stack) },
        RankerFactory(name: "markov") { stack in MarkovRanker(stack: stack) },
    ]
}

/// A stack's apps with their positions, which break every baseline's ties (most-opened order).
struct StackPositions: Sendable {
    let apps: [String]
    private let positions: [String: Int]

    init(_ apps: [String]) {
        self.apps = apps
        var positions: [String: Int] = [:]
        for (index, app) in apps.enumerated() where positions[app] == nil { positions[app] = index }
        self.positions = positions
    }

    /// The app's position in the stack, `nil` when the app is not in it.
    func position(of app: String) -> Int? { positions[app] }

    /// The stack sorted by `key` (largest first), ties kept in stack order.
    func ordered<Key: Comparable>(descendingBy key: (Int) -> Key) -> [String] {
        let keys = apps.indices.map(key)
        let order = apps.indices.sorted { a, b in keys[a] > keys[b] || (keys[a] == keys[b] && a < b) }
        return order.map { apps[$0] }
    }
}

/// `mru`: the time of the app's last open, latest first; apps never opened last.
public struct MRURanker: MomentRanker, Sendable {
    private let stack: StackPositions
    /// Microseconds of each app's last open; `Int64.min` when never opened.
    private var lastOpen: [Int64]

    public init(stack: [String]) {
        self.stack = StackPositions(stack)
        lastOpen = Array(repeating: .min, count: stack.count)
    }

    public mutating func open(app: String, at time: Timestamp) {
        guard let index = stack.position(of: app) else { return }
        lastOpen[index] = time.microseconds
    }

    public mutating func order(at time: Timestamp) -> [String] {
        stack.ordered { lastOpen[$0] }
    }
}

/// `mfu`: the number of earlier opens of the app.
public struct MFURanker: MomentRanker, Sendable {
    private let stack: StackPositions
    private var opens: [Int]

    public init(stack: [String]) {
        self.stack = StackPositions(stack)
        opens = Array(repeating: 0, count: stack.count)
    }

    public mutating func open(app: String, at time: Timestamp) {
        guard let index = stack.position(of: app) else { return }
        opens[index] += 1
    }

    public mutating func order(at time: Timestamp) -> [String] {
        stack.ordered { opens[$0] }
    }
}

/// `frecency`: the sum over earlier opens of exp(-d/32), d = whole local calendar days from the open's
/// local date to the moment's.
///
/// exp(-(D - x)/32) = exp(-D/32) · exp(x/32), and the first factor is the same for every app at a moment,
/// so the order is that of Σ exp(x/32) over each app's opens: one running sum per app, updated at each
/// open, instead of a pass over the history at every moment. Days count from a base day that moves
/// forward when the sums would grow too large for a `Double`.
public struct FrecencyRanker: MomentRanker, Sendable {
    /// Days over which an open's weight falls by a factor e.
    public static let decayDays = 32.0
    /// How far past the base day an open may be before the sums are rescaled (e^(4096/32) ≈ 4e55).
    static let rebaseAfterDays: Int64 = 4_096

    private let stack: StackPositions
    /// Σ exp((openDay - baseDay) / 32) over each app's opens.
    private var weights: [Double]
    /// The local day the weights are relative to; set by the first open of a stack app.
    private var baseDay: Int64?

    public init(stack: [String]) {
        self.stack = StackPositions(stack)
        weights = Array(repeating: 0, count: stack.count)
    }

    public mutating func open(app: String, at time: Timestamp) {
        guard let index = stack.position(of: app) else { return }
        let day = time.localDay
        let base: Int64
        if let current = baseDay, day - current > Self.rebaseAfterDays {
            let scale = exp(-Double(day - current) / Self.decayDays)
            for app in weights.indices { weights[app] *= scale }
            base = day
        } else {
            base = baseDay ?? day
        }
        baseDay = base
        weights[index] += exp(Double(day - base) / Self.decayDays)
    }

    public mutating func order(at time: Timestamp) -> [String] {
        stack.ordered { weights[$0] }
    }
}

/// `hour-mfu`: earlier opens in the same local hour of day as the moment, then `mfu`.
public struct HourMFURanker: MomentRanker, Sendable {
    private struct Key: Comparable {
        var sameHour: Int
        var total: Int
        static func < (lhs: Key, rhs: Key) -> Bool {
            (lhs.sameHour, lhs.total) < (rhs.sameHour, rhs.total)
        }
    }

    private let stack: StackPositions
    private var opens: [Int]
    /// Opens per local hour of day and app: `byHour[hour * stack.count + app]`.
    private var byHour: [Int]

    public init(stack: [String]) {
        self.stack = StackPositions(stack)
        opens = Array(repeating: 0, count: stack.count)
        byHour = Array(repeating: 0, count: 24 * stack.count)
    }

    public mutating func open(app: String, at time: Timestamp) {
        guard let index = stack.position(of: app) else { return }
        opens[index] += 1
        byHour[time.localHour * stack.apps.count + index] += 1
    }

    public mutating func order(at time: Timestamp) -> [String] {
        let row = time.localHour * stack.apps.count
        return stack.ordered { Key(sameHour: byHour[row + $0], total: opens[$0]) }
    }
}

/// `markov`: earlier transitions from the user's previous `open` (any app, in the stack or not) to the app, then
/// `mfu`.
///
/// A transition is two consecutive `open` rows of the user (`home` rows between them do not break it), counted
/// when the second one comes. Apps outside the stack are interned too, as they can be the previous app.
public struct MarkovRanker: MomentRanker, Sendable {
    private struct Key: Comparable {
        var transitions: Int
        var total: Int
        static func < (lhs: Key, rhs: Key) -> Bool {
            (lhs.transitions, lhs.total) < (rhs.transitions, rhs.total)
        }
    }

    private let stack: StackPositions
    private var opens: [Int]
    /// Every app seen so far (in the stack or not) as a dense index.
    private var appIndices: [String: Int] = [:]
    /// Transitions to each stack app, by previous app: `transitions[previous][stackApp]`.
    private var transitions: [[Int]] = []
    /// The app of the user's latest `open`.
    private var previous: Int?

    public init(stack: [String]) {
        self.stack = StackPositions(stack)
        opens = Array(repeating: 0, count: stack.count)
    }

    public mutating func open(app: String, at time: Timestamp) {
        let index: Int
        if let known = appIndices[app] {
            index = known
        } else {
            index = transitions.count
            appIndices[app] = index
            transitions.append(Array(repeating: 0, count: stack.apps.count))
        }
        if let position = stack.position(of: app) {
            opens[position] += 1
            if let previous { transitions[previous][position] += 1 }
        }
        previous = index
    }

    public mutating func order(at time: Timestamp) -> [String] {
        let row = previous.map { transitions[$0] } ?? Array(repeating: 0, count: stack.apps.count)
        return stack.ordered { Key(transitions: row[$0], total: opens[$0]) }
    }
}
