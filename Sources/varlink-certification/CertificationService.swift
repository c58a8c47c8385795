import Foundation
import SmartStackProtocol
import SmartStackServer
import Synchronization

/// `org.varlink.certification`, the reference implementation's test interface, served through the same
/// `CallHandler` interface, listener, connections, framing and JSON as smartstackd's dispatcher.
///
/// It checks what the reference server (Python `varlink.tests.test_certification`) checks: each client goes
/// through `Start`, `Test01` … `Test11`, `End` in order, each call's whole message (method, parameters, `more`,
/// `oneway`) must be exactly the expected one, and a wrong step is a `CertificationError(wants, got)` that ends
/// the client's run. Parameters are also checked against the interface file with the project's IDL parser.
struct CertificationService: CallHandler {
    static let interfaceName = "org.varlink.certification"
    static let definition = VarlinkInterfaceDefinition(
        text: String(decoding: PackageResources.org_varlink_certification_varlink, as: UTF8.self))

    /// The methods in the order a client calls them.
    static let sequence = [
        "Start", "Test01", "Test02", "Test03", "Test04", "Test05", "Test06", "Test07", "Test08", "Test09",
        "Test10", "Test11", "End",
    ]

    let interface: VarlinkIDL.Interface
    /// Each running client's next method, by client id.
    private let clients = Clients()

    final class Clients: Sendable {
        let next = Mutex<[String: String]>([:])
    }

    init() throws {
        guard let parsed = Self.definition.parsed else {
            // Parse again to get the parser's message.
            _ = try VarlinkIDL.parse(Self.definition.text)
            throw CertificationSetupError("the certification interface did not parse")
        }
        interface = parsed
    }

    func handle(_ call: VarlinkCall, peer: PeerCredentials) async -> CallOutcome {
        switch call.interface {
        case VarlinkError.serviceInterface: return service(call)
        case Self.interfaceName: break
        default: return .failure(.interfaceNotFound(String(call.interface)))
        }
        let method = String(call.methodName)
        guard interface.method(named: method) != nil else { return .failure(.methodNotFound(call.method)) }
        if let problem = interface.validateInput(of: method, call.parameters) {
            let parameter = problem.split(separator: ":").first.map(String.init) ?? problem
            return .failure(.invalidParameter(parameter, reason: problem))
        }
        do {
            return try certify(method, call)
        } catch {
            return .failure(error)
        }
    }

    // MARK: org.varlink.service

    private func service(_ call: VarlinkCall) -> CallOutcome {
        switch call.methodName {
        case "GetInfo":
            return .reply([
                "vendor": "smartstackd", "product": "varlink-certification", "version": "1",
                "url": "https://varlink.org/",
                "interfaces": .array([.string(VarlinkError.serviceInterface), .string(Self.interfaceName)]),
            ])
        case "GetInterfaceDescription":
            guard let name = call.parameters["interface"]?.stringValue else {
                return .failure(.invalidParameter("interface", reason: "a string is required"))
            }
            if name == Self.interfaceName { return .reply(["description": .string(Self.definition.text)]) }
            if name == VarlinkError.serviceInterface, let service = VarlinkInterfaces.definition(named: name) {
                return .reply(["description": .string(service.text)])
            }
            return .failure(.interfaceNotFound(name))
        default:
            return .failure(.methodNotFound(call.method))
        }
    }

    // MARK: The certification sequence

    private func certify(_ method: String, _ call: VarlinkCall) throws(VarlinkError) -> CallOutcome {
        if method == "Start" {
            let id = Self.newClientID()
            clients.next.withLock { $0[id] = "Test01" }
            try expect(id, call, ["method": .string(call.method)])
            return .reply(["client_id": .string(id)])
        }
        guard let id = call.parameters["client_id"]?.stringValue else {
            throw VarlinkError(name: "\(Self.interfaceName).ClientIdError")
        }
        try advance(id, from: method)
        let message: JSONObject = ["method": .string(call.method), "parameters": .object(call.parameters)]
        func wants(_ parameters: JSONObject, more: Bool = false, oneway: Bool = false) -> JSONObject {
            var expected = message
            var all: JSONObject = ["client_id": .string(id)]
            for (key, value) in parameters { all[key] = value }
            expected["parameters"] = .object(all)
            if more { expected["more"] = true }
            if oneway { expected["oneway"] = true }
            return expected
        }
        switch method {
        case "Test01":
            try expect(id, call, wants([:]))
            return .reply(["bool": true])
        case "Test02":
            try expect(id, call, wants(["bool": true]))
            return .reply(["int": 1])
        case "Test03":
            try expect(id, call, wants(["int": 1]))
            return .reply(["float": 1.0])
        case "Test04":
            try expect(id, call, wants(["float": 1.0]))
            return .reply(["string": "ping"])
        case "Test05":
            try expect(id, call, wants(["string": "ping"]))
            return .reply(Self.mixed)
        case "Test06":
            try expect(id, call, wants(Self.mixed))
            return .reply(["struct": .object(Self.mixed)])
        case "Test07":
            try expect(id, call, wants(["struct": .object(Self.mixed)]))
            return .reply(["map": .object(Self.map)])
        case "Test08":
            try expect(id, call, wants(["map": .object(Self.map)]))
            return .reply(["set": .object(Self.set)])
        case "Test09":
            try expect(id, call, wants(["set": .object(Self.set)]))
            return .reply(["mytype": .object(Self.myType)])
        case "Test10":
            // The nullable members may be sent as null or left out.
            var got = call
            if case .object(var mytype)? = got.parameters["mytype"] {
                for key in ["nullable", "nullable_array_struct"] where mytype[key]?.isNull == true {
                    _ = mytype.removeValue(forKey: key)
                }
                got.parameters["mytype"] = .object(mytype)
            }
            var expected = Self.myType
            _ = expected.removeValue(forKey: "nullable")
            _ = expected.removeValue(forKey: "nullable_array_struct")
            try expect(id, got, wants(["mytype": .object(expected)], more: true))
            return .boundedStream { send in
                for number in 1..<10 { try await send(["string": .string("Reply number \(number)")]) }
                return .reply(["string": "Reply number 10"])
            }
        case "Test11":
            let replies = (1...10).map { JSONValue.string("Reply number \($0)") }
            try expect(id, call, wants(["last_more_replies": .array(replies)], oneway: true))
            return .reply([:])
        default:  // End
            try expect(id, call, wants([:]))
            _ = clients.next.withLock { $0.removeValue(forKey: id) }
            return .reply(["all_ok": true])
        }
    }

    /// Checks that `method` is the client's next step and moves it on.
    private func advance(_ id: String, from method: String) throws(VarlinkError) {
        let expected: String? = clients.next.withLock { next in
            guard let expected = next[id] else { return nil }
            if expected == method, let index = Self.sequence.firstIndex(of: method) {
                next[id] = index + 1 < Self.sequence.count ? Self.sequence[index + 1] : "Start"
            }
            return expected
        }
        guard let expected else {
            throw Self.certificationError(
                wants: ["method": .string("\(Self.interfaceName).Start+++")],
                got: ["method": .string("\(Self.interfaceName).\(method)")])
        }
        guard expected == method else {
            throw Self.certificationError(
                wants: ["method": .string("\(Self.interfaceName).\(expected)")],
                got: ["method": .string("\(Self.interfaceName).\(method)")])
        }
    }

    /// Compares the whole message with what was expected (numbers by value: `1` and `1.0` are the same); a
    /// difference ends the client's run.
    private func expect(_ id: String, _ call: VarlinkCall, _ expected: JSONObject) throws(VarlinkError) {
        var got: JSONObject = ["method": .string(call.method)]
        if !call.parameters.isEmpty { got["parameters"] = .object(call.parameters) }
        if call.more { got["more"] = true }
        if call.oneway { got["oneway"] = true }
        guard !Self.same(.object(got), .object(expected)) else { return }
        _ = clients.next.withLock { $0.removeValue(forKey: id) }
        throw Self.certificationError(wants: expected, got: got)
    }

    static func same(_ left: JSONValue, _ right: JSONValue) -> Bool {
        switch (left, right) {
        case (.int, .double), (.double, .int):
            return left.doubleValue == right.doubleValue
        case (.array(let first), .array(let second)):
            return first.count == second.count && zip(first, second).allSatisfy { same($0, $1) }
        case (.object(let first), .object(let second)):
            return first.count == second.count
                && first.allSatisfy { member in second[member.key].map { same(member.value, $0) } ?? false }
        default:
            return left == right
        }
    }

    private static func certificationError(wants: JSONObject, got: JSONObject) -> VarlinkError {
        VarlinkError(
            name: "\(interfaceName).CertificationError", parameters: ["wants": .object(wants), "got": .object(got)])
    }

    private static func newClientID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
        }.joined()
    }

    // MARK: The values the sequence passes along

    static let mixed: JSONObject = ["bool": false, "int": 2, "float": .double(Double.pi), "string": "a lot of string"]
    static let map: JSONObject = ["foo": "Foo", "bar": "Bar"]
    static let set: JSONObject = ["one": .object([:]), "two": .object([:]), "three": .object([:])]
    static let myType: JSONObject = [
        "object": .object([
            "method": "org.varlink.certification.Test09", "parameters": .object(["map": .object(map)]),
        ]),
        "enum": "two",
        "struct": .object(["first": 1, "second": "2"]),
        "array": ["one", "two", "three"],
        "dictionary": .object(map),
        "stringset": .object(set),
        "nullable": nil,
        "nullable_array_struct": nil,
        "interface": .object([
            "foo": [nil, .object(["foo": "foo", "bar": "bar"]), nil, .object(["one": "foo", "two": "bar"])],
            "anon": .object(["foo": true, "bar": false]),
        ]),
    ]
}

struct CertificationSetupError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
