/// Everything the engine learns from, each with its time: the engine is a fold over these.
///
/// The service stores exactly these events, so replaying them rebuilds the same engine, and deleting
/// donations is replaying without them.
public enum EngineEvent: Sendable, Hashable {
    case registerKind(WidgetKind, at: Timestamp)
    case configureStack(StackConfiguration, at: Timestamp)
    case removeStack(StackID, at: Timestamp)
    case donate(Donation)
    case submitTimeline(TimelineTarget, Timeline, at: Timestamp)
    case declareRelevance(RelevanceDeclaration, at: Timestamp)
    /// The provider asks for new timelines of one kind, or of all its kinds.
    case reloadTimelines(app: AppID, kind: String?, at: Timestamp)
    case engage(stack: StackID, instance: InstanceID, kind: EngagementKind, duration: Double?, at: Timestamp)
    /// The stack was shown (a look at it); what the user does next teaches the ranker.
    case look(stack: StackID, at: Timestamp)
    /// Sets (or, with `nil`, clears) a context key.
    case setContext(key: String, value: String?, at: Timestamp)
    case startLiveActivity(app: AppID, id: String, attributes: [String: String], contentState: [String: String], at: Timestamp)
    case updateLiveActivity(app: AppID, id: String, contentState: [String: String], at: Timestamp)
    case endLiveActivity(app: AppID, id: String, contentState: [String: String]?, dismissAfter: Double?, at: Timestamp)
    /// The service published decisions at this time, after the events before it.
    ///
    /// The service applies a burst of calls and then publishes once, so one ranking pass serves many calls;
    /// it records where it published so a replay (`Engine.replay`) publishes at exactly the same points and
    /// reaches the same revisions and stability state.
    case publish(at: Timestamp)

    /// When the event happened.
    public var time: Timestamp {
        switch self {
        case .registerKind(_, let at), .configureStack(_, let at), .removeStack(_, let at),
            .submitTimeline(_, _, let at), .declareRelevance(_, let at), .reloadTimelines(_, _, let at),
            .engage(_, _, _, _, let at), .look(_, let at), .setContext(_, _, let at),
            .startLiveActivity(_, _, _, _, let at), .updateLiveActivity(_, _, _, let at),
            .endLiveActivity(_, _, _, _, let at), .publish(let at):
            at
        case .donate(let donation): donation.date
        }
    }

    /// The donation, when this is one.
    public var donation: Donation? {
        if case .donate(let donation) = self { return donation }
        return nil
    }
}

/// What applying events or advancing time produced, for the service to send on.
public enum EngineEffect: Sendable, Hashable {
    /// A reload request for the provider's reload subscription.
    case reloadRequested(instance: InstanceID, kind: WidgetKindID, reason: ReloadReason, at: Timestamp)
    /// A reload that was due but is over budget, and when it can happen.
    case reloadWithheld(instance: InstanceID, kind: WidgetKindID, reason: ReloadReason, until: Timestamp)
    /// Timeline validation warnings (entries less than 5 minutes apart).
    case timelineWarnings([String])
}
