import ArgumentParser
import SmartStackCore
import SmartStackCtlKit
import SmartStackProtocol

// io.smartstack.Provider: widget kinds, donations, timelines, reloads, relevance, Live Activities.

struct WidgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "widget", abstract: "Widget kinds of apps.", subcommands: [Register.self])

    struct Register: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register a widget kind of an app, or replace its definition (RegisterWidget).",
            discussion: """
                A configuration intent is --intent TYPE with --parameter NAME:TYPE for each parameter; append ? \
                for an optional one and =DEFAULT for a default, and give enum cases as NAME:enum:CASE|CASE, e.g. \
                --intent SelectCity --parameter city:string --parameter units:enum:metric|imperial=metric. \
                --mapping INTENT[:DONATED=PARAMETER,…] names a donated intent that predicts configurations. \
                --definition JSON gives any field in the interface's JSON form instead.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The app id (reverse DNS).") var app: String
        @Argument(help: "The kind's name within the app.") var kind: String
        @Option(
            name: .customLong("family"), help: "A family the kind can be drawn in (repeatable; systemMedium when none)."
        )
        var families: [String] = []
        @Option(help: "What a shell shows for the kind.") var displayName: String?
        @Option(help: "The configuration intent's type name.") var intent: String?
        @Option(
            name: .customLong("parameter"), help: "An intent parameter as NAME:TYPE[:CASES][?][=DEFAULT] (repeatable).")
        var parameters: [String] = []
        @Option(
            name: .customLong("mapping"), help: "A prediction mapping as INTENT[:DONATED=PARAMETER,…] (repeatable).")
        var mappings: [String] = []
        @Option(help: "More fields as a JSON object, merged over the others.") var definition: String?
        @Option(
            parsing: .unconditional,
            help: "When the kind was registered (RFC 3339, 'YYYY-MM-DD [HH:MM[:SS]]', now, today, -1h or '2d ago').")
        var date: TimeArgument?

        func run() async throws {
            var fields: JSONObject = [
                "app": .string(app), "kind": .string(kind),
                "families": .array((families.isEmpty ? ["systemMedium"] : families).map { .string($0) }),
            ]
            Arguments.add("displayName", displayName, to: &fields)
            if let intent {
                fields["intent"] = .object([
                    "type": .string(intent),
                    "parameters": .array(try parameters.map { .object(try Self.parameter($0)) }),
                ])
            } else if !parameters.isEmpty {
                throw ValidationError("--parameter needs --intent TYPE")
            }
            if !mappings.isEmpty {
                fields["predictionMapping"] = .array(try mappings.map { .object(try Self.mapping($0)) })
            }
            Arguments.add("date", date, to: &fields)
            if let definition {
                for (key, value) in try Arguments.object(definition, option: "--definition") { fields[key] = value }
            }
            let reply = try await global.call(RegisterWidgetRequest.self, fields)
            global.emit(reply) { "registered \(app)/\(kind)" }
        }

        /// `NAME:TYPE[:CASES][?][=DEFAULT]` as an `IntentParameter`.
        static func parameter(_ text: String) throws -> JSONObject {
            var body = text
            var defaultValue: String?
            if let equals = body.firstIndex(of: "=") {
                defaultValue = String(body[body.index(after: equals)...])
                body = String(body[..<equals])
            }
            var optional = false
            if body.hasSuffix("?") {
                optional = true
                body.removeLast()
            }
            let parts = body.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard parts.count >= 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ValidationError("--parameter must be NAME:TYPE[:CASES][?][=DEFAULT], got '\(text)'")
            }
            var parameter: JSONObject = ["name": .string(parts[0]), "type": .string(parts[1])]
            if optional { parameter["optional"] = true }
            if let defaultValue { parameter["default"] = .string(defaultValue) }
            if parts.count == 3 {
                let cases = parts[2].split(separator: "|").map { JSONValue.object(["id": .string(String($0))]) }
                parameter[parts[1] == "entity" ? "suggestedEntities" : "cases"] = .array(cases)
            }
            return parameter
        }

        /// `INTENT[:DONATED=PARAMETER,…]` as a `PredictionMapping`.
        static func mapping(_ text: String) throws -> JSONObject {
            let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
            guard let intent = parts.first, !intent.isEmpty else {
                throw ValidationError("--mapping must be INTENT[:DONATED=PARAMETER,…], got '\(text)'")
            }
            var mapping: JSONObject = ["intent": .string(intent)]
            if parts.count == 2 {
                mapping["parameters"] = .object(
                    try Arguments.pairs(parts[1].split(separator: ",").map(String.init), option: "--mapping"))
            }
            return mapping
        }
    }
}

struct Donate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Donate an intent for an app (Donate).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The app id.") var app: String
    @Argument(help: "The intent type.") var intent: String
    @Option(name: .customLong("param"), help: "A parameter as NAME=VALUE (repeatable).") var parameters: [String] = []
    @Option(help: "The donation's id (made up by the service when omitted).") var id: String?
    @Option(help: "A group id, for deleting donations together.") var group: String?
    @Option(
        parsing: .unconditional,
        help: "When it happened; now when omitted (RFC 3339, 'YYYY-MM-DD [HH:MM[:SS]]', now, today, -1h or '2d ago').")
    var date: TimeArgument?

    func run() async throws {
        let values = try Typed.pairs(parameters, option: "--param")
        let reply = try await global.call { () throws(VarlinkError) in
            try DonateRequest(
                app: try Typed.app(app), intent: intent, parameters: values, date: date?.timestamp, id: id,
                groupId: group)
        }
        global.emit(reply) { "donated \(reply.string("id") ?? "?")" }
    }
}

struct DonationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "donations", abstract: "List or delete an app's donations.", subcommands: [List.self, Delete.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List an app's donations, oldest first (ListDonations, every page unless --limit).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The app id.") var app: String
        @Option(help: "Start after the donation with this id.") var after: String?
        @Option(help: "At most this many donations (one page of at most 1000).") var limit: Int?

        func run() async throws {
            let app = self.app
            let limit = self.limit
            let start = after
            let appID = try GlobalOptions.checked { () throws(VarlinkError) in try Typed.app(app) }
            let donations: [JSONObject] = try await global.withClient { client in
                var collected: [JSONObject] = []
                var cursor = start
                while true {
                    let request = ListDonationsRequest(app: appID, after: cursor, limit: min(limit ?? 1000, 1000))
                    let page = try await client.call(request).objects("donations")
                    collected += page
                    if limit != nil || page.count < 1000 { return collected }
                    cursor = page.last?.string("id")
                }
            }
            let reply: JSONObject = ["donations": .array(donations.map(JSONValue.object))]
            global.emit(reply) { DonationsRenderer.render(donations, style: global.style) }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete an app's donations by id, group or intent, or all of them (DeleteDonations).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The app id.") var app: String
        @Option(name: .customLong("id"), help: "A donation id (repeatable).") var ids: [String] = []
        @Option(help: "Delete the donations filed under this group id.") var group: String?
        @Option(help: "Delete the donations of this intent type.") var intent: String?
        @Option(help: "With --intent: only those with a parameter equal to this entity id.") var entity: String?
        @Flag(help: "Delete every donation of the app.") var all = false

        func validate() throws {
            let filters = [!ids.isEmpty, group != nil, intent != nil].filter { $0 }.count
            if filters > 1 { throw ValidationError("give at most one of --id, --group and --intent") }
            if entity != nil, intent == nil { throw ValidationError("--entity needs --intent") }
            if filters == 0, !all {
                throw ValidationError("give --id, --group or --intent, or --all to delete every donation")
            }
            if filters == 1, all { throw ValidationError("--all deletes every donation: give no other filter") }
        }

        func run() async throws {
            let filter: DonationFilter =
                if !ids.isEmpty {
                    .ids(Set(ids))
                } else if let group {
                    .group(group)
                } else if let intent {
                    .intent(type: intent, entity: entity)
                } else {
                    .all
                }
            let reply = try await global.call { () throws(VarlinkError) in
                DeleteDonationsRequest(app: try Typed.app(app), filter: filter)
            }
            global.emit(reply) { "deleted \(reply.int("deleted") ?? 0) donations of \(app)" }
        }
    }
}

struct TimelineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline", abstract: "Timelines of widgets.", subcommands: [Push.self])

    struct Push: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Submit a timeline for an instance, or for a kind with a configuration (SubmitTimeline).")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var target: WidgetTarget
        @Option(
            name: .customLong("entry"),
            help:
                "An entry as DATE or DATE,SCORE,DURATION (a time as for --date; duration in seconds, 0 = until the next); repeatable."
        )
        var entries: [String] = []
        @Option(help: "Reload policy: atEnd, never, or after=DATE.") var policy: String?
        @Option(
            parsing: .unconditional,
            help: "When the timeline was submitted (RFC 3339, 'YYYY-MM-DD [HH:MM[:SS]]', now, today, -1h or '2d ago').")
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
                    fields["policy"] = .object(["kind": "after", "date": .string(String(policy.dropFirst(6)))])
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
                    "--entry '\(text)': the date '\(parts[0])' is not a time (RFC 3339, 'YYYY-MM-DD [HH:MM[:SS]]', "
                        + "now, today, -1h or '2d ago')")
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
        help: "When the reload was asked for (RFC 3339, 'YYYY-MM-DD [HH:MM[:SS]]', now, today, -1h or '2d ago').")
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
    @Option(help: "Stop after this many replies.") var count: Int?

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

struct RelevanceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relevance", abstract: "Relevant contexts of widgets.", subcommands: [Declare.self])

    struct Declare: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Declare when a widget matters: relevant contexts and a relevance group (DeclareRelevance).")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var target: WidgetTarget
        @Option(
            name: .customLong("context"),
            help: "A relevant context, strongest first: KEY=VALUE, or START/END for a date interval (repeatable).")
        var contexts: [String] = []
        @Option(help: "A relevance group: widgets of one group are never surfaced together.") var group: String?
        @Option(
            parsing: .unconditional,
            help: "When it was declared (RFC 3339, 'YYYY-MM-DD [HH:MM[:SS]]', now, today, -1h or '2d ago').") var date:
            TimeArgument?

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
                    return .object(["start": .string(bounds[0]), "end": .string(bounds[1])])
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
            help: "When it started (RFC 3339, 'YYYY-MM-DD [HH:MM[:SS]]', now, today, -1h or '2d ago').") var date:
            TimeArgument?

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
            help: "When the content changed (RFC 3339, 'YYYY-MM-DD [HH:MM[:SS]]', now, today, -1h or '2d ago').")
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
            help: "When it ended (RFC 3339, 'YYYY-MM-DD [HH:MM[:SS]]', now, today, -1h or '2d ago').") var date:
            TimeArgument?

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

/// Which widgets a timeline or a relevance declaration is for: one placed instance, or every instance of
/// a kind with a given configuration.
struct WidgetTarget: ParsableArguments {
    @Argument(help: "The app id.") var app: String
    @Argument(help: "The widget kind.") var kind: String
    @Option(help: "Only this placed instance.") var instance: String?
    @Option(name: .customLong("config"), help: "The configuration as NAME=VALUE (repeatable; not with --instance).")
    var configuration: [String] = []

    func validate() throws {
        if instance != nil, !configuration.isEmpty {
            throw ValidationError("--instance and --config exclude each other")
        }
    }

    /// The call's `app`, `kind`, `instance` and `configuration` fields.
    func fields() throws -> JSONObject {
        var fields: JSONObject = ["app": .string(app), "kind": .string(kind)]
        Arguments.add("instance", instance, to: &fields)
        if !configuration.isEmpty {
            fields["configuration"] = .object(try Arguments.pairs(configuration, option: "--config"))
        }
        return fields
    }
}
