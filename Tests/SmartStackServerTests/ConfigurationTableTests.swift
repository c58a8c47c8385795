import Foundation
import SmartStackServer
import Testing

/// The configuration table (`ServerConfiguration.table`) is the one declaration of every key: it parses, checks and
/// documents them, and the README's table is a copy of it.
@Suite("Configuration table")
struct ConfigurationTableTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test("the README's table is the code's table (smartstackd --configuration-keys)")
    func readmeMatches() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let indented = ServerConfiguration.markdownTable.split(separator: "\n").map { "  " + $0 }.joined(
            separator: "\n")
        #expect(
            readme.contains(indented), "README.md's table differs: paste the output of smartstackd --configuration-keys"
        )
    }

    @Test("each key's default, written in a file, gives the default configuration")
    func defaultsRoundTrip() throws {
        let text = ServerConfiguration.table.map { "\($0.name) = \($0.defaultValue)" }.joined(separator: "\n")
        #expect(try ServerConfiguration.parse(text) == ServerConfiguration())
    }

    @Test("each number key takes both ends of its range, and the engine's checks agree")
    func rangesAreTheEngines() throws {
        for key in ServerConfiguration.table {
            let ends = key.values.split(separator: "…").map(String.init)
            guard ends.count == 2 else { continue }
            for end in ends {
                #expect(throws: Never.self, "\(key.name) = \(end)") {
                    _ = try ServerConfiguration.parse("\(key.name) = \(end)")
                }
            }
            if let upper = Int(ends[1]) {
                #expect {
                    _ = try ServerConfiguration.parse("\(key.name) = \(upper + 1)", source: "c")
                } throws: { error in
                    (error as? ConfigurationError)?.key == key.name && "\(error)".contains(ends[1])
                }
            }
        }
    }

    @Test(
        "an out-of-range value names the key as written",
        arguments: [
            "retentionDays = 400", "maxWidgetsPerStack = 101", "maxContexts = 5000",
            "swipeGracePeriodSeconds = 100000", "minimumTimeOnTopSeconds = 100000", "maxRotationsPerWidgetPerDay = 0",
            // Above the protocol's largest page, which no request could ask for.
            "maxListLimit = 1001",
        ])
    func namesTheKeyWritten(line: String) {
        let written = String(line.split(separator: " ")[0])
        #expect {
            _ = try ServerConfiguration.parse(line, source: "c")
        } throws: { error in
            (error as? ConfigurationError)?.key == written
        }
    }
}
