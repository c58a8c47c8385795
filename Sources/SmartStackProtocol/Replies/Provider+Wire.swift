public import SmartStackCore

extension Donation {
    /// One donation of the `ListDonations` reply: `{id, intent, parameters, date, groupId?}`.
    public var wireObject: JSONObject {
        var object: JSONObject = [
            "id": .string(id), "intent": .string(intent), "parameters": .object(ParameterWriter.map(parameters)),
            "date": date.wireValue,
        ]
        if let groupId { object["groupId"] = .string(groupId) }
        return object
    }
}

extension EngineEffect {
    /// The instance a reload effect is for; `nil` for other effects.
    public var reloadInstance: InstanceID? {
        switch self {
        case .reloadRequested(let instance, _, _, _), .reloadWithheld(let instance, _, _, _, _): instance
        case .timelineWarnings: nil
        }
    }

    /// The `WatchReloads` reply for a reload effect; `nil` for other effects.
    ///
    /// A requested reload is `{instance, app, kind, reason, date}` with the time it was granted; a withheld one
    /// has `date` = when it was withheld (the call's time, or when a scheduled reload came due) and `withheldUntil`.
    /// `configuration` is the instance's, when the server has it, so the provider knows what to build.
    public func reloadWireObject(configuration: Configuration? = nil) -> JSONObject? {
        var object = JSONObject(minimumCapacity: 7)
        switch self {
        case .reloadRequested(let instance, let kind, let reason, let at):
            object["instance"] = .string(instance.rawValue)
            object["app"] = .string(kind.app.rawValue)
            object["kind"] = .string(kind.kind)
            if let configuration { object["configuration"] = .object(configuration.wireObject) }
            object["reason"] = .string(reason.rawValue)
            object["date"] = at.wireValue
        case .reloadWithheld(let instance, let kind, let reason, let until, let at):
            object["instance"] = .string(instance.rawValue)
            object["app"] = .string(kind.app.rawValue)
            object["kind"] = .string(kind.kind)
            if let configuration { object["configuration"] = .object(configuration.wireObject) }
            object["reason"] = .string(reason.rawValue)
            object["date"] = at.wireValue
            object["withheldUntil"] = until.wireValue
        case .timelineWarnings:
            return nil
        }
        return object
    }
}

extension StackConfiguration {
    /// One stack of the `ListStacks` reply, with the revision and top of its latest published decision.
    public func wireObject(published: Decision?) -> JSONObject {
        var object = JSONObject(minimumCapacity: 10)
        object["stack"] = .string(id.rawValue)
        object["family"] = .string(family.rawValue)
        object["widgets"] = .array(
            widgets.map { widget in
                .object([
                    "instance": .string(widget.instance.rawValue), "app": .string(widget.kind.app.rawValue),
                    "kind": .string(widget.kind.kind),
                    "configuration": .object(Configuration(widget.configuration).wireObject),
                ])
            })
        object["smartRotate"] = .bool(smartRotate)
        object["suggestions"] = .bool(suggestions)
        object["pinned"] = pinned.map { .string($0.rawValue) } ?? .null
        object["developerMode"] = .bool(developerMode)
        object["liveActivities"] = .bool(liveActivities)
        if let published {
            object["revision"] = .int(Int64(published.revision))
            if let top = published.top { object["top"] = .string(top) }
        }
        return object
    }
}
