public import SmartStackCore

/// `io.smartstack.Provider.Donate`.
///
/// Donation ids are unique per app. A call without `id` gets one the server makes up (passed to
/// `event(defaultTime:generatedID:)`). The engine does not keep donations, the store does, so the server checks
/// ids: the same donation again under its id changes nothing, another donation under a used id is
/// `io.smartstack.Provider.Conflict(kind: "donation", id)`.
public struct DonateRequest: ProviderRequest {
    public static let method = SmartStackMethod.donate
    public static let access = MethodAccess.provider
    public static let records = true
    public var anyRequest: SmartStackRequest { .donate(self) }

    /// The app, as checked.
    public var app: AppID { checked.app }
    public var intent: String { checked.intent }
    public var parameters: [String: String] { checked.parameters }
    public var groupId: String? { checked.groupId }
    public let date: Timestamp?
    /// The client's id for the donation; `nil` when the server is to make one up.
    public let id: String?
    /// The donation as checked when decoded, with the client's id (a placeholder when it gave none) and a
    /// placeholder time that `donation(...)` fills in. The request's other fields are read from it, so a copy of
    /// the request (it passes through the call's enumeration and its context) counts two references, not ten.
    private let checked: Donation

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["app", "intent", "parameters", "date", "id", "groupId"])
        let (app, intent) = (try p.appID(), try p.string("intent"))
        let (values, id, groupId) = (
            try p.optionalStringMap("parameters") ?? [:], try p.optionalString("id"), try p.optionalString("groupId")
        )
        self.id = id
        date = try p.optionalTimestamp("date")
        // Check everything but a made-up id and the time now, once: a bad call fails before the server makes
        // up an id, and the hot path does not check the same donation twice.
        checked = try Self.core { () throws(CoreError) in
            try Self.check(app: app, intent: intent, parameters: values, id: id, groupId: groupId)
        }
    }

    /// The donation checked once, when decoded: with the client's id or a placeholder, and a placeholder time.
    private static func check(
        app: AppID, intent: String, parameters: [String: String], id: String?, groupId: String?
    ) throws(CoreError) -> Donation {
        try Donation.validated(
            id: id ?? "-", app: app, intent: intent, parameters: parameters, date: Timestamp(microseconds: 0),
            groupId: groupId)
    }

    private init(checked: Donation, id: String?) {
        self.checked = checked
        self.id = id
        date = nil
    }

    /// The usual donation, `app`, `intent` and perhaps `id` and `groupId` as plain strings, read without building
    /// its parameters; with `parameters` or `date` (or anything else) it takes the general decoding.
    public static let takesPlainParameters = true

    public static func decodePlain(_ parameters: PlainParameters) -> SmartStackRequest? {
        guard let appText = parameters.ascii("app"), let intent = parameters.ascii("intent") else { return nil }
        let id = parameters.ascii("id")
        let groupId = parameters.ascii("groupId")
        guard parameters.count == 2 + (id == nil ? 0 : 1) + (groupId == nil ? 0 : 1),
            let app = try? AppID(appText, parameter: "app"),
            let checked = try? check(app: app, intent: intent, parameters: [:], id: id, groupId: groupId)
        else { return nil }
        return .donate(DonateRequest(checked: checked, id: id))
    }

    /// The checked donation at the client's `date` or `defaultTime`, with the client's id; without one, its id is a
    /// placeholder for the caller to replace (the service's host makes ids: `EngineHost.donateNow`).
    public func donation(defaultTime: Timestamp) -> Donation {
        checked.withDate(date ?? defaultTime)
    }

    /// The checked donation: its id is the client's or, when it gave none, `generatedID()` (which the caller
    /// makes valid: 1–255 bytes), and its time is the client's `date` or `defaultTime`.
    public func donation(defaultTime: Timestamp, generatedID: @autoclosure () -> String) -> Donation {
        var donation = donation(defaultTime: defaultTime)
        if id == nil { donation.id = generatedID() }
        return donation
    }

    /// The event that records the donation.
    public func event(defaultTime: Timestamp, generatedID: @autoclosure () -> String) -> EngineEvent {
        .donate(donation(defaultTime: defaultTime, generatedID: generatedID()))
    }

    /// The reply: `{id}`.
    public static func reply(id: String) -> JSONObject { ["id": .string(id)] }
}

/// `io.smartstack.Provider.DeleteDonations`: which of an app's donations to delete.
///
/// Deleting is not an engine event: the server deletes from the store and rebuilds the engine without them.
public struct DeleteDonationsRequest: ProviderRequest {
    public static let method = SmartStackMethod.deleteDonations
    public static let access = MethodAccess.provider
    public var anyRequest: SmartStackRequest { .deleteDonations(self) }

    public var app: AppID
    /// By ids, by group, by intent type (optionally by entity), or all of the app's.
    public var filter: DonationFilter

    /// The most ids one call may name (more: call again).
    public static let maximumIDs = 10_000

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["app", "ids", "groupId", "intent", "entity"])
        app = try p.appID()
        let ids = try p.optionalStringArray("ids")
        let group = try p.optionalString("groupId")
        let intent = try p.optionalString("intent")
        let entity = try p.optionalString("entity")
        let given = [("ids", ids != nil), ("groupId", group != nil), ("intent", intent != nil)].filter(\.1).map(\.0)
        if given.count > 1 {
            throw .invalidParameter(given[1], reason: "give at most one of ids, groupId and intent")
        }
        if entity != nil, intent == nil {
            throw .invalidParameter("entity", reason: "only together with intent")
        }
        if let ids {
            guard ids.count <= Self.maximumIDs else {
                throw .invalidParameter("ids", reason: "has \(ids.count) ids; at most \(Self.maximumIDs) in one call")
            }
            filter = .ids(Set(ids))
        } else if let group {
            filter = .group(group)
        } else if let intent {
            filter = .intent(type: intent, entity: entity)
        } else {
            filter = .all
        }
    }

    /// The reply: `{deleted}`.
    public static func reply(deleted: Int) -> JSONObject { ["deleted": .int(Int64(deleted))] }
}

/// `io.smartstack.Provider.ListDonations`: one page of an app's donations, in recorded order.
public struct ListDonationsRequest: ProviderRequest {
    public static let method = SmartStackMethod.listDonations
    public static let access = MethodAccess.provider
    public var anyRequest: SmartStackRequest { .listDonations(self) }

    /// The page size when the caller gives none.
    public static let defaultLimit = 100
    /// The largest page.
    public static let maximumLimit = 1_000

    public var app: AppID
    /// The id of the last donation of the previous page; the page starts after it.
    public var after: String?
    /// The previous page's `next`: the page starts after the record it names (never with `after`).
    public var cursor: ListCursor?
    /// The most donations to return, 1…1000.
    public var limit: Int
    /// Whether the caller gave `limit` (a limit the service's `maxListLimit` does not allow is then an error;
    /// the default is lowered to it).
    public var limitGiven: Bool

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["app", "after", "cursor", "limit"])
        app = try p.appID()
        after = try p.optionalString("after")
        if let after {
            // A donation's id: 1-255 bytes (an empty or longer one was NotFound, echoing it).
            guard !after.isEmpty, after.utf8.count <= 255 else {
                throw .invalidParameter("after", reason: "must be a donation id of 1-255 bytes")
            }
        }
        if let text = try p.optionalString("cursor") {
            guard after == nil else { throw .invalidParameter("cursor", reason: "must not be given with after") }
            guard let cursor = ListCursor(text) else {
                throw .invalidParameter("cursor", reason: "must be the next of an earlier ListDonations reply")
            }
            self.cursor = cursor
        }
        let given = try p.optionalInt("limit")
        limitGiven = given != nil
        limit = given ?? Self.defaultLimit
        guard (1...Self.maximumLimit).contains(limit) else {
            throw .invalidParameter("limit", reason: "must be between 1 and \(Self.maximumLimit)")
        }
    }

    /// The reply: `{donations, next}`, the donations in the order given (recorded order).
    public static func reply(donations: some Sequence<Donation>, next: ListCursor) -> JSONObject {
        ["donations": .array(donations.map { .object($0.wireObject) }), "next": .string(next.description)]
    }
}

/// Where the next page of `ListDonations` starts: after the record with this sequence number. On the wire an
/// opaque string, `s` and the number (`s1042`); it stays good when donations before or after it are deleted, and a
/// cursor from the end of the list later lists what was recorded since.
public struct ListCursor: Sendable, Hashable, CustomStringConvertible {
    /// The sequence number of the last record the previous page covered (0: from the start).
    public var sequence: Int64

    public init(sequence: Int64) { self.sequence = sequence }

    /// A cursor as the service writes it; `nil` for anything else.
    public init?(_ text: String) {
        // Only the form the service writes: no sign, no leading zero, nothing past Int64.
        guard text.first == "s", let sequence = Int64(text.dropFirst()), sequence >= 0, "s\(sequence)" == text
        else { return nil }
        self.sequence = sequence
    }

    public var description: String { "s\(sequence)" }
}

// MARK: Typed calls

extension DonateRequest {
    /// A donation, checked as the service checks it (`InvalidParameter` naming what is wrong); the service makes
    /// up an id when `id` is `nil`.
    public init(
        app: AppID, intent: String, parameters: [String: String] = [:], date: Timestamp? = nil, id: String? = nil,
        groupId: String? = nil
    ) throws(VarlinkError) {
        var writer = ParameterWriter()
        writer.add("app", app.rawValue)
        writer.add("intent", intent)
        writer.add("parameters", parameters)
        writer.add("date", date)
        writer.add("id", id)
        writer.add("groupId", groupId)
        try self.init(parameters: writer.object)
    }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        writer.add("app", app.rawValue)
        writer.add("intent", intent)
        if !parameters.isEmpty { writer.add("parameters", parameters) }
        writer.add("date", date)
        writer.add("id", id)
        writer.add("groupId", groupId)
        return writer.object
    }
}

extension DeleteDonationsRequest {
    public init(app: AppID, filter: DonationFilter) { (self.app, self.filter) = (app, filter) }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        writer.add("app", app.rawValue)
        switch filter {
        case .ids(let ids): writer.add("ids", ids.sorted())
        case .group(let group): writer.add("groupId", group)
        case .intent(let type, let entity):
            writer.add("intent", type)
            writer.add("entity", entity)
        case .all: break
        }
        return writer.object
    }
}

extension ListDonationsRequest {
    /// A page of up to `limit` donations (the service's default when `nil`) after the donation `after`.
    public init(app: AppID, after: String? = nil, limit: Int? = nil) {
        (self.app, self.after) = (app, after)
        limitGiven = limit != nil
        self.limit = limit ?? Self.defaultLimit
    }

    /// A page of up to `limit` donations (the service's default when `nil`) after a previous page's `next`.
    public init(app: AppID, cursor: ListCursor, limit: Int? = nil) {
        self.init(app: app, limit: limit)
        self.cursor = cursor
    }

    public var wireParameters: JSONObject {
        var writer = ParameterWriter()
        writer.add("app", app.rawValue)
        writer.add("after", after)
        writer.add("cursor", cursor?.description)
        if limitGiven { writer.add("limit", limit) }
        return writer.object
    }
}
