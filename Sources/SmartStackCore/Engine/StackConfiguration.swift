/// One widget placed in a stack: a kind with a configuration, under an id the shell chose.
public struct WidgetPlacement: Sendable, Hashable {
    public var instance: InstanceID
    public var kind: WidgetKindID
    /// Configuration values as given; validated against the kind's schema, defaults filled in.
    public var configuration: [String: ConfigurationValue]

    public init(instance: InstanceID, kind: WidgetKindID, configuration: [String: ConfigurationValue] = [:]) {
        self.instance = instance
        self.kind = kind
        self.configuration = configuration
    }
}

/// A stack as the shell configures it.
public struct StackConfiguration: Sendable, Hashable {
    public var id: StackID
    public var family: WidgetFamily
    /// The widgets in the user's own order.
    public var widgets: [WidgetPlacement]
    /// The service may move a widget to the top.
    public var smartRotate: Bool
    /// The service may insert, temporarily, a widget that is not in the stack.
    public var suggestions: Bool
    /// An instance of the stack kept on top.
    public var pinned: InstanceID?
    /// Lifts the stability limits so providers can test their relevance.
    public var developerMode: Bool
    /// Shows the active Live Activities of the stack's apps above its widgets.
    public var liveActivities: Bool

    public init(
        id: StackID, family: WidgetFamily, widgets: [WidgetPlacement], smartRotate: Bool = true,
        suggestions: Bool = true, pinned: InstanceID? = nil, developerMode: Bool = false, liveActivities: Bool = true
    ) {
        self.id = id
        self.family = family
        self.widgets = widgets
        self.smartRotate = smartRotate
        self.suggestions = suggestions
        self.pinned = pinned
        self.developerMode = developerMode
        self.liveActivities = liveActivities
    }
}

/// Where a submitted timeline applies.
public enum TimelineTarget: Sendable, Hashable {
    /// One placed instance.
    case instance(InstanceID)
    /// Every instance, now and later, of the kind with this configuration.
    case configuration(WidgetKindID, [String: ConfigurationValue])
}

/// What a provider declares about when its widget matters, besides timelines.
public struct RelevanceDeclaration: Sendable, Hashable {
    public var target: TimelineTarget
    /// Relevant contexts in priority order (first is strongest).
    public var contexts: [RelevantContext]
    /// Widgets of the same app in the same group are never surfaced or suggested at the same time.
    public var group: String?

    public init(target: TimelineTarget, contexts: [RelevantContext], group: String? = nil) {
        self.target = target
        self.contexts = contexts
        self.group = group
    }
}
