/// ANSI styling that is a no-op when colour is off, so renderers never ask whether it is on.
public struct Style: Sendable, Hashable {
    /// Whether escape sequences are written.
    public var enabled: Bool

    public init(enabled: Bool) {
        self.enabled = enabled
    }

    /// No escape sequences at all.
    public static let plain = Style(enabled: false)

    /// SGR codes used by the renderers.
    public enum Code: String, Sendable {
        case bold = "1"
        case dim = "2"
        case underline = "4"
        case red = "31"
        case green = "32"
        case yellow = "33"
        case blue = "34"
        case magenta = "35"
        case cyan = "36"
    }

    /// `text` wrapped in the codes, or `text` itself when colour is off.
    public func apply(_ text: String, _ codes: Code...) -> String {
        guard enabled, !codes.isEmpty, !text.isEmpty else { return text }
        return "\u{1B}[" + codes.map(\.rawValue).joined(separator: ";") + "m" + text + "\u{1B}[0m"
    }

    public func bold(_ text: String) -> String { apply(text, .bold) }
    public func dim(_ text: String) -> String { apply(text, .dim) }
    public func good(_ text: String) -> String { apply(text, .green) }
    public func warn(_ text: String) -> String { apply(text, .yellow) }
    public func bad(_ text: String) -> String { apply(text, .red, .bold) }
    public func accent(_ text: String) -> String { apply(text, .cyan) }

    /// The number of characters a terminal shows for `text`: escape sequences take no room.
    public static func visibleWidth(_ text: String) -> Int {
        var width = 0
        var inEscape = false
        for scalar in text.unicodeScalars {
            if inEscape {
                if scalar == "m" { inEscape = false }
                continue
            }
            if scalar == "\u{1B}" {
                inEscape = true
                continue
            }
            // Combining marks take no column.
            if (0x0300...0x036F).contains(scalar.value) { continue }
            width += 1
        }
        return width
    }
}
