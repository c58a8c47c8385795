import Foundation
import Logging
import SmartStackCore
import SmartStackServer
import SmartStackStore
import Synchronization

/// A temporary directory removed at the end of the test.
final class TemporaryDirectory {
    let path: String

    init() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent(
            "smartstack-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        path = base.path
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    var database: String { path + "/" + SQLiteEventLog.fileName }

    func bytes(of file: String) -> [UInt8]? { FileManager.default.contents(atPath: file).map { [UInt8]($0) } }
}

enum StoreFixture {
    static let logger = Logger(label: "store-test") { _ in SwiftLogNoOpLogHandler() }

    /// 2024-03-04T08:00:00-08:00.
    static let start = Timestamp(microseconds: 1_709_568_000_000_000, utcOffsetSeconds: -8 * 3_600)

    static func t(_ seconds: Double) -> Timestamp { start.adding(seconds: seconds) }

    static func app(_ name: String) -> AppID {
        do { return try AppID("com.example.\(name)") } catch { fatalError("bad app \(name)") }
    }

    static func instance(_ name: String) -> InstanceID {
        do { return try InstanceID(name) } catch { fatalError("bad instance \(name)") }
    }

    static func stack(_ name: String) -> StackID {
        do { return try StackID(name) } catch { fatalError("bad stack \(name)") }
    }

    static func kindID(_ app: String) -> WidgetKindID {
        do { return try WidgetKindID(app: Self.app(app), kind: "main") } catch { fatalError("bad kind") }
    }

    static func kind(_ app: String) -> WidgetKind {
        do {
            return try WidgetKind(
                id: kindID(app), displayName: app, families: [.systemMedium], intent: nil, predictionMappings: [])
        } catch { fatalError("bad kind: \(error)") }
    }

    static func donation(_ app: String, id: String, at seconds: Double, group: String? = nil) -> EngineEvent {
        .donate(Donation(id: id, app: Self.app(app), intent: "open", date: t(seconds), groupId: group))
    }

    static func open(_ directory: TemporaryDirectory, options: StoreOptions = StoreOptions()) throws -> SQLiteEventLog {
        try SQLiteEventLog.open(directory: directory.path, options: options, logger: logger)
    }
}

/// A clock the test moves by hand.
final class TestClock: ServiceClock {
    private let time: Mutex<Timestamp>

    init(_ start: Timestamp = StoreFixture.start) { time = Mutex(start) }

    func now() -> Timestamp { time.withLock { $0 } }

    func advance(seconds: Double) { time.withLock { $0 = $0.adding(seconds: seconds) } }
}

/// Runs a program and returns its exit status (for mounting test filesystems).
@discardableResult
func run(_ executable: String, _ arguments: [String]) -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    do { try process.run() } catch { return -1 }
    process.waitUntilExit()
    return process.terminationStatus
}
