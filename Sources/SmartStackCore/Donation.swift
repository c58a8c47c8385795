/// An intent an app donated: what the user did in the app, and when.
///
/// Parameters are kept as the app sent them (text); they are parsed against a kind's schema only
/// when matched (`WidgetKind.matches(_:configuration:)`).
public struct Donation: Sendable, Hashable {
    /// The donation's text, shared by its copies: a donation passes through several owners on its way (the
    /// request, the event, the log's queue, the unconfirmed set), and one reference is counted once per copy
    /// where five strings and a dictionary were counted five times. Never changed: a setter makes new text.
    private final class Text: Sendable {
        let id: String
        let app: AppID
        let intent: String
        let parameters: [String: String]
        let groupId: String?

        init(id: String, app: AppID, intent: String, parameters: [String: String], groupId: String?) {
            (self.id, self.app, self.intent, self.parameters, self.groupId) = (id, app, intent, parameters, groupId)
        }

        /// The same text with the fields given changed (`groupId: .some(nil)` removes the group).
        func with(
            id: String? = nil, app: AppID? = nil, intent: String? = nil, parameters: [String: String]? = nil,
            groupId: String?? = nil
        ) -> Text {
            Text(
                id: id ?? self.id, app: app ?? self.app, intent: intent ?? self.intent,
                parameters: parameters ?? self.parameters, groupId: groupId ?? self.groupId)
        }
    }

    private var text: Text
    /// When the user did it.
    public var date: Timestamp

    /// The donation's id, unique within the app (the service makes one up when the app gives none).
    public var id: String {
        get { text.id }
        set { text = text.with(id: newValue) }
    }
    /// The app that donated it.
    public var app: AppID {
        get { text.app }
        set { text = text.with(app: newValue) }
    }
    /// The intent type name, such as `SelectCityIntent`.
    public var intent: String {
        get { text.intent }
        set { text = text.with(intent: newValue) }
    }
    /// The intent's parameters as text, by name.
    public var parameters: [String: String] {
        get { text.parameters }
        set { text = text.with(parameters: newValue) }
    }
    /// The group the app filed it under, for deleting donations together.
    public var groupId: String? {
        get { text.groupId }
        set { text = text.with(groupId: .some(newValue)) }
    }

    /// The longest id, group id or intent type name, in UTF-8 bytes.
    public static let maximumNameBytes = 255
    /// The most parameters a donation may have.
    public static let maximumParameters = 64
    /// The longest parameter name or value, in UTF-8 bytes.
    public static let maximumParameterBytes = 4096
    /// The most UTF-8 bytes of all parameter names and values together: a donation is a few identifiers, and a
    /// `ListDonations` page of 1,000 stays within about 17 MB (64 values of 4,096 bytes made half a megabyte each).
    public static let maximumParametersBytes = 16_384

    /// A donation with these fields, unchecked (for trusted sources such as storage and tests).
    public init(
        id: String, app: AppID, intent: String, parameters: [String: String] = [:], date: Timestamp,
        groupId: String? = nil
    ) {
        text = Text(id: id, app: app, intent: intent, parameters: parameters, groupId: groupId)
        self.date = date
    }

    public static func == (lhs: Donation, rhs: Donation) -> Bool {
        guard lhs.date == rhs.date else { return false }
        if lhs.text === rhs.text { return true }
        return lhs.id == rhs.id && lhs.app == rhs.app && lhs.intent == rhs.intent && lhs.parameters == rhs.parameters
            && lhs.groupId == rhs.groupId
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(app)
        hasher.combine(intent)
        hasher.combine(parameters)
        hasher.combine(date)
        hasher.combine(groupId)
    }

    /// A donation from a client, checked; a failure names the field.
    ///
    /// `id` and `intent` are 1–255 bytes, `groupId` when present 1–255 bytes; there are at most 64
    /// `parameters`, each name 1–4096 bytes (a bad name is reported as `parameters`) and each value
    /// at most 4096 bytes (reported as `parameters.NAME`), 16,384 bytes of names and values in all (`parameters`).
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
        var total = 0
        var allFit = true
        for parameter in parameters {
            total += parameter.key.utf8.count + parameter.value.utf8.count
            allFit = allFit && fits(parameter)
        }
        // Sorted only to name the first bad one by name (the same one whatever the dictionary's order).
        if !allFit, let bad = parameters.sorted(by: { $0.key < $1.key }).first(where: { !fits($0) }) {
            guard (1...maximumParameterBytes).contains(bad.key.utf8.count) else {
                throw .invalidParameter(parameter: "parameters", reason: "a parameter name must be 1–4096 bytes")
            }
            throw .invalidParameter(parameter: "parameters.\(bad.key)", reason: "longer than 4096 bytes")
        }
        guard total <= maximumParametersBytes else {
            throw .invalidParameter(
                parameter: "parameters",
                reason: "names and values are \(total) bytes in all; at most \(maximumParametersBytes)")
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
