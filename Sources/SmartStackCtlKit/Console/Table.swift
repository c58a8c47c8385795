/// An aligned text table, as `systemctl list-units` prints them: upper-case header, two spaces between
/// columns, numbers aligned right, the last column not padded.
public struct Table: Sendable {
    /// How a column is aligned.
    public enum Alignment: Sendable {
        case left, right
    }

    /// One column: its header and alignment.
    public struct Column: Sendable {
        public var header: String
        public var alignment: Alignment

        public init(_ header: String, _ alignment: Alignment = .left) {
            self.header = header
            self.alignment = alignment
        }
    }

    public var columns: [Column]
    public var rows: [[String]] = []

    public init(_ columns: [Column]) {
        self.columns = columns
    }

    /// A table with left-aligned columns named `headers`.
    public init(headers: [String]) {
        self.columns = headers.map { Column($0) }
    }

    /// Adds a row; missing cells are empty, extra cells are dropped.
    public mutating func append(_ cells: [String]) {
        var row = Array(cells.prefix(columns.count))
        while row.count < columns.count { row.append("") }
        rows.append(row)
    }

    /// The table as lines joined by newlines (no trailing newline); the header is bold when `style` is on.
    public func render(style: Style = .plain, header: Bool = true) -> String {
        var widths = columns.map { Style.visibleWidth($0.header.uppercased()) }
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], Style.visibleWidth(cell)) }
        }
        func line(_ cells: [String]) -> String {
            var parts: [String] = []
            for (index, cell) in cells.enumerated() {
                let padding = String(repeating: " ", count: widths[index] - Style.visibleWidth(cell))
                let last = index == cells.count - 1
                switch columns[index].alignment {
                case .left: parts.append(last ? cell : cell + padding)
                case .right: parts.append(padding + cell)
                }
            }
            var text = parts.joined(separator: "  ")
            while text.hasSuffix(" ") { text.removeLast() }
            return text
        }
        var lines: [String] = []
        if header { lines.append(style.bold(line(columns.map { $0.header.uppercased() }))) }
        lines += rows.map(line)
        return lines.joined(separator: "\n")
    }
}
