import Logging
import SmartStackCore
import SmartStackProtocol
import SmartStackStore

/// One key of a configuration file: its name, what it means, the values it takes, its default, and where it goes.
/// `ServerConfiguration.table` lists every key once; the parser, the help text, `--configuration-keys` and the README's
/// table (checked by a test) all come from it.
public struct ConfigurationKey: Sendable {
    /// The key as written in a file.
    public let name: String
    /// What it means.
    public let help: String
    /// The values it takes, as a person reads them (`1…65536`, `process, power`).
    public let values: String
    /// Its default, as written in a file (empty: none).
    public let defaultValue: String
    /// Sets it from a file's text; the error is the reason the value was refused.
    let set: @Sendable (inout ServerConfiguration, String) -> String?

    /// A whole number in `range`, stored at `path` (times `unit`, for keys in other units than the setting's).
    static func integer(
        _ name: String, _ range: ClosedRange<Int>, _ path: any WritableKeyPath<ServerConfiguration, Int> & Sendable,
        _ help: String
    ) -> ConfigurationKey {
        ConfigurationKey(
            name: name, help: help, values: "\(range.lowerBound)…\(range.upperBound)",
            defaultValue: String(ServerConfiguration()[keyPath: path])
        ) { configuration, text in
            guard let number = Int(text), range.contains(number) else {
                return "'\(text)' is not a whole number in \(range.lowerBound)…\(range.upperBound)"
            }
            configuration[keyPath: path] = number
            return nil
        }
    }

    /// A whole number of `unit` seconds in `range`, stored in seconds at `path`.
    static func seconds(
        _ name: String, _ range: ClosedRange<Int>, unit: Double = 1,
        _ path: any WritableKeyPath<ServerConfiguration, Double> & Sendable, _ help: String
    ) -> ConfigurationKey {
        let current = ServerConfiguration()[keyPath: path] / unit
        return ConfigurationKey(
            name: name, help: help, values: "\(range.lowerBound)…\(range.upperBound)",
            defaultValue: current.rounded() == current ? String(Int(current)) : String(current)
        ) { configuration, text in
            guard let number = Int(text), range.contains(number) else {
                return "'\(text)' is not a whole number in \(range.lowerBound)…\(range.upperBound)"
            }
            configuration[keyPath: path] = Double(number) * unit
            return nil
        }
    }

    /// One of a fixed set of words.
    static func choice<Value: Sendable>(
        _ name: String, _ choices: [(String, Value)],
        _ path: any WritableKeyPath<ServerConfiguration, Value> & Sendable,
        default defaultValue: String, _ help: String
    ) -> ConfigurationKey {
        let words = choices.map(\.0).joined(separator: ", ")
        let table = UncheckedChoices(choices)
        return ConfigurationKey(name: name, help: help, values: words, defaultValue: defaultValue) {
            configuration, text in
            guard let value = table.choices.first(where: { $0.0 == text })?.1 else {
                return "'\(text)' is not one of \(words)"
            }
            configuration[keyPath: path] = value
            return nil
        }
    }

    /// A policy key, set by `AccessPolicy` (a list of principals).
    static func policy(_ name: String, default defaultValue: String, _ help: String) -> ConfigurationKey {
        ConfigurationKey(
            name: name, help: help, values: "uid:N, gid:N, user:NAME, group:NAME or *", defaultValue: defaultValue
        ) { configuration, text in
            do throws(ConfigurationError) {
                _ = try configuration.access.set(name, to: text, place: "")
                return nil
            } catch {
                return error.reason
            }
        }
    }
}

/// The choices of a `choice` key, whose values are `Sendable` (the tuple array is, too).
private struct UncheckedChoices<Value: Sendable>: Sendable {
    let choices: [(String, Value)]
    init(_ choices: [(String, Value)]) { self.choices = choices }
}

extension ServerConfiguration {
    /// Every key a configuration file may set (the access policy's `app.ID` keys aside, which `AccessPolicy` reads),
    /// in the order the README lists them. The ranges are the engine's own (`EngineSettings.validated`), so a
    /// value the parser takes is never refused later under another name.
    public static let table: [ConfigurationKey] = [
        .integer(
            "maxFrameSize", 1_024...(64 << 20), \.maxFrameSize,
            "largest message in bytes; a larger one closes its connection"),
        .integer(
            "maxConnections", 1...65_536, \.maxConnections,
            "connections served at once (a sixteenth, at least one, kept for root and the service's own uid); more are closed on accept"
        ),
        .integer(
            "maxInputBytes", 65_536...(4 << 30), \.maxInputBytes,
            "bytes all connections together may hold in unfinished frames; past it the connection holding the most is closed"
        ),
        .integer(
            "stopGraceSeconds", 1...60, \.stopGraceSeconds,
            "seconds a connection may take to answer what it received once the service stops; then it is closed"),
        .integer(
            "maxConnectionsPerUID", 1...65_536, \.maxConnectionsPerUID,
            "connections one uid may hold (root and the service's own uid aside); more are closed on accept"),
        .integer(
            "maxPendingConnectionsPerUID", 1...65_536, \.maxPendingConnectionsPerUID,
            "connections of one uid accepted and not yet set up (root and the service's own uid aside); more are closed on accept, so one uid connecting in a loop cannot hold others' connections back"
        ),
        .integer(
            "maxAppsPerUID", 1...1_000_000, \.maxAppsPerUID,
            "app ids one uid may claim in system mode (root and the service's own uid aside); more are LimitExceeded"),
        .integer(
            "rateLimitPerApp", 0...1_000_000, \.rateLimitPerApp,
            "recording calls and deletions a second per app on average (0: no limit; root and the service's uid are not limited)"
        ),
        .integer(
            "rateLimitPerUID", 0...1_000_000, \.rateLimitPerUID,
            "recording calls and deletions a second per uid on average, over all of its apps and its shell's calls (0: no limit; root and the service's uid are not limited)"
        ),
        .integer(
            "rateLimitBurst", 1...10_000_000, \.rateLimitBurst,
            "recording calls an app (or a uid) may make at once after being idle"),
        .integer("maxSubscriptions", 1...65_536, \.host.maxSubscriptions, "open Subscribe/WatchReloads streams"),
        .integer(
            "subscriberQueue", 1...65_536, \.host.subscriberQueue,
            "decisions queued for a subscriber before it is cut off"),
        .integer("maxDonations", 1...100_000_000, \.host.maxDonations, "donations kept at once"),
        .integer(
            "maxDonationsPerApp", 1...100_000_000, \.host.maxDonationsPerApp,
            "donations of one app kept at once, so one app cannot take the room of all"),
        .integer(
            "maxDonationsPerUID", 1...100_000_000, \.host.maxDonationsPerUID,
            "donations the apps one uid claimed may keep at once (system mode; root and the service's own uid aside)"),
        .integer(
            "maxKindsPerUID", 1...1_000_000, \.host.maxKindsPerUID,
            "widget kinds the apps one uid claimed may register (system mode; root and the service's own uid aside)"),
        .integer(
            // Up to the protocol's largest page: a larger setting could never be asked for.
            "maxListLimit", 1...ListDonationsRequest.maximumLimit, \.host.maxListLimit,
            "donations one ListDonations page may return; a larger limit is InvalidParameter"),
        .integer(
            // Below clients' 16 MiB frame limit with the envelope around the parameters.
            "maxListReplyBytes", (64 << 10)...((16 << 20) - 1_024), \.host.maxListReplyBytes,
            "bytes of one ListDonations reply; a larger page is LimitExceeded, to be asked for with a smaller limit"),
        .integer(
            "maxHistoryReads", 1...64, \.host.maxHistoryReads,
            "reads of the stored history at once: as many ListDonations pages, and apart from them as many rebuilds for GetStack/Explain at an earlier time; more wait their turn"
        ),
        .integer("maxStacks", 1...1_000_000, \.engine.maxStacks, "stacks the service holds"),
        .integer("maxWidgetsPerStack", 1...100, \.engine.maxWidgetsPerStack, "widgets in one stack"),
        .integer("maxKinds", 1...1_000_000, \.engine.maxKinds, "registered widget kinds, over all apps"),
        .integer("maxKindsPerApp", 1...1_000_000, \.engine.maxKindsPerApp, "registered widget kinds of one app"),
        .integer("maxContexts", 1...4_096, \.engine.maxContexts, "context keys in force"),
        .integer("maxTimelineEntries", 1...100_000, \.engine.maxTimelineEntries, "entries in one timeline"),
        .integer(
            "maxLiveActivitiesPerApp", 1...1_000, \.engine.maxLiveActivitiesPerApp,
            "Live Activities one app may have visible at once"),
        .integer(
            "maxLiveActivities", 1...1_000_000, \.host.maxLiveActivities,
            "Live Activities visible at once, over all apps"),
        .integer(
            "maxLiveActivitiesPerUID", 1...1_000_000, \.host.maxLiveActivitiesPerUID,
            "Live Activities the apps one uid claimed may have visible at once (system mode; root and the service's own uid aside)"
        ),
        .integer(
            "maxRelevantContexts", 1...1_000, \.engine.maxRelevantContexts, "relevant contexts in one declaration"),
        .integer(
            "maxSuggestionCandidates", 0...100_000, \.engine.maxSuggestionCandidates,
            "widget configurations no stack places that may be suggested, over all apps; past it the app holding the most gives up its oldest"
        ),
        .integer(
            "maxUnplacedConfigurationsPerApp", 0...100_000, \.engine.maxUnplacedConfigurationsPerApp,
            "widget configurations of one app that no stack places, kept for suggestions and timelines"),
        .integer(
            "maxContextPairs", 0...1_000_000, \.engine.maxContextPairs,
            "context key=value pairs the ranking learns from"),
        .integer(
            "reloadBudget", ReloadBudget.allowedCapacity, \.engine.reloadBudget,
            "timeline reloads per widget per 24 hours"),
        .seconds(
            "swipeGracePeriodSeconds", 0...86_400, \.engine.swipeGracePeriod,
            "seconds a widget the user swiped to stays on top, against rotations too (0: no grace period)"),
        .seconds(
            "minimumTimeOnTopSeconds", 0...86_400, \.engine.minimumTimeOnTop,
            "seconds after a rotation or a manual swipe before another rotation may displace the top (0: none)"),
        .integer(
            "maxRotationsPerWidgetPerDay", 1...1_440, \.engine.maxRotationsPerWidgetPerDay,
            "rotations to the top (for relevance or a suggestion) one widget may get in a rolling 24 hours"),
        .seconds(
            "retentionDays", 1...366, unit: 86_400, \.engine.retention,
            "days donations are kept, counted back from the service's clock"),
        .seconds(
            "retentionSweepSeconds", 1...86_400, \.host.retentionSweepInterval,
            "seconds between two sweeps for donations past retention"),
        .seconds(
            "maxFutureSkewSeconds", 0...86_400, \.host.maxFutureSkew,
            "how far ahead of the service's clock (or of the system clock, while a step of it is not yet followed) a call's date may be; it is taken at the service's time"
        ),
        .integer(
            "clockStepConfirmationSeconds", 0...86_400, \.clockStepConfirmationSeconds,
            "seconds a forward step of the system clock must hold before the service's clock follows it (0: at once)"),
        .choice(
            "logLevel",
            [
                ("trace", .trace), ("debug", .debug), ("info", .info), ("notice", .notice), ("warning", .warning),
                ("error", .error), ("critical", .critical),
            ] as [(String, Logger.Level)],
            \.logLevel, default: "info", "the log level at start (SetLogLevel changes it)"),
        .integer("summaryInterval", 1...86_400, \.summaryInterval, "seconds between periodic summaries in the journal"),
        .integer(
            "journalQueue", 16...1_048_576, \.journalQueue,
            "journal entries waiting to be written; more are dropped and counted"),
        .policy("shells", default: "*", "who may call io.smartstack.Shell"),
        .policy(
            "providers", default: "*",
            "who may provide apps not assigned by app.ID (the first uid whose call for an app succeeds owns it)"),
        .policy("admins", default: "", "who may call io.smartstack.Admin and read stacks (root always may)"),
        .choice(
            "durability", [("process", .process), ("power", .power)] as [(String, StoreOptions.Durability)],
            \.store.durability, default: "process",
            "what an acknowledged call survives: process (a crash or kill -9) or power (power loss too; an fsync per commit)"
        ),
        .integer(
            "commitDelayMicroseconds", 0...10_000, \.store.commitDelayMicroseconds,
            "longest a commit after a shared one waits for more calls"),
        .integer(
            "snapshotEveryRecords", 100...10_000_000, \.store.snapshotEveryRecords,
            "records between background snapshots of the engine"),
        .integer(
            "storageResumeFreeBytes", 0...(1 << 30), \.store.resumeFreeBytes,
            "after a failed commit, bytes the disk must have free before storage is tried again (0: a test write alone)"
        ),
    ]

    /// The table's keys by name.
    static let tableByName: [String: ConfigurationKey] = Dictionary(uniqueKeysWithValues: table.map { ($0.name, $0) })

    /// The table as the README shows it (one Markdown row a key): `smartstackd --configuration-keys` prints it.
    public static var markdownTable: String {
        var lines = ["| key | default | values | meaning |", "|---|---|---|---|"]
        for key in table {
            let shown = key.defaultValue.isEmpty ? "none" : key.defaultValue
            lines.append("| `\(key.name)` | \(shown) | \(key.values) | \(key.help) |")
        }
        lines.append(
            "| `app.ID` | none | uid:N, gid:N, user:NAME, group:NAME | the callers app ID belongs to, e.g. `app.org.example.weather = user:weather` |"
        )
        return lines.joined(separator: "\n")
    }
}
