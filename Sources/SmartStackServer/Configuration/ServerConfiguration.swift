public import Logging
public import SmartStackCore
public import SmartStackStore

/// Everything the service can be configured with: a `Sendable` value with defaults, a pure parser
/// (`ServerConfiguration.parse`) and explicit validation naming the bad key.
public struct ServerConfiguration: Sendable, Hashable {
    /// The largest Varlink message accepted, in bytes; a larger one closes its connection.
    public var maxFrameSize = 1 << 20
    /// The most connections served at once.
    public var maxConnections = 1_024
    /// The most bytes all connections together may hold in unfinished input (frames not yet complete).
    public var maxInputBytes = 64 << 20
    /// The most connections one uid (other than root and the service's own) may have open at once.
    public var maxConnectionsPerUID = 256
    /// Recording calls (and deletions) a second per app, on average; 0 turns the limit off.
    public var rateLimitPerApp = 1_000
    /// Recording calls an app may make at once after being idle.
    public var rateLimitBurst = 10_000
    /// The engine's limits and ranking settings.
    public var engine = EngineSettings()
    /// The host's limits (donations, subscriptions, queues).
    public var host = HostLimits()
    /// The log level at start (`SetLogLevel` changes it at run time).
    public var logLevel: Logger.Level = .info
    /// Seconds between two periodic summaries in the journal.
    public var summaryInterval = 300
    /// Journal entries that may wait to be written; more are dropped and counted.
    public var journalQueue = 4_096
    /// Who may act as shell, provider and admin (the system service only).
    public var access = AccessPolicy()
    /// How the event log stores (durability, commit batching, snapshots).
    public var store = StoreOptions()

    public init() {}

    /// The keys a configuration file may set, with what each means (for errors and documentation).
    public static let keys: [(key: String, help: String)] = [
        ("maxFrameSize", "largest message in bytes (1024…67108864)"),
        ("maxConnections", "most connections at once (1…65536)"),
        ("maxInputBytes", "most bytes all connections together hold in unfinished frames (65536…4294967296)"),
        ("maxConnectionsPerUID", "most connections one uid may have open, root and the service's uid aside (1…65536)"),
        ("rateLimitPerApp", "recording calls a second per app on average, 0 for no limit (0…1000000)"),
        ("rateLimitBurst", "recording calls an app may make at once after being idle (1…10000000)"),
        ("maxSubscriptions", "most open Subscribe/WatchReloads streams (1…65536)"),
        ("subscriberQueue", "decisions queued for a subscriber before it is cut off (1…65536)"),
        ("maxDonations", "most donations stored at once (1…100000000)"),
        ("maxListLimit", "most donations one ListDonations page returns (1…100000)"),
        ("maxStacks", "most stacks"),
        ("maxWidgetsPerStack", "most widgets in one stack"),
        ("maxKinds", "most registered widget kinds"),
        ("maxContexts", "most context keys"),
        ("maxTimelineEntries", "most entries in one timeline"),
        ("maxLiveActivitiesPerApp", "most Live Activities one app may have visible at once (1…1000)"),
        ("maxRelevantContexts", "most relevant contexts in one declaration (1…1000)"),
        ("reloadBudget", "timeline reloads per widget per 24 hours (40…1440)"),
        ("retentionDays", "days donations are kept, counted back from the service's clock (1…366)"),
        ("maxFutureSkewSeconds", "how far ahead of the service's clock a call's date may be, in seconds (0…86400)"),
        ("retentionSweepSeconds", "seconds between two sweeps for donations past retention (1…86400)"),
        ("logLevel", "trace, debug, info, notice, warning, error or critical"),
        ("summaryInterval", "seconds between periodic summaries in the journal (1…86400)"),
        ("journalQueue", "journal entries waiting to be written before more are dropped (16…1048576)"),
        ("durability", "what an acknowledged write survives: process (kill -9, the default) or power (fsync per commit)"),
        ("commitDelayMicroseconds", "longest a shared commit waits for more calls (0…10000)"),
        ("snapshotEveryRecords", "records between engine snapshots (100…10000000)"),
    ]

    /// Parses a configuration file's text: `key = value` lines, `#` comments, blank lines.
    ///
    /// An unknown key, a malformed line or a value out of range is an error naming the line and key.
    public static func parse(_ text: String, source: String = "configuration") throws(ConfigurationError)
        -> ServerConfiguration
    {
        var configuration = ServerConfiguration()
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let trimmed = line.trimmingSpaces
            guard !trimmed.isEmpty else { continue }
            let place = "\(source):\(index + 1)"
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw ConfigurationError(place: place, key: nil, reason: "expected 'key = value'")
            }
            let key = trimmed[..<equals].trimmingSpaces
            let value = trimmed[trimmed.index(after: equals)...].trimmingSpaces
            try configuration.set(key, to: value, place: place)
        }
        return try configuration.validated(source: source)
    }

    mutating func set(_ key: String, to value: String, place: String) throws(ConfigurationError) {
        func integer(_ range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
            guard let number = Int(value), range.contains(number) else {
                throw ConfigurationError(
                    place: place, key: key,
                    reason: "'\(value)' is not a whole number in \(range.lowerBound)…\(range.upperBound)")
            }
            return number
        }
        switch key {
        case "maxFrameSize": maxFrameSize = try integer(1_024...(64 << 20))
        case "maxConnections": maxConnections = try integer(1...65_536)
        case "maxConnectionsPerUID": maxConnectionsPerUID = try integer(1...65_536)
        case "maxInputBytes": maxInputBytes = try integer(65_536...(4 << 30))
        case "rateLimitPerApp": rateLimitPerApp = try integer(0...1_000_000)
        case "rateLimitBurst": rateLimitBurst = try integer(1...10_000_000)
        case "maxSubscriptions": host.maxSubscriptions = try integer(1...65_536)
        case "subscriberQueue": host.subscriberQueue = try integer(1...65_536)
        case "maxDonations": host.maxDonations = try integer(1...100_000_000)
        case "maxListLimit": host.maxListLimit = try integer(1...100_000)
        case "maxStacks": engine.maxStacks = try integer(1...1_000_000)
        case "maxWidgetsPerStack": engine.maxWidgetsPerStack = try integer(1...1_000)
        case "maxKinds": engine.maxKinds = try integer(1...1_000_000)
        case "maxContexts": engine.maxContexts = try integer(1...65_536)
        case "maxTimelineEntries": engine.maxTimelineEntries = try integer(1...100_000)
        case "maxLiveActivitiesPerApp": engine.maxLiveActivitiesPerApp = try integer(1...1_000)
        case "maxRelevantContexts": engine.maxRelevantContexts = try integer(1...1_000)
        case "reloadBudget": engine.reloadBudget = try integer(1...100_000)
        case "retentionDays": engine.retention = Double(try integer(1...366)) * 86_400
        case "maxFutureSkewSeconds": host.maxFutureSkew = Double(try integer(0...86_400))
        case "retentionSweepSeconds": host.retentionSweepInterval = Double(try integer(1...86_400))
        case "durability":
            guard let durability = StoreOptions.Durability(rawValue: value) else {
                throw ConfigurationError(place: place, key: key, reason: "'\(value)' is not one of process, power")
            }
            store.durability = durability
        case "commitDelayMicroseconds": store.commitDelayMicroseconds = try integer(0...10_000)
        case "snapshotEveryRecords": store.snapshotEveryRecords = try integer(100...10_000_000)
        case "logLevel":
            guard let level = Logger.Level(rawValue: value) else {
                throw ConfigurationError(
                    place: place, key: key,
                    reason: "'\(value)' is not one of trace, debug, info, notice, warning, error, critical")
            }
            logLevel = level
        case "summaryInterval": summaryInterval = try integer(1...86_400)
        case "journalQueue": journalQueue = try integer(16...1_048_576)
        default:
            if try access.set(key, to: value, place: place) { return }
            let known = (Self.keys + AccessPolicy.keys).map(\.key).joined(separator: ", ")
            throw ConfigurationError(place: place, key: key, reason: "unknown key; known keys: \(known)")
        }
    }

    /// Checks the combination of values (the engine's own rules included).
    public func validated(source: String = "configuration") throws(ConfigurationError) -> ServerConfiguration {
        do {
            _ = try engine.validated()
        } catch {
            if case .invalidParameter(let parameter, let reason) = error {
                throw ConfigurationError(place: source, key: parameter, reason: reason)
            }
            throw ConfigurationError(place: source, key: nil, reason: "\(error)")
        }
        return self
    }
}

/// A configuration that can't be used, naming where and which key.
public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file and line (or the source's name).
    public var place: String
    public var key: String?
    public var reason: String
    public var description: String { key.map { "\(place): \($0): \(reason)" } ?? "\(place): \(reason)" }
}

extension StringProtocol {
    var trimmingSpaces: String {
        let characters = self.drop(while: { $0 == " " || $0 == "\t" || $0 == "\r" })
        var end = characters.endIndex
        while end > characters.startIndex {
            let before = characters.index(before: end)
            guard characters[before] == " " || characters[before] == "\t" || characters[before] == "\r" else { break }
            end = before
        }
        return String(characters[characters.startIndex..<end])
    }
}
