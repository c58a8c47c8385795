public import SmartStackCore
public import SmartStackProtocol

/// One call smartstack-desktop makes to smartstackd, as a value: what the event handlers decide, before any
/// I/O. Each is safe to send again after a lost reply (a donation carries its id; registering and
/// configuring replace what is there with the same).
public enum DesktopCall: Sendable, Equatable, Codable {
    /// `io.smartstack.Provider.RegisterWidget`: the app's launcher widget kind.
    case registerWidget(app: String, kind: String, displayName: String, family: String, date: Timestamp)
    /// `io.smartstack.Shell.ConfigureStack`: the stack of these apps' launcher widgets, in this order.
    case configureStack(stack: String, family: String, kind: String, apps: [String], date: Timestamp)
    /// `io.smartstack.Provider.Donate`: intent `open` of the app.
    case donate(app: String, id: String, date: Timestamp)
    /// `io.smartstack.Shell.RecordLook`: the stack was looked at.
    case recordLook(stack: String, date: Timestamp)

    /// The Varlink method.
    public var method: String { request.method.rawValue }

    /// The request type the service decodes the call with (`DesktopCallWireTests` decodes every call with it).
    public var request: any VarlinkMethodRequest.Type {
        switch self {
        case .registerWidget: RegisterWidgetRequest.self
        case .configureStack: ConfigureStackRequest.self
        case .donate: DonateRequest.self
        case .recordLook: RecordLookRequest.self
        }
    }

    /// The Varlink parameters.
    public var parameters: JSONObject {
        switch self {
        case .registerWidget(let app, let kind, let displayName, let family, let date):
            [
                "app": .string(app), "kind": .string(kind), "displayName": .string(displayName),
                "families": [.string(family)], "date": .string(date.rfc3339),
            ]
        case .configureStack(let stack, let family, let kind, let apps, let date):
            [
                "stack": .string(stack), "family": .string(family),
                "widgets": .array(
                    apps.map {
                        [
                            "instance": .string(Self.instance(stack: stack, app: $0)), "app": .string($0),
                            "kind": .string(kind),
                        ]
                    }),
                "smartRotate": true, "date": .string(date.rfc3339),
            ]
        case .donate(let app, let id, let date):
            ["app": .string(app), "intent": "open", "id": .string(id), "date": .string(date.rfc3339)]
        case .recordLook(let stack, let date):
            ["stack": .string(stack), "date": .string(date.rfc3339)]
        }
    }

    /// The instance id of an app's launcher widget in a stack: stable, so a reconfigured stack keeps what was
    /// learned about the widgets that stay.
    public static func instance(stack: String, app: String) -> String {
        String((stack + "/" + app).prefix(255))
    }

    // Codable by hand through the JSON text form, so pending calls can be kept in the state file.
    enum CodingKeys: String, CodingKey { case method, parameters }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let method = try container.decode(String.self, forKey: .method)
        let text = try container.decode(String.self, forKey: .parameters)
        guard case .object(let parameters)? = try? JSON.parse(Array(text.utf8)),
            let call = Self(method: method, parameters: parameters)
        else {
            throw DecodingError.dataCorruptedError(forKey: .parameters, in: container, debugDescription: "not a call")
        }
        self = call
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(method, forKey: .method)
        try container.encode(String(decoding: JSON.serialize(.object(parameters)), as: UTF8.self), forKey: .parameters)
    }

    /// The call of a method and its parameters, as ``parameters`` writes them.
    init?(method: String, parameters: JSONObject) {
        func string(_ key: String) -> String? {
            if case .string(let value)? = parameters[key] { return value }
            return nil
        }
        guard let dateText = string("date"), let date = try? Timestamp(rfc3339: dateText) else { return nil }
        switch SmartStackMethod(rawValue: method) {
        case .registerWidget?:
            guard let app = string("app"), let kind = string("kind"),
                case .array(let families)? = parameters["families"],
                case .string(let family)? = families.first
            else { return nil }
            self = .registerWidget(
                app: app, kind: kind, displayName: string("displayName") ?? app, family: family, date: date)
        case .configureStack?:
            guard let stack = string("stack"), let family = string("family"),
                case .array(let widgets)? = parameters["widgets"]
            else { return nil }
            var apps: [String] = []
            var kind = ""
            for case .object(let widget) in widgets {
                guard case .string(let app)? = widget["app"], case .string(let widgetKind)? = widget["kind"] else {
                    return nil
                }
                apps.append(app)
                kind = widgetKind
            }
            self = .configureStack(stack: stack, family: family, kind: kind, apps: apps, date: date)
        case .donate?:
            guard let app = string("app"), let id = string("id") else { return nil }
            self = .donate(app: app, id: id, date: date)
        case .recordLook?:
            guard let stack = string("stack") else { return nil }
            self = .recordLook(stack: stack, date: date)
        default:
            return nil
        }
    }
}
