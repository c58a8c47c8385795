/// A change to an existing stack: settings, the pin, the user's order, single widgets added or removed. Applied
/// to the stack's configuration it gives the new one, which the engine takes as a `configureStack` event, so
/// widgets that stay keep what was learned about them (`Engine.configure`).
public struct StackChange: Sendable, Hashable {
    public var family: WidgetFamily?
    public var smartRotate: Bool?
    public var suggestions: Bool?
    public var liveActivities: Bool?
    public var developerMode: Bool?
    /// Pin this instance (after the widgets are added and removed).
    public var pin: InstanceID?
    /// Take the pin away.
    public var unpin: Bool
    /// Widgets to add, at the end of the user's order (or where `order` puts them).
    public var add: [WidgetPlacement]
    /// Instances to remove.
    public var remove: [InstanceID]
    /// The user's new order: every instance of the stack after the change, each once.
    public var order: [InstanceID]?

    public init(
        family: WidgetFamily? = nil, smartRotate: Bool? = nil, suggestions: Bool? = nil, liveActivities: Bool? = nil,
        developerMode: Bool? = nil, pin: InstanceID? = nil, unpin: Bool = false, add: [WidgetPlacement] = [],
        remove: [InstanceID] = [], order: [InstanceID]? = nil
    ) {
        self.family = family
        self.smartRotate = smartRotate
        self.suggestions = suggestions
        self.liveActivities = liveActivities
        self.developerMode = developerMode
        self.pin = pin
        self.unpin = unpin
        self.add = add
        self.remove = remove
        self.order = order
    }

    /// Whether the change asks for nothing.
    public var isEmpty: Bool { self == StackChange() }

    /// The configuration `current` becomes. Errors name the parameter: `remove[i]` not in the stack
    /// (`InvalidParameter`), `add[i].instance` already in it, `order` not the stack's instances, `pin` not in the stack,
    /// `pin` with `unpin`, and, for the kinds `kinds` knows, `add[i].kind` of a family the stack will not have or
    /// `family` that a widget already there does not support, and `add[i].configuration.NAME` of a configuration the
    /// kind refuses, a required value missing (the engine's own checks, when it applies the change, name
    /// `widgets[i]`, a parameter only `ConfigureStack` has). Widget limits are checked when the engine applies it.
    public func applied(
        to current: StackConfiguration, kinds: (WidgetKindID) -> WidgetKind? = { _ in nil }
    ) throws(CoreError) -> StackConfiguration {
        guard !isEmpty else { throw .invalidParameter(parameter: "stack", reason: "the change asks for nothing") }
        var next = current
        for (index, instance) in remove.enumerated() {
            guard let place = next.widgets.firstIndex(where: { $0.instance == instance }) else {
                throw .invalidParameter(
                    parameter: "remove[\(index)]", reason: "instance '\(instance)' is not in stack '\(current.id)'")
            }
            next.widgets.remove(at: place)
            if next.pinned == instance { next.pinned = nil }
        }
        for (index, widget) in add.enumerated() {
            guard !next.widgets.contains(where: { $0.instance == widget.instance }) else {
                throw .invalidParameter(
                    parameter: "add[\(index)].instance",
                    reason: "instance '\(widget.instance)' is already in stack '\(current.id)'")
            }
            next.widgets.append(widget)
        }
        if let order {
            let byInstance = Dictionary(next.widgets.map { ($0.instance, $0) }, uniquingKeysWith: { first, _ in first })
            guard order.count == next.widgets.count, Set(order).count == order.count,
                order.allSatisfy({ byInstance[$0] != nil })
            else {
                let names = next.widgets.map(\.instance.rawValue).joined(separator: ", ")
                throw .invalidParameter(
                    parameter: "order", reason: "must name every instance of the stack once: \(names)")
            }
            next.widgets = order.compactMap { byInstance[$0] }
        }
        if let family { next.family = family }
        if let smartRotate { next.smartRotate = smartRotate }
        if let suggestions { next.suggestions = suggestions }
        if let liveActivities { next.liveActivities = liveActivities }
        if let developerMode { next.developerMode = developerMode }
        if unpin {
            guard pin == nil else { throw .invalidParameter(parameter: "unpin", reason: "cannot be given with pin") }
            next.pinned = nil
        }
        if let pin {
            guard next.widgets.contains(where: { $0.instance == pin }) else {
                throw .invalidParameter(parameter: "pin", reason: "instance '\(pin)' is not in stack '\(current.id)'")
            }
            next.pinned = pin
        }
        for widget in next.widgets {
            guard let kind = kinds(widget.kind) else { continue }
            let added = add.firstIndex { $0.instance == widget.instance }
            if let reason = kind.unsupported(next.family) {
                if let added { throw .invalidParameter(parameter: "add[\(added)].kind", reason: reason) }
                throw .invalidParameter(parameter: "family", reason: "instance '\(widget.instance)': \(reason)")
            }
            // An added widget's configuration as the engine will check it (a required value missing), named in
            // the call's own terms: the engine names `widgets[i]`, its place in the merged stack.
            if let added {
                do throws(CoreError) {
                    _ = try kind.validateConfiguration(widget.configuration)
                } catch {
                    throw error.prefixed(with: "add[\(added)]")
                }
            }
        }
        return next
    }
}
