import ArgumentParser
import SmartStackCore
import SmartStackCtlKit
import SmartStackProtocol

// io.smartstack.Shell: stacks, their order, what the user did, context, explanations, budgets.

struct Stacks: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the stacks with their settings and top widget (ListStacks).")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let reply = try await global.call { ListStacksRequest() }
        global.emit(reply) { StacksRenderer.render(reply, style: global.style) }
    }
}

struct StackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stack", abstract: "Show, configure, change or remove a stack.",
        subcommands: [Show.self, Configure.self, SetSettings.self, Add.self, RemoveWidget.self, Remove.self],
        defaultSubcommand: Show.self)

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a stack's settings and order, with scores, reasons and top signals (GetStack).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The stack id.") var stack: String
        @Option(
            parsing: .unconditional,
            help: TimeArgument.help("Decide for this time; now when omitted")
        ) var at: TimeArgument?

        func run() async throws {
            let request = try GlobalOptions.checked { () throws(VarlinkError) in
                GetStackRequest(stack: try Typed.stack(stack), at: at?.timestamp)
            }
            // The settings printed above the order are the stack's current ones, so none for an order at another
            // time (`explain --at` gives the settings that order was decided under).
            let (reply, configuration) = try await global.withClient { client in
                let order = try await client.call(request)
                guard at == nil else { return (order, JSONObject?.none) }
                let stacks = try await client.call(ListStacksRequest())
                return (order, stacks.objects("stacks").first { $0.string("stack") == stack })
            }
            global.emit(reply) { OrderRenderer.render(reply, configuration: configuration, style: global.style) }
        }
    }

    struct Configure: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a stack or replace its configuration (ConfigureStack).",
            discussion: """
                Each --widget is INSTANCE=APP/KIND, optionally followed by ?NAME=VALUE&NAME=VALUE for the \
                configuration (text forms), in the user's order, e.g. \
                --widget 'weather-paris=org.example.weather/forecast?city=Paris'. Widgets that keep their \
                instance, kind and configuration keep what was learned about them. Without --widget or \
                --widgets-json it refuses (that would empty the stack) unless --empty is given; to change \
                settings and keep the widgets use 'stack set', 'stack add' and 'stack remove-widget'.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The stack id.") var stack: String
        @Option(help: "The family of every widget: systemSmall, systemMedium, systemLarge, …") var family: String
        @Option(
            name: .customLong("widget"),
            help: "A widget as INSTANCE=APP/KIND[?NAME=VALUE&…] (repeatable; %XX escapes a byte, %26 an &, %25 a %).")
        var widgets: [String] = []
        @Option(help: "The widgets as a JSON array of {instance, app, kind, configuration} (instead of --widget).")
        var widgetsJSON: String?
        @Flag(inversion: .prefixedNo, help: "Whether the service may move a widget to the top.") var smartRotate = true
        @Flag(inversion: .prefixedNo, help: "Whether the service may insert suggested widgets.") var suggestions = true
        @Flag(inversion: .prefixedNo, help: "Whether the stack shows its apps' Live Activities.") var liveActivities =
            true
        @Flag(help: "Lift the stability limits so providers can test their relevance.") var developerMode = false
        @Option(help: "An instance of the stack to keep on top.") var pin: String?
        @Flag(help: "Configure the stack with no widgets (replacing any it has).") var empty = false
        @Option(
            parsing: .unconditional,
            help: TimeArgument.help("When the stack was configured"))
        var date: TimeArgument?

        func validate() throws {
            if widgetsJSON != nil, !widgets.isEmpty {
                throw ValidationError("--widget and --widgets-json exclude each other")
            }
            if empty, widgetsJSON != nil || !widgets.isEmpty {
                throw ValidationError("--empty configures no widgets: give it without --widget and --widgets-json")
            }
        }

        func run() async throws {
            var list: [JSONValue]
            if let widgetsJSON {
                let value: JSONValue
                do { value = try JSON.parse(Array(widgetsJSON.utf8)) } catch {
                    throw ValidationError("--widgets-json is not JSON: \(error)")
                }
                guard case .array(let array) = value else {
                    throw ValidationError("--widgets-json must be a JSON array")
                }
                list = array
            } else {
                list = try widgets.map { .object(try Self.widget($0)) }
            }
            if list.isEmpty, !empty {
                throw ValidationError(
                    "no widgets given: this would empty stack '\(stack)'. Give them with --widget or --widgets-json, "
                        + "pass --empty for a stack without widgets, or change settings keeping the widgets with "
                        + "'smartstackctl stack set \(stack) …'")
            }
            var parameters: JSONObject = [
                "stack": .string(stack), "family": .string(family), "widgets": .array(list),
                "smartRotate": .bool(smartRotate), "suggestions": .bool(suggestions),
                "liveActivities": .bool(liveActivities), "developerMode": .bool(developerMode),
            ]
            Arguments.add("pinned", pin, to: &parameters)
            Arguments.add("date", date, to: &parameters)
            let reply = try await global.call(ConfigureStackRequest.self, parameters)
            global.emit(reply) {
                "configured \(stack): \(list.count) widget\(list.count == 1 ? "" : "s"), revision \(reply.int("revision").map(String.init) ?? "?")"
            }
        }

        /// `INSTANCE=APP/KIND[?NAME=VALUE&…]` as a `Widget`.
        static func widget(_ text: String) throws -> JSONObject {
            guard let equals = text.firstIndex(of: "=") else {
                throw ValidationError("--widget must be INSTANCE=APP/KIND[?NAME=VALUE&…], got '\(text)'")
            }
            let instance = String(text[..<equals])
            var rest = String(text[text.index(after: equals)...])
            var configuration: JSONObject?
            if let question = rest.firstIndex(of: "?") {
                // Percent-encoded as the service writes suggestion ids (`city=S%C3%A3o%20Paulo`, `%26` for `&`).
                var pairs = JSONObject()
                for item in rest[rest.index(after: question)...].split(separator: "&") {
                    guard let equals = item.firstIndex(of: "="), equals != item.startIndex else {
                        throw ValidationError("--widget configuration must be NAME=VALUE, got '\(item)'")
                    }
                    let name = try Arguments.percentDecoded(item[..<equals], option: "--widget")
                    let value = try Arguments.percentDecoded(item[item.index(after: equals)...], option: "--widget")
                    pairs[name] = .string(value)
                }
                configuration = pairs
                rest = String(rest[..<question])
            }
            guard let slash = rest.firstIndex(of: "/"), !instance.isEmpty, slash != rest.startIndex,
                rest.index(after: slash) != rest.endIndex
            else { throw ValidationError("--widget must be INSTANCE=APP/KIND[?NAME=VALUE&…], got '\(text)'") }
            var widget: JSONObject = [
                "instance": .string(instance), "app": .string(String(rest[..<slash])),
                "kind": .string(String(rest[rest.index(after: slash)...])),
            ]
            if let configuration { widget["configuration"] = .object(configuration) }
            return widget
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a stack and its widgets (RemoveStack).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The stack id.") var stack: String
        @Option(
            parsing: .unconditional,
            help: TimeArgument.help("When the stack was removed"))
        var date: TimeArgument?

        func run() async throws {
            let reply = try await global.call { () throws(VarlinkError) in
                RemoveStackRequest(stack: try Typed.stack(stack), date: date?.timestamp)
            }
            global.emit(reply) { "removed \(stack)" }
        }
    }
}

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Follow stacks: print the current order, then every change (Subscribe; Ctrl-C to stop).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The stacks to follow (every stack when none).") var stacks: [String] = []
    @Option(help: "Stop after this many replies (1 or more).") var count: Int?
    @Flag(
        help: ArgumentHelp(
            "When smartstackd goes away or ends the stream (a restart, a socket-activated stop), connect again, "
                + "after 0.2 s doubling to 5 s, and follow on: the current order comes first again."))
    var reconnect = false

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be 1 or more, got \(count)") }
    }

    func run() async throws {
        let names = stacks
        let global = self.global
        let style = global.style
        var seen = 0
        let limit = count
        let request = { () throws(VarlinkError) in
            var stacks: [StackID] = []
            for (index, name) in names.enumerated() {
                stacks.append(
                    try Typed.check { () throws(CoreError) in try StackID(name, parameter: "stacks[\(index)]") })
            }
            return SubscribeRequest(stacks: names.isEmpty ? nil : stacks)
        }
        var backoff = 0.2
        while true {
            do {
                try await global.stream(request) { reply in
                    seen += 1
                    backoff = 0.2
                    if global.json {
                        Output.line(JSONText.compact(reply))
                    } else {
                        Output.line(OrderRenderer.render(reply, style: style) + "\n")
                    }
                    return limit.map { seen < $0 } ?? true
                }
                // The count was reached, or the service ended the stream (it is stopping).
                if !reconnect || limit.map({ seen >= $0 }) == true { return }
                Output.error("smartstackctl: smartstackd ended the stream; connecting again in \(backoff) s")
            } catch let failure as CtlFailure where reconnect && failure.isWorthReconnecting {
                Output.error("smartstackctl: \(failure.summary); connecting again in \(backoff) s")
            }
            try await Task.sleep(for: .seconds(backoff))
            backoff = min(backoff * 2, 5)
        }
    }
}

struct Look: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Report that a stack was shown to the user (RecordLook).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The stack id.") var stack: String
    @Option(
        parsing: .unconditional,
        help: TimeArgument.help("When the stack was shown")) var date: TimeArgument?

    func run() async throws {
        let reply = try await global.call { () throws(VarlinkError) in
            RecordLookRequest(stack: try Typed.stack(stack), date: date?.timestamp)
        }
        global.emit(reply) { "recorded a look at \(stack)" }
    }
}

struct Engage: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Report what the user did with a widget: tap, swipeTo, swipeAway, impression (RecordEngagement).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The stack id.") var stack: String
    @Argument(help: "The widget's instance id.") var instance: String
    @Argument(help: "tap, swipeTo, swipeAway or impression.") var kind: String
    @Option(help: "For an impression: seconds the widget was on top while visible.") var duration: Double?
    @Option(
        parsing: .unconditional,
        help: TimeArgument.help("When it happened")) var date: TimeArgument?

    func validate() throws {
        guard ["tap", "swipeTo", "swipeAway", "impression"].contains(kind) else {
            throw ValidationError("the engagement must be tap, swipeTo, swipeAway or impression, got '\(kind)'")
        }
    }

    func run() async throws {
        let reply = try await global.call { () throws(VarlinkError) in
            RecordEngagementRequest(
                stack: try Typed.stack(stack), instance: try Typed.instance(instance),
                kind: try Typed.check { () throws(CoreError) in
                    guard let kind = EngagementKind(rawValue: kind) else {
                        throw .invalidParameter(parameter: "kind", reason: "'\(kind)' is not an engagement")
                    }
                    return kind
                }, duration: duration, date: date?.timestamp)
        }
        global.emit(reply) { "recorded \(kind) on \(instance) in \(stack)" }
    }
}

struct ContextCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "context", abstract: "Set or clear context signals.", subcommands: [Set.self, Clear.self])

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set a context signal, such as location=home (SetContext).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "KEY=VALUE, or KEY alone with a VALUE argument.") var key: String
        @Argument(help: "The value (when KEY has no =).") var value: String?
        @Option(
            parsing: .unconditional,
            help: TimeArgument.help("When the context changed"))
        var date: TimeArgument?

        func run() async throws {
            var name = key
            var text = value
            if text == nil, let equals = key.firstIndex(of: "=") {
                name = String(key[..<equals])
                text = String(key[key.index(after: equals)...])
            }
            guard let text else { throw ValidationError("give a value: context set KEY=VALUE (or context clear KEY)") }
            let reply = try await global.call { SetContextRequest(key: name, value: text, date: date?.timestamp) }
            global.emit(reply) { "\(name)=\(text)" }
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Clear a context signal (SetContext without a value).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The context key.") var key: String
        @Option(
            parsing: .unconditional,
            help: TimeArgument.help("When the context changed"))
        var date: TimeArgument?

        func run() async throws {
            let reply = try await global.call { SetContextRequest(key: key, value: nil, date: date?.timestamp) }
            global.emit(reply) { "cleared \(key)" }
        }
    }
}

struct Explain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Explain why each widget of a stack is where it is (Explain).",
        discussion: """
            For each widget: its score split into behaviour and relevance, every signal's contribution, its \
            timeline relevance (entry in force, normalised score, expiry), stability (time on top, rotations \
            left, manual swipes, developer mode), reload budget, and pin and suggestion state.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The stack id.") var stack: String
    @Argument(help: "Only this widget of the stack.") var instance: String?
    @Option(
        parsing: .unconditional,
        help: TimeArgument.help("Explain the order at this time; now when omitted")
    ) var at: TimeArgument?

    func run() async throws {
        let reply = try await global.call { () throws(VarlinkError) in
            ExplainRequest(
                stack: try Typed.stack(stack),
                instance: try instance.map { (text) throws(VarlinkError) in try Typed.instance(text) },
                at: at?.timestamp)
        }
        global.emit(reply) { ExplainRenderer.render(reply, style: global.style) }
    }
}

struct Budget: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show a widget's reload budget (GetBudget).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The instance id.") var instance: String
    @Option(
        parsing: .unconditional,
        help: TimeArgument.help("Report for this time; now when omitted")
    ) var at: TimeArgument?

    func run() async throws {
        let reply = try await global.call { () throws(VarlinkError) in
            GetBudgetRequest(instance: try Typed.instance(instance), at: at?.timestamp)
        }
        global.emit(reply) { BudgetRenderer.render(reply, instance: instance, at: at?.timestamp, style: global.style) }
    }
}
