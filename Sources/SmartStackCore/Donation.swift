/// An intent an app donated: what the user did in the app, and when.
///
/// Parameters are kept as the app sent them (text); they are parsed against a kind's schema only
/// when matched (`WidgetKind.matches(_:configuration:)`).
public struct Donation: Sendable, Hashable {
    /// The donation's id, unique within the app (the service makes one up when the app gives none).
    public var id: String
    /// The app that donated it.
    public var app: AppID
    /// The intent type name, such as `SelectCityIntent`.
    public var intent: String
    /// The intent's parameters as text, by name.
    public var parameters: [String: String]
    /// When the user did it.
    public var date: Timestamp
    /// The group the app filed it under, for deleting donations together.
    public var groupId: String?

    /// The longest id, group id or intent type name, in UTF-8 bytes.
    public static let maximumNameBytes = 255
    /// The most parameters a donation may have.
    public static let maximumParameters = 64
    /// The longest parameter name or value, in UTF-8 bytes.
    public static let maximumParameterBytes = 4096

    /// A donation with these fields, unchecked (for trusted sources such as storage and tests).
    public init(
        id: String, app: AppID, intent: String, parameters: [String: String] = [:], date: Timestamp,
        groupId: String? = nil
    ) {
        self.id = id
        self.app = app
        self.intent = intent
        self.parameters = parameters
        self.date = date
        self.groupId = groupId
    }

    /// A donation from a client, checked; a failure names the field.
    ///
    /// `id` and `intent` are 1–255 bytes, `groupId` when present 1–255 bytes; there are at most 64
    /// `parameters`, each name 1–4096 bytes (a bad name is reported as `parameters`) and each value
    /// at most 4096 bytes (reported as `parameters.NAME`).
    public static func validated(
        id: String, app: AppID, intent: String, parameters: [String: String] = [:], date: Timestamp,
        groupId: String? = nil
    ) throws(CoreError) -> Donation {
        try checkName(id, parameter: "id")
        try checkName(intent, parameter: "intent")
        if let groupId { try checkName(groupId, parameter: "groupId") }
        guard parameters.count <= maximumParameters else {
            throw .invalidParameter(
                parameter: "parameters", reason: "has \(parameters.count) parameters; at most \(maximumParameters)")
        }
        func fits(_ parameter: (key: String, value: String)) -> Bool {
            (1...maximumParameterBytes).contains(parameter.key.utf8.count)
                && parameter.value.utf8.count <= maximumParameterBytes
        }
        // Sorted only to name the first bad one by name (the same one whatever the dictionary's order).
        if !parameters.allSatisfy(fits),
            let bad = parameters.sorted(by: { $0.key < $1.key }).first(where: { !fits($0) })
        {
            guard (1...maximumParameterBytes).contains(bad.key.utf8.count) else {
                throw .invalidParameter(parameter: "parameters", reason: "a parameter name must be 1–4096 bytes")
            }
            throw .invalidParameter(parameter: "parameters.\(bad.key)", reason: "longer than 4096 bytes")
        }
        return Donation(id: id, app: app, intent: intent, parameters: parameters, date: date, groupId: groupId)
    }

    private static func checkName(_ text: String, parameter: String) throws(CoreError) {
        let bytes = text.utf8.count
        guard bytes > 0 else { throw .invalidParameter(parameter: parameter, reason: "must not be empty") }
        guard bytes <= maximumNameBytes else {
            throw .invalidParameter(
                parameter: parameter, reason: "is \(bytes) bytes; at most \(maximumNameBytes) allowed")
        }
    }

    /// The same donation at another date.
    public func withDate(_ date: Timestamp) -> Donation {
        var donation = self
        donation.date = date
        return donation
    }
}

/// Which of an app's donations to delete.
public enum DonationFilter: Sendable, Hashable {
    /// The donations with these ids.
    case ids(Set<String>)
    /// The donations filed under this group id.
    case group(String)
    /// The donations of this intent type; with `entity`, only those with a parameter value equal to it.
    case intent(type: String, entity: String?)
    /// Every donation of the app.
    case all

    /// Whether the filter selects `donation` when deleting for `app`; another app's donation never matches.
    public func matches(_ donation: Donation, app: AppID) -> Bool {
        guard donation.app == app else { return false }
        switch self {
        case .ids(let ids): return ids.contains(donation.id)
        case .group(let group): return donation.groupId == group
        case .intent(let type, let entity):
            guard donation.intent == type else { return false }
            guard let entity else { return true }
            return donation.parameters.values.contains(entity)
        case .all: return true
        }
    }
}
