/// A list of widget ids in one journal field (`SMARTSTACK_ORDER`, `SMARTSTACK_PREVIOUS_ORDER`, the ids of
/// `SMARTSTACK_SCORES`): items separated by commas, each with `%` and `,` percent-encoded (`%25`, `%2C`), since a
/// shell's instance id and a suggestion's configuration values may hold commas. An id without either reads as
/// itself, so most entries are what they were before the encoding.
public enum JournalList {
    /// One item, encoded.
    public static func encode(_ item: String) -> String {
        guard item.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: ",") }) else { return item }
        var encoded = ""
        encoded.reserveCapacity(item.utf8.count + 8)
        for character in item.unicodeScalars {
            switch character {
            case "%": encoded += "%25"
            case ",": encoded += "%2C"
            default: encoded.unicodeScalars.append(character)
            }
        }
        return encoded
    }

    /// The items, encoded and joined by commas.
    public static func join(_ items: some Sequence<String>) -> String {
        items.map(encode).joined(separator: ",")
    }

    /// One item decoded: `%25` and `%2C` (either case) back to `%` and `,`; any other `%` is kept as it is.
    public static func decode(_ item: Substring) -> String {
        guard item.contains("%") else { return String(item) }
        var decoded = ""
        var rest = item[...]
        while let percent = rest.firstIndex(of: "%") {
            decoded += rest[..<percent]
            let code = rest[percent...].dropFirst().prefix(2).uppercased()
            switch code {
            case "25":
                decoded += "%"
                rest = rest[percent...].dropFirst(3)
            case "2C":
                decoded += ","
                rest = rest[percent...].dropFirst(3)
            default:
                decoded += "%"
                rest = rest[percent...].dropFirst()
            }
        }
        return decoded + rest
    }

    /// The items of a field's value (empty for an empty value). When the field was cut to fit the journal
    /// (`SMARTSTACK_TRUNCATED` names it), its last item is the cut one and is left out.
    public static func split(_ value: String, wasCut: Bool = false) -> [String] {
        guard !value.isEmpty else { return [] }
        var items = value.split(separator: ",", omittingEmptySubsequences: true)
        if wasCut, !items.isEmpty { items.removeLast() }
        return items.map(decode)
    }
}
