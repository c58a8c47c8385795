import Foundation
public import SmartStackDesktop

/// The tracker's state and the calls not yet acknowledged, in one JSON file replaced atomically after every
/// change, so a restart of smartstack-desktop neither loses a launch nor counts one twice.
public struct StateFile: Sendable {
    public struct Contents: Sendable, Codable, Equatable {
        public var state = DesktopTracker.State()
        public var pending: [DesktopCall] = []
        public init() {}
    }

    public let path: String

    public init(directory: String) {
        path = directory + "/desktop-state.json"
    }

    /// The stored contents; empty when there is no file yet.
    public func load() throws -> Contents {
        guard FileManager.default.fileExists(atPath: path) else { return Contents() }
        return try JSONDecoder().decode(Contents.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    public func save(_ contents: Contents) throws {
        let data = try JSONEncoder().encode(contents)
        try data.write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
