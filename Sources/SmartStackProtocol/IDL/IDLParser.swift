/// The recursive-descent parser behind `VarlinkIDL.parse`.
struct IDLParser {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    /// An interface with the source position of every member, for checks after parsing.
    struct Parsed {
        var interface: VarlinkIDL.Interface
        var positions: [String: (line: Int, column: Int)]
    }

    init(text: String) {
        bytes = Array(text.utf8)
    }

    // MARK: Grammar

    mutating func parseInterface() throws(VarlinkIDL.ParseError) -> Parsed {
        let documentation = try trivia()
        guard word() == "interface" else { throw fail("expected 'interface'") }
        try requireSpace()
        _ = try trivia()
        let nameStart = index
        while index < bytes.count,
            VarlinkNames.isAlpha(bytes[index]) || VarlinkNames.isDigit(bytes[index])
                || bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: "-")
        {
            index += 1
        }
        let name = String(decoding: bytes[nameStart..<index], as: UTF8.self)
        guard VarlinkNames.isInterfaceName(bytes[nameStart..<index]) else {
            throw fail("'\(name)' is not a valid interface name", at: nameStart)
        }
        var interface = VarlinkIDL.Interface(
            name: name, documentation: documentation, types: [], methods: [], errors: [])
        var positions: [String: (line: Int, column: Int)] = [:]
        while true {
            let memberDocumentation = try trivia()
            guard index < bytes.count else { break }
            let keywordStart = index
            let keyword = word()
            guard keyword == "type" || keyword == "method" || keyword == "error" else {
                throw fail("expected 'type', 'method' or 'error'", at: keywordStart)
            }
            try requireSpace()
            _ = try trivia()
            let memberStart = index
            let memberName = word()
            guard VarlinkNames.isMemberName(memberName.utf8) else {
                throw fail(
                    "'\(memberName)' is not a valid \(keyword) name (expected [A-Z][A-Za-z0-9]*)", at: memberStart)
            }
            guard positions[memberName] == nil else { throw fail("'\(memberName)' is declared twice", at: memberStart) }
            positions[memberName] = position(of: memberStart)
            switch keyword {
            case "type":
                let type = try parseStructOrEnum()
                interface.types.append(.init(name: memberName, type: type, documentation: memberDocumentation))
            case "method":
                let input = try parseStruct(role: "a method's parameters")
                _ = try trivia()
                guard literal("->") else { throw fail("expected '->'") }
                let output = try parseStruct(role: "a method's reply")
                interface.methods.append(
                    .init(name: memberName, input: input, output: output, documentation: memberDocumentation))
            default:
                let fields = try parseStruct(role: "an error")
                interface.errors.append(.init(name: memberName, fields: fields, documentation: memberDocumentation))
            }
        }
        return Parsed(interface: interface, positions: positions)
    }

    /// A struct; `role` names what it is for errors (enums are not allowed there).
    private mutating func parseStruct(role: String) throws(VarlinkIDL.ParseError) -> [VarlinkIDL.Field] {
        _ = try trivia()
        let start = index
        guard case .structure(let fields) = try parseStructOrEnum() else {
            throw fail("\(role) must be a struct, not an enum", at: start)
        }
        return fields
    }

    /// `( … )` after optional trivia: a struct (`name: type, …`) or an enum (`a, b, …`), decided by the first item.
    private mutating func parseStructOrEnum() throws(VarlinkIDL.ParseError) -> VarlinkIDL.TypeExpression {
        _ = try trivia()
        guard literal("(") else { throw fail("expected '('") }
        var fields: [VarlinkIDL.Field] = []
        var values: [VarlinkIDL.EnumValue] = []
        var isEnum: Bool?
        var firstItem = true
        while true {
            let documentation = try trivia()
            if firstItem, literal(")") { return .structure([]) }
            let nameStart = index
            let name = word()
            guard !name.isEmpty else {
                throw fail(firstItem ? "expected a field name or ')'" : "expected a field name (no trailing ',')")
            }
            guard VarlinkNames.isFieldName(name.utf8) else {
                throw fail("'\(name)' is not a valid field name (expected [A-Za-z]([_]?[A-Za-z0-9])*)", at: nameStart)
            }
            let duplicate = fields.contains { $0.name == name } || values.contains { $0.name == name }
            guard !duplicate else { throw fail("'\(name)' appears twice", at: nameStart) }
            _ = try trivia()
            if isEnum == nil {
                if peek() == UInt8(ascii: ":") {
                    isEnum = false
                } else if peek() == UInt8(ascii: ",") {
                    isEnum = true
                } else {
                    throw fail("expected ':' (a struct field) or ',' (an enum of at least two values) after '\(name)'")
                }
            }
            if isEnum == true {
                values.append(.init(name: name, documentation: documentation))
            } else {
                guard literal(":") else { throw fail("expected ':' after '\(name)'") }
                let type = try parseType()
                fields.append(.init(name: name, type: type, documentation: documentation))
            }
            _ = try trivia()
            firstItem = false
            if literal(",") { continue }
            guard literal(")") else { throw fail("expected ',' or ')'") }
            return isEnum == true ? .enumeration(values) : .structure(fields)
        }
    }

    private mutating func parseType(afterOptional: Bool = false) throws(VarlinkIDL.ParseError)
        -> VarlinkIDL.TypeExpression
    {
        _ = try trivia()
        let start = index
        if literal("?") {
            guard !afterOptional else { throw fail("'??' is not a type", at: start) }
            return .optional(try parseType(afterOptional: true))
        }
        if literal("[string]()") { return .stringSet }
        if literal("[string]") { return .map(try parseType()) }
        if literal("[]") { return .array(try parseType()) }
        if peek() == UInt8(ascii: "(") { return try parseStructOrEnum() }
        let name = word()
        switch name {
        case "bool": return .bool
        case "int": return .int
        case "float": return .float
        case "string": return .string
        case "object": return .object
        case "": throw fail("expected a type")
        default:
            guard VarlinkNames.isMemberName(name.utf8) else { throw fail("'\(name)' is not a type", at: start) }
            return .named(name)
        }
    }

    // MARK: Checks after parsing

    func check(_ parsed: Parsed, requireDocumentation: Bool) throws(VarlinkIDL.ParseError) {
        let interface = parsed.interface
        func failing(_ member: String, _ message: String) -> VarlinkIDL.ParseError {
            let position = parsed.positions[member] ?? (1, 1)
            return VarlinkIDL.ParseError(line: position.line, column: position.column, message: message)
        }
        func checkType(_ type: VarlinkIDL.TypeExpression, member: String, path: String) throws(VarlinkIDL.ParseError) {
            switch type {
            case .named(let name):
                guard interface.type(named: name) != nil else {
                    throw failing(member, "\(path): no type '\(name)' in \(interface.name)")
                }
            case .optional(let inner), .array(let inner), .map(let inner):
                try checkType(inner, member: member, path: path)
            case .structure(let fields):
                try checkFields(fields, member: member, path: path)
            case .enumeration(let values):
                if requireDocumentation, let value = values.first(where: { !Self.isDocumented($0.documentation) }) {
                    throw failing(member, "\(path): enum value '\(value.name)' has no '#' documentation")
                }
            case .bool, .int, .float, .string, .object, .stringSet:
                break
            }
        }
        func checkFields(_ fields: [VarlinkIDL.Field], member: String, path: String) throws(VarlinkIDL.ParseError) {
            for field in fields {
                let fieldPath = "\(path).\(field.name)"
                if requireDocumentation, !Self.isDocumented(field.documentation) {
                    throw failing(member, "\(fieldPath) has no '#' documentation")
                }
                try checkType(field.type, member: member, path: fieldPath)
            }
        }
        func checkDocumented(_ documentation: [String], _ member: String, _ what: String) throws(VarlinkIDL.ParseError)
        {
            if requireDocumentation, !Self.isDocumented(documentation) {
                throw failing(member, "\(what) '\(member)' has no '#' documentation")
            }
        }
        if requireDocumentation, !Self.isDocumented(interface.documentation) {
            throw VarlinkIDL.ParseError(
                line: 1, column: 1, message: "interface \(interface.name) has no '#' documentation")
        }
        for type in interface.types {
            try checkDocumented(type.documentation, type.name, "type")
            try checkType(type.type, member: type.name, path: type.name)
        }
        for method in interface.methods {
            try checkDocumented(method.documentation, method.name, "method")
            try checkFields(method.input, member: method.name, path: "\(method.name)(in)")
            try checkFields(method.output, member: method.name, path: "\(method.name)(out)")
        }
        for error in interface.errors {
            try checkDocumented(error.documentation, error.name, "error")
            try checkFields(error.fields, member: error.name, path: error.name)
        }
    }

    private static func isDocumented(_ lines: [String]) -> Bool {
        lines.contains { line in line.contains { !$0.isWhitespace } }
    }

    // MARK: Lexing

    /// Skips whitespace and comments, returning the comments' text (for documentation).
    private mutating func trivia() throws(VarlinkIDL.ParseError) -> [String] {
        var comments: [String] = []
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"):
                index += 1
            case UInt8(ascii: "\n"):
                index += 1
                line += 1
                lineStart = index
            case UInt8(ascii: "\r"):
                throw fail("carriage return: interface files must use LF line ends")
            case UInt8(ascii: "#"):
                var end = index + 1
                while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
                var text = bytes[(index + 1)..<end]
                if text.first == UInt8(ascii: " ") { text = text.dropFirst() }
                if text.contains(UInt8(ascii: "\r")) {
                    throw fail("carriage return: interface files must use LF line ends")
                }
                comments.append(String(decoding: text, as: UTF8.self))
                index = end
            default:
                return comments
            }
        }
        return comments
    }

    private mutating func requireSpace() throws(VarlinkIDL.ParseError) {
        guard let byte = peek(),
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\n")
                || byte == UInt8(ascii: "#")
        else { throw fail("expected whitespace") }
    }

    /// A run of `[A-Za-z0-9_]`, possibly empty.
    private mutating func word() -> String {
        let start = index
        while index < bytes.count,
            VarlinkNames.isAlpha(bytes[index]) || VarlinkNames.isDigit(bytes[index])
                || bytes[index] == UInt8(ascii: "_")
        {
            index += 1
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func literal(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let matches = text.withUTF8Buffer { expected in (0..<count).allSatisfy { bytes[index + $0] == expected[$0] } }
        if matches { index += count }
        return matches
    }

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private func position(of offset: Int) -> (line: Int, column: Int) {
        var line = 1
        var start = 0
        for position in 0..<offset where bytes[position] == UInt8(ascii: "\n") {
            line += 1
            start = position + 1
        }
        return (line, offset - start + 1)
    }

    private func fail(_ message: String, at offset: Int? = nil) -> VarlinkIDL.ParseError {
        let (line, column) = offset.map(position(of:)) ?? (self.line, index - lineStart + 1)
        return VarlinkIDL.ParseError(line: line, column: column, message: message)
    }
}
