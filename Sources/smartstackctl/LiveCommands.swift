import ArgumentParser
import SmartStackCore
import SmartStackCtlKit
import SmartStackProtocol

// io.smartstack.Provider: relevant contexts and Live Activities.

struct RelevanceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relevance", abstract: "Relevant contexts of widgets.", subcommands: [Declare.self])

    struct Declare: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Declare when a widget matters: relevant contexts and a relevance group (DeclareRelevance).")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var target: WidgetTarget
        @Option(
            name: .customLong("context"), parsing: .unconditionalSingleValue,
            help:
                "A relevant context, strongest first: KEY=VALUE, or START/END for a date interval, each a time as for --date (repeatable)."
        )
        var contexts: [String] = []
        @Option(help: "A relevance group: widgets of one group are never surfaced together.") var group: String?
        @Option(
            parsing: .unconditional,
            help: TimeArgument.help("When it was declared")) var date: TimeArgument?

        func run() async throws {
            var fields = try target.fields()
            fields["contexts"] = .array(
                try contexts.map { text -> JSONValue in
                    if let equals = text.firstIndex(of: "=") {
                        return .object([
                            "key": .string(String(text[..<equals])),
                            "value": .string(String(text[text.index(after: equals)...])),
                        ])
                    }
                    let bounds = text.split(separator: "/", maxSplits: 1).map(String.init)
                    guard bounds.count == 2 else {
                        throw ValidationError("--context must be KEY=VALUE or START/END, got '\(text)'")
                    }
                    guard let start = TimeArgument(argument: bounds[0]), let end = TimeArgument(argument: bounds[1])
                    else {
                        throw ValidationError(
                            "--context '\(text)': START and END must each be a time (\(TimeArgument.forms))")
                    }
                    return .object(["start": .string(start.rfc3339), "end": .string(end.rfc3339)])
                })
            Arguments.add("group", group, to: &fields)
            Arguments.add("date", date, to: &fields)
            let reply = try await global.call(DeclareRelevanceRequest.self, fields)
            global.emit(reply) {
                var parts: [String] = []
                if !contexts.isEmpty || group == nil {
                    parts.append("\(contexts.count) relevant context\(contexts.count == 1 ? "" : "s")")
                }
                if let group { parts.append("relevance group \(group)") }
                return "declared " + parts.joined(separator: " and ") + " for \(target.app)/\(target.kind)"
                    + (contexts.isEmpty && group == nil ? " (clears any declared before)" : "")
            }
        }
    }
}

struct LiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "live", abstract: "Live Activities.", subcommands: [Start.self, Update.self, End.self])

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Start a Live Activity (StartLiveActivity).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The app id.") var app: String
        @Argument(help: "The activity's id.") var id: String
        @Option(name: .customLong("attribute"), help: "A fixed attribute as NAME=VALUE (repeatable).") var attributes:
            [String] = []
        @Option(name: .customLong("state"), help: "Initial content as NAME=VALUE (repeatable).") var state: [String] =
            []
        @Option(
            parsing: .unconditional,
            help: TimeArgument.help("When it started")) var date: TimeArgument?

        func run() async throws {
            let (attributes, state) = (
                try Typed.pairs(attributes, option: "--attribute"), try Typed.pairs(state, option: "--state")
            )
            let reply = try await global.call { () throws(VarlinkError) in
                StartLiveActivityRequest(
                    app: try Typed.app(app), id: id, attributes: attributes, contentState: state, date: date?.timestamp)
            }
            global.emit(reply) { "started \(app) \(id)" }
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replace a Live Activity's content (UpdateLiveActivity).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The app id.") var app: String
        @Argument(help: "The activity's id.") var id: String
        @Option(name: .customLong("state"), help: "The new content as NAME=VALUE (repeatable).") var state: [String] =
            []
        @Option(
            parsing: .unconditional,
            help: TimeArgument.help("When the content changed"))
        var date: TimeArgument?

        func run() async throws {
            let state = try Typed.pairs(state, option: "--state")
            let reply = try await global.call { () throws(VarlinkError) in
                UpdateLiveActivityRequest(app: try Typed.app(app), id: id, contentState: state, date: date?.timestamp)
            }
            global.emit(reply) { "updated \(app) \(id)" }
        }
    }

    struct End: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "End a Live Activity (EndLiveActivity).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The app id.") var app: String
        @Argument(help: "The activity's id.") var id: String
        @Option(name: .customLong("state"), help: "The final content as NAME=VALUE (repeatable).") var state: [String] =
            []
        @Option(help: "Seconds the ended activity stays visible (0-14400).") var dismissAfter: Double?
        @Option(
            parsing: .unconditional,
            help: TimeArgument.help("When it ended")) var date: TimeArgument?

        func run() async throws {
            let state = state.isEmpty ? nil : try Typed.pairs(state, option: "--state")
            let reply = try await global.call { () throws(VarlinkError) in
                EndLiveActivityRequest(
                    app: try Typed.app(app), id: id, contentState: state, dismissAfter: dismissAfter,
                    date: date?.timestamp)
            }
            global.emit(reply) { "ended \(app) \(id)" }
        }
    }
}
