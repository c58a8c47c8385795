import ArgumentParser
import SmartStackCore
import SmartStackClient
import SmartStackCtlKit
import SmartStackProtocol

// io.smartstack.Provider: widget kinds and donations (timelines and reloads: TimelineCommands.swift; relevance and
// Live Activities: LiveCommands.swift).

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
            help: TimeArgument.help("When the kind was registered"))
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
            // Empty pieces kept: ':x=y' has no intent.
            let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
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
        help: TimeArgument.help("When it happened; now when omitted"))
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
            abstract: "List an app's donations in recorded order (ListDonations, every page unless --limit).")
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
                // After --after for the first page, then after each page's next (which a donation deleted
                // meanwhile does not break).
                var cursor: ListCursor?
                // Pages of 1,000, smaller while the service finds one larger than its maxListReplyBytes.
                var pageSize = min(limit ?? 1000, 1000)
                while true {
                    let asked = min(pageSize, limit.map { $0 - collected.count } ?? pageSize)
                    let request =
                        cursor.map { ListDonationsRequest(app: appID, cursor: $0, limit: asked) }
                        ?? ListDonationsRequest(app: appID, after: start, limit: asked)
                    let reply: JSONObject
                    do {
                        reply = try await client.call(request)
                    } catch VarlinkClientError.remote(let error)
                        where asked > 1 && error.parameters["limit"] == "maxListReplyBytes"
                    {
                        pageSize = asked / 2
                        continue
                    }
                    let page = reply.objects("donations")
                    collected += page
                    if page.count < asked || limit.map({ collected.count >= $0 }) == true { return collected }
                    guard let next = reply.string("next").flatMap(ListCursor.init) else {
                        throw VarlinkClientError.protocolViolation("a ListDonations reply without a cursor in next")
                    }
                    cursor = next
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
