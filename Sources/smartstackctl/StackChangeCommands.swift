import ArgumentParser
import SmartStackCore
import SmartStackCtlKit
import SmartStackProtocol

// io.smartstack.Shell.ChangeStack: change a stack and keep what was learned about the widgets that stay.

extension StackCommand {
    struct SetSettings: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract:
                "Change a stack's settings, pin or order, keeping its widgets and what was learned (ChangeStack).",
            discussion: """
                Only what is given changes, e.g. 'stack set home --developer-mode --pin mail' or \
                'stack set home --order weather,mail'.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The stack id.") var stack: String
        @Option(help: "A new family; every widget's kind must support it.") var family: String?
        @Flag(inversion: .prefixedNo, help: "Whether the service may move a widget to the top.") var smartRotate: Bool?
        @Flag(inversion: .prefixedNo, help: "Whether the service may insert suggested widgets.") var suggestions: Bool?
        @Flag(inversion: .prefixedNo, help: "Whether the stack shows its apps' Live Activities.")
        var liveActivities: Bool?
        @Flag(inversion: .prefixedNo, help: "Whether the stability limits are lifted.") var developerMode: Bool?
        @Option(help: "An instance of the stack to keep on top.") var pin: String?
        @Flag(help: "Take the pin away.") var unpin = false
        @Option(help: "The user's new order: every instance of the stack, comma-separated.") var order: String?
        @Option(
            parsing: .unconditional,
            help: TimeArgument.help("When the stack was changed"))
        var date: TimeArgument?

        func validate() throws {
            if pin != nil, unpin { throw ValidationError("--pin and --unpin cannot be given together") }
            if family == nil, smartRotate == nil, suggestions == nil, liveActivities == nil, developerMode == nil,
                pin == nil, !unpin, order == nil
            {
                throw ValidationError(
                    "nothing to change: give --family, --[no-]smart-rotate, --[no-]suggestions, "
                        + "--[no-]live-activities, --[no-]developer-mode, --pin, --unpin or --order")
            }
        }

        func run() async throws {
            let (family, flags, pin, unpin, order) = (
                self.family, (smartRotate, suggestions, liveActivities, developerMode), self.pin, self.unpin, self.order
            )
            let reply = try await global.call { () throws(VarlinkError) in
                var request = ChangeStackRequest(stack: try Typed.stack(stack), date: date?.timestamp)
                request.family = try family.map { (name) throws(VarlinkError) in
                    try Typed.check { () throws(CoreError) in try WidgetFamily(parsing: name, parameter: "family") }
                }
                (request.smartRotate, request.suggestions, request.liveActivities, request.developerMode) = flags
                request.pin = try pin.map { (name) throws(VarlinkError) in try Typed.instance(name, parameter: "pin") }
                request.unpin = unpin
                request.order = try order.map { (list) throws(VarlinkError) in
                    try Typed.instances(list.split(separator: ",").map(String.init), parameter: "order")
                }
                return request
            }
            global.emit(reply) { "changed \(stack): revision \(reply.int("revision").map(String.init) ?? "?")" }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add widgets to a stack, keeping the others and what was learned (ChangeStack).",
            discussion: """
                Each --widget is INSTANCE=APP/KIND[?NAME=VALUE&…], as for 'stack configure'; new widgets go at the \
                end of the user's order.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The stack id.") var stack: String
        @Option(name: .customLong("widget"), help: "A widget as INSTANCE=APP/KIND[?NAME=VALUE&…] (repeatable).")
        var widgets: [String] = []
        @Option(
            parsing: .unconditional,
            help: TimeArgument.help("When the widgets were added"))
        var date: TimeArgument?

        func validate() throws {
            if widgets.isEmpty { throw ValidationError("give at least one --widget INSTANCE=APP/KIND[?NAME=VALUE&…]") }
        }

        func run() async throws {
            let list = try widgets.map { JSONValue.object(try Configure.widget($0)) }
            var parameters: JSONObject = ["stack": .string(stack), "add": .array(list)]
            Arguments.add("date", date, to: &parameters)
            let reply = try await global.call(ChangeStackRequest.self, parameters)
            global.emit(reply) {
                "added \(list.count) widget\(list.count == 1 ? "" : "s") to \(stack): revision "
                    + (reply.int("revision").map(String.init) ?? "?")
            }
        }
    }

    struct RemoveWidget: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-widget",
            abstract: "Remove widgets from a stack, keeping the others and what was learned (ChangeStack).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The stack id.") var stack: String
        @Argument(help: "The instances to remove.") var instances: [String]
        @Option(
            parsing: .unconditional,
            help: TimeArgument.help("When the widgets were removed"))
        var date: TimeArgument?

        func validate() throws {
            if instances.isEmpty { throw ValidationError("give at least one instance to remove") }
        }

        func run() async throws {
            let reply = try await global.call { () throws(VarlinkError) in
                var request = ChangeStackRequest(stack: try Typed.stack(stack), date: date?.timestamp)
                request.remove = try Typed.instances(instances, parameter: "remove")
                return request
            }
            global.emit(reply) {
                "removed \(instances.joined(separator: ", ")) from \(stack): revision "
                    + (reply.int("revision").map(String.init) ?? "?")
            }
        }
    }
}
