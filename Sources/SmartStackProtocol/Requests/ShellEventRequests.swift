public import SmartStackCore

/// `io.smartstack.Shell.RecordEngagement`.
public struct RecordEngagementRequest: VarlinkMethodRequest {
    public static let method = SmartStackMethod.recordEngagement
    public static let access = MethodAccess.shellWrites
    public static let records = true
    public var anyRequest: SmartStackRequest { .recordEngagement(self) }

    public var stack: StackID
    public var instance: InstanceID
    public var kind: EngagementKind
    /// Seconds on top, for an impression.
    public var duration: Double?
    public var date: Timestamp?

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["stack", "instance", "kind", "duration", "date"])
        stack = try p.stackID()
        instance = try p.instanceID()
        kind = try p.enumeration("kind", EngagementKind.self)
        duration = try p.optionalDouble("duration")
        if let duration, duration < 0 { throw .invalidParameter("duration", reason: "must not be negative") }
        date = try p.optionalTimestamp("date")
    }

    public func event(defaultTime: Timestamp) -> EngineEvent {
        .engage(stack: stack, instance: instance, kind: kind, duration: duration, at: date ?? defaultTime)
    }
}

/// `io.smartstack.Shell.RecordLook`: the stack was shown.
public struct RecordLookRequest: VarlinkMethodRequest {
    public static let method = SmartStackMethod.recordLook
    public static let access = MethodAccess.shellWrites
    public static let records = true
    public var anyRequest: SmartStackRequest { .recordLook(self) }

    public var stack: StackID
    public var date: Timestamp?

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["stack", "date"])
        stack = try p.stackID()
        date = try p.optionalTimestamp("date")
    }

    public func event(defaultTime: Timestamp) -> EngineEvent { .look(stack: stack, at: date ?? defaultTime) }
}

/// `io.smartstack.Shell.SetContext`.
public struct SetContextRequest: VarlinkMethodRequest {
    public static let method = SmartStackMethod.setContext
    public static let access = MethodAccess.shellWrites
    public static let records = true
    public var anyRequest: SmartStackRequest { .setContext(self) }

    public var key: String
    /// The new value; `nil` clears the key.
    public var value: String?
    public var date: Timestamp?

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["key", "value", "date"])
        key = try p.string("key")
        guard !key.isEmpty, key.utf8.count <= 255 else { throw .invalidParameter("key", reason: "must be 1-255 bytes") }
        value = try p.optionalString("value")
        if let value, value.utf8.count > 4_096 { throw .invalidParameter("value", reason: "longer than 4096 bytes") }
        date = try p.optionalTimestamp("date")
    }

    public func event(defaultTime: Timestamp) -> EngineEvent {
        .setContext(key: key, value: value, at: date ?? defaultTime)
    }
}

// MARK: Typed calls

extension RecordEngagementRequest {
    public init(
        stack: StackID, instance: InstanceID, kind: EngagementKind, duration: Double? = nil, date: Timestamp? = nil
    ) {
        (self.stack, self.instance, self.kind, self.duration, self.date) = (stack, instance, kind, duration, date)
    }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        writer.add("stack", stack.rawValue)
        writer.add("instance", instance.rawValue)
        writer.add("kind", kind.rawValue)
        writer.add("duration", duration)
        writer.add("date", date)
        return writer.object
    }
}

extension RecordLookRequest {
    public init(stack: StackID, date: Timestamp? = nil) { (self.stack, self.date) = (stack, date) }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        writer.add("stack", stack.rawValue)
        writer.add("date", date)
        return writer.object
    }
}

extension SetContextRequest {
    /// Sets `key` to `value`, or clears it when `value` is `nil`.
    public init(key: String, value: String?, date: Timestamp? = nil) {
        (self.key, self.value, self.date) = (key, value, date)
    }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        writer.add("key", key)
        writer.add("value", value)
        writer.add("date", date)
        return writer.object
    }
}
