import Foundation
import Logging
import SmartStackClient
import SmartStackCore
import SmartStackProtocol
import SmartStackStore
import Testing

@testable import SmartStackServer

/// The service's own parts in one process, over a real Unix socket: `VarlinkListener` accepting, `ServiceDispatcher`
/// answering, `EngineHost` with an in-memory log, and `VarlinkClient` calling: calls, typed errors, pipelined calls
/// in order, a stream, and the listener stopping.
@Suite("Service over a socket")
struct ServiceOverSocketTests {
    /// A started service in a fresh directory; `body` gets its socket path; the service stops afterwards.
    static func withService(_ body: (String) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("smartstack-sock-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = directory + "/sock"
        let service = try await ServiceAssembly.make(
            configuration: ServerConfiguration(), target: .path(socket), stateDirectory: directory + "/state",
            isSystem: false, levels: LogLevelControl(.info), logger: ServerFixture.logger, clock: ManualClock(),
            announce: { _ in })
        let running = Task { try await service.listener.run() }
        defer { running.cancel() }
        for _ in 0..<2_000 where !FileManager.default.fileExists(atPath: socket) {
            try await Task.sleep(for: .milliseconds(5))
        }
        try await body(socket)
        running.cancel()
        _ = await running.result
        await service.host.stop()
    }

    static func setUp(_ client: inout VarlinkClient) async throws {
        for app in ["mail", "news"] {
            _ = try await client.call(
                "io.smartstack.Provider.RegisterWidget",
                ["app": .string("com.example.\(app)"), "kind": "main", "families": ["systemMedium"]])
        }
        _ = try await client.call(
            "io.smartstack.Shell.ConfigureStack",
            [
                "stack": "home", "family": "systemMedium",
                "widgets": [
                    ["instance": "mail", "app": "com.example.mail", "kind": "main"],
                    ["instance": "news", "app": "com.example.news", "kind": "main"],
                ],
            ])
    }

    static func order(_ reply: JSONObject) -> [String] {
        guard case .array(let entries)? = reply["order"] else { return [] }
        return entries.compactMap { entry in
            guard case .object(let object) = entry, case .string(let instance)? = object["instance"] else { return nil }
            return instance
        }
    }

    @Test("calls are answered through the listener and the dispatcher; errors are typed and name what was wrong")
    func callsAndErrors() async throws {
        try await Self.withService { socket in
            try await VarlinkClient.withConnection(path: socket) { client in
                let info = try await client.call("org.varlink.service.GetInfo")
                #expect(info["product"] == .string("smartstackd"))
                try await Self.setUp(&client)
                let stack = try await client.call("io.smartstack.Shell.GetStack", ["stack": "home"])
                #expect(Set(Self.order(stack)) == ["mail", "news"])
                let donated = try await client.call(
                    "io.smartstack.Provider.Donate", ["app": "com.example.news", "intent": "open", "id": "d1"])
                #expect(donated["id"] == .string("d1"))
                do throws(VarlinkClientError) {
                    _ = try await client.call("io.smartstack.Shell.GetStack", ["stack": "nope"])
                    Issue.record("an unknown stack was answered")
                } catch .remote(let error) {
                    #expect(error.name == "io.smartstack.Shell.NotFound")
                }
                do throws(VarlinkClientError) {
                    _ = try await client.call(
                        "io.smartstack.Provider.Donate", ["app": "com.example.news", "intnt": "x"])
                    Issue.record("a misspelt parameter was taken")
                } catch .remote(let error) {
                    #expect(error.name == "org.varlink.service.InvalidParameter")
                    #expect(error.parameters["parameter"] == .string("intnt"))
                }
                do throws(VarlinkClientError) {
                    _ = try await client.call("io.smartstack.Shell.Nope")
                    Issue.record("an unknown method was answered")
                } catch .remote(let error) {
                    #expect(error.name == "org.varlink.service.MethodNotFound")
                }
                // The connection goes on after errors.
                #expect(
                    Set(Self.order(try await client.call("io.smartstack.Shell.GetStack", ["stack": "home"]))) == [
                        "mail", "news",
                    ])
            }
        }
    }

    @Test("pipelined calls of both kinds come back in call order, errors in their place")
    func pipelined() async throws {
        try await Self.withService { socket in
            try await VarlinkClient.withConnection(path: socket) { client in
                try await Self.setUp(&client)
                var answers: [String] = []
                try await client.pipeline(count: 300, window: 64) { index in
                    switch index % 3 {
                    case 0: ("io.smartstack.Shell.GetStack", ["stack": "home"])
                    case 1:
                        (
                            "io.smartstack.Provider.Donate",
                            ["app": "com.example.mail", "intent": "open", "id": .string("p\(index)")]
                        )
                    default: ("io.smartstack.Shell.GetStack", ["stack": "missing"])
                    }
                } reply: { index, result in
                    switch result {
                    case .success(let reply):
                        answers.append(reply["id"].map { _ in "donated" } ?? "stack")
                    case .failure(let error):
                        answers.append(error.name)
                    }
                    _ = index
                }
                #expect(answers == (0..<300).map { ["stack", "donated", "io.smartstack.Shell.NotFound"][$0 % 3] })
                let listed = try await client.call(
                    "io.smartstack.Provider.ListDonations", ["app": "com.example.mail", "limit": 1_000])
                guard case .array(let donations)? = listed["donations"] else { Issue.record("no donations"); return }
                #expect(donations.count == 100)
            }
        }
    }

    @Test("a subscription streams the current order first, then a change another connection makes")
    func subscription() async throws {
        try await Self.withService { socket in
            try await VarlinkClient.withConnection(path: socket) { client in try await Self.setUp(&client) }
            var orders: [[String]] = []
            try await VarlinkClient.withConnection(path: socket) { subscriber in
                try await subscriber.stream("io.smartstack.Shell.Subscribe", ["stacks": ["home"]]) { reply in
                    orders.append(Self.order(reply))
                    if orders.count == 1 {
                        // Reordered by hand from another connection (no Smart Rotate: the user's order is kept).
                        try await VarlinkClient.withConnection(path: socket) { shell in
                            _ = try await shell.call(
                                "io.smartstack.Shell.ConfigureStack",
                                [
                                    "stack": "home", "family": "systemMedium", "smartRotate": false,
                                    "widgets": [
                                        ["instance": "news", "app": "com.example.news", "kind": "main"],
                                        ["instance": "mail", "app": "com.example.mail", "kind": "main"],
                                    ],
                                ])
                        }
                    }
                    return orders.count < 2
                }
            }
            #expect(orders.count == 2)
            #expect(orders.last == ["news", "mail"])
        }
    }

    /// The README's example, typed end to end: requests made in Swift, sent by `call(_:)` and `stream(_:_:)`, read
    /// by the service's decoders; a request the service would refuse is refused where it is made, with its error.
    @Test("typed requests over the socket: donate, get a stack, follow it")
    func typedCalls() async throws {
        try await Self.withService { socket in
            let mail = try AppID("com.example.mail")
            let news = try AppID("com.example.news")
            let home = try StackID("home")
            let order = try await VarlinkClient.withConnection(path: socket) { client in
                for app in [mail, news] {
                    let kind = try WidgetKind(
                        id: try WidgetKindID(app: app, kind: "main"), displayName: "Main", families: [.systemMedium])
                    _ = try await client.call(RegisterWidgetRequest(kind: kind))
                }
                _ = try await client.call(
                    ConfigureStackRequest(
                        stack: home, family: .systemMedium,
                        widgets: [
                            WirePlacement(
                                instance: try InstanceID("mail"), kind: try WidgetKindID(app: mail, kind: "main")),
                            WirePlacement(
                                instance: try InstanceID("news"), kind: try WidgetKindID(app: news, kind: "main")),
                        ]))
                let donated = try await client.call(try DonateRequest(app: news, intent: "open", id: "d1"))
                #expect(donated["id"] == .string("d1"))
                let listed = try await client.call(ListDonationsRequest(app: news))
                #expect(listed["donations"]?.arrayValue?.count == 1)
                return try await client.call(GetStackRequest(stack: home))
            }
            #expect(Set(Self.order(order)) == ["mail", "news"])
            var streamed: [[String]] = []
            try await VarlinkClient.withConnection(path: socket) { client in
                try await client.stream(SubscribeRequest(stacks: [home])) { reply in
                    streamed.append(Self.order(reply))
                    return false
                }
            }
            #expect(streamed.count == 1 && Set(streamed[0]) == ["mail", "news"])
            let refused = Self.varlinkError { () throws(VarlinkError) in _ = try DonateRequest(app: news, intent: "") }
            #expect(refused?.name == "org.varlink.service.InvalidParameter")
        }
    }

    static func varlinkError(_ body: () throws(VarlinkError) -> Void) -> VarlinkError? {
        do throws(VarlinkError) {
            try body()
            return nil
        } catch {
            return error
        }
    }
}
