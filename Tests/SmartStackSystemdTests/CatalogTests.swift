import Foundation
import SmartStackSystemd
import Testing

/// `systemd/smartstackd.catalog` against `SmartStackEvent`, and against journalctl's own parser.
@Suite(.timeLimit(.minutes(1))) struct CatalogTests {
    static let catalogURL = TestEnvironment.repository.appendingPathComponent("systemd/smartstackd.catalog")

    /// One catalog entry: its ID line and header fields, and the body text.
    struct Entry {
        var id: String
        var headers: [String: String]
        var body: String
    }

    /// The catalog format of `journalctl --update-catalog`: `-- ID` lines start entries, then
    /// `Key: value` headers up to a blank line, then the body; `#` lines are comments.
    static func parse(_ text: String) -> [Entry] {
        var entries: [Entry] = []
        var inHeaders = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("#") { continue }
            if line.hasPrefix("-- ") {
                entries.append(Entry(id: String(line.dropFirst(3)), headers: [:], body: ""))
                inHeaders = true
            } else if !entries.isEmpty {
                if inHeaders, line.isEmpty {
                    inHeaders = false
                } else if inHeaders, let colon = line.firstIndex(of: ":") {
                    entries[entries.count - 1].headers[String(line[..<colon])] =
                        line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                } else {
                    entries[entries.count - 1].body += line + "\n"
                }
            }
        }
        return entries
    }

    @Test func oneEntryPerEventType() throws {
        let entries = Self.parse(try String(contentsOf: Self.catalogURL, encoding: .utf8))
        #expect(entries.map(\.id).sorted() == SmartStackEvent.allCases.map(\.messageID.hex).sorted())
        for entry in entries {
            #expect(entry.headers["Defined-By"] == "smartstackd", "\(entry.id)")
            #expect(!(entry.headers["Subject"] ?? "").isEmpty, "\(entry.id)")
            #expect(entry.body.trimmingCharacters(in: .whitespacesAndNewlines).count > 40, "\(entry.id)")
            // Every @FIELD@ it substitutes is one the service writes (or a trusted journal field).
            for field in Self.substitutions(in: entry.body + (entry.headers["Subject"] ?? "")) {
                #expect(field.hasPrefix("_") || JournalFieldName(field) != nil, "\(entry.id): @\(field)@")
            }
        }
    }

    static func substitutions(in text: String) -> [String] {
        text.split(separator: "@", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// Runs `journalctl --root=root --update-catalog` on a root holding only our catalog.
    static func buildDatabase(under root: URL) throws {
        let catalogs = root.appendingPathComponent("usr/lib/systemd/catalog")
        try FileManager.default.createDirectory(at: catalogs, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: catalogURL, to: catalogs.appendingPathComponent("smartstackd.catalog"))
        let journalctl = try #require(TestEnvironment.tool("journalctl"))
        let result = try ChildProcess.run(journalctl, ["--root=\(root.path)", "--update-catalog"], in: root)
        try #require(result.status == 0, "journalctl --update-catalog: \(result.errorOutput)")
        #expect(!result.errorOutput.contains("rror"), "\(result.errorOutput)")
    }

    @Test(.enabled(if: TestEnvironment.tool("journalctl") != nil, "needs journalctl"))
    func journalctlCompilesAndListsTheCatalog() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let root = directory.url.appendingPathComponent("root")
        try Self.buildDatabase(under: root)
        let journalctl = try #require(TestEnvironment.tool("journalctl"))
        let listed = try ChildProcess.run(journalctl, ["--root=\(root.path)", "--list-catalog"], in: directory.url)
        #expect(listed.status == 0, "\(listed.errorOutput)")
        let entries = Self.parse(try String(contentsOf: Self.catalogURL, encoding: .utf8))
        let lines = Set(listed.output.split(separator: "\n").map(String.init))
        for entry in entries {
            #expect(lines.contains("\(entry.id) smartstackd: \(entry.headers["Subject"] ?? "")"))
        }
        #expect(lines.count == SmartStackEvent.allCases.count)
    }
}
