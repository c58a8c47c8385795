import Foundation
import SmartStackCore
import Testing

@testable import SmartStackProtocol

@Suite("Interface files")
struct InterfaceTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/SmartStackProtocol/Interfaces")

    static let names = ["org.varlink.service", "io.smartstack.Provider", "io.smartstack.Shell", "io.smartstack.Admin"]

    @Test(arguments: names)
    func parsesWithEveryItemDocumented(name: String) throws {
        let definition = try #require(VarlinkInterfaces.definition(named: name))
        let interface = try VarlinkIDL.parse(definition.text, requireDocumentation: true)
        #expect(interface.name == name)
        #expect(definition.methods == interface.methods.map(\.name))
        #expect(!definition.methods.isEmpty)
    }

    @Test(arguments: names)
    func embeddedTextIsTheFileOnDisk(name: String) throws {
        let onDisk = try String(contentsOf: Self.directory.appendingPathComponent("\(name).varlink"), encoding: .utf8)
        #expect(VarlinkInterfaces.definition(named: name)?.text == onDisk)
        #expect(onDisk.utf8.allSatisfy { $0 < 0x80 }, "keep interface files ASCII")
    }

    @Test func registryListsTheFourInterfaces() {
        #expect(VarlinkInterfaces.names == Self.names)
        #expect(VarlinkInterfaces.definition(named: "io.smartstack.Nope") == nil)
        #expect(VarlinkInterfaces.definition(named: "io.smartstack.Shell")?.isStreaming("Subscribe") == true)
        #expect(VarlinkInterfaces.definition(named: "io.smartstack.Shell")?.isStreaming("GetStack") == false)
        #expect(VarlinkInterfaces.definition(named: "io.smartstack.Provider")?.isStreaming("WatchReloads") == true)
    }

    static let pythonVarlink: Bool = {
        guard let process = try? python(["-c", "import varlink"], input: "") else { return false }
        return process.status == 0
    }()

    static func python(_ arguments: [String], input: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stdout
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let data = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// The end-to-end tests' client parses the descriptions the service serves; it must accept every file and
    /// find the same methods.
    @Test(.enabled(if: pythonVarlink, "needs python3 with varlink==31.0.0 (make deps)"), arguments: names)
    func pythonVarlinkParsesIt(name: String) throws {
        let text = try #require(VarlinkInterfaces.definition(named: name)?.text)
        let script = """
            import sys, varlink
            i = varlink.Interface(sys.stdin.read())
            print(i.name + ' ' + ','.join(n for n, m in i.members.items() if isinstance(m, varlink.scanner._Method)))
            """
        let (status, output) = try Self.python(["-c", script], input: text)
        #expect(status == 0, "\(output)")
        let methods = VarlinkInterfaces.definition(named: name)?.methods.joined(separator: ",") ?? ""
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "\(name) \(methods)")
    }

    @Test(.enabled(if: pythonVarlink, "needs python3 with varlink==31.0.0 (make deps)"))
    func pythonVarlinkRejectsWhatOurParserRejects() throws {
        for text in [
            "interface a.b\ntype T (x, )\n", "interface a.b\ntype T (x)\n", "interface a.b\r\ntype T (x: int)\n",
        ] {
            #expect(throws: VarlinkIDL.ParseError.self) { try VarlinkIDL.parse(text) }
            let (status, _) = try Self.python(
                ["-c", "import sys, varlink; varlink.Interface(sys.stdin.read())"], input: text)
            #expect(status != 0, "python accepted \(text.debugDescription)")
        }
    }

    // MARK: The files agree with Core

    static func enumValues(_ interface: String, _ type: String) -> [String] {
        guard case .enumeration(let values)? = Fixed.interface(interface)?.type(named: type)?.type else { return [] }
        return values.map(\.name)
    }

    @Test func enumsMatchCore() {
        let families = WidgetFamily.allCases.map(\.rawValue)
        #expect(Self.enumValues("io.smartstack.Provider", "Family") == families)
        #expect(Self.enumValues("io.smartstack.Shell", "Family") == families)
        #expect(Self.enumValues("io.smartstack.Provider", "ParameterType") == ParameterType.allCases.map(\.rawValue))
        #expect(Self.enumValues("io.smartstack.Shell", "Reason") == DecisionReason.allCases.map(\.rawValue))
        #expect(Self.enumValues("io.smartstack.Shell", "EngagementKind") == EngagementKind.allCases.map(\.rawValue))
        #expect(Self.enumValues("io.smartstack.Admin", "LogLevel") == LogLevel.allCases.map(\.rawValue))
        let reasons: [ReloadReason] = [.timelineEnded, .policyDate, .providerRequest, .userInteraction, .appForeground]
        #expect(Self.enumValues("io.smartstack.Provider", "ReloadReason") == reasons.map(\.rawValue))
        let statuses: [RelevanceState.Status] = [.none, .relevant, .notRelevant, .expired]
        #expect(Self.enumValues("io.smartstack.Shell", "RelevanceStatus") == statuses.map(\.rawValue))
    }

    @Test func contributionsDocumentEverySignal() throws {
        let entry = try #require(Fixed.interface("io.smartstack.Shell")?.type(named: "Entry"))
        guard case .structure(let fields) = entry.type else { throw CancellationError() }
        let documentation = fields.first { $0.name == "contributions" }?.documentation.joined(separator: " ") ?? ""
        for signal in Signal.allCases { #expect(documentation.contains(signal.rawValue), "\(signal)") }
    }

    @Test(arguments: ["io.smartstack.Provider", "io.smartstack.Shell"])
    func coreErrorsMapToDeclaredErrors(interface name: String) throws {
        let interface = try #require(Fixed.interface(name))
        let service = try #require(Fixed.interface("org.varlink.service"))
        let errors: [CoreError] = [
            .invalidParameter(parameter: "widgets[2].configuration.city", reason: "required"),
            .notFound(kind: "stack", id: "home"), .conflict(kind: "instance", id: "w", reason: "placed elsewhere"),
            .limitExceeded(limit: "maxStacks", maximum: 1_000),
        ]
        for error in errors {
            let wire = VarlinkError(error, interface: name)
            let owner = wire.name.hasPrefix("org.varlink.service.") ? service : interface
            let errorName = String(wire.name.dropFirst(owner.name.count + 1))
            #expect(wire.name.hasPrefix(owner.name + "."))
            #expect(owner.validateError(named: errorName, wire.parameters) == nil, "\(wire)")
        }
        for standard in [
            VarlinkError.interfaceNotFound("x.y"), .methodNotFound("x.y.Z"), .methodNotImplemented("x.y.Z"),
            .invalidParameter("a", reason: "b"), .expectedMore(), .permissionDenied(),
        ] {
            #expect(service.validateError(named: String(standard.name.dropFirst(20)), standard.parameters) == nil)
        }
    }
}

@Suite("Varlink IDL parser")
struct IDLParserTests {
    @Test func parsesTheWholeGrammar() throws {
        let text = """
            # Doc for the interface.
            interface org.example.more-test

            # A type.
            type Everything (
            \t# b
            \tb: bool,
            \t# i
            \ti: int,
            \t# f
            \tf: float,
            \t# s
            \ts: string,
            \t# o
            \to: object,
            \t# n
            \tn: ?int,
            \t# a
            \ta: []string,
            \t# m
            \tm: [string]float,
            \t# set
            \tset: [string](),
            \t# nested
            \tnested: ?[]?(
            \t\t# x
            \t\tx_y: int
            \t),
            \t# e
            \te: (
            \t\t# one
            \t\tone,
            \t\t# two
            \t\ttwo
            \t),
            \t# named
            \tnamed: Other
            )

            # Another.
            type Other (
            \t# a
            \ta,
            \t# b
            \tb
            )

            # M.
            method M(
            \t# arg
            \targ: Everything
            ) -> ()

            # E.
            error E ()
            """
        let interface = try VarlinkIDL.parse(text, requireDocumentation: true)
        #expect(interface.name == "org.example.more-test")
        #expect(interface.documentation == ["Doc for the interface."])
        #expect(interface.types.map(\.name) == ["Everything", "Other"])
        #expect(interface.methods.map(\.name) == ["M"])
        #expect(interface.errors.map(\.name) == ["E"])
        guard case .structure(let fields)? = interface.type(named: "Everything")?.type else {
            Issue.record("not a struct")
            return
        }
        #expect(fields.map(\.name) == ["b", "i", "f", "s", "o", "n", "a", "m", "set", "nested", "e", "named"])
        #expect(fields[5].type == .optional(.int))
        #expect(fields[7].type == .map(.float))
        #expect(fields[8].type == .stringSet)
        #expect(fields[11].type == .named("Other"))
        #expect(fields[0].documentation == ["b"])
    }

    @Test(
        arguments: [
            ("", "expected 'interface'"),
            ("interface org.example\n", nil),
            ("interfaceorg.example\n", "expected 'interface'"),
            ("interface example\n", "not a valid interface name"),
            ("interface org..example\n", "not a valid interface name"),
            ("interface org.-example\n", "not a valid interface name"),
            ("interface 2org.example\n", "not a valid interface name"),
            ("interface org2.example\n", "not a valid interface name"),
            ("interface org.example\r\n", "carriage return"),
            ("interface org.example\nmethod m() -> ()\n", "not a valid method name"),
            ("interface org.example\nmethod M()\n", "expected '->'"),
            ("interface org.example\nmethod M() -> ()\nmethod M() -> ()\n", "declared twice"),
            ("interface org.example\ntype T (a: int,)\n", "no trailing ','"),
            ("interface org.example\ntype T (a: int, a: int)\n", "appears twice"),
            ("interface org.example\ntype T (a)\n", "an enum of at least two values"),
            ("interface org.example\ntype T (a, b: int)\n", "expected ',' or ')'"),
            ("interface org.example\ntype T (a: int, b)\n", "expected ':' after 'b'"),
            ("interface org.example\ntype T (a: ??int)\n", "'??'"),
            ("interface org.example\ntype T (a: integer)\n", "'integer' is not a type"),
            ("interface org.example\ntype T (a: Missing)\n", "no type 'Missing'"),
            ("interface org.example\ntype T (_a: int)\n", "not a valid field name"),
            ("interface org.example\ntype T (a__b: int)\n", "not a valid field name"),
            ("interface org.example\ntype T (a_: int)\n", "not a valid field name"),
            ("interface org.example\ntype T (a: [int]int)\n", "expected a type"),
            ("interface org.example\ntype T (a: int\n", "expected ',' or ')'"),
            ("interface org.example\nmethod M(a, b) -> ()\n", "must be a struct"),
            ("interface org.example\nerror E (a, b)\n", "must be a struct"),
            ("interface org.example\nfunction F() -> ()\n", "expected 'type', 'method' or 'error'"),
            ("interface org.example\ntype T (a: int) junk\n", "expected 'type', 'method' or 'error'"),
        ] as [(String, String?)])
    func syntax(text: String, problem: String?) {
        do {
            _ = try VarlinkIDL.parse(text)
            #expect(problem == nil, "accepted \(text.debugDescription)")
        } catch {
            #expect(problem.map { error.message.contains($0) } == true, "\(text.debugDescription): \(error)")
        }
    }

    @Test(arguments: [
        ("interface a.b\n", "interface a.b has no '#' documentation"),
        ("# I\ninterface a.b\ntype T (a: int)\n", "type 'T' has no '#' documentation"),
        ("# I\ninterface a.b\n# T\ntype T (a: int)\n", "T.a has no '#' documentation"),
        ("# I\ninterface a.b\n# T\ntype T (\n# a\na: (x: int))\n", "T.a.x has no '#' documentation"),
        ("# I\ninterface a.b\n# T\ntype T (\n# a\na, b)\n", "T: enum value 'b' has no '#' documentation"),
        ("# I\ninterface a.b\nmethod M() -> ()\n", "method 'M' has no '#' documentation"),
        ("# I\ninterface a.b\n# M\nmethod M() -> (r: int)\n", "M(out).r has no '#' documentation"),
        ("# I\ninterface a.b\n# M\nmethod M(\n#\np: int) -> ()\n", "M(in).p has no '#' documentation"),
        ("# I\ninterface a.b\nerror E (r: int)\n", "error 'E' has no '#' documentation"),
        ("# I\ninterface a.b\n# E\nerror E (r: int)\n", "E.r has no '#' documentation"),
    ])
    func undocumentedItems(text: String, problem: String) {
        #expect(throws: Never.self) { try VarlinkIDL.parse(text) }
        do {
            _ = try VarlinkIDL.parse(text, requireDocumentation: true)
            Issue.record("accepted \(text.debugDescription)")
        } catch {
            #expect(error.message == problem)
        }
    }

    @Test func errorsHaveLineAndColumn() {
        do {
            _ = try VarlinkIDL.parse("interface a.b\n\ntype T (\n  a: bogus\n)\n")
            Issue.record("accepted")
        } catch {
            #expect(error.line == 4)
            #expect(error.column == 6)
        }
    }

    @Test func validatesValuesAgainstTypes() throws {
        let interface = try #require(Fixed.interface("io.smartstack.Shell"))
        #expect(interface.validateInput(of: "GetStack", ["stack": "home"]) == nil)
        #expect(interface.validateInput(of: "GetStack", ["stack": "home", "at": nil]) == nil)
        #expect(interface.validateInput(of: "GetStack", [:]) == "stack: required")
        #expect(interface.validateInput(of: "GetStack", ["stack": 1]) == "stack: expected string, got integer")
        #expect(interface.validateInput(of: "GetStack", ["stack": "a", "x": 1]) == "x: not declared")
        #expect(interface.validateInput(of: "Nope", [:]) == "no method io.smartstack.Shell.Nope")
        #expect(
            interface.validateInput(of: "RecordEngagement", ["stack": "s", "instance": "i", "kind": "poke"])
                == "kind: 'poke' is not one of the enum's values")
        #expect(
            interface.validateInput(
                of: "ConfigureStack", ["stack": "s", "family": "systemSmall", "widgets": [["app": "a"]]])
                == "widgets[0].instance: required")
    }
}
