public import SmartStackCore

/// Something that orders a user's stack at home moments, fed the user's log one row at a time.
///
/// The evaluation replays each user separately with a fresh ranker: `open` for every `open` row, and
/// `order(at:)` for every `home` row, counted or not. A ranker sees only rows before the query.
public protocol MomentRanker {
    /// The user brought `app` to the front at `time` (the app may be outside the stack).
    mutating func open(app: String, at time: Timestamp)

    /// The whole stack, best first, at a home moment.
    ///
    /// `mutating` because a ranker may record the query itself, as the daemon sees a shell ask for the
    /// order. The result must be a permutation of the stack the ranker was made with.
    mutating func order(at time: Timestamp) -> [String]
}

/// A named way to make a fresh ranker for one user's stack (its apps in most-opened order).
public struct RankerFactory: Sendable {
    /// The ranker's column name in reports (`engine`, `mru`, …).
    public var name: String
    /// Makes a ranker for a stack of apps, best-arranged first.
    public var make: @Sendable (_ stack: [String]) -> any MomentRanker

    public init(name: String, make: @escaping @Sendable (_ stack: [String]) -> any MomentRanker) {
        self.name = name
        self.make = make
    }
}
