/// A journal `MESSAGE_ID`: a 128-bit identifier, written as 32 lowercase hexadecimal digits.
///
/// Each event type of smartstackd has one, generated once with `systemd-id128 new` and never
/// changed, so that `journalctl MESSAGE_ID=…` and the message catalog keep working across versions.
public struct MessageID: Sendable, Hashable, CustomStringConvertible {
    /// The 32 lowercase hexadecimal digits, without dashes.
    public let hex: String

    /// Parses an ID as `systemd-id128` prints it: 32 hexadecimal digits, dashes (UUID form) allowed.
    ///
    /// Returns `nil` unless exactly 32 hexadecimal digits remain; upper case is folded to lower.
    public init?(_ text: String) {
        var digits = ""
        for character in text.lowercased() where character != "-" {
            guard character.isHexDigit, character.isASCII else { return nil }
            digits.append(character)
        }
        guard digits.count == 32 else { return nil }
        self.hex = digits
    }

    /// For hard-coded literals already in canonical form.
    init(uncheckedHex hex: String) {
        self.hex = hex
    }

    public var description: String { hex }
}
