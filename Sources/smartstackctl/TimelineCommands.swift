import ArgumentParser
import SmartStackCore
import SmartStackCtlKit
import SmartStackProtocol

// io.smartstack.Provider: timelines and reloads.

struct TimelineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline", abstract: "Timelines of widgets.", subcommands: [Push.self])

    struct Push: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Submit a timeline for an instance, or for a kind with a configuration (SubmitTimeline).")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var target: WidgetTarget
        @Option(
            name: .customLong("entry"), parsing: .unconditionalSingleValue,
            help:
                "An entry as DATE or DATE,SCORE,DURATION (a time as for --date; duration in seconds, 0 = until the next); repeatable."
        )
        var entries: [String] = []
        @Option(help: "Reload policy: atEnd, never, or after=DATE (a time as for --date).") var policy: String?
        @Option(
            parsing: .unconditional,
            help: TimeArgument.help("When the timeline was submitted"))
        var date: TimeArgument?

        func validate() throws {
            if entries.isEmpty { throw ValidationError("give at least one --entry") }
            // Here rather than in run(): a bad entry is then reported with this command's usage.
            for entry in entries { _ = try Self.entry(entry) }
        }

        func run() async throws {
            var fields = try target.fields()
            fields["entries"] = .array(try entries.map { .object(try Self.entry($0)) })
            if let policy {
                if policy.hasPrefix("after=") {
                    let text = String(policy.dropFirst(6))
                    guard let date = TimeArgument(argument: text) else {
                        throw ValidationError("--policy after='\(text)' is not a time (\(TimeArgument.forms))")
                    }
                    fields["policy"] = .object(["kind": "after", "date": .string(date.rfc3339)])
                } else {
                    fields["policy"] = .object(["kind": .string(policy)])
                }
            }
            Arguments.add("date", date, to: &fields)
            let reply = try await global.call(SubmitTimelineRequest.self, fields)
            global.emit(reply) {
                let warnings = reply["warnings"]?.arrayValue?.compactMap(\.stringValue) ?? []
                return
                    (["timeline accepted: \(entries.count) entr\(entries.count == 1 ? "y" : "ies")"]
                    + warnings.map { global.style.warn("warning: ") + $0 }).joined(separator: "\n")
            }
        }

        /// `DATE[,SCORE,DURATION]`, the date in the one time syntax of the command line; each part that does not
        /// read says which and why.
        static func entry(_ text: String) throws -> JSONObject {
            let parts = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 1 || parts.count == 3 else {
                throw ValidationError(
                    "--entry '\(text)' has \(parts.count) comma-separated parts; it must be DATE or DATE,SCORE,DURATION "
                        + "(e.g. 2030-01-01T09:00:00Z,0.8,3600)")
            }
            guard let date = TimeArgument(argument: parts[0]) else {
                throw ValidationError(
                    "--entry '\(text)': the date '\(parts[0])' is not a time (\(TimeArgument.forms))")
            }
            var entry: JSONObject = ["date": .string(date.rfc3339)]
            if parts.count == 3 {
                guard let score = Double(parts[1]), score.isFinite else {
                    throw ValidationError("--entry '\(text)': the score '\(parts[1])' is not a number")
                }
                guard let duration = Double(parts[2]), duration.isFinite, duration >= 0 else {
                    throw ValidationError(
                        "--entry '\(text)': the duration '\(parts[2])' is not a number of seconds (0 or more)")
                }
                entry["relevance"] = .object(["score": .double(score), "duration": .double(duration)])
            }
            return entry
        }
    }
}

struct Reload: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Ask for new timelines of an app's kind, or of all its kinds (ReloadTimelines).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The app id.") var app: String
    @Argument(help: "The kind (every kind of the app when omitted).") var kind: String?
    @Option(
        parsing: .unconditional,
        help: TimeArgument.help("When the reload was asked for"))
    var date: TimeArgument?

    func run() async throws {
        let reply = try await global.call { () throws(VarlinkError) in
            let app = try Typed.app(app)
            let kind = try self.kind.map { (name) throws(VarlinkError) in
                try Typed.check { () throws(CoreError) in try WidgetKindID(app: app, kind: name).kind }
            }
            return ReloadTimelinesRequest(app: app, kind: kind, date: date?.timestamp)
        }
        global.emit(reply) { Self.describe(reply, target: app + (kind.map { "/\($0)" } ?? " (every kind)")) }
    }

    /// What happened, widget by widget: requested now, withheld until when, or nothing placed.
    static func describe(_ reply: JSONObject, target: String) -> String {
        var requested: [String] = []
        if case .array(let values)? = reply["requested"] {
            for case .string(let instance) in values { requested.append(instance) }
        }
        var withheld: [String] = []
        if case .array(let values)? = reply["withheld"] {
            for case .object(let object) in values {
                if case .string(let instance)? = object["instance"], case .string(let until)? = object["until"] {
                    withheld.append("\(instance) until \(until)")
                }
            }
        }
        var lines: [String] = []
        if !requested.isEmpty { lines.append("reload requested for \(requested.joined(separator: ", "))") }
        if !withheld.isEmpty { lines.append("reload withheld (budget spent) for \(withheld.joined(separator: ", "))") }
        if lines.isEmpty { lines.append("no placed widget of \(target): nothing to reload") }
        return lines.joined(separator: "\n")
    }
}

struct WatchReloads: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch-reloads",
        abstract: "Follow an app's reload requests (WatchReloads; Ctrl-C to stop).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The app id.") var app: String
    @Flag(help: "Also show reloads withheld because the budget is spent.") var includeWithheld = false
    @Option(help: "Stop after this many replies (1 or more).") var count: Int?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be 1 or more, got \(count)") }
    }

    func run() async throws {
        let (app, includeWithheld) = (self.app, self.includeWithheld)
        let global = self.global
        let style = global.style
        let limit = count
        var seen = 0
        let request = { () throws(VarlinkError) in
            WatchReloadsRequest(app: try Typed.app(app), includeWithheld: includeWithheld)
        }
        try await global.stream(request) { reply in
            seen += 1
            Output.line(global.json ? JSONText.compact(reply) : ReloadRenderer.render(reply, style: style))
            return limit.map { seen < $0 } ?? true
        }
    }
}
