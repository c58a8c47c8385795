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
    case startLiveActivity(
        app: AppID, id: String, attributes: [String: String], contentState: [String: String], at: Timestamp)
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

    /// The same event at another time (a donation's date is its time).
    public func withTime(_ time: Timestamp) -> EngineEvent {
        if case .donate(var donation) = self {
            donation.date = time
            return .donate(donation)
        }
        return switch self {
        case .registerKind(let kind, _): .registerKind(kind, at: time)
        case .configureStack(let configuration, _): .configureStack(configuration, at: time)
        case .removeStack(let id, _): .removeStack(id, at: time)
        case .donate: self
        case .submitTimeline(let target, let timeline, _): .submitTimeline(target, timeline, at: time)
        case .declareRelevance(let declaration, _): .declareRelevance(declaration, at: time)
        case .reloadTimelines(let app, let kind, _): .reloadTimelines(app: app, kind: kind, at: time)
        case .engage(let stack, let instance, let kind, let duration, _):
            .engage(stack: stack, instance: instance, kind: kind, duration: duration, at: time)
        case .look(let stack, _): .look(stack: stack, at: time)
        case .setContext(let key, let value, _): .setContext(key: key, value: value, at: time)
        case .startLiveActivity(let app, let id, let attributes, let contentState, _):
            .startLiveActivity(app: app, id: id, attributes: attributes, contentState: contentState, at: time)
        case .updateLiveActivity(let app, let id, let contentState, _):
            .updateLiveActivity(app: app, id: id, contentState: contentState, at: time)
        case .endLiveActivity(let app, let id, let contentState, let dismissAfter, _):
            .endLiveActivity(app: app, id: id, contentState: contentState, dismissAfter: dismissAfter, at: time)
        case .publish: .publish(at: time)
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
    case reloadWithheld(instance: InstanceID, kind: WidgetKindID, reason: ReloadReason, until: Timestamp, at: Timestamp)
    /// Timeline validation warnings (entries less than 5 minutes apart).
    case timelineWarnings([String])
}
