public import SmartStackCore

/// Whom a policy line names: a user or group by id or name, or anyone who can connect to the socket.
public enum Principal: Sendable, Hashable, CustomStringConvertible {
    case uid(UInt32)
    case gid(UInt32)
    /// A user name, resolved to a uid when the policy is resolved.
    case user(String)
    /// A group name, resolved to a gid when the policy is resolved.
    case group(String)
    /// Any caller the socket's permissions let in.
    case anyone

    /// Parses `uid:N`, `N` (a uid), `gid:N`, `user:NAME`, `group:NAME` or `*`; `nil` for anything else.
    public init?(_ word: some StringProtocol) {
        let text = String(word)
        if text == "*" {
            self = .anyone
            return
        }
        if let id = UInt32(text) {
            self = .uid(id)
            return
        }
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let kind = text[..<colon]
        let value = String(text[text.index(after: colon)...])
        guard !value.isEmpty else { return nil }
        switch kind {
        case "uid": guard let id = UInt32(value) else { return nil }; self = .uid(id)
        case "gid": guard let id = UInt32(value) else { return nil }; self = .gid(id)
        case "user": guard Self.isName(value) else { return nil }; self = .user(value)
        case "group": guard Self.isName(value) else { return nil }; self = .group(value)
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .uid(let id): "uid:\(id)"
        case .gid(let id): "gid:\(id)"
        case .user(let name): "user:\(name)"
        case .group(let name): "group:\(name)"
        case .anyone: "*"
        }
    }

    /// A user or group name as `useradd` accepts them: letters, digits, `_`, `-`, `.`, a trailing `$`.
    private static func isName(_ name: String) -> Bool {
        name.utf8.count <= 256
            && name.unicodeScalars.enumerated().allSatisfy { index, scalar in
                switch scalar {
                case "a"..."z", "A"..."Z", "0"..."9", "_", "-", ".": true
                case "$": index == name.unicodeScalars.count - 1
                default: false
                }
            }
    }

    /// Parses a list of principals separated by spaces or commas; an empty list names nobody.
    static func list(_ text: String) -> (principals: [Principal], bad: String?) {
        var principals: [Principal] = []
        for word in text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" }) {
            guard let principal = Principal(word) else { return ([], String(word)) }
            if !principals.contains(principal) { principals.append(principal) }
        }
        return (principals, nil)
    }
}

/// Who may act as shell, as provider (of which apps) and as admin: the system service's access policy
/// (DESIGN.md "Access"). A value with defaults, set by configuration keys, resolved once at start.
///
/// Root and the service's own uid may always do everything; a user service ignores the policy and serves
/// only its own user and root.
public struct AccessPolicy: Sendable, Hashable {
    /// Who may call `io.smartstack.Shell` (key `shells`). Default: anyone who can connect.
    public var shells: [Principal] = [.anyone]
    /// Who may call `io.smartstack.Provider` for apps the policy does not assign (key `providers`); such an
    /// app belongs to the first uid that acts for it. Default: anyone who can connect.
    public var providers: [Principal] = [.anyone]
    /// Who may call `io.smartstack.Admin` (key `admins`) and read stacks and explanations. Default: root only.
    public var admins: [Principal] = []
    /// Apps that belong to these callers only (keys `app.ID`), whoever registered them first.
    public var apps: [AppID: [Principal]] = [:]
    /// Where each key was set (`FILE:LINE`), for the errors `resolved(with:)` finds (an unknown user or group name
    /// named neither file nor line). Not part of the policy: two policies from different files are equal.
    var places = Places()

    struct Places: Sendable, Hashable {
        var byKey: [String: String] = [:]
        subscript(key: String) -> String? {
            get { byKey[key] }
            set { byKey[key] = newValue }
        }
        static func == (_: Places, _: Places) -> Bool { true }
        func hash(into hasher: inout Hasher) {}
    }

    public init() {}

    /// The policy keys of a configuration file, with what each means.
    public static let keys: [(key: String, help: String)] = [
        ("shells", "who may call io.smartstack.Shell: uid:N, gid:N, user:NAME, group:NAME or *"),
        (
            "providers",
            "who may provide apps not assigned by app.ID (the first uid whose call for an app succeeds owns it)"
        ),
        ("admins", "who may call io.smartstack.Admin and read stacks (root always may)"),
        ("app.ID", "the callers app ID belongs to, e.g. app.org.example.weather = user:weather"),
    ]

    /// Sets one policy key; `false` when `key` is not a policy key.
    mutating func set(_ key: String, to value: String, place: String) throws(ConfigurationError) -> Bool {
        let (principals, bad) = Principal.list(value)
        if !place.isEmpty { places[key] = place }
        func check() throws(ConfigurationError) {
            if let bad {
                throw ConfigurationError(
                    place: place, key: key,
                    reason: "'\(bad)' is not uid:N, gid:N, user:NAME, group:NAME, a uid or *")
            }
        }
        switch key {
        case "shells": try check(); shells = principals
        case "providers": try check(); providers = principals
        case "admins": try check(); admins = principals
        default:
            guard key.hasPrefix("app.") else { return false }
            let name = String(key.dropFirst(4))
            let app: AppID
            do { app = try AppID(name) } catch {
                throw ConfigurationError(place: place, key: key, reason: "'\(name)' is not a valid app id")
            }
            try check()
            guard !principals.isEmpty else {
                throw ConfigurationError(place: place, key: key, reason: "names nobody; remove the line instead")
            }
            apps[app] = principals
        }
        return true
    }

    /// The policy with every user and group name replaced by its id; an unknown name is an error naming
    /// the key that holds it.
    public func resolved(with accounts: AccountDatabase) throws(ConfigurationError) -> AccessPolicy {
        func resolve(_ list: [Principal], key: String) throws(ConfigurationError) -> [Principal] {
            var result: [Principal] = []
            for principal in list {
                switch principal {
                case .user(let name):
                    guard let id = accounts.uid(name) else {
                        throw ConfigurationError(
                            place: places[key] ?? "access policy", key: key, reason: "no user named '\(name)'")
                    }
                    result.append(.uid(id))
                case .group(let name):
                    guard let id = accounts.gid(name) else {
                        throw ConfigurationError(
                            place: places[key] ?? "access policy", key: key, reason: "no group named '\(name)'")
                    }
                    result.append(.gid(id))
                default:
                    result.append(principal)
                }
            }
            return result
        }
        var copy = self
        copy.shells = try resolve(shells, key: "shells")
        copy.providers = try resolve(providers, key: "providers")
        copy.admins = try resolve(admins, key: "admins")
        for (app, principals) in apps { copy.apps[app] = try resolve(principals, key: "app.\(app.rawValue)") }
        return copy
    }
}

/// The user database, as the policy needs it: names to ids, and a user's groups.
public struct AccountDatabase: Sendable {
    /// The uid of a user name.
    public var uid: @Sendable (String) -> UInt32?
    /// The gid of a group name.
    public var gid: @Sendable (String) -> UInt32?
    /// Every group of a uid (its primary gid included) as the user database lists them.
    public var groups: @Sendable (_ uid: UInt32, _ primaryGID: UInt32) -> [UInt32]

    public init(
        uid: @escaping @Sendable (String) -> UInt32?, gid: @escaping @Sendable (String) -> UInt32?,
        groups: @escaping @Sendable (UInt32, UInt32) -> [UInt32]
    ) {
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }
}
