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
    /// Seconds a forward step of the system's wall clock must hold before the service's time follows it (`SteadyTime`;
    /// 0: at once).
    public var clockStepConfirmationSeconds = 600
    /// Seconds a connection may take, once the service stops, to answer what it had received; then it is closed
    /// (a client that does not read its replies cannot hold the stop until systemd's `TimeoutStopSec` kills it).
    public var stopGraceSeconds = 5
    /// The most connections one uid (other than root and the service's own) may have open at once.
    public var maxConnectionsPerUID = 256
    /// The most connections of one uid (other than root and the service's own) accepted and waiting to be set up;
    /// more are closed on accept, so one uid connecting in a loop cannot hold everyone else's connections back.
    public var maxPendingConnectionsPerUID = 32
    /// Apps one uid may own by claiming them in system mode (root and the service's own uid aside).
    public var maxAppsPerUID = 4_096
    /// Recording calls (and deletions) a second per app, on average; 0 turns the limit off.
    public var rateLimitPerApp = 1_000
    /// Recording calls (and deletions) a second per uid over all of its apps and its shell's calls, on average;
    /// 0 turns the limit off. Without it one uid's many apps, each within its own rate, could take the service from
    /// every other uid.
    public var rateLimitPerUID = 2_000
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

    /// The keys a configuration file may set, with what each means and the values it takes (from `table`).
    public static var keys: [(key: String, help: String)] {
        table.map { ($0.name, "\($0.help) (\($0.values))") } + AccessPolicy.keys.filter { $0.key == "app.ID" }
    }

    /// Parses a configuration file's text: `key = value` lines, `#` comments, blank lines.
    ///
    /// An unknown key, a malformed line or a value out of range is an error naming the line and key.
    public static func parse(_ text: String, source: String = "configuration") throws(ConfigurationError)
        -> ServerConfiguration
    {
        var configuration = ServerConfiguration()
        // Where each key was set: a key set twice is an error (the last line won silently, so a second `shells =`
        // line meant as an addition locked out everyone the first one named).
        var seen: [String: String] = [:]
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
            if let first = seen[String(key)] {
                throw ConfigurationError(
                    place: place, key: String(key),
                    reason: "set again (first at \(first)); write it once (a principal list takes several, \"a, b\")")
            }
            seen[String(key)] = place
            try configuration.set(key, to: value, place: place)
        }
        return try configuration.validated(source: source)
    }

    mutating func set(_ key: String, to value: String, place: String) throws(ConfigurationError) {
        if let entry = Self.tableByName[key] {
            if let reason = entry.set(&self, value) { throw ConfigurationError(place: place, key: key, reason: reason) }
            // Where a policy key was set, for the names it resolves at start.
            if AccessPolicy.keys.contains(where: { $0.key == key }) { access.places[key] = place }
            return
        }
        if key.hasPrefix("app."), try access.set(key, to: value, place: place) { return }
        let known = Self.keys.map(\.key).joined(separator: ", ")
        throw ConfigurationError(place: place, key: key, reason: "unknown key; known keys: \(known)")
    }

    /// Checks the combination of values (the engine's own rules included).
    public func validated(source: String = "configuration") throws(ConfigurationError) -> ServerConfiguration {
        do {
            _ = try engine.validated()
        } catch {
            // The table's ranges are the engine's, so this is reached only by settings made in code; the error
            // still names the file's key (the engine calls the ones in other units by its own names).
            if case .invalidParameter(let parameter, let reason) = error {
                throw ConfigurationError(place: source, key: Self.keyNames[parameter] ?? parameter, reason: reason)
            }
            throw ConfigurationError(place: source, key: nil, reason: "\(error)")
        }
        return self
    }
}

extension ServerConfiguration {
    /// The file's keys of the engine settings it names otherwise (`EngineSettings.validated`).
    static let keyNames = [
        "retention": "retentionDays", "swipeGracePeriod": "swipeGracePeriodSeconds",
        "minimumTimeOnTop": "minimumTimeOnTopSeconds",
    ]
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
