/// What smartstack-desktop is told: which service manager to watch, which stack to keep and how.
///
/// Read from `key = value` lines (`#` comments) by ``parse(_:)``; every key has a default, so an empty file
/// (or none) is the default configuration. A bad line is a ``DesktopConfigurationError`` naming the line and
/// the key.
public struct DesktopConfiguration: Sendable, Equatable {
    /// Which service manager (and so which D-Bus bus) to watch.
    public enum Bus: String, Sendable, Equatable {
        /// The user's service manager on the user bus (a desktop session).
        case user
        /// The system manager on the system bus (kiosks that launch apps as system units).
        case system
    }

    /// `bus`: the manager whose `app-*` units are launches.
    public var bus: Bus = .user
    /// `stack`: the stack kept up to date with the most-launched apps.
    public var stack = "desktop.apps"
    /// `stackSize`: K, the apps in the stack (1-10, smartstackd's default `maxWidgetsPerStack`).
    public var stackSize = 10
    /// `family`: the family of the launcher widget kinds and of the stack.
    public var family = "systemMedium"
    /// `kind`: the name of each app's launcher widget kind.
    public var kind = "launch"
    /// `ignore`: application ids never donated; an entry ending in `*` is a prefix.
    public var ignore: [String] = []
    /// `apps`: when set, the stack holds exactly these app ids in this order (a person's own choice) instead
    /// of the K most launched.
    public var apps: [String] = []
    /// `dedupSeconds`: a unit started again within this many seconds of its last counted start counts once.
    public var dedupSeconds = 5.0
    /// `session`: the logind session whose unlocks are looks (`$XDG_SESSION_ID` when empty; when neither is set,
    /// every session of the service's own uid for the user bus, every session for the system bus).
    public var session = ""
    /// `overviewLooks`: whether GNOME Shell's overview opening (its `OverviewActive` turning true on the user
    /// bus) is a look at the stack, as an unlock is.
    public var overviewLooks = true

    public init() {}

    /// Whether `applicationID` is on the ignore list.
    public func ignores(_ applicationID: String) -> Bool {
        ignore.contains { pattern in
            pattern.hasSuffix("*") ? applicationID.hasPrefix(pattern.dropLast()) : applicationID == pattern
        }
    }

    static let families: Set<String> = [
        "systemSmall", "systemMedium", "systemLarge", "systemExtraLarge", "accessoryCircular",
        "accessoryRectangular", "accessoryInline",
    ]

    /// The configuration of `text` (the file's contents); `source` names the file in errors.
    public static func parse(_ text: String, source: String = "configuration") throws(DesktopConfigurationError) -> Self
    {
        var configuration = Self()
        // The line each key was set on: a key set twice is refused, as smartstackd refuses it (the second silently
        // won), and `stackSize` beside an `apps` list of another length (the list is the stack: it was ignored).
        var seen: [String: Int] = [:]
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingWhitespace()
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            func fail(_ key: String, _ reason: String) -> DesktopConfigurationError {
                DesktopConfigurationError(source: source, line: offset + 1, key: key, reason: reason)
            }
            guard let equals = line.firstIndex(of: "=") else { throw fail("", "expected 'key = value'") }
            let key = String(line[..<equals].trimmingWhitespace())
            let value = String(line[line.index(after: equals)...].trimmingWhitespace())
            if let first = seen[key] { throw fail(key, "set again (first at \(source):\(first))") }
            seen[key] = offset + 1
            let list = value.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).map(String.init)
            switch key {
            case "bus":
                guard let bus = Bus(rawValue: value) else {
                    throw fail(key, "expected user or system, found '\(value)'")
                }
                configuration.bus = bus
            case "stack":
                guard (1...255).contains(value.utf8.count), value.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) else {
                    throw fail(key, "expected 1-255 bytes of printable ASCII without spaces")
                }
                configuration.stack = value
            case "stackSize":
                guard let size = Int(value), (1...10).contains(size) else {
                    throw fail(key, "expected 1-10, found '\(value)'")
                }
                configuration.stackSize = size
            case "family":
                guard families.contains(value) else { throw fail(key, "unknown family '\(value)'") }
                configuration.family = value
            case "kind":
                guard (1...255).contains(value.utf8.count),
                    value.utf8.allSatisfy({ AppUnit.isAppIDByte($0) || $0 == UInt8(ascii: "/") })
                else { throw fail(key, "expected 1-255 bytes of letters, digits, '.', '_', '/' and '-'") }
                configuration.kind = value
            case "ignore":
                configuration.ignore = list
            case "apps":
                guard list.count <= 10 else { throw fail(key, "at most 10 apps") }
                guard Set(list).count == list.count else { throw fail(key, "an app is named twice") }
                configuration.apps = list
            case "dedupSeconds":
                guard let seconds = Double(value), seconds >= 0, seconds <= 3600 else {
                    throw fail(key, "expected 0-3600 seconds, found '\(value)'")
                }
                configuration.dedupSeconds = seconds
            case "session":
                configuration.session = value
            case "overviewLooks":
                guard let on = ["true": true, "yes": true, "1": true, "false": false, "no": false, "0": false][value]
                else { throw fail(key, "expected true or false, found '\(value)'") }
                configuration.overviewLooks = on
            default:
                throw fail(key, "unknown key")
            }
            if let size = seen["stackSize"], seen["apps"] != nil, configuration.stackSize != configuration.apps.count {
                throw DesktopConfigurationError(
                    source: source, line: offset + 1, key: key,
                    reason:
                        "stackSize \(configuration.stackSize) (line \(size)) and the \(configuration.apps.count) apps "
                        + "listed disagree: the apps listed are the stack; leave stackSize out")
            }
        }
        return configuration
    }
}

/// A bad line of a configuration file.
public struct DesktopConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var source: String
    public var line: Int
    public var key: String
    public var reason: String

    public var description: String {
        "\(source):\(line): " + (key.isEmpty ? reason : "\(key): \(reason)")
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> SubSequence {
        var text = self[...]
        while let first = text.first, first == " " || first == "\t" || first == "\r" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" || last == "\r" { text = text.dropLast() }
        return text
    }
}
