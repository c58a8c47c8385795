import ArgumentParser
import SmartStackCore
import SmartStackCtlKit
import SmartStackProtocol

// io.smartstack.Admin, org.varlink.service, and `call` for any method.

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the service's statistics (GetStatistics).", aliases: ["status"])
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let reply = try await global.call { GetStatisticsRequest() }
        global.emit(reply) { StatisticsRenderer.render(reply, style: global.style) }
    }
}

struct Owners: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show which uid claimed each app (ListAppOwners), or give a claim back (owners release).",
        discussion: """
            In system mode an app no app.ID line assigns belongs to the first uid whose provider call for it \
            succeeds. 'owners release APP' drops that claim (ReleaseApp): the next uid to act for the app claims it.
            """,
        subcommands: [List.self, Release.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the apps' claims (ListAppOwners).")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            // Every page: the claims after the last one listed, until a reply says no more follow.
            var reply = try await global.call { ListAppOwnersRequest() }
            var all = reply.objects("owners")
            while let next = reply.string("next"), let after = try? AppID(next) {
                reply = try await global.call { ListAppOwnersRequest(after: after) }
                all += reply.objects("owners")
            }
            reply["owners"] = .array(all.map { .object($0) })
            reply["next"] = nil
            global.emit(reply) {
                let owners = reply.objects("owners")
                guard !owners.isEmpty else { return "(no app is claimed)" }
                return KeyValueRenderer.render(
                    owners.map { ($0.string("app") ?? "?", "uid \($0.int("uid").map(String.init) ?? "?")") },
                    style: global.style)
            }
        }
    }

    struct Release: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Drop an app's claim (ReleaseApp).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The app id.") var app: String

        func run() async throws {
            let reply = try await global.call { () throws(VarlinkError) in ReleaseAppRequest(app: try Typed.app(app)) }
            global.emit(reply) {
                reply.int("uid").map { "released \(app) (claimed by uid \($0))" } ?? "\(app) was not claimed"
            }
        }
    }
}

struct LogLevel: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log-level", abstract: "Show or set the service's log level (SetLogLevel).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "trace, debug, info, notice, warning, error or critical; shows the current level when omitted.")
    var level: String?

    func validate() throws {
        let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
        if let level, !levels.contains(level) {
            throw ValidationError("the level must be one of \(levels.joined(separator: ", ")), got '\(level)'")
        }
    }

    func run() async throws {
        if let level {
            _ = try await global.call(SetLogLevelRequest.self, ["level": .string(level)])
            // The reply is empty: `--json` prints the level set, as it prints the level read.
            global.emit(["level": .string(level)]) { "log level set to \(level)" }
        } else {
            let statistics = try await global.call { GetStatisticsRequest() }
            let reply: JSONObject = ["level": statistics["logLevel"] ?? .null]
            global.emit(reply) { statistics.string("logLevel") ?? "unknown" }
        }
    }
}

struct Info: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the service's vendor, version and interfaces (org.varlink.service.GetInfo).")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let reply = try await global.call { GetInfoRequest() }
        global.emit(reply) { InfoRenderer.render(reply, address: global.addressText(), style: global.style) }
    }
}

struct Introspect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print an interface's definition as the service serves it (GetInterfaceDescription).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The interface, such as io.smartstack.Shell; every interface when omitted.")
    var interface: String?

    func run() async throws {
        let chosen = interface
        let descriptions: [(String, String)] = try await global.withClient { client in
            let names: [String]
            if let chosen {
                names = [chosen]
            } else {
                names =
                    try await client.call(GetInfoRequest())["interfaces"]?.arrayValue?
                    .compactMap(\.stringValue) ?? []
            }
            var result: [(String, String)] = []
            for name in names {
                let reply = try await client.call(GetInterfaceDescriptionRequest(interface: name))
                result.append((name, reply.string("description") ?? ""))
            }
            return result
        }
        if global.json {
            var object = JSONObject()
            for (name, text) in descriptions { object[name] = .string(text) }
            Output.line(
                JSONText.compact(
                    chosen == nil ? ["interfaces": .object(object)] : ["description": object[chosen ?? ""] ?? .null]))
        } else {
            Output.line(descriptions.map(\.1).joined(separator: "\n"))
        }
    }
}

/// Any method, with its parameters as JSON: the escape hatch that covers every method of the interfaces.
struct Call: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Call any method with JSON parameters and print the reply as JSON.",
        discussion: """
            Example: smartstackctl call io.smartstack.Shell.GetStack '{"stack": "home"}'
            Streaming methods (Subscribe, WatchReloads) need --more; --count stops after that many replies. \
            A typed error is printed as JSON on standard error, with exit status 2.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The fully qualified method, such as io.smartstack.Shell.GetStack.") var method: String
    @Argument(help: "The parameters as a JSON object.") var parameters: String = "{}"
    @Flag(help: "Call a streaming method and print each reply.") var more = false
    @Option(help: "With --more: stop after this many replies (1 or more).") var count: Int?
    @Flag(help: "Send the call with oneway: no reply is read.") var oneway = false

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be 1 or more, got \(count)") }
    }

    func run() async throws {
        let object = try Arguments.object(parameters, option: "the parameters")
        let method = self.method
        guard VarlinkCall.isQualifiedMethodName(method) else {
            throw ValidationError(
                "'\(method)' is not an interface-qualified method name (interface.Method, such as "
                    + "io.smartstack.Shell.GetStack)")
        }
        do {
            if more {
                let limit = count
                var seen = 0
                try await global.withClient { client in
                    try await client.stream(method, object) { reply in
                        seen += 1
                        Output.line(JSONText.compact(reply))
                        return limit.map { seen < $0 } ?? true
                    }
                }
            } else if oneway {
                try await global.withClient { client in try await client.callOneway(method, object) }
            } else {
                Output.line(
                    JSONText.compact(try await global.withClient { client in try await client.call(method, object) }))
            }
        } catch let failure as CtlFailure {
            // `call` speaks JSON on both streams: a typed error is its JSON document.
            if case .service = failure, let document = failure.jsonDocument {
                Output.error(JSONText.compact(document))
                throw ExitCode(ExitStatus.serviceError.rawValue)
            }
            throw failure
        }
    }
}
