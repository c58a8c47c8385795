// smartstackctl — talks to smartstackd over its Varlink socket: status, stacks, orders, streams,
// donations and timelines, as tables for people or JSON (--json) for scripts.

import ArgumentParser
import SmartStackClient
import SmartStackProtocol

@main
enum SmartStackCtlMain {
    /// Lets the global options come first (`smartstackctl --address unix:PATH status`), as people write them:
    /// ArgumentParser reads a subcommand's options only after the subcommand, so leading ones move to the end.
    static func main() async {
        await SmartStackCtl.main(GlobalOptions.reordered(Array(CommandLine.arguments.dropFirst())))
    }
}

struct SmartStackCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "smartstackctl",
        abstract: "Talk to smartstackd: stacks, orders, subscriptions, donations, timelines.",
        subcommands: [
            Status.self, Stacks.self, StackCommand.self, Watch.self, Donate.self, TimelineCommand.self, Call.self,
        ])
}

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "The service's address, unix:PATH (default: the user's or the system's socket).")
    var address: String?

    @Flag(name: .long, help: "Print the replies as JSON, one object per line.")
    var json = false

    /// The arguments with global options that precede the subcommand moved after it.
    static func reordered(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--json" {
                leading.append(argument)
                index += 1
            } else if argument == "--address", index + 1 < arguments.count {
                leading += [argument, arguments[index + 1]]
                index += 2
            } else if argument.hasPrefix("--address=") {
                leading.append(argument)
                index += 1
            } else {
                break
            }
        }
        guard !leading.isEmpty, index < arguments.count else { return arguments }
        return Array(arguments[index...]) + leading
    }

    /// The socket path to connect to.
    func socketPath() throws -> String {
        guard let address else { return ServiceDefaults(environment: processEnvironment(), uid: currentUID()).socketPath }
        guard address.hasPrefix("unix:") else {
            throw ValidationError("--address must look like unix:PATH, got '\(address)'")
        }
        return String(address.dropFirst(5))
    }

    /// Makes one call on a fresh connection.
    func call(_ method: String, _ parameters: JSONObject = JSONObject()) async throws -> JSONObject {
        try await VarlinkClient.withConnection(path: try socketPath()) { client in
            try await client.call(method, parameters)
        }
    }

    /// Runs a stream on a fresh connection until `body` returns `false` or the stream ends.
    func stream(_ method: String, _ parameters: JSONObject, _ body: (JSONObject) async throws -> Bool) async throws {
        try await VarlinkClient.withConnection(path: try socketPath()) { client in
            try await client.stream(method, parameters, body)
        }
    }

    /// Prints a reply as one JSON line.
    func printJSON(_ object: JSONObject) {
        print(String(decoding: JSON.serialize(.object(object)), as: UTF8.self))
    }
}
