/// The size and shape a widget is drawn in; every instance in a stack has the stack's family.
public enum WidgetFamily: String, CaseIterable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// A small square home-screen widget.
    case systemSmall
    /// A wide home-screen widget, twice the width of a small one.
    case systemMedium
    /// A large home-screen widget, four small ones in area.
    case systemLarge
    /// An extra-large widget, for large displays.
    case systemExtraLarge
    /// A round accessory, such as a watch complication.
    case accessoryCircular
    /// A rectangular accessory of a few lines.
    case accessoryRectangular
    /// A single line of text.
    case accessoryInline

    /// Parses a family name as written on the wire; a failure names `parameter`.
    public init(parsing text: String, parameter: String) throws(CoreError) {
        guard let family = WidgetFamily(rawValue: text) else {
            let known = WidgetFamily.allCases.map(\.rawValue).joined(separator: ", ")
            throw .invalidParameter(parameter: parameter, reason: "unknown family '\(text)'; expected one of \(known)")
        }
        self = family
    }

    /// Declaration order, from `systemSmall` to `accessoryInline`.
    public static func < (lhs: WidgetFamily, rhs: WidgetFamily) -> Bool {
        let cases = WidgetFamily.allCases
        return (cases.firstIndex(of: lhs) ?? 0) < (cases.firstIndex(of: rhs) ?? 0)
    }

    public var description: String { rawValue }
}
