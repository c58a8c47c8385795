import ArgumentParser
import SmartStackClient
import SmartStackProtocol

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the service's statistics.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let reply = try await global.call("io.smartstack.Admin.GetStatistics")
        if global.json { return global.printJSON(reply) }
        print(Table.render(rows: reply.keys.map { [$0, reply[$0].map(Table.text) ?? ""] }, header: ["statistic", "value"]))
    }
}

struct Stacks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the stacks with their top widget.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let reply = try await global.call("io.smartstack.Shell.ListStacks")
        if global.json { return global.printJSON(reply) }
        let stacks = reply["stacks"]?.arrayValue ?? []
        let columns = ["stack", "family", "widgets", "revision", "top"]
        let rows = stacks.compactMap { $0.objectValue }.map { stack in
            columns.map { column -> String in
                if column == "widgets", let widgets = stack[column]?.arrayValue { return String(widgets.count) }
                return stack[column].map(Table.text) ?? ""
            }
        }
        print(Table.render(rows: rows, header: columns))
    }
}

struct StackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stack", abstract: "Show one stack.", subcommands: [Show.self])

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a stack's order, scores and reasons.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The stack id.") var stack: String
        @Option(help: "The time to evaluate at (RFC 3339); now when omitted.") var at: String?

        func run() async throws {
            var parameters: JSONObject = ["stack": .string(stack)]
            if let at { parameters["at"] = .string(at) }
            let reply = try await global.call("io.smartstack.Shell.GetStack", parameters)
            if global.json { return global.printJSON(reply) }
            print(OrderTable.render(reply))
        }
    }
}

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follow stacks: print the current order, then every change (Ctrl-C to stop).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The stacks to follow (every stack when none).") var stacks: [String] = []
    @Option(help: "Stop after this many replies.") var count: Int?

    func run() async throws {
        var parameters = JSONObject()
        if !stacks.isEmpty { parameters["stacks"] = .array(stacks.map { .string($0) }) }
        let json = global.json
        let global = self.global
        let limit = count
        let seen = Counter()
        try await global.stream("io.smartstack.Shell.Subscribe", parameters) { reply in
            if json { global.printJSON(reply) } else { print(OrderTable.render(reply)) }
            return limit.map { seen.increment() < $0 } ?? true
        }
    }
}

struct Donate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Donate an intent for an app.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The app id.") var app: String
    @Argument(help: "The intent type.") var intent: String
    @Option(name: .customLong("param"), help: "A parameter as NAME=VALUE (repeatable).") var parameters: [String] = []
    @Option(help: "The donation's id (made up by the service when omitted).") var id: String?
    @Option(help: "A group id, for deleting donations together.") var group: String?
    @Option(help: "When it happened (RFC 3339); now when omitted.") var date: String?

    func run() async throws {
        var fields: JSONObject = ["app": .string(app), "intent": .string(intent)]
        if !parameters.isEmpty {
            var object = JSONObject()
            for parameter in parameters {
                guard let equals = parameter.firstIndex(of: "=") else {
                    throw ValidationError("--param must be NAME=VALUE, got '\(parameter)'")
                }
                object[String(parameter[..<equals])] = .string(String(parameter[parameter.index(after: equals)...]))
            }
            fields["parameters"] = .object(object)
        }
        if let id { fields["id"] = .string(id) }
        if let group { fields["groupId"] = .string(group) }
        if let date { fields["date"] = .string(date) }
        let reply = try await global.call("io.smartstack.Provider.Donate", fields)
        if global.json { return global.printJSON(reply) }
        print("donated \(reply["id"].map(Table.text) ?? "?")")
    }
}

struct TimelineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline", abstract: "Timelines of widgets.", subcommands: [Push.self])

    struct Push: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Submit a timeline for an app's kind (or one instance of it).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The app id.") var app: String
        @Argument(help: "The widget kind.") var kind: String
        @Option(help: "Only this widget instance.") var instance: String?
        @Option(
            name: .customLong("entry"),
            help: "An entry as DATE or DATE,SCORE,DURATION (RFC 3339 date; duration in seconds); repeatable.")
        var entries: [String] = []
        @Option(help: "Reload policy: atEnd, never, or after=DATE.") var policy: String?

        func run() async throws {
            var fields: JSONObject = ["app": .string(app), "kind": .string(kind)]
            if let instance { fields["instance"] = .string(instance) }
            fields["entries"] = .array(try entries.map { .object(try Self.entry($0)) })
            if let policy {
                if policy.hasPrefix("after=") {
                    fields["policy"] = .object(["kind": .string("after"), "date": .string(String(policy.dropFirst(6)))])
                } else {
                    fields["policy"] = .object(["kind": .string(policy)])
                }
            }
            let reply = try await global.call("io.smartstack.Provider.SubmitTimeline", fields)
            if global.json { return global.printJSON(reply) }
            let warnings = reply["warnings"]?.arrayValue ?? []
            print("timeline accepted" + (warnings.isEmpty ? "" : " with warnings:"))
            for warning in warnings { print("  " + Table.text(warning)) }
        }

        static func entry(_ text: String) throws -> JSONObject {
            let parts = text.split(separator: ",").map(String.init)
            var entry: JSONObject = ["date": .string(parts.first ?? "")]
            if parts.count == 3 {
                guard let score = Double(parts[1]), let duration = Double(parts[2]) else {
                    throw ValidationError("--entry score and duration must be numbers, got '\(text)'")
                }
                entry["relevance"] = .object(["score": .double(score), "duration": .double(duration)])
            } else if parts.count != 1 {
                throw ValidationError("--entry must be DATE or DATE,SCORE,DURATION, got '\(text)'")
            }
            return entry
        }
    }
}
