public import SmartStackCore

/// What a timeline or a relevance declaration is for, as the call said.
public enum WireTarget: Sendable, Hashable {
    /// One placed instance.
    case instance(InstanceID)
    /// Every instance of the request's kind with this configuration (wire form, read against the kind's schema
    /// when the event is made).
    case configuration(JSONObject)

    /// Reads `instance` and `configuration` (at most one of them).
    init(_ p: Parameters) throws(VarlinkError) {
        let configuration = try p.optionalObject("configuration")
        if let instance = try p.optionalInstanceID() {
            guard configuration == nil else {
                throw .invalidParameter("configuration", reason: "give either instance or configuration, not both")
            }
            self = .instance(instance)
        } else {
            self = .configuration(configuration ?? [:])
        }
    }

    /// Core's target; a configuration target needs the kind's schema from `kinds`. An instance target must be a
    /// placed instance of `kind` (`placedKind` gives an instance's kind): `NotFound(instance)` otherwise, so one
    /// app cannot feed another app's widgets by naming their instance.
    func timelineTarget(
        kind: WidgetKindID, kinds: (WidgetKindID) -> WidgetKind?, placedKind: (InstanceID) -> WidgetKindID?,
        interface: String
    ) throws(VarlinkError) -> TimelineTarget {
        switch self {
        case .instance(let id):
            guard placedKind(id) == kind else {
                throw VarlinkError(.notFound(kind: "instance", id: id.rawValue), interface: interface)
            }
            return .instance(id)
        case .configuration(let object):
            guard let definition = kinds(kind) else {
                throw VarlinkError(.notFound(kind: "widgetKind", id: kind.description), interface: interface)
            }
            do throws(CoreError) {
                return .configuration(
                    kind, try WireConfiguration.decode(object, kind: definition, path: "configuration"))
            } catch {
                throw VarlinkError(error, interface: interface)
            }
        }
    }
}

/// `io.smartstack.Provider.SubmitTimeline`: the timeline is validated and sorted when decoded.
///
/// An `instance` target must be a placed instance of `kind` of `app` (checked when the event is made, against
/// the instances placed then), so one app cannot feed another's widgets.
public struct SubmitTimelineRequest: ProviderRequest {
    public static let method = SmartStackMethod.submitTimeline
    public static let access = MethodAccess.provider
    public static let records = true
    public var anyRequest: SmartStackRequest { .submitTimeline(self) }

    public var kind: WidgetKindID
    public var target: WireTarget
    /// Checked (non-empty, at most `maxEntries`, finite relevances) and sorted by date.
    public var timeline: Timeline
    /// Entries less than 5 minutes apart, for the reply.
    public var warnings: [String]
    public var date: Timestamp?

    public var app: AppID { kind.app }

    private enum PolicyKind: String, CaseIterable { case atEnd, after, never }

    /// The most entries a request holds: the largest limit the configuration allows (the engine checks its own,
    /// `maxTimelineEntries`).
    public static let maxEntries = 100_000

    /// Decodes with the largest limit the configuration allows: the engine checks its own (`maxTimelineEntries`).
    public init(parameters: JSONObject) throws(VarlinkError) {
        try self.init(parameters: parameters, maxEntries: Self.maxEntries)
    }

    /// Decodes with the engine's limit on entries (`EngineSettings.maxTimelineEntries`).
    public init(parameters: JSONObject, maxEntries: Int) throws(VarlinkError) {
        let p = try Parameters(
            parameters, allowed: ["app", "kind", "instance", "configuration", "entries", "policy", "date"])
        kind = try p.kindID(app: try p.appID())
        target = try WireTarget(p)
        var entries: [TimelineEntry] = []
        for entry in try p.structs("entries", allowed: ["date", "relevance"]) {
            let relevance = try entry.optionalStruct("relevance", allowed: ["score", "duration"]).map {
                (relevance) throws(VarlinkError) in
                Relevance(score: try relevance.double("score"), duration: try relevance.double("duration"))
            }
            entries.append(TimelineEntry(date: try entry.timestamp("date"), relevance: relevance))
        }
        var policy = ReloadPolicy.atEnd
        if let given = try p.optionalStruct("policy", allowed: ["kind", "date"]) {
            let date = try given.optionalTimestamp("date")
            let kind = try given.enumeration("kind", PolicyKind.self)
            if kind == .after {
                guard let date else { throw .invalidParameter("policy.date", reason: "required with kind after") }
                policy = .after(date)
            } else {
                guard date == nil else { throw .invalidParameter("policy.date", reason: "only with kind after") }
                policy = kind == .never ? .never : .atEnd
            }
        }
        (timeline, warnings) = try Self.core { () throws(CoreError) in
            try Timeline.validated(entries: entries, policy: policy, maxEntries: maxEntries)
        }
        date = try p.optionalTimestamp("date")
    }

    /// The event that submits the timeline; a configuration target is read against the kind from `kinds`
    /// (`NotFound(widgetKind)` when there is none), an instance target checked against `placedKind`.
    public func event(
        defaultTime: Timestamp, kinds: (WidgetKindID) -> WidgetKind?, placedKind: (InstanceID) -> WidgetKindID?
    ) throws(VarlinkError) -> EngineEvent {
        let resolved = try target.timelineTarget(
            kind: kind, kinds: kinds, placedKind: placedKind, interface: Self.method.interface)
        return .submitTimeline(resolved, timeline, at: date ?? defaultTime)
    }

    /// The reply: `{warnings}`.
    public static func reply(warnings: [String]) -> JSONObject {
        ["warnings": .array(warnings.map(JSONValue.string))]
    }
}

/// `io.smartstack.Provider.ReloadTimelines`.
public struct ReloadTimelinesRequest: ProviderRequest {
    public static let method = SmartStackMethod.reloadTimelines
    public static let access = MethodAccess.provider
    public static let records = true
    public var anyRequest: SmartStackRequest { .reloadTimelines(self) }

    public var app: AppID
    /// One kind's name, or `nil` for every kind of the app.
    public var kind: String?
    public var date: Timestamp?

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["app", "kind", "date"])
        app = try p.appID()
        kind = p.value("kind") == nil ? nil : try p.kindID(app: app).kind
        date = try p.optionalTimestamp("date")
    }

    public func event(defaultTime: Timestamp) -> EngineEvent {
        .reloadTimelines(app: app, kind: kind, at: date ?? defaultTime)
    }

    /// The reply: `{requested: [instance], withheld: [{instance, until}]}` from the call's effects.
    public static func reply(effects: [EngineEffect]) -> JSONObject {
        var requested: [JSONValue] = []
        var withheld: [JSONValue] = []
        for effect in effects {
            switch effect {
            case .reloadRequested(let instance, _, _, _): requested.append(.string(instance.rawValue))
            case .reloadWithheld(let instance, _, _, let until, _):
                withheld.append(.object(["instance": .string(instance.rawValue), "until": until.wireValue]))
            case .timelineWarnings: break
            }
        }
        return ["requested": .array(requested), "withheld": .array(withheld)]
    }
}

/// `io.smartstack.Provider.WatchReloads` (a stream): which reload effects go to this watcher.
public struct WatchReloadsRequest: ProviderRequest {
    public static let method = SmartStackMethod.watchReloads
    public static let access = MethodAccess.provider
    public static let streams = true
    public var anyRequest: SmartStackRequest { .watchReloads(self) }

    public var app: AppID
    /// Also send withheld reloads (marked by `withheldUntil`).
    public var includeWithheld: Bool

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["app", "includeWithheld"])
        app = try p.appID()
        includeWithheld = try p.optionalBool("includeWithheld") ?? false
    }

    /// Whether `effect` is for this watcher: a reload of one of its app's instances (a withheld one only with
    /// `includeWithheld`).
    public func wants(_ effect: EngineEffect) -> Bool {
        switch effect {
        case .reloadRequested(_, let kind, _, _): kind.app == app
        case .reloadWithheld(_, let kind, _, _, _): includeWithheld && kind.app == app
        case .timelineWarnings: false
        }
    }
}

/// `io.smartstack.Provider.DeclareRelevance`: relevant contexts (checked when decoded) and a relevance group.
public struct DeclareRelevanceRequest: ProviderRequest {
    public static let method = SmartStackMethod.declareRelevance
    public static let access = MethodAccess.provider
    public static let records = true
    public var anyRequest: SmartStackRequest { .declareRelevance(self) }

    public var kind: WidgetKindID
    public var target: WireTarget
    /// In priority order, each checked (`RelevantContext.validated`).
    public var contexts: [RelevantContext]
    public var group: String?
    public var date: Timestamp?

    public var app: AppID { kind.app }

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(
            parameters, allowed: ["app", "kind", "instance", "configuration", "contexts", "group", "date"])
        kind = try p.kindID(app: try p.appID())
        target = try WireTarget(p)
        var contexts: [RelevantContext] = []
        for context in try p.structs("contexts", allowed: ["start", "end", "key", "value"], optional: true) {
            let start = try context.optionalTimestamp("start")
            let end = try context.optionalTimestamp("end")
            let key = try context.optionalString("key")
            let value = try context.optionalString("value")
            if start != nil || end != nil {
                guard key == nil, value == nil else {
                    throw .invalidParameter(
                        context.path(key != nil ? "key" : "value"), reason: "a date interval has no key or value")
                }
                contexts.append(.dateInterval(start: try context.timestamp("start"), end: try context.timestamp("end")))
            } else if key != nil || value != nil {
                contexts.append(.context(key: try context.string("key"), value: try context.string("value")))
            } else {
                throw .invalidParameter(context.path, reason: "give start and end, or key and value")
            }
        }
        // Their number is the engine's to check (`maxRelevantContexts`, configurable); the frame size bounds it here.
        self.contexts = try Self.core { () throws(CoreError) in try RelevantContext.validated(contexts, maxCount: .max)
        }
        group = try p.optionalString("group")
        if let group, group.isEmpty || group.utf8.count > 255 {
            throw .invalidParameter("group", reason: "must be 1-255 bytes")
        }
        date = try p.optionalTimestamp("date")
    }

    /// The event that declares the relevance; a configuration target is read against the kind from `kinds`, an
    /// instance target checked against `placedKind`.
    public func event(
        defaultTime: Timestamp, kinds: (WidgetKindID) -> WidgetKind?, placedKind: (InstanceID) -> WidgetKindID?
    ) throws(VarlinkError) -> EngineEvent {
        let resolved = try target.timelineTarget(
            kind: kind, kinds: kinds, placedKind: placedKind, interface: Self.method.interface)
        return .declareRelevance(
            RelevanceDeclaration(target: resolved, contexts: contexts, group: group), at: date ?? defaultTime)
    }
}

// MARK: Typed calls

extension WireTarget {
    /// Writes the kind (`app`, `kind`) and the target (`instance` or `configuration`) of a timeline or a
    /// relevance declaration.
    fileprivate func write(kind: WidgetKindID, to writer: inout ParameterWriter) {
        writer.add("app", kind.app.rawValue)
        writer.add("kind", kind.kind)
        switch self {
        case .instance(let id): writer.add("instance", id.rawValue)
        case .configuration(let object): if !object.isEmpty { writer.add("configuration", object) }
        }
    }
}

extension SubmitTimelineRequest {
    /// A timeline for `target`, checked and sorted as the service does (`InvalidParameter` naming the entry).
    public init(
        kind: WidgetKindID, target: WireTarget, entries: [TimelineEntry], policy: ReloadPolicy = .atEnd,
        date: Timestamp? = nil
    ) throws(VarlinkError) {
        (self.kind, self.target, self.date) = (kind, target, date)
        (timeline, warnings) = try Self.core { () throws(CoreError) in
            try Timeline.validated(entries: entries, policy: policy, maxEntries: Self.maxEntries)
        }
    }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        target.write(kind: kind, to: &writer)
        writer.add(
            "entries",
            timeline.entries.map { entry -> JSONObject in
                var object: JSONObject = ["date": entry.date.wireValue]
                if let relevance = entry.relevance {
                    object["relevance"] = ["score": .double(relevance.score), "duration": .double(relevance.duration)]
                }
                return object
            })
        switch timeline.policy {
        case .atEnd: break
        case .after(let date): writer.add("policy", ["kind": .string("after"), "date": date.wireValue] as JSONObject)
        case .never: writer.add("policy", ["kind": .string("never")] as JSONObject)
        }
        writer.add("date", date)
        return writer.object
    }
}

extension ReloadTimelinesRequest {
    /// Asks for reloads of one kind of `app`, or of all its kinds when `kind` is `nil`.
    public init(app: AppID, kind: String? = nil, date: Timestamp? = nil) {
        (self.app, self.kind, self.date) = (app, kind, date)
    }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        writer.add("app", app.rawValue)
        writer.add("kind", kind)
        writer.add("date", date)
        return writer.object
    }
}

extension WatchReloadsRequest {
    public init(app: AppID, includeWithheld: Bool = false) { (self.app, self.includeWithheld) = (app, includeWithheld) }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        writer.add("app", app.rawValue)
        if includeWithheld { writer.add("includeWithheld", true) }
        return writer.object
    }
}

extension DeclareRelevanceRequest {
    /// Relevant contexts for `target`, checked as the service checks them.
    public init(
        kind: WidgetKindID, target: WireTarget, contexts: [RelevantContext], group: String? = nil,
        date: Timestamp? = nil
    ) throws(VarlinkError) {
        (self.kind, self.target, self.group, self.date) = (kind, target, group, date)
        self.contexts = try Self.core { () throws(CoreError) in try RelevantContext.validated(contexts, maxCount: .max)
        }
    }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        target.write(kind: kind, to: &writer)
        writer.add(
            "contexts",
            contexts.map { context -> JSONObject in
                switch context {
                case .dateInterval(let start, let end): ["start": start.wireValue, "end": end.wireValue]
                case .context(let key, let value): ["key": .string(key), "value": .string(value)]
                }
            })
        writer.add("group", group)
        writer.add("date", date)
        return writer.object
    }
}
