public import SmartStackCore

/// `io.smartstack.Provider.StartLiveActivity`.
public struct StartLiveActivityRequest: ProviderRequest {
    public static let method = SmartStackMethod.startLiveActivity
    public static let access = MethodAccess.provider
    public static let records = true
    public var anyRequest: SmartStackRequest { .startLiveActivity(self) }

    public var app: AppID
    public var id: String
    public var attributes: [String: String]
    public var contentState: [String: String]
    public var date: Timestamp?

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["app", "id", "attributes", "contentState", "date"])
        app = try p.appID()
        id = try p.string("id")
        attributes = try LiveActivityPayload.checked(p.optionalStringMap("attributes") ?? [:], "attributes")
        contentState = try LiveActivityPayload.checked(p.optionalStringMap("contentState") ?? [:], "contentState")
        date = try p.optionalTimestamp("date")
    }

    /// The event; the engine checks the id, the sizes and the per-app limit.
    public func event(defaultTime: Timestamp) -> EngineEvent {
        .startLiveActivity(
            app: app, id: id, attributes: attributes, contentState: contentState, at: date ?? defaultTime)
    }
}

/// `io.smartstack.Provider.UpdateLiveActivity`.
public struct UpdateLiveActivityRequest: ProviderRequest {
    public static let method = SmartStackMethod.updateLiveActivity
    public static let access = MethodAccess.provider
    public static let records = true
    public var anyRequest: SmartStackRequest { .updateLiveActivity(self) }

    public var app: AppID
    public var id: String
    public var contentState: [String: String]
    public var date: Timestamp?

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["app", "id", "contentState", "date"])
        app = try p.appID()
        id = try p.string("id")
        contentState = try LiveActivityPayload.checked(p.stringMap("contentState"), "contentState")
        date = try p.optionalTimestamp("date")
    }

    public func event(defaultTime: Timestamp) -> EngineEvent {
        .updateLiveActivity(app: app, id: id, contentState: contentState, at: date ?? defaultTime)
    }
}

/// `io.smartstack.Provider.EndLiveActivity`.
public struct EndLiveActivityRequest: ProviderRequest {
    public static let method = SmartStackMethod.endLiveActivity
    public static let access = MethodAccess.provider
    public static let records = true
    public var anyRequest: SmartStackRequest { .endLiveActivity(self) }

    public var app: AppID
    public var id: String
    /// The final content; `nil` keeps the last.
    public var contentState: [String: String]?
    /// Seconds the ended activity stays visible (at most and by default 4 hours).
    public var dismissAfter: Double?
    public var date: Timestamp?

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["app", "id", "contentState", "dismissAfter", "date"])
        app = try p.appID()
        id = try p.string("id")
        contentState = try p.optionalStringMap("contentState").map { map throws(VarlinkError) in
            try LiveActivityPayload.checked(map, "contentState")
        }
        dismissAfter = try p.optionalDouble("dismissAfter")
        if let dismissAfter, !(0...LiveActivity.maxEndedVisible).contains(dismissAfter) {
            throw .invalidParameter(
                "dismissAfter", reason: "must be between 0 and \(Int(LiveActivity.maxEndedVisible)) seconds")
        }
        date = try p.optionalTimestamp("date")
    }

    public func event(defaultTime: Timestamp) -> EngineEvent {
        .endLiveActivity(
            app: app, id: id, contentState: contentState, dismissAfter: dismissAfter, at: date ?? defaultTime)
    }
}

// MARK: Typed calls

extension StartLiveActivityRequest {
    public init(
        app: AppID, id: String, attributes: [String: String] = [:], contentState: [String: String] = [:],
        date: Timestamp? = nil
    ) {
        (self.app, self.id, self.attributes, self.contentState, self.date) = (app, id, attributes, contentState, date)
    }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        writer.add("app", app.rawValue)
        writer.add("id", id)
        writer.add("attributes", attributes)
        writer.add("contentState", contentState)
        writer.add("date", date)
        return writer.object
    }
}

extension UpdateLiveActivityRequest {
    public init(app: AppID, id: String, contentState: [String: String], date: Timestamp? = nil) {
        (self.app, self.id, self.contentState, self.date) = (app, id, contentState, date)
    }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        writer.add("app", app.rawValue)
        writer.add("id", id)
        writer.add("contentState", contentState)
        writer.add("date", date)
        return writer.object
    }
}

extension EndLiveActivityRequest {
    public init(
        app: AppID, id: String, contentState: [String: String]? = nil, dismissAfter: Double? = nil,
        date: Timestamp? = nil
    ) {
        (self.app, self.id, self.contentState, self.dismissAfter, self.date) = (
            app, id, contentState, dismissAfter, date
        )
    }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        writer.add("app", app.rawValue)
        writer.add("id", id)
        writer.add("contentState", contentState)
        writer.add("dismissAfter", dismissAfter)
        writer.add("date", date)
        return writer.object
    }
}

/// The size of a Live Activity's attributes and content state. Every decision of a stack that shows one carries them
/// (and a subscriber's queue holds up to `subscriberQueue` decisions): 64 values of 4 KiB each made one activity about
/// 0.5 MB, 16 of them a 9 MB decision for every update. ActivityKit, the platform Live Activities come from, takes 4 KB
/// of dynamic data; a map here may hold 16 KiB of keys and values in all.
public enum LiveActivityPayload {
    /// The most bytes (UTF-8, keys and values) in attributes or in content state.
    public static let maxBytes = 16_384

    /// `map` when its keys and values hold at most `maxBytes`; else `InvalidParameter` naming `parameter`.
    public static func checked(_ map: [String: String], _ parameter: String) throws(VarlinkError) -> [String: String] {
        var bytes = 0
        for (key, value) in map { bytes += key.utf8.count + value.utf8.count }
        guard bytes <= maxBytes else {
            throw .invalidParameter(
                parameter, reason: "holds \(bytes) bytes of keys and values; at most \(maxBytes) allowed")
        }
        return map
    }
}
