/// The engine's limits and rule parameters: a value with defaults, validated as a whole.
public struct EngineSettings: Sendable, Hashable {
    /// Stacks the engine holds at most.
    public var maxStacks = 1_000
    /// Widgets one stack holds at most (DESIGN: up to 10 by default).
    public var maxWidgetsPerStack = 10
    /// Widget kinds registered at most, over all apps.
    public var maxKinds = 10_000
    /// Widget kinds one app registers at most (so one app cannot take every place of `maxKinds`).
    public var maxKindsPerApp = 256
    /// Context keys in force at most.
    public var maxContexts = 64
    /// Entries one timeline holds at most.
    public var maxTimelineEntries = Timeline.defaultMaxEntries
    /// Reloads per instance in a rolling 24 hours.
    public var reloadBudget = ReloadBudget.defaultCapacity
    /// How long a widget the user swiped to stays on top, in seconds.
    public var swipeGracePeriod = 15 * 60.0
    /// How long a widget rotated to the top keeps it against the next rotation, in seconds.
    public var minimumTimeOnTop = 5 * 60.0
    /// Rotations to the top one widget may get in a rolling 24 hours.
    public var maxRotationsPerWidgetPerDay = 8
    /// How long donations are kept, in seconds (DESIGN: 28 days).
    public var retention = 28 * 86_400.0
    /// How long after a look at a stack the next donation counts as what the user went to, in seconds.
    public var lookOutcomeWindow = 600.0
    /// Widget keys (kind + configuration) with no placed instance that are kept as suggestion candidates.
    public var maxSuggestionCandidates = 256
    /// Configurations one app may have learned state or a stored timeline for while no stack places them: the
    /// ones its donations imply (suggestion candidates) and the ones its timelines and declarations target.
    public var maxUnplacedConfigurationsPerApp = 256
    /// Context `key=value` pairs the ranking learns from, over the engine's life (a pair beyond them is in force,
    /// for relevant contexts, but not learned from).
    public var maxContextPairs = 4_096
    /// Live Activities one app may have visible at once.
    public var maxLiveActivitiesPerApp = LiveActivityRegistry.defaultMaxPerApp
    /// Relevant contexts one declaration may hold.
    public var maxRelevantContexts = RelevantContext.defaultMaxCount

    public init() {}

    /// Checks every setting, naming the first bad one.
    public func validated() throws(CoreError) -> EngineSettings {
        func positive(_ value: Int, _ name: String, _ range: ClosedRange<Int>) throws(CoreError) {
            guard range.contains(value) else {
                throw .invalidParameter(parameter: name, reason: "must be in \(range.lowerBound)...\(range.upperBound)")
            }
        }
        func seconds(_ value: Double, _ name: String, _ range: ClosedRange<Double>) throws(CoreError) {
            guard value.isFinite, range.contains(value) else {
                throw .invalidParameter(
                    parameter: name, reason: "must be \(range.lowerBound)...\(range.upperBound) seconds")
            }
        }
        try positive(maxStacks, "maxStacks", 1...1_000_000)
        try positive(maxWidgetsPerStack, "maxWidgetsPerStack", 1...100)
        try positive(maxKinds, "maxKinds", 1...1_000_000)
        try positive(maxKindsPerApp, "maxKindsPerApp", 1...1_000_000)
        try positive(maxContexts, "maxContexts", 1...4_096)
        try positive(maxTimelineEntries, "maxTimelineEntries", 1...100_000)
        _ = try ReloadBudget.validatedCapacity(reloadBudget)
        try seconds(swipeGracePeriod, "swipeGracePeriod", 0...86_400)
        try seconds(minimumTimeOnTop, "minimumTimeOnTop", 0...86_400)
        try positive(maxRotationsPerWidgetPerDay, "maxRotationsPerWidgetPerDay", 1...1_440)
        try seconds(retention, "retention", 3_600...(366 * 86_400))
        try seconds(lookOutcomeWindow, "lookOutcomeWindow", 1...86_400)
        try positive(maxSuggestionCandidates, "maxSuggestionCandidates", 0...100_000)
        try positive(maxUnplacedConfigurationsPerApp, "maxUnplacedConfigurationsPerApp", 0...100_000)
        try positive(maxContextPairs, "maxContextPairs", 0...1_000_000)
        try positive(maxLiveActivitiesPerApp, "maxLiveActivitiesPerApp", 1...1_000)
        try positive(maxRelevantContexts, "maxRelevantContexts", 1...1_000)
        return self
    }
}
