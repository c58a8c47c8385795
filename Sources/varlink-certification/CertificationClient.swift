import SmartStackClient
import SmartStackProtocol

/// The certification client sequence (the reference `run_client`), through `SmartStackClient`: each call's
/// reply gives the next call's arguments; `Test10` is a `more` call, `Test11` a `oneway` one, `End` must
/// answer `all_ok`. Before it, the server's interface is read by introspection and parsed with the project's
/// IDL parser. Every step is printed; any failure throws.
enum CertificationClient {
    static let interface = "org.varlink.certification"

    static func run(path: String) async throws {
        try await VarlinkClient.withConnection(path: path) { client in
            let info = try await client.call("org.varlink.service.GetInfo")
            guard info["interfaces"]?.arrayValue?.contains(.string(interface)) == true else {
                throw CertificationFailure("GetInfo does not list \(interface): \(info)")
            }
            let description = try await client.call(
                "org.varlink.service.GetInterfaceDescription", ["interface": .string(interface)])
            guard let text = description["description"]?.stringValue else {
                throw CertificationFailure("GetInterfaceDescription gave no description: \(description)")
            }
            let parsed = try VarlinkIDL.parse(text)
            let methods = parsed.methods.map(\.name)
            print("GetInterfaceDescription: \(parsed.name), \(methods.count) methods, \(parsed.types.count) types")
            for method in CertificationService.sequence where !methods.contains(method) {
                throw CertificationFailure("the interface lacks \(method)")
            }

            let start = try await client.call("\(interface).Start")
            guard let id = start["client_id"]?.stringValue else { throw CertificationFailure("Start: \(start)") }
            print("client_id: \(id)")
            func step(_ method: String, _ parameters: JSONObject) async throws -> JSONObject {
                var all: JSONObject = ["client_id": .string(id)]
                for (key, value) in parameters { all[key] = value }
                let reply = try await client.call("\(interface).\(method)", all)
                print("\(method): \(reply)")
                return reply
            }
            func value(_ reply: JSONObject, _ key: String) throws -> JSONValue {
                guard let value = reply[key] else { throw CertificationFailure("no '\(key)' in \(reply)") }
                return value
            }
            var reply = try await step("Test01", [:])
            reply = try await step("Test02", ["bool": try value(reply, "bool")])
            reply = try await step("Test03", ["int": try value(reply, "int")])
            reply = try await step("Test04", ["float": try value(reply, "float")])
            reply = try await step("Test05", ["string": try value(reply, "string")])
            reply = try await step(
                "Test06",
                [
                    "bool": try value(reply, "bool"), "int": try value(reply, "int"),
                    "float": try value(reply, "float"),
                    "string": try value(reply, "string"),
                ])
            reply = try await step("Test07", ["struct": try value(reply, "struct")])
            reply = try await step("Test08", ["map": try value(reply, "map")])
            reply = try await step("Test09", ["set": try value(reply, "set")])
            let mytype = try value(reply, "mytype")
            var strings: [JSONValue] = []
            try await client.stream("\(interface).Test10", ["client_id": .string(id), "mytype": mytype]) { reply in
                print("Test10: \(reply)")
                strings.append(reply["string"] ?? .null)
                return true
            }
            guard strings.count == 10 else { throw CertificationFailure("Test10 gave \(strings.count) replies") }
            try await client.callOneway(
                "\(interface).Test11", ["client_id": .string(id), "last_more_replies": .array(strings)])
            print("Test11: (oneway)")
            let end = try await step("End", [:])
            guard end["all_ok"] == .bool(true) else { throw CertificationFailure("End: \(end)") }
        }
        print("Certification passed")
    }
}

struct CertificationFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
