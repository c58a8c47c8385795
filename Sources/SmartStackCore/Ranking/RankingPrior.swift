/// The weights a stack's learned ranker starts from and is pulled toward: what holds for people in general,
/// before the ranker has learned anything about this person.
///
/// Two priors exist: the hand-set one (the most recent widgets first), and one fitted offline on real usage logs
/// by `make fit-prior` (`smartstack-eval --fit-prior`, see docs/engine.md), which is data in this repository
/// (`FittedPrior.swift`), versioned by its `id`. A stack's ranker keeps a copy of the prior it started from, and
/// snapshots record it, so a new build with another prior changes only stacks configured after it.
public struct RankingPrior: Sendable, Hashable {
    /// The prior's name and version, e.g. `hand-1` or `fit-2026-11-23-desktop+phone`.
    public let id: String
    /// One weight per feature column.
    let weights: [Double]

    /// A prior from weights named as the features are (`mostRecent`, `first3`, …): a name this build does not
    /// know is ignored and a feature without a weight gets 0, so a prior fitted by an older build still loads.
    public init(id: String, weights named: [(name: String, weight: Double)]) {
        self.id = id
        var weights = [Double](repeating: 0, count: Feature.count)
        for (name, weight) in named {
            if let column = Feature.byName[name], weight.isFinite { weights[column] = weight }
        }
        self.weights = weights
    }

    init(id: String, columns: [Double]) {
        precondition(columns.count == Feature.count)
        self.id = id
        self.weights = columns
    }

    /// The weights by feature name, in column order.
    public var namedWeights: [(name: String, weight: Double)] {
        Feature.allCases.map { (name: $0.name, weight: weights[$0.rawValue]) }
    }

    /// The hand-set prior: the widget used last is the one most likely to be wanted again, then the one before.
    public static let handSet = RankingPrior(
        id: "hand-1", weights: [("mostRecent", 2), ("secondRecent", 1), ("thirdRecent", 0.5)])

    /// What new stacks start from in this build: the fitted prior when there is one.
    public static let shipped = fitted ?? handSet
}

extension Feature {
    /// The feature's name in priors and explanations: its case name.
    var name: String { String(describing: self) }

    static let byName: [String: Int] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name, $0.rawValue) })
}

extension StackState {
    /// A new stack whose ranker starts from `prior`.
    init(configuration: StackConfiguration, prior: RankingPrior) {
        self.init(configuration: configuration)
        ranker = OnlineRanker(prior: prior)
    }
}

extension Engine {
    /// The prior the rankers of stacks configured from now on start from (`RankingPrior.shipped` by default).
    /// Configuration, not state: it is not in snapshots, while each stack's own copy is.
    public var rankingPrior: RankingPrior {
        get { usage.prior }
        set { usage.prior = newValue }
    }

    /// The weights the stack's learned ranker ranks with now, by feature name (what a prior is fitted from).
    public func learnedWeights(of stack: StackID) -> [(name: String, weight: Double)]? {
        guard let ranker = stacks[stack]?.ranker else { return nil }
        return Feature.allCases.map { (name: $0.name, weight: ranker.weights[$0.rawValue]) }
    }

    /// The id of the prior the stack's ranker started from.
    public func rankingPriorID(of stack: StackID) -> String? { stacks[stack]?.ranker.prior.id }
}
