public import SmartStackCore

/// `org.varlink.service.GetInfo`; the reply is `VarlinkServiceInfo.wireObject`.
public struct GetInfoRequest: VarlinkMethodRequest {
    public static let method = SmartStackMethod.getInfo
    public static let access = MethodAccess.introspection
    public var anyRequest: SmartStackRequest { .getInfo(self) }

    public init(parameters: JSONObject) throws(VarlinkError) {
        _ = try Parameters(parameters, allowed: [])
    }
}

/// `org.varlink.service.GetInterfaceDescription`.
public struct GetInterfaceDescriptionRequest: VarlinkMethodRequest {
    public static let method = SmartStackMethod.getInterfaceDescription
    public static let access = MethodAccess.introspection
    public var anyRequest: SmartStackRequest { .getInterfaceDescription(self) }

    public var interface: String

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["interface"])
        interface = try p.string("interface")
    }

    /// The reply: `{description}` with the interface file's text, or `InterfaceNotFound`.
    public func reply() throws(VarlinkError) -> JSONObject {
        guard let definition = VarlinkInterfaces.definition(named: interface) else {
            throw .interfaceNotFound(interface)
        }
        return ["description": .string(definition.text)]
    }
}

/// `io.smartstack.Admin.GetStatistics`; the reply is `ServiceStatistics.wireObject`.
public struct GetStatisticsRequest: VarlinkMethodRequest {
    public static let method = SmartStackMethod.getStatistics
    public static let access = MethodAccess.admin
    public var anyRequest: SmartStackRequest { .getStatistics(self) }

    public init(parameters: JSONObject) throws(VarlinkError) {
        _ = try Parameters(parameters, allowed: [])
    }
}

/// `io.smartstack.Admin.ListAppOwners`: one page of the claims, by app id; the reply is `reply(owners:after:limit:)`.
public struct ListAppOwnersRequest: VarlinkMethodRequest {
    public static let method = SmartStackMethod.listAppOwners
    public static let access = MethodAccess.admin
    public var anyRequest: SmartStackRequest { .listAppOwners(self) }

    /// The page size when the caller gives none.
    public static let defaultLimit = 1_000
    /// The largest page.
    public static let maximumLimit = 10_000

    /// The previous page's `next` (an app id): the page starts after it.
    public var after: AppID?
    /// The most claims to return.
    public var limit: Int

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["after", "limit"])
        after = p.value("after") == nil ? nil : try p.appID("after")
        limit = try p.optionalInt("limit") ?? Self.defaultLimit
        guard (1...Self.maximumLimit).contains(limit) else {
            throw .invalidParameter("limit", reason: "must be between 1 and \(Self.maximumLimit)")
        }
    }

    /// `{owners: [{app, uid}], next}`: the claims by app id after `after`, at most `limit`; `next` is the page's last
    /// app when more follow, else null.
    public static func reply(owners: [(app: AppID, uid: UInt32)], after: AppID?, limit: Int) -> JSONObject {
        let sorted = owners.filter { owner in after.map { owner.app > $0 } ?? true }.sorted { $0.app < $1.app }
        let page = sorted.prefix(limit)
        let next: JSONValue =
            if sorted.count > page.count, let last = page.last { .string(last.app.rawValue) } else { .null }
        return [
            "owners": .array(page.map { .object(["app": .string($0.app.rawValue), "uid": .int(Int64($0.uid))]) }),
            "next": next,
        ]
    }
}

/// `io.smartstack.Admin.ReleaseApp`.
public struct ReleaseAppRequest: VarlinkMethodRequest {
    public static let method = SmartStackMethod.releaseApp
    public static let access = MethodAccess.admin
    public var anyRequest: SmartStackRequest { .releaseApp(self) }

    public var app: AppID

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["app"])
        app = try p.appID()
    }

    /// `{uid}` of the claim dropped, left out when there was none.
    public static func reply(released uid: UInt32?) -> JSONObject {
        uid.map { ["uid": .int(Int64($0))] } ?? [:]
    }
}

/// A log level, as `io.smartstack.Admin.LogLevel` names it (the same names as swift-log's `Logger.Level`).
public enum LogLevel: String, CaseIterable, Sendable, Hashable {
    case trace, debug, info, notice, warning, error, critical
}

/// `io.smartstack.Admin.SetLogLevel`.
public struct SetLogLevelRequest: VarlinkMethodRequest {
    public static let method = SmartStackMethod.setLogLevel
    public static let access = MethodAccess.admin
    public var anyRequest: SmartStackRequest { .setLogLevel(self) }

    public var level: LogLevel

    public init(parameters: JSONObject) throws(VarlinkError) {
        let p = try Parameters(parameters, allowed: ["level"])
        level = try p.enumeration("level", LogLevel.self)
    }
}

/// An app and how many of its donations the service keeps (`AppDonations` of the Admin interface).
public struct AppDonationCount: Sendable, Hashable {
    public var app: AppID
    public var donations: Int

    public init(app: AppID, donations: Int) {
        self.app = app
        self.donations = donations
    }
}

/// What `io.smartstack.Admin.GetStatistics` reports; the server fills it in.
public struct ServiceStatistics: Sendable, Hashable {
    public var stacks: Int
    public var widgets: Int
    public var donations: Int
    /// The apps keeping the most donations, most first; nil when unknown.
    public var topApps: [AppDonationCount]?
    public var subscribers: Int
    public var connections: Int
    public var uptimeSeconds: Double
    public var kinds: Int?
    public var liveActivities: Int?
    public var reloadWatchers: Int?
    public var calls: Int?
    public var logLevel: LogLevel?
    public var journalEntriesDropped: Int?
    /// Connections refused on accept (a connection limit) and closed because the input budget was full.
    public var connectionsRefused: Int?
    public var connectionsClosedForInput: Int?
    /// Bytes all connections hold in unfinished input now.
    public var inputBytes: Int?
    /// Storage numbers; nil without durable storage.
    public var storage: StorageStatistics?

    public init(
        stacks: Int, widgets: Int, donations: Int, subscribers: Int, connections: Int, uptimeSeconds: Double,
        kinds: Int? = nil, liveActivities: Int? = nil, reloadWatchers: Int? = nil, calls: Int? = nil,
        logLevel: LogLevel? = nil, journalEntriesDropped: Int? = nil, storage: StorageStatistics? = nil
    ) {
        self.journalEntriesDropped = journalEntriesDropped
        self.stacks = stacks
        self.widgets = widgets
        self.donations = donations
        self.subscribers = subscribers
        self.connections = connections
        self.uptimeSeconds = uptimeSeconds
        self.kinds = kinds
        self.liveActivities = liveActivities
        self.reloadWatchers = reloadWatchers
        self.calls = calls
        self.logLevel = logLevel
        self.storage = storage
    }

    /// The reply; optional counts are left out when unknown.
    public var wireObject: JSONObject {
        var object: JSONObject = [
            "stacks": .int(Int64(stacks)), "widgets": .int(Int64(widgets)), "donations": .int(Int64(donations)),
            "subscribers": .int(Int64(subscribers)), "connections": .int(Int64(connections)),
            "uptimeSeconds": .double(uptimeSeconds),
        ]
        if let topApps {
            object["topApps"] = .array(
                topApps.map { .object(["app": .string($0.app.rawValue), "donations": .int(Int64($0.donations))]) })
        }
        if let kinds { object["kinds"] = .int(Int64(kinds)) }
        if let liveActivities { object["liveActivities"] = .int(Int64(liveActivities)) }
        if let reloadWatchers { object["reloadWatchers"] = .int(Int64(reloadWatchers)) }
        if let calls { object["calls"] = .int(Int64(calls)) }
        if let logLevel { object["logLevel"] = .string(logLevel.rawValue) }
        if let journalEntriesDropped { object["journalEntriesDropped"] = .int(Int64(journalEntriesDropped)) }
        if let connectionsRefused { object["connectionsRefused"] = .int(Int64(connectionsRefused)) }
        if let connectionsClosedForInput {
            object["connectionsClosedForInput"] = .int(Int64(connectionsClosedForInput))
        }
        if let inputBytes { object["inputBytes"] = .int(Int64(inputBytes)) }
        if let storage {
            object["storedEvents"] = .int(Int64(storage.storedEvents))
            object["storedDonations"] = .int(Int64(storage.storedDonations))
            object["databaseBytes"] = .int(Int64(storage.databaseBytes))
            if let lastSnapshot = storage.lastSnapshot { object["lastSnapshot"] = .string(lastSnapshot.rfc3339) }
            object["commits"] = .int(Int64(storage.commits))
            if let latency = storage.commitLatency {
                object["commitLatency"] = .object([
                    "p50": .double(latency.p50), "p90": .double(latency.p90), "p99": .double(latency.p99),
                    "max": .double(latency.max), "samples": .int(Int64(latency.samples)),
                ])
            }
        }
        return object
    }
}

/// The storage part of `GetStatistics`: the state database's contents, size, snapshot and commit latency.
public struct StorageStatistics: Sendable, Hashable {
    public var storedEvents: Int
    public var storedDonations: Int
    public var databaseBytes: Int
    public var lastSnapshot: Timestamp?
    public var commits: Int
    public var commitLatency: CommitLatency?

    public init(
        storedEvents: Int, storedDonations: Int, databaseBytes: Int, lastSnapshot: Timestamp?, commits: Int,
        commitLatency: CommitLatency?
    ) {
        self.storedEvents = storedEvents
        self.storedDonations = storedDonations
        self.databaseBytes = databaseBytes
        self.lastSnapshot = lastSnapshot
        self.commits = commits
        self.commitLatency = commitLatency
    }
}

/// `io.smartstack.Admin.CommitLatency`: percentiles of recent commit waits, in milliseconds.
public typealias CommitLatency = LatencySummary

// MARK: Typed calls

extension GetInfoRequest {
    public init() {}
    public var wireParameters: JSONObject { [:] }
}

extension GetInterfaceDescriptionRequest {
    public init(interface: String) { self.interface = interface }
    public var wireParameters: JSONObject { ["interface": .string(interface)] }
}

extension GetStatisticsRequest {
    public init() {}
    public var wireParameters: JSONObject { [:] }
}

extension SetLogLevelRequest {
    public init(level: LogLevel) { self.level = level }
    public var wireParameters: JSONObject { ["level": .string(level.rawValue)] }
}

extension ListAppOwnersRequest {
    public init(after: AppID? = nil, limit: Int = ListAppOwnersRequest.defaultLimit) {
        self.after = after
        self.limit = limit
    }

    public var wireParameters: JSONObject {
        var parameters: JSONObject = [:]
        if let after { parameters["after"] = .string(after.rawValue) }
        if limit != Self.defaultLimit { parameters["limit"] = .int(Int64(limit)) }
        return parameters
    }
}

extension ReleaseAppRequest {
    public init(app: AppID) { self.app = app }
    public var wireParameters: JSONObject { ["app": .string(app.rawValue)] }
}
