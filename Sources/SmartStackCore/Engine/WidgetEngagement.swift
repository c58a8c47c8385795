#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the shell reported about one widget (taps, swipes, impressions), as a bounded adjustment of its
/// behaviour probability: the learned model says what the user is likely to want; engagement with the widget
/// itself nudges that, in proportion, and never overturns weeks of habit in one event (docs/engine.md,
/// "Engagement").
///
/// - A **tap** (with or without a look before it) is positive evidence: the widget's behaviour is multiplied by
///   `1 + tapWeight · ln(1 + taps)`, `taps` decaying with a half-life of ``tapHalfLife``: ×1.35 after one tap,
///   ×1.55 after two, ×2.20 after ten, at most ×``maxBoost``. A manual `swipeTo` counts as half a tap.
/// - An **impression without a tap** is weak negative evidence: ×`exp(-ignoredWeight · ignored)` with `ignored`
///   the impressions since the widget's last tap (half-life ``ignoredHalfLife``), at most ``ignoredCap`` of them
///   counted: ×0.95 after one, never below ×0.78. A tap clears them.
/// - A **swipe away** demotes the widget for ``swipeAwayDemotion`` seconds (1 hour): its behaviour is multiplied
///   by ``demotionFactor`` and kept at most half the lowest of the widgets not demoted (so it goes below them),
///   and its relevance does not surface it. A later tap or `swipeTo` ends the demotion.
///
/// The adjusted probabilities are normalised again over the stack, so one widget's gain is the others' loss in
/// proportion to what they had. State is per placed widget (it goes when the widget leaves its stack) and decays
/// by its own dates, so answers are the same at any time without timers.
public struct WidgetEngagement: Sendable, Hashable {
    /// Half-life of tap evidence, in seconds (7 days).
    public static let tapHalfLife = 7 * 86_400.0
    /// Half-life of ignored impressions, in seconds (1 day).
    public static let ignoredHalfLife = 86_400.0
    /// How long a swipe away demotes the widget, in seconds (1 hour).
    public static let swipeAwayDemotion = 3_600.0
    /// The behaviour multiplier while demoted.
    public static let demotionFactor = 0.25
    /// Weight of `ln(1 + taps)`.
    public static let tapWeight = 0.5
    /// The largest boost taps give.
    public static let maxBoost = 3.0
    /// Weight of each ignored impression on the log scale.
    public static let ignoredWeight = 0.05
    /// The most ignored impressions that count.
    public static let ignoredCap = 5.0

    /// Decayed taps (a `swipeTo` adds half), as of ``updated``.
    public internal(set) var taps = 0.0
    /// Decayed impressions since the last tap, as of ``updated``.
    public internal(set) var ignored = 0.0
    /// When ``taps`` and ``ignored`` were last brought up to date.
    public internal(set) var updated: Timestamp?
    /// Until when a swipe away demotes the widget.
    public internal(set) var demotedUntil: Timestamp?

    public init() {}

    init(taps: Double, ignored: Double, updated: Timestamp?, demotedUntil: Timestamp?) {
        self.taps = taps
        self.ignored = ignored
        self.updated = updated
        self.demotedUntil = demotedUntil
    }

    /// Whether nothing was ever reported: the adjustment is exactly 1.
    public var isEmpty: Bool { updated == nil && demotedUntil == nil }

    /// Records one engagement at `time`.
    public mutating func record(_ kind: EngagementKind, at time: Timestamp) {
        let (taps, ignored) = decayed(at: time)
        self.taps = taps
        self.ignored = ignored
        updated = max(updated ?? time, time)
        switch kind {
        case .tap:
            self.taps += 1
            self.ignored = 0
            demotedUntil = nil
        case .swipeTo:
            self.taps += 0.5
            demotedUntil = nil
        case .swipeAway:
            demotedUntil = time.adding(seconds: Self.swipeAwayDemotion)
        case .impression:
            self.ignored += 1
        }
    }

    /// Taps and ignored impressions decayed to `time` (never grown for a time before ``updated``).
    public func decayed(at time: Timestamp) -> (taps: Double, ignored: Double) {
        guard let updated else { return (0, 0) }
        let age = max(0, time.seconds(since: updated))
        return (taps * Self.halving(age, Self.tapHalfLife), ignored * Self.halving(age, Self.ignoredHalfLife))
    }

    /// Whether a swipe away demotes the widget at `time`.
    public func isDemoted(at time: Timestamp) -> Bool {
        demotedUntil.map { until in time < until && until.seconds(since: time) <= Self.swipeAwayDemotion } ?? false
    }

    /// The multiplier of the widget's behaviour probability at `time` (1 when nothing was reported).
    public func factor(at time: Timestamp) -> Double {
        guard !isEmpty else { return 1 }
        let (taps, ignored) = decayed(at: time)
        let boost = min(Self.maxBoost, 1 + Self.tapWeight * log(1 + taps))
        let penalty = exp(-Self.ignoredWeight * min(ignored, Self.ignoredCap))
        return boost * penalty * (isDemoted(at: time) ? Self.demotionFactor : 1)
    }

    private static func halving(_ age: Double, _ halfLife: Double) -> Double { exp(-age / halfLife * ln2) }
    private static let ln2 = 0.693_147_180_559_945_3
}
