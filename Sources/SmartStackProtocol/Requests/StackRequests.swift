public import SmartStackCore

/// One widget of a `ConfigureStack` call, its configuration still in wire form.
public struct WirePlacement: Sendable, Hashable {
    public var instance: InstanceID
    public var kind: WidgetKindID
    /// Values by parameter name, read against the kind's schema when the event is made.
    public var configuration: JSONObject

    /// A widget to place: `configuration` holds its values by parameter name, in either wire form.
    public init(instance: InstanceID, kind: WidgetKindID, configuration: JSONObject = [:]) {
        (self.instance, self.kind, self.configuration) = (instance, kind, configuration)
    }

    /// The placements, each one's values read against its kind from `kinds`: errors name
    /// `PARAMETER[i].configuration.NAME`; a kind `kinds` does not know is `method`'s `NotFound(widgetKind)`.
    static func placements<Method: VarlinkMethodRequest>(
        _ wire: [WirePlacement], parameter: String, method: Method.Type, kinds: (WidgetKindID) -> WidgetKind?
    ) throws(VarlinkError) -> [WidgetPlacement] {
        var placements: [WidgetPlacement] = []
        placements.reserveCapacity(wire.count)
        for (index, widget) in wire.enumerated() {
            guard let kind = kinds(widget.kind) else {
                throw Method.wire(.notFound(kind: "widgetKind", id: widget.kind.description))
            }
            let values = try Method.core { () throws(CoreError) in
                try WireConfiguration.decode(
                    widget.configuration, kind: kind, path: "\(parameter)[\(index)].configuration")
            }
            placements.append(WidgetPlacement(instance: widget.instance, kind: widget.kind, configuration: values))
        }
        return placements
    }
}

/// `io.smartstack.Shell.ConfigureStack`.
public struct ConfigureStackRequest: VarlinkMethodRequest {
    public static let method = SmartStackMethod.configureStack
    public static let access = MethodAccess.shellWrites
    public static let records = true
    public var anyRequest: SmartStackRequest { .configureStack(self) }

    public var stack: StackID
    public var family: WidgetFamily
    public var widgets: [WirePlacement]
    public var smartRotate: Bool
    public var suggestions: Bool
    public var pinned: InstanceID?
    public var developerMode: Bool
    public var liveActivities: Bool
    public var date: Timestamp?

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(
            parameters,
            allowed: [
                "stack", "family", "widgets", "smartRotate", "suggestions", "pinned", "developerMode",
                "liveActivities", "date",
            ])
        stack = try p.stackID()
        let familyName = try p.string("family")
        family = try Self.core { () throws(CoreError) in try WidgetFamily(parsing: familyName, parameter: "family") }
        widgets = []
        for widget in try p.structs("widgets", allowed: ["instance", "app", "kind", "configuration"]) {
            widgets.append(
                WirePlacement(
                    instance: try widget.instanceID(),
                    kind: try widget.kindID(app: try widget.appID()),
                    configuration: try widget.optionalObject("configuration") ?? [:]))
        }
        smartRotate = try p.optionalBool("smartRotate") ?? true
        suggestions = try p.optionalBool("suggestions") ?? true
        pinned = try p.optionalInstanceID("pinned")
        developerMode = try p.optionalBool("developerMode") ?? false
        liveActivities = try p.optionalBool("liveActivities") ?? true
        date = try p.optionalTimestamp("date")
    }

    /// The stack's configuration, each widget's values read against its kind from `kinds` (errors name
    /// `widgets[i].configuration.NAME`; a kind `kinds` does not know is `NotFound(widgetKind)`).
    public func configuration(kinds: (WidgetKindID) -> WidgetKind?) throws(VarlinkError) -> StackConfiguration {
        let placements = try WirePlacement.placements(widgets, parameter: "widgets", method: Self.self, kinds: kinds)
        return StackConfiguration(
            id: stack, family: family, widgets: placements, smartRotate: smartRotate, suggestions: suggestions,
            pinned: pinned, developerMode: developerMode, liveActivities: liveActivities)
    }

    public func event(
        defaultTime: Timestamp, kinds: (WidgetKindID) -> WidgetKind?
    ) throws(VarlinkError) -> EngineEvent {
        .configureStack(try configuration(kinds: kinds), at: date ?? defaultTime)
    }

    /// The reply: `{revision}`.
    public static func reply(revision: Int) -> JSONObject { ["revision": .int(Int64(revision))] }
}

/// `io.smartstack.Shell.ChangeStack`.
public struct ChangeStackRequest: VarlinkMethodRequest {
    public static let method = SmartStackMethod.changeStack
    public static let access = MethodAccess.shellWrites
    public static let records = true
    public var anyRequest: SmartStackRequest { .changeStack(self) }

    public var stack: StackID
    public var family: WidgetFamily?
    public var smartRotate: Bool?
    public var suggestions: Bool?
    public var liveActivities: Bool?
    public var developerMode: Bool?
    public var pin: InstanceID?
    public var unpin: Bool
    /// Widgets to add, their configurations still in wire form.
    public var add: [WirePlacement]
    public var remove: [InstanceID]
    public var order: [InstanceID]?
    public var date: Timestamp?

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(
            parameters,
            allowed: [
                "stack", "family", "smartRotate", "suggestions", "liveActivities", "developerMode", "pin", "unpin",
                "add", "remove", "order", "date",
            ])
        stack = try p.stackID()
        if let familyName = try p.optionalString("family") {
            family = try Self.core { () throws(CoreError) in try WidgetFamily(parsing: familyName, parameter: "family")
            }
        }
        smartRotate = try p.optionalBool("smartRotate")
        suggestions = try p.optionalBool("suggestions")
        liveActivities = try p.optionalBool("liveActivities")
        developerMode = try p.optionalBool("developerMode")
        pin = try p.optionalInstanceID("pin")
        unpin = try p.optionalBool("unpin") ?? false
        add = []
        for widget in try p.structs("add", allowed: ["instance", "app", "kind", "configuration"], optional: true) {
            add.append(
                WirePlacement(
                    instance: try widget.instanceID(),
                    kind: try widget.kindID(app: try widget.appID()),
                    configuration: try widget.optionalObject("configuration") ?? [:]))
        }
        remove = try Self.instances(try p.optionalStringArray("remove") ?? [], parameter: "remove")
        if let names = try p.optionalStringArray("order") { order = try Self.instances(names, parameter: "order") }
        date = try p.optionalTimestamp("date")
    }

    private static func instances(_ names: [String], parameter: String) throws(VarlinkError) -> [InstanceID] {
        var result: [InstanceID] = []
        for (index, name) in names.enumerated() {
            result.append(
                try core { () throws(CoreError) in try InstanceID(name, parameter: "\(parameter)[\(index)]") })
        }
        return result
    }

    /// The change, each added widget's values read against its kind from `kinds` (errors name
    /// `add[i].configuration.NAME`; a kind `kinds` does not know is `NotFound(widgetKind)`).
    public func change(kinds: (WidgetKindID) -> WidgetKind?) throws(VarlinkError) -> StackChange {
        let placements = try WirePlacement.placements(add, parameter: "add", method: Self.self, kinds: kinds)
        return StackChange(
            family: family, smartRotate: smartRotate, suggestions: suggestions, liveActivities: liveActivities,
            developerMode: developerMode, pin: pin, unpin: unpin, add: placements, remove: remove, order: order)
    }

    /// The reply: `{revision}`.
    public static func reply(revision: Int) -> JSONObject { ["revision": .int(Int64(revision))] }
}

/// `io.smartstack.Shell.GetStack`.
public struct GetStackRequest: VarlinkMethodRequest {
    public static let method = SmartStackMethod.getStack
    public static let access = MethodAccess.shellReads
    public var anyRequest: SmartStackRequest { .getStack(self) }

    public var stack: StackID
    /// The time to decide for; now when `nil`.
    public var at: Timestamp?

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["stack", "at"])
        stack = try p.stackID()
        at = try p.optionalTimestamp("at")
    }

    /// The usual call, `{"stack": "…"}`, is the service's most frequent: read without building its parameters.
    public static let takesPlainParameters = true

    public static func decodePlain(_ parameters: PlainParameters) -> SmartStackRequest? {
        guard parameters.count == 1, let text = parameters.ascii("stack"), let stack = try? StackID(text) else {
            return nil
        }
        return .getStack(GetStackRequest(stack: stack))
    }

    /// The reply: the decision's wire shape (`Decision.wireObject`).
    public static func reply(_ decision: Decision) -> JSONObject { decision.wireObject }
}

/// `io.smartstack.Shell.Subscribe` (a stream).
public struct SubscribeRequest: VarlinkMethodRequest {
    public static let method = SmartStackMethod.subscribe
    public static let access = MethodAccess.shellReads
    public static let streams = true
    public var anyRequest: SmartStackRequest { .subscribe(self) }

    /// The stacks to follow, without repeats, in the order asked; `nil` for every stack, present and future.
    public var stacks: [StackID]?

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["stacks"])
        guard let names = try p.optionalStringArray("stacks") else {
            stacks = nil
            return
        }
        var seen = Set<StackID>()
        var stacks: [StackID] = []
        for (index, name) in names.enumerated() {
            let id = try Self.core { () throws(CoreError) in try StackID(name, parameter: "stacks[\(index)]") }
            if seen.insert(id).inserted { stacks.append(id) }
        }
        self.stacks = stacks
    }

    /// Whether a decision of `stack` goes to this subscriber.
    public func follows(_ stack: StackID) -> Bool { stacks?.contains(stack) ?? true }
}

/// `io.smartstack.Shell.ListStacks`.
public struct ListStacksRequest: VarlinkMethodRequest {
    public static let method = SmartStackMethod.listStacks
    public static let access = MethodAccess.shellReads
    public var anyRequest: SmartStackRequest { .listStacks(self) }

    public init(parameters: JSONObject) throws(VarlinkError) {
        _ = try Parameters(parameters, allowed: [])
    }

    /// The reply: `{stacks}`, each a configuration with its latest published revision and top.
    public static func reply(stacks: [(configuration: StackConfiguration, published: Decision?)]) -> JSONObject {
        ["stacks": .array(stacks.map { .object($0.configuration.wireObject(published: $0.published)) })]
    }
}

/// `io.smartstack.Shell.RemoveStack`.
public struct RemoveStackRequest: VarlinkMethodRequest {
    public static let method = SmartStackMethod.removeStack
    public static let access = MethodAccess.shellWrites
    public static let records = true
    public var anyRequest: SmartStackRequest { .removeStack(self) }

    public var stack: StackID
    public var date: Timestamp?

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["stack", "date"])
        stack = try p.stackID()
        date = try p.optionalTimestamp("date")
    }

    public func event(defaultTime: Timestamp) -> EngineEvent { .removeStack(stack, at: date ?? defaultTime) }
}

/// `io.smartstack.Shell.Explain`.
public struct ExplainRequest: VarlinkMethodRequest {
    public static let method = SmartStackMethod.explain
    public static let access = MethodAccess.shellReads
    public var anyRequest: SmartStackRequest { .explain(self) }

    public var stack: StackID
    /// Only this widget, when given.
    public var instance: InstanceID?
    public var at: Timestamp?

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["stack", "instance", "at"])
        stack = try p.stackID()
        instance = try p.optionalInstanceID()
        at = try p.optionalTimestamp("at")
    }

    /// The reply (`StackExplanation.wireObject`).
    public static func reply(_ explanation: StackExplanation) -> JSONObject { explanation.wireObject }
}

/// `io.smartstack.Shell.GetBudget`.
public struct GetBudgetRequest: VarlinkMethodRequest {
    public static let method = SmartStackMethod.getBudget
    public static let access = MethodAccess.shellReads
    public var anyRequest: SmartStackRequest { .getBudget(self) }

    public var instance: InstanceID
    public var at: Timestamp?

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["instance", "at"])
        instance = try p.instanceID()
        at = try p.optionalTimestamp("at")
    }

    /// The reply (`BudgetState.wireObject`).
    public static func reply(_ budget: BudgetState) -> JSONObject { budget.wireObject }
}

// MARK: Typed calls

extension WirePlacement {
    var wireObject: JSONObject {
        var writer = ParameterWriter()
        writer.add("instance", instance.rawValue)
        writer.add("app", kind.app.rawValue)
        writer.add("kind", kind.kind)
        if !configuration.isEmpty { writer.add("configuration", configuration) }
        return writer.object
    }
}

extension ConfigureStackRequest {
    public init(
        stack: StackID, family: WidgetFamily, widgets: [WirePlacement], smartRotate: Bool = true,
        suggestions: Bool = true, pinned: InstanceID? = nil, developerMode: Bool = false, liveActivities: Bool = true,
        date: Timestamp? = nil
    ) {
        (self.stack, self.family, self.widgets, self.smartRotate, self.suggestions) = (
            stack, family, widgets, smartRotate, suggestions
        )
        (self.pinned, self.developerMode, self.liveActivities, self.date) = (
            pinned, developerMode, liveActivities, date
        )
    }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        writer.add("stack", stack.rawValue)
        writer.add("family", family.rawValue)
        writer.add("widgets", widgets.map(\.wireObject))
        writer.add("smartRotate", smartRotate)
        writer.add("suggestions", suggestions)
        writer.add("pinned", pinned?.rawValue)
        writer.add("developerMode", developerMode)
        writer.add("liveActivities", liveActivities)
        writer.add("date", date)
        return writer.object
    }
}

extension ChangeStackRequest {
    /// A change of `stack`; set the fields to change (`StackChange` says how they combine).
    public init(stack: StackID, date: Timestamp? = nil) {
        self.stack = stack
        unpin = false
        add = []
        remove = []
        self.date = date
    }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        writer.add("stack", stack.rawValue)
        writer.add("family", family?.rawValue)
        writer.add("smartRotate", smartRotate)
        writer.add("suggestions", suggestions)
        writer.add("liveActivities", liveActivities)
        writer.add("developerMode", developerMode)
        writer.add("pin", pin?.rawValue)
        if unpin { writer.add("unpin", true) }
        if !add.isEmpty { writer.add("add", add.map(\.wireObject)) }
        if !remove.isEmpty { writer.add("remove", remove.map(\.rawValue)) }
        writer.add("order", order?.map(\.rawValue))
        writer.add("date", date)
        return writer.object
    }
}

extension GetStackRequest {
    public init(stack: StackID, at: Timestamp? = nil) { (self.stack, self.at) = (stack, at) }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        writer.add("stack", stack.rawValue)
        writer.add("at", at)
        return writer.object
    }
}

extension SubscribeRequest {
    /// Follows `stacks` (repeats dropped), or every stack when `nil`.
    public init(stacks: [StackID]? = nil) {
        var seen = Set<StackID>()
        self.stacks = stacks?.filter { seen.insert($0).inserted }
    }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        writer.add("stacks", stacks?.map(\.rawValue))
        return writer.object
    }
}

extension ListStacksRequest {
    public init() {}
    public var wireParameters: JSONObject { [:] }
}

extension RemoveStackRequest {
    public init(stack: StackID, date: Timestamp? = nil) { (self.stack, self.date) = (stack, date) }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        writer.add("stack", stack.rawValue)
        writer.add("date", date)
        return writer.object
    }
}

extension ExplainRequest {
    public init(stack: StackID, instance: InstanceID? = nil, at: Timestamp? = nil) {
        (self.stack, self.instance, self.at) = (stack, instance, at)
    }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        writer.add("stack", stack.rawValue)
        writer.add("instance", instance?.rawValue)
        writer.add("at", at)
        return writer.object
    }
}

extension GetBudgetRequest {
    public init(instance: InstanceID, at: Timestamp? = nil) { (self.instance, self.at) = (instance, at) }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        writer.add("instance", instance.rawValue)
        writer.add("at", at)
        return writer.object
    }
}
