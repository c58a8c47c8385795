import SmartStackProtocol
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Plain text tables for people.
enum Table {
    static func render(rows: [[String]], header: [String]) -> String {
        let all = [header] + rows
        var widths = header.map(\.count)
        for row in all { for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.count) } }
        return all.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    /// A JSON value as a table cell.
    static func text(_ value: JSONValue) -> String {
        switch value {
        case .null: return "-"
        case .bool(let flag): return flag ? "yes" : "no"
        case .int(let number): return String(number)
        case .double(let number):
            let rounded = (number * 1_000).rounded() / 1_000
            return String(rounded)
        case .string(let text): return text
        case .array(let values): return values.map(text).joined(separator: ",")
        case .object: return String(decoding: JSON.serialize(value), as: UTF8.self)
        }
    }
}

/// A stack's order (a GetStack or Subscribe reply) as a table.
enum OrderTable {
    static func render(_ reply: JSONObject) -> String {
        let stack = reply["stack"].map(Table.text) ?? "?"
        let revision = reply["revision"].map(Table.text) ?? "?"
        let entries = reply["order"]?.arrayValue?.compactMap(\.objectValue) ?? []
        let rows = entries.map { entry -> [String] in
            var flags: [String] = []
            if entry["pinned"] == .bool(true) { flags.append("pinned") }
            if entry["suggested"] == .bool(true) { flags.append("suggested") }
            let contributions = entry["contributions"]?.objectValue.map { object in
                object.keys.compactMap { key in
                    object[key].map { "\(key)=\(Table.text($0))" }
                }.prefix(3).joined(separator: " ")
            } ?? ""
            return [
                entry["position"].map(Table.text) ?? "", entry["instance"].map(Table.text) ?? "",
                entry["score"].map(Table.text) ?? "", entry["reason"].map(Table.text) ?? "",
                flags.joined(separator: ","), contributions,
            ]
        }
        return "stack \(stack) revision \(revision)\n"
            + Table.render(rows: rows, header: ["#", "instance", "score", "reason", "flags", "top signals"])
    }
}

/// Counts stream replies across the stream's callback.
final class Counter: Sendable {
    private let value = Mutex(0)
    /// Adds one and returns the new count.
    func increment() -> Int { value.withLock { $0 += 1; return $0 } }
}

func currentUID() -> UInt32 { getuid() }

/// The environment variables the default socket path depends on.
func processEnvironment() -> [String: String] {
    var environment: [String: String] = [:]
    for name in ["XDG_RUNTIME_DIR", "HOME", "XDG_DATA_HOME", "STATE_DIRECTORY"] {
        if let value = getenv(name) { environment[name] = String(cString: value) }
    }
    return environment
}

/// Writes lines to standard error.
enum StandardErrorStream {
    static func print(_ line: String) {
        var text = line + "\n"
        text.withUTF8 { buffer in _ = write(2, buffer.baseAddress, buffer.count) }
    }
}
